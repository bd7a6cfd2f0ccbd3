#!/bin/sh
# Cold vs warm finalize of every example, cpu backend vs PoCL (through the opencl
# backend). Each figure is a fresh process:
#   cpu  cold, cache off : CGRAPH_CACHE_PERSISTENT=0
#   cpu  cold, cache on  : CGRAPH_CACHE_PERSISTENT=1, empty CGRAPH_CACHE_DIR (compiles, then stores)
#   cpu  warm            : the same CGRAPH_CACHE_DIR again (loads the stored objects)
#   pocl cold            : POCL_KERNEL_CACHE=0; PoCL compiles at first launch, so its cost
#                          is finalize (clBuildProgram) + first run
# Usage: finalize_examples.sh BUILD_DIR [SOURCE_DIR]
set -eu
build=${1:?usage: finalize_examples.sh BUILD_DIR [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench="$build/benchmarks/cpu/bench_finalize"
for g in "$src"/examples/*/graph.json; do
  name=$(basename "$(dirname "$g")")
  "$build/tools/cgc/cgc" -q "$g" -o "$tmp/$name.cgf"
  cache="$tmp/cache-$name"
  mkdir -p "$cache"
  off=$(CGRAPH_CACHE_PERSISTENT=0 "$bench" --backend cpu "$tmp/$name.cgf")
  cold=$(CGRAPH_CACHE_PERSISTENT=1 CGRAPH_CACHE_DIR="$cache" "$bench" --backend cpu "$tmp/$name.cgf")
  warm=$(CGRAPH_CACHE_PERSISTENT=1 CGRAPH_CACHE_DIR="$cache" "$bench" --backend cpu "$tmp/$name.cgf")
  pocl=$(POCL_KERNEL_CACHE=0 CGRAPH_CACHE_PERSISTENT=0 "$bench" --backend opencl "$tmp/$name.cgf" 2>&1 || true)
  f() { echo "$1" | sed -n "s/.*$2=\([0-9.]*\).*/\1/p"; }
  printf '%-10s cpu: cache-off %7s ms  cold+store %7s ms  warm %6s ms  first-run %6s ms | pocl: build %7s ms + first-run %7s ms\n' \
    "$name" "$(f "$off" finalize_ms)" "$(f "$cold" finalize_ms)" "$(f "$warm" finalize_ms)" "$(f "$off" first_run_ms)" \
    "$(f "$pocl" finalize_ms)" "$(f "$pocl" first_run_ms)"
done
