# SPDX-License-Identifier: Apache-2.0
# The engine adapters parse and write flags as the engine does: one enum name per flag (never attnsel's
# override-list grammar), names the engine has, block sizes it takes, underscores in vLLM flag names,
# the removed VLLM_ATTENTION_BACKEND with a warning, and JSON nesting bounded.
import warnings

import pytest

import attnsel
from attnsel.engines import sglang, vllm

HOPPER = attnsel.Platform.cuda(9, 0)


@pytest.mark.parametrize("line", [
    "--attention-backend=-FLASH_ATTN,auto",
    "--attention-backend FLASH_ATTN,FLASHINFER",
    "--attention-backend NOT_A_BACKEND",
    "--attention-decode-backend=-TRITON_ATTN",
    "--mm-encoder-attn-backend TORCH_SDPA,auto",
    "--attention-backend MLA_PREFILL_FLASH_ATTN",  # vLLM's MLA prefill enum is a separate one
    "-ac.backend=FLASH_ATTN,auto",
    "-ac '{\"backend\": \"-FLASH_ATTN,auto\"}'",
    "-ac '{\"backend_per_kind\": {\"sliding_window\": \"TRITON_ATTN,auto\"}}'",
    "-ac.mla_prefill_backend=FLASH_ATTN,auto",
    "-ac.mla_prefill_backend=FLASHMLA",  # a decode enum name, not an MLAPrefillBackendEnum one
    "VLLM_ATTENTION_BACKEND=-FLASH_ATTN,auto vllm serve m",
])
def test_vllm_refuses_what_vllm_refuses(line):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)  # PR #48162's flag, read with a warning
        with pytest.raises(ValueError, match="vLLM refuses it"):
            vllm.parse_flags(line)


def test_vllm_list_grammar_is_named_in_the_refusal():
    with pytest.raises(ValueError, match="exactly one name, not attnsel's override list"):
        vllm.parse_flags("--attention-backend=-FLASH_ATTN,auto")


def test_vllm_reads_underscored_flag_names_as_its_parser_does():
    assert vllm.parse_flags("--attention_backend FLASHINFER").decoder == "FLASHINFER"
    with pytest.warns(UserWarning, match="PR #48162"):
        assert vllm.parse_flags("--attention_decode_backend=TRITON_ATTN").decode == "TRITON_ATTN"
    dotted = vllm.parse_flags("--attention_config.backend_per_kind.sliding_window TRITON_ATTN")
    assert dotted.backend_per_kind == (("sliding_window", "TRITON_ATTN"),)  # keys keep their underscores


def test_vllm_attention_backend_env_var_is_read_with_a_removal_warning():
    with pytest.warns(FutureWarning, match=r"VLLM_ATTENTION_BACKEND was removed from vLLM \(PR #50292\)"):
        o = vllm.parse_flags("VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve m")
    assert o.decoder == "FLASHINFER"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vllm.parse_flags("--attention-backend FLASHINFER")  # no warning without the variable


def test_a_deeply_nested_attention_config_is_a_value_error_not_recursion():
    deep = "{\"a\": " * 100_000 + "1" + "}" * 100_000
    with pytest.raises(ValueError, match="nested deeper than 32 levels"):
        vllm.parse_flags(["--attention-config", deep])
    with pytest.raises(ValueError, match="nested deeper"):
        vllm.parse_flags(["-ac.backend_per_kind", "[" * 50_000 + "]" * 50_000])


@pytest.mark.parametrize("call, message", [
    (lambda: vllm.flags("MLA_PREFILL_FLASH_ATTN"), "pass it as mla_prefill="),
    (lambda: vllm.flags("FLASH_ATTENTION"), "not a vLLM AttentionBackendEnum name"),  # torch SDPA's name
    (lambda: vllm.flags("FLASH_ATTN; rm -rf /"), "not a vLLM AttentionBackendEnum name"),
    (lambda: vllm.flags("FA3"), "not a vLLM AttentionBackendEnum name"),  # SGLang's
    (lambda: vllm.flags(decode="TRITON_ATTN"), "has no decode-phase backend flag"),
    (lambda: vllm.flags("GDN_ATTN"), "not a vLLM AttentionBackendEnum name"),  # picked by layer type
    (lambda: vllm.flags(backend_per_kind={"mamba": "MAMBA2_ATTN"}), "not a vLLM AttentionBackendEnum name"),
    (lambda: vllm.flags(encoder="SDPA"), "not a vLLM AttentionBackendEnum name"),
    (lambda: vllm.flags(backend_per_kind={"sliding_window": "-TRITON_ATTN,auto"}), "exactly one name"),
    (lambda: vllm.flags(mla_prefill="FLASHMLA"), "not an MLA prefill backend"),
    (lambda: vllm.flags("FLASH_ATTN", block_size=-16), "block_size: expected an integer"),
    (lambda: vllm.flags("FLASH_ATTN", block_size=0.5), "block_size: expected an integer"),
    (lambda: vllm.flags("FLASH_ATTN", block_size=True), "block_size: expected an integer"),
    (lambda: vllm.flags("FLASH_ATTN", block_size=1 << 21), "block_size: expected an integer"),
])
def test_vllm_flags_refuse_what_vllm_refuses(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_vllm_flags_refuse_a_selection_from_another_catalog():
    torch_sel = attnsel.select(attnsel.torch_sdpa_registry(), attnsel.Query(), HOPPER)
    with pytest.raises(ValueError, match="FLASH_ATTENTION"):
        vllm.flags(torch_sel)
    sg_sel = attnsel.select(attnsel.builtin_catalog("sglang"), attnsel.Query(), HOPPER)
    with pytest.raises(ValueError, match="not a vLLM AttentionBackendEnum name"):
        vllm.flags(sg_sel)
    own = attnsel.select(attnsel.reference_registry(), attnsel.Query(), HOPPER)
    assert vllm.flags(own, block_size=0) == ["--attention-backend", own.backend]  # 0: no preference, no flag
    assert vllm.parse_flags(vllm.flags(own)).decoder == own.backend


@pytest.mark.parametrize("line", [
    "--attention-backend fa3,auto",
    "--attention-backend -fa3,auto",
    "--attention-backend FA3",  # SGLang's choices are lower-case
    "--attention-backend sdpa",  # an encoder-only name
    "--decode-attention-backend flash_attn",
    "--mm-attention-backend trtllm_mha",  # a decoder-only name
])
def test_sglang_refuses_what_sglang_refuses(line):
    with pytest.raises(ValueError, match="SGLang refuses it"):
        sglang.parse_flags(line)


@pytest.mark.parametrize("call, message", [
    (lambda: sglang.flags(prefill="SDPA"), "multimodal-encoder backend"),
    (lambda: sglang.flags(decode="TRITON_ATTN"), "multimodal-encoder backend"),
    (lambda: sglang.flags("FLASH_ATTN"), "not an SGLang backend"),  # vLLM's name
    (lambda: sglang.flags("fa3 --x"), "not an SGLang backend"),
    (lambda: sglang.flags(encoder="TRTLLM_MHA"), "a decoder backend, not one for the multimodal encoder"),
    (lambda: sglang.flags("FA3", page_size=-64), "page_size: expected an integer"),
    (lambda: sglang.flags("FA3", page_size=0.5), "page_size: expected an integer"),
    (lambda: sglang.flags("TRITON_LINEAR"), "a linear-layer kernel: pass it as linear="),
    (lambda: sglang.flags(linear="SEG_LA"), "not a linear-layer kernel SGLang has a flag for"),
    (lambda: sglang.flags(linear="FA3"), "not a linear-layer kernel SGLang has a flag for"),
])
def test_sglang_flags_refuse_what_sglang_refuses(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_sglang_linear_flags_name_each_layer_kinds_kernel():
    # Gated delta-rule layers (GDN, KDA) read --linear-attn-backend; mamba layers read --mamba-backend.
    gdn = sglang.parse_flags("--linear-attn-backend triton --mamba-backend flashinfer")
    assert (gdn.linear, gdn.decoder) == ("TRITON_LINEAR", None)
    assert sglang.parse_flags("--linear-attn-backend helion").linear == "HELION"
    mamba = sglang.parse_flags("--linear-attn-backend cutedsl --mamba-backend flashinfer", linear_mode="mamba2")
    assert mamba.linear == "FLASHINFER_MAMBA2"
    assert sglang.parse_flags("--mamba-backend triton", linear_mode="mamba1").linear == "TRITON_MAMBA1"
    assert sglang.parse_flags("--linear-attn-backend triton", linear_mode="lightning").linear is None
    assert sglang.flags(linear="FLASHINFER_MAMBA2") == ["--mamba-backend", "flashinfer"]
    assert sglang.flags(linear="INTEL_XPU_LINEAR") == ["--linear-attn-backend", "intel_xpu"]
    back = sglang.parse_flags(sglang.flags("FA3", linear="CUTEDSL"))
    assert (back.decoder, back.linear) == ("FA3", "CUTEDSL")
    assert back.override_set().linear == "CUTEDSL" and back.override_set("decode").linear == "CUTEDSL"
    # Each flag's value is checked against its own choices, whichever kind the model has.
    with pytest.raises(ValueError, match=r"--mamba-backend: 'helion' is not .* a kernel of the other linear-layer "
                                         r"flag \(--linear-attn-backend\)"):
        sglang.parse_flags("--mamba-backend helion")
    with pytest.raises(ValueError, match="an attention backend .*, not a linear-layer kernel"):
        sglang.parse_flags("--linear-attn-backend fa3")
    with pytest.raises(ValueError, match="linear_mode: 'mla' is not one of"):
        sglang.parse_flags("", linear_mode="mla")
    # The drafter's flag: unset, the draft inherits the decoder's backend.
    spec = sglang.parse_flags("--attention-backend fa3 --speculative-draft-attention-backend triton")
    assert (spec.drafter, spec.override_set().drafter, back.override_set().drafter) == ("TRITON", "TRITON", None)
    assert sglang.flags(drafter="FA3_MLA") == ["--speculative-draft-attention-backend", "fa3"]
    # The selection reaches the engine: a Blackwell GDN decode with a bf16 state runs FlashInfer.
    sel = attnsel.select(attnsel.builtin_catalog("sglang"),
                         attnsel.Query(domain="linear", mode="gated_delta", phase="decode", features=["bf16_ssm_state"]),
                         attnsel.Platform.cuda(10, 0, components={"cuda_runtime": "12.8", "flashinfer": None}))
    assert sglang.flags(linear=sel) == ["--linear-attn-backend", "flashinfer"]


def test_sglang_per_phase_linear_flags_are_read_and_written():
    # sglang 0.5.23 arg_groups/fields/exec_.py: --linear-attn-prefill-backend and --linear-attn-decode-backend
    # (gated delta-rule kernels, the --linear-attn-backend choices) override the base flag in their phase;
    # kv_cache_hook.py resolves each phase as `phase flag or --linear-attn-backend`.
    o = sglang.parse_flags("--linear-attn-backend triton --linear-attn-decode-backend cutedsl")
    assert (o.linear, o.linear_prefill, o.linear_decode) == ("TRITON_LINEAR", None, "CUTEDSL")
    assert o.override_set("decode").linear == "CUTEDSL" and o.override_set("prefill").linear == "TRITON_LINEAR"
    whole = o.override_set()
    assert (whole.linear, whole.linear_prefill, whole.linear_decode) == ("TRITON_LINEAR", None, "CUTEDSL")
    argv = sglang.flags(linear="TRITON_LINEAR", linear_prefill="FLASHINFER_LINEAR", linear_decode="CUTEDSL")
    assert argv == ["--linear-attn-backend", "triton", "--linear-attn-prefill-backend", "flashinfer",
                    "--linear-attn-decode-backend", "cutedsl"]
    back = sglang.parse_flags(argv)
    assert (back.linear, back.linear_prefill, back.linear_decode) == ("TRITON_LINEAR", "FLASHINFER_LINEAR", "CUTEDSL")
    # Mamba layers have no per-phase flag: the value is checked as SGLang's parser checks it, and not read.
    mamba = sglang.parse_flags("--mamba-backend triton --linear-attn-decode-backend cutedsl", linear_mode="mamba2")
    assert (mamba.linear, mamba.linear_decode) == ("TRITON_MAMBA2", None)
    with pytest.raises(ValueError, match="--linear-attn-decode-backend: 'FLASHINFER_MAMBA2' is not a gated delta-rule"):
        sglang.flags(linear_decode="FLASHINFER_MAMBA2")
    with pytest.raises(ValueError, match="--linear-attn-prefill-backend"):
        sglang.parse_flags("--linear-attn-prefill-backend fa3")


def test_sglang_flags_round_trip_through_parse_flags():
    args = sglang.flags("FA3_MLA", decode="TRTLLM_MLA", encoder="SDPA", page_size=64)
    assert args == ["--attention-backend", "fa3", "--decode-attention-backend", "trtllm_mla",
                    "--mm-attention-backend", "sdpa", "--page-size", "64"]
    back = sglang.parse_flags(args, mode="mla")
    assert (back.decoder, back.decode, back.encoder) == ("FA3_MLA", "TRTLLM_MLA", "SDPA")
    assert sglang.encoder_names() == {"aiter_attn", "amx_attn", "fa3", "fa4", "flashinfer_cudnn", "sdpa",
                                      "triton_attn", "xpu_attn"}


# SGLang 0.5.23's own choice lists (site-packages/sglang/srt/arg_groups/choices.py ATTENTION_BACKEND_CHOICES
# and arg_groups/fields/mm.py mm_attention_backend), the release the default `sglang` catalog follows.
SGLANG_0_5_23_DECODER_CHOICES = {
    "triton", "torch_native", "flex_attention", "dsa", "nsa", "qsa", "dsv4", "compressed", "fa3", "fa4",
    "flashinfer", "llada2_cfg_flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla", "tokenspeed_mla", "trtllm_mha",
    "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer", "aiter", "wave", "intel_amx", "ascend", "intel_xpu"}
# arg_groups/choices.py LINEAR_ATTN_KERNEL_BACKEND_CHOICES and arg_groups/fields/exec_.py --mamba-backend.
SGLANG_0_5_23_LINEAR_CHOICES = {"triton", "cutedsl", "flashinfer", "flashkda", "nvidia_kda", "ptx_kda", "helion",
                                "intel_xpu"}
SGLANG_0_5_23_MAMBA_CHOICES = {"triton", "flashinfer"}
SGLANG_0_5_23_ENCODER_CHOICES = {"sdpa", "fa3", "fa4", "triton_attn", "ascend_attn", "aiter_attn", "flashinfer_cudnn",
                                 "amx_attn", "xpu_attn"}


def test_sglang_adapter_speaks_only_sglang_0_5_23_choices():
    # Every name the adapter emits or accepts is one SGLang's argparse takes, in the flag it takes it.
    assert sglang.decoder_names() <= SGLANG_0_5_23_DECODER_CHOICES
    assert sglang.encoder_names() <= SGLANG_0_5_23_ENCODER_CHOICES
    assert sglang.linear_names("gated_delta") == SGLANG_0_5_23_LINEAR_CHOICES
    assert sglang.linear_names("mamba2") == sglang.linear_names("mamba1") == SGLANG_0_5_23_MAMBA_CHOICES
    catalog = attnsel.builtin_catalog("sglang")
    no_flag = {"SEG_LA", "SHORT_CONV"}  # lightning and short-conv layers: SGLang reads no flag
    for backend in catalog.backends:
        name = sglang.to_sglang(backend)
        every = SGLANG_0_5_23_DECODER_CHOICES | SGLANG_0_5_23_ENCODER_CHOICES | SGLANG_0_5_23_LINEAR_CHOICES
        assert name in every or backend in no_flag, backend
    # The MLA flavours of intel_amx and torch_native (SGLang's CPU MLA backends) are SGLang's plain names.
    assert sglang.flags("INTEL_AMX_MLA") == ["--attention-backend", "intel_amx"]
    assert sglang.parse_flags("--attention-backend torch_native", mode="mla").decoder == "TORCH_NATIVE_MLA"
    # SGLang's deprecated aliases read as the catalog's backends.
    assert sglang.parse_flags("--attention-backend nsa", mode="sparse_mla").decoder == "NSA"
    assert sglang.parse_flags("--decode-attention-backend tokenspeed_mla", mode="mla").decode == "TOKENSPEED_MLA"
    # The vision tower's XPU and cuDNN backends go to --mm-attention-backend only.
    assert sglang.flags(encoder="XPU_ATTN") == ["--mm-attention-backend", "xpu_attn"]
    with pytest.raises(ValueError, match="multimodal-encoder backend"):
        sglang.flags("FLASHINFER_CUDNN")


def test_a_selection_for_the_vision_tower_goes_to_the_encoder_flag_only():
    h100 = attnsel.Platform.cuda(9, 0)
    sg = attnsel.builtin_catalog("sglang")
    vision = attnsel.select(sg, attnsel.Query(domain="encoder", attn_type="encoder_only", head_size=80), h100)
    decoder = attnsel.select(sg, attnsel.Query(head_size=128), h100)
    assert vision.domains == ("encoder",) and "decoder" in decoder.domains
    assert sglang.flags(encoder=vision) == ["--mm-attention-backend", sglang.to_sglang(vision)]
    for flag in ("backend", "prefill", "decode", "drafter"):
        with pytest.raises(ValueError, match=r"was selected for the multimodal encoder: pass it as encoder="):
            sglang.flags(**{flag: vision})
    with pytest.raises(ValueError, match=r"--mm-attention-backend: .* was selected for the decoder domain"):
        sglang.flags(encoder=decoder)
    # A plain name carries no domain: the name's own check decides, as before.
    assert sglang.flags("FA3") == ["--attention-backend", "fa3"]
    # vLLM on ROCm: the ViT runs TORCH_SDPA, an encoder-only backend; ROCM_ATTN serves the decoder alone.
    # (On CUDA, FLASH_ATTN's variant serves both domains: its domains cannot tell the two apart.)
    vl = attnsel.builtin_catalog("vllm")
    mi300 = attnsel.Platform.rocm("gfx942")
    vit = attnsel.select(vl, attnsel.Query(domain="encoder", attn_type="encoder_only", head_size=80), mi300)
    assert vit.domains == ("encoder",)
    assert vllm.flags(encoder=vit) == ["--mm-encoder-attn-backend", vit.backend]
    with pytest.raises(ValueError, match=r"--attention-backend: .* pass it as encoder= \(--mm-encoder-attn-backend\)"):
        vllm.flags(vit)
    with pytest.raises(ValueError, match=r"was selected for the decoder domain"):
        vllm.flags(encoder=attnsel.select(vl, attnsel.Query(head_size=128), mi300))
    both = attnsel.select(vl, attnsel.Query(head_size=128), h100)
    assert both.domains == ("decoder", "encoder")
