#!/bin/sh
# Every kernel of every example, cgraph's cpu backend next to PoCL, in one run of
# bench_nodes (one process, one table), plus replay vs eager per node of each graph.
# Usage: bench_examples.sh BUILD_DIR [ITERATIONS]
set -eu
build=${1:?usage: bench_examples.sh BUILD_DIR [ITERATIONS]}
iters=${2:-11}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=""
for g in "$src"/examples/*/graph.json; do
  name=$(basename "$(dirname "$g")")
  "$build/tools/cgc/cgc" -q "$g" -o "$tmp/$name.cgf"
  files="$files $tmp/$name.cgf"
done
# shellcheck disable=SC2086
CGRAPH_CACHE_PERSISTENT=0 "$build/benchmarks/cpu/bench_nodes" -n "$iters" $files
# The kernel test suites' cases (small launches, the test sizes).
CGRAPH_CACHE_PERSISTENT=0 "$build/benchmarks/cpu/bench_cases" -n "$iters" "$src/tests/cpu/kernels" "$src/tests/opencl/kernels"
