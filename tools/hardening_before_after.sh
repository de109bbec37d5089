#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reproduces issue 9's defects through the CLI, one line each, so a build from before the fixes and one
# from after can be compared: tools/hardening_before_after.sh PATH/TO/attnsel [SCALE]
# SCALE (default 1) divides the sizes of the quadratic cases for slow machines. Needs python3 and GNU time.
set -uo pipefail
cli="$1"
scale="${2:-1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
py="$(command -v python3)"
measure() {  # prints "<exit> <seconds>s <max RSS MB>MB" for the command
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  read -r secs kb < <(tail -n 1 "$work/time") || true  # GNU time puts "Command exited ..." first on failure
  echo "exit $rc, ${secs}s, $((kb / 1024)) MB"
}
first_line() { head -c 160 "$1" | head -n 1; }

"$py" - "$work" "$scale" <<'EOF'
import json, sys
work, scale = sys.argv[1], int(sys.argv[2])
def cat(backends, policies=None, name="t"):
    d = {"format": "attnsel-catalog", "version": 1, "name": name, "backends": backends}
    if policies is not None:
        d["policies"] = policies
    return d
def dump(name, doc):
    with open(f"{work}/{name}", "w") as f:
        json.dump(doc, f, separators=(",", ":"))
feats = [f"f{i}" for i in range(4000)]
dump("d1_variants.json", cat([{"name": "B", "domains": ["decoder"], "features": feats,
                                "variants": [{"name": f"V{i}"} for i in range(4000)]}]))
dump("d2_backends.json", cat([{"name": f"B{i}", "domains": ["decoder"]} for i in range(10000 // scale)]))
dump("d3_features.json", cat([{"name": "B", "domains": ["decoder"],
                               "features": [f"f{i:06d}" for i in range(40000 // scale, 0, -1)]}]))
with open(f"{work}/d4_dupkey.json", "w") as f:
    f.write('{"format":"attnsel-catalog","version":1,"name":"t","backends":[{"name":"A","domains":["decoder"]}],"backends":[]}')
with open(f"{work}/d5_bad.json", "w") as f:
    f.write('{"format":"attnsel-catalog","version":1,"name":"t","backends":[{"name":"a"}]}')
dump("d10_newline.json", cat([{"name": "X", "domains": ["decoder"], "platforms": [{"vendor": "cuda"}],
                                "requires": [{"component": "x\nattnsel: error: forged line"}]}]))
dump("d12_rocm_cap.json", cat([{"name": "X", "domains": ["decoder"],
                                 "platforms": [{"vendor": "rocm", "min_capability": "9.0"}]}]))
with open(f"{work}/d13_binary.json", "wb") as f:
    f.write(bytes(range(256)) * 4)
EOF

echo "cli: $cli ($("$cli" --version 2>&1 | head -n 1))"
echo "defect 1  (4,000 features x 4,000 variants, $(wc -c <"$work/d1_variants.json") bytes): $(measure "$cli" validate "$work/d1_variants.json") -- $(first_line "$work/err")$(first_line "$work/out")"
echo "defect 2  ($((10000 / scale)) backends): $(measure "$cli" validate "$work/d2_backends.json")"
echo "defect 3  ($((40000 / scale)) features, descending): $(measure "$cli" validate "$work/d3_features.json")"
"$cli" validate "$work/d4_dupkey.json" >"$work/out" 2>&1
echo "defect 4  (\"backends\" twice): exit $? -- $(first_line "$work/out")"
"$cli" select --catalog-only "$work/d5_bad.json" --json >"$work/out" 2>/dev/null
echo "defect 5  (select --json, catalog fails): exit $?, $(wc -c <"$work/out") bytes on stdout -- $(first_line "$work/out")"
"$cli" select --catalog-only "" --platform cuda --arch 9.0 >"$work/out" 2>&1
echo "defect 6  (--catalog-only \"\"): exit $? -- $(first_line "$work/out")"
"$cli" explain --platform cuda --arch 9.0 --backend CPU_ATTN --prefer >"$work/out" 2>&1
echo "defect 7  (prefer-mode explain): 'rule: none matched' printed: $(grep -c 'none matched' "$work/out") time(s)"
"$cli" select --catalog-only "$work/d10_newline.json" --platform cuda --arch 9.0 --backend X >"$work/out" 2>&1
echo "defect 10 (newline in a component name): forged diagnostic lines: $(grep -c '^ *attnsel: error: forged' "$work/out")"
"$cli" validate "$work/d12_rocm_cap.json" >"$work/out" 2>&1
echo "defect 12 (capability range on rocm): exit $? -- $(first_line "$work/out")"
"$cli" frobnicate >"$work/out" 2>&1
echo "defect 13 (attnsel frobnicate): exit $? -- $(first_line "$work/out")"
"$cli" validate "$work/d13_binary.json" >"$work/out" 2>&1
echo "defect 13 (binary file): exit $? -- $(first_line "$work/out")"
