# SPDX-License-Identifier: Apache-2.0
# attnsel.transformers: attn_implementation="attnsel" on tiny random transformers models (CPU), against "sdpa".
import copy

import pytest

torch = pytest.importorskip("torch", reason="attnsel.transformers needs torch")
transformers = pytest.importorskip("transformers", reason="attnsel.transformers needs transformers")
at = pytest.importorskip("attnsel.torch")
import attnsel.transformers as atf  # noqa: E402

@pytest.fixture
def kernel_calls(switch_spy):
    """The backend switches that were on at each SDPA kernel call attnsel routed (conftest's switch_spy)."""
    yield switch_spy
    atf.use_registry(None)


def pair(model_class, config):
    """The same random weights under "sdpa" and under "attnsel"."""
    torch.manual_seed(0)  # each model gets its own config: the implementation is set on the config object
    reference = model_class._from_config(copy.deepcopy(config), attn_implementation="sdpa").eval()
    routed = model_class._from_config(copy.deepcopy(config), attn_implementation="attnsel").eval()
    assert reference.config._attn_implementation == "sdpa"
    routed.load_state_dict(reference.state_dict())
    return reference, routed


def llama(**overrides):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
               num_key_value_heads=2, max_position_embeddings=256)
    cfg.update(overrides)
    return pair(LlamaForCausalLM, LlamaConfig(**cfg))


def test_the_name_is_registered_with_both_interfaces():
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    assert AttentionInterface._global_mapping[atf.NAME] is atf.attention_forward
    assert atf.NAME in AttentionMaskInterface._global_mapping


def test_a_decoder_model_matches_sdpa_and_every_layer_call_is_routed(kernel_calls):
    reference, routed = llama()
    assert routed.config._attn_implementation == "attnsel"
    ids = torch.randint(0, 128, (2, 12), generator=torch.Generator().manual_seed(1))
    padded = torch.ones_like(ids)
    padded[1, :3] = 0  # left padding: a mask, so grouped KV heads are expanded
    with torch.no_grad():
        for mask in (None, padded):
            want, got = reference(ids, attention_mask=mask).logits, routed(ids, attention_mask=mask).logits
            assert torch.allclose(got, want, atol=1e-5), (mask is not None, float((got - want).abs().max()))
    assert len(kernel_calls) == 2 * 2  # two layers, two forward passes
    assert all(len(on) == 1 for on in kernel_calls)  # each ran exactly one backend


def test_generate_gives_the_same_tokens_as_sdpa(kernel_calls):
    reference, routed = llama()
    ids = torch.randint(0, 128, (2, 10), generator=torch.Generator().manual_seed(2))
    mask = torch.ones_like(ids)
    mask[0, :2] = 0
    with torch.no_grad():
        want = reference.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False)
        got = routed.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False)
    assert torch.equal(got, want)
    assert len(kernel_calls) >= 2 * 6  # prefill and every decode step, in every layer


def test_use_registry_decides_each_layers_backend(cpu_math_registry, kernel_calls):
    atf.use_registry(cpu_math_registry)
    reference, routed = llama()
    ids = torch.randint(0, 128, (1, 8), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.allclose(routed(ids).logits, reference(ids).logits, atol=1e-5)
    assert all(on == ["math"] for on in kernel_calls)
    with pytest.raises(TypeError, match="registry: expected attnsel.Registry, got dict"):
        atf.use_registry({})


def test_a_compiled_decoder_traces_without_a_graph_break(kernel_calls):
    reference, routed = llama()
    ids = torch.randint(0, 128, (1, 8), generator=torch.Generator().manual_seed(4))
    torch._dynamo.reset()
    compiled = torch.compile(routed, fullgraph=True, backend="aot_eager")
    with torch.no_grad():
        got = compiled(ids).logits
        want = reference(ids).logits
    assert torch.allclose(got, want, atol=1e-5)
    assert len(kernel_calls) == 2  # both layers selected at run time inside attnsel::sdpa


def test_a_vision_model_matches_sdpa(kernel_calls):
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, image_size=32,
                    patch_size=8)
    reference, routed = pair(ViTModel, cfg)
    pixels = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        want, got = reference(pixel_values=pixels).last_hidden_state, routed(pixel_values=pixels).last_hidden_state
    assert torch.allclose(got, want, atol=1e-5)
    assert len(kernel_calls) == 2


def test_attention_sinks_are_refused_as_transformers_refuses_sdpa():
    q = torch.randn(1, 4, 3, 8)
    module = torch.nn.Module()
    with pytest.raises(ValueError, match="no attention sinks"):
        atf.attention_forward(module, q, q, q, None, s_aux=torch.zeros(4))
