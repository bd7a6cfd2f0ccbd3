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
echo "== cgrun saxpy.cgf (cpu)"
"$bin/cgrun/cgrun" "$out/saxpy.cgf" --fill y=0.5 -n 10
echo "== cgrun bench chain1000.cgf (cpu): replay vs eager"
"$bin/cgc/cgc" "$root/examples/chain1000/graph.json" -o "$out/chain1000.cgf"
"$bin/cgrun/cgrun" bench "$out/chain1000.cgf" --repetitions 20
