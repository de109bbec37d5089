# SPDX-License-Identifier: Apache-2.0
"""The model plan's layer kinds against transformers' own config classes (scripts/oracle.sh).

vLLM 0.34 reads each layer's attention kind from ``config.layer_types``, which transformers fills in
(each config class's ``__post_init__``) when config.json does not list it (RESEARCH.md in
tests/data/model_configs). This loads every fixture there with the pinned transformers' AutoConfig,
takes the decoder's text config, and compares its ``layer_types``, layer count and head counts with what
attnsel's reader (``attnsel.read_model_config``) gives. A config whose class lists no ``layer_types``
must read as one kind for every layer. Then every model type transformers knows whose default config has
several attention kinds is read without its ``layer_types``: attnsel's family rule must agree, or attnsel
must name what it assumed, or refuse the config naming a key; a silently different model fails.

Exit: 0 every fixture agrees and no family differs silently; 1 otherwise (or a fixture either side
cannot load).
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import warnings
from typing import Dict, List, Optional

# transformers' layer type names as attnsel's layer kinds. DeepSeek-V3.2's indexed (sparse MLA) layers
# attend over every earlier token, through the indexer's top-k: full layers of mode sparse_mla. Mamba,
# gated delta-rule and lightning layers are all "linear_attention" there, LFM2's short convolutions
# "conv"; a "hybrid" layer runs attention and a Mamba-2 mixer side by side; "mlp" and "moe" layers have
# neither (Nemotron-H).
KINDS = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked",
         "linear_attention": "linear", "indexed_attention": "full", "conv": "linear", "hybrid": "hybrid",
         "mlp": "mlp", "moe": "mlp"}


def transformers_view(path: str) -> Dict[str, object]:
    """What transformers makes of config.json at `path`: the decoder's layer types and head counts."""
    from transformers import AutoConfig

    with tempfile.TemporaryDirectory() as folder:  # AutoConfig reads a folder's config.json
        shutil.copy(path, os.path.join(folder, "config.json"))
        config = AutoConfig.from_pretrained(folder)
    # An encoder-decoder config (Whisper) is its own text config: get_text_config(decoder=True) builds a
    # fresh one of the class's defaults there (transformers 5.20).
    text = config if getattr(config, "is_encoder_decoder", False) else config.get_text_config(decoder=True)
    types: Optional[List[str]] = getattr(text, "layer_types", None) or getattr(text, "layers_block_type", None)
    heads = getattr(text, "decoder_attention_heads", None) or getattr(text, "num_attention_heads", None)
    layers = getattr(text, "decoder_layers", None) or getattr(text, "num_hidden_layers", None)
    return {"class": type(text).__name__, "layer_types": list(types) if types is not None else None,
            "num_layers": layers, "num_heads": heads}


def check(attnsel, path: str) -> List[str]:
    """The disagreements between transformers and attnsel on the config at `path` (none: [])."""
    ours = attnsel.read_model_config(path)
    theirs = transformers_view(path)
    problems = []
    if theirs["num_heads"] != ours.num_heads:
        problems.append(f"heads: transformers {theirs['num_heads']}, attnsel {ours.num_heads}")
    if theirs["num_layers"] != len(ours.layers):
        problems.append(f"layers: transformers {theirs['num_layers']}, attnsel {len(ours.layers)}")
    types = theirs["layer_types"]
    if types is None:
        if len(set(ours.layers)) > 1:
            problems.append(f"transformers lists no layer_types (one kind), attnsel reads {sorted(set(ours.layers))}")
        return problems
    unknown = sorted(set(t for t in types if t not in KINDS))
    if unknown:
        return problems + [f"layer types attnsel has no kind for: {', '.join(unknown)}"]
    expected = [KINDS[t] for t in types]
    differ = [i for i, (a, b) in enumerate(zip(expected, ours.layers)) if a != b]
    if differ:
        i = differ[0]
        problems.append(f"{len(differ)} layers differ, first layer {i}: transformers {types[i]}, "
                        f"attnsel {ours.layers[i]}")
    return problems


def family_defaults(attnsel) -> Dict[str, str]:
    """Every transformers model type whose default text config lists more than one attention kind, read by
    attnsel with ``layer_types`` removed (the family's own rule then decides): 'agrees', 'named' (attnsel
    says it knows no rule and what it assumed), 'refused: ...' (an error naming a key), or 'differs: ...'
    (a silently different model: the only failure)."""
    from transformers import CONFIG_MAPPING

    out = {}
    for model_type in sorted(CONFIG_MAPPING.keys()):
        try:
            config = CONFIG_MAPPING[model_type]()
            text = config if getattr(config, "is_encoder_decoder", False) else config.get_text_config(decoder=True)
            types = list(getattr(text, "layer_types", None) or getattr(text, "layers_block_type", None) or [])
            doc = text.to_dict()
        except Exception:  # a class that cannot build its own defaults has nothing to compare
            continue
        if len(set(types)) < 2 or not set(types) <= set(KINDS):
            continue  # one kind, or kinds that are no attention (a CNN's 'bottleneck', an MLP layer)
        doc.pop("layer_types", None)
        doc.pop("layers_block_type", None)
        doc["model_type"] = getattr(text, "model_type", model_type)
        try:
            ours = attnsel.read_model_config(json.loads(json.dumps(doc, default=str)))
        except ValueError as e:
            out[model_type] = f"refused: {e}"
            continue
        expected = [KINDS[t] for t in types]
        if list(ours.layers) == expected:
            out[model_type] = "agrees"
        elif any("knows no per-layer rule" in a for a in ours.assumptions):
            out[model_type] = "named"
        else:
            theirs = dict(enumerate(expected))
            first = next((i for i in range(max(len(expected), len(ours.layers)))
                          if theirs.get(i) != (ours.layers[i] if i < len(ours.layers) else None)), 0)
            out[model_type] = (f"differs: first at layer {first}; transformers {len(expected)} layers of "
                               f"{sorted(set(types))}, attnsel {len(ours.layers)} of {sorted(set(ours.layers))}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", help="folder of config.json fixtures (tests/data/model_configs)")
    parser.add_argument("--out", help="write the per-fixture results here as JSON")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import attnsel
    import transformers

    results = {}
    for name in sorted(os.listdir(args.configs)):
        if not name.endswith(".json"):
            continue
        try:
            results[name] = check(attnsel, os.path.join(args.configs, name))
        except Exception as e:  # a fixture either side cannot read is a failure to report, not a crash
            results[name] = [f"could not be read: {type(e).__name__}: {e}"]
    bad = {k: v for k, v in results.items() if v}
    for name, problems in results.items():
        print(f"layer_kinds: {name}: {'; '.join(problems) if problems else 'agrees'}")
    print(f"layer_kinds: {len(results) - len(bad)} of {len(results)} configs agree with transformers "
          f"{transformers.__version__}")
    families = family_defaults(attnsel)
    counts = {v.split(":")[0]: 0 for v in ("agrees", "named", "refused", "differs")}
    for model_type, verdict in families.items():
        counts[verdict.split(":")[0]] += 1
        if verdict.startswith("differs"):
            print(f"layer_kinds: family {model_type}: {verdict}")
    print(f"layer_kinds: {len(families)} transformers families of several attention kinds, layer_types removed: "
          + ", ".join(f"{n} {k}" for k, n in counts.items()))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"transformers": transformers.__version__, "results": results, "families": families}, f,
                      indent=1)
    return 1 if bad or counts["differs"] else 0


if __name__ == "__main__":
    sys.exit(main())
