#!/usr/bin/env bash
# The README's first command: install what is missing, build (Release), compile the
# saxpy example with cgc and replay it on the CPU backend, then benchmark replay vs
# eager on the 1000-node chain example.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build"
bin="$root/build/tools"
out="$root/build/examples"; mkdir -p "$out"

echo "== cgc examples/saxpy/graph.json"
"$bin/cgc/cgc" "$root/examples/saxpy/graph.json" -o "$out/saxpy.cgf"
"$bin/cgc/cgc" dump "$out/saxpy.cgf" | head -n 40
echo "== cgrun saxpy.cgf (cpu): y = a * x + y with x = 1, y = 0.5, a = 2, checked against y = 2.5"
python3 -c "import struct, sys; open(sys.argv[1], 'wb').write(struct.pack('<f', 2.5) * 1048576)" "$out/y_expected.bin"
"$bin/cgrun/cgrun" "$out/saxpy.cgf" --fill y=0.5 --check "y=@$out/y_expected.bin:f32"
echo "== cgrun bench chain1000.cgf (cpu): replay vs eager"
"$bin/cgc/cgc" "$root/examples/chain1000/graph.json" -o "$out/chain1000.cgf"
"$bin/cgrun/cgrun" bench "$out/chain1000.cgf" --repetitions 20 --json > "$out/chain1000-bench.json"
python3 - "$out/chain1000-bench.json" <<'PY'
import json, sys
runs = {b["run_name"]: b["real_time"] for b in json.load(open(sys.argv[1]))["benchmarks"] if b["aggregate_name"] == "median"}
eager, replay = runs["chain1000/eager/total"], runs["chain1000/replay/total"]
print(f"chain1000, 1000 nodes, median per run: eager {eager:.0f} us, replay {replay:.0f} us: replay / eager = {replay / eager:.2f}")
PY
