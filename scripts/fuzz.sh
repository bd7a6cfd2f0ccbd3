#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 and runs each for SECONDS (default 60) over
# a scratch copy of its checked-in corpus, then prints its exec count:
#   fuzz_cgf_reader       .cgf files (tests/fuzz/corpus/cgf)
#   fuzz_cgc_description  cgc graph descriptions, JSON (tests/fuzz/corpus/json)
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: both targets)
#
# Environment: CGRAPH_FUZZ_BUILD (build dir, default <repo>/build-fuzz),
# CGRAPH_FUZZ_SOURCE (CMake source dir, default the repo root),
# CGRAPH_FUZZ_JOBS (ninja -j, default 2).
# Exit status: 0 if nothing was found, 1 if libFuzzer reported a crash/leak/timeout
# in any target (the reproducer is kept in the artifacts folder it prints).
set -euo pipefail

duration=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_cgf_reader fuzz_cgc_description)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CGRAPH_FUZZ_BUILD:-$root/build-fuzz}
source_dir=${CGRAPH_FUZZ_SOURCE:-$root}

# The configure log lives in the build folder, never beside it in the checkout.
mkdir -p "$build"
cmake -S "$source_dir" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCGRAPH_FUZZ=ON -DCGRAPH_BUILD_BENCHMARKS=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 2; }
ninja -C "$build" -j"${CGRAPH_FUZZ_JOBS:-2}" "${targets[@]}"

found=0
# run_fuzzer TARGET CORPUS MAX_LEN [libFuzzer options...]
run_fuzzer() {
  local target=$1 corpus=$2 max_len=$3
  shift 3
  local work fuzzer status runs
  work=$(mktemp -d "${TMPDIR:-/tmp}/$target.XXXXXX")
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$root"/tests/fuzz/corpus/"$corpus"/* "$work/corpus/"
  fuzzer=$(find "$build" -name "$target" -type f -perm -u+x | head -n1)

  echo "== $target (${duration}s)"
  set +e
  "$fuzzer" -max_total_time="$duration" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" >"$work/fuzz.log" 2>&1
  status=$?
  set -e

  tail -n 25 "$work/fuzz.log"
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/fuzz.log" | tail -n1)
  [ -z "$runs" ] && runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -n1)
  echo "exec count: ${runs:-unknown}"
  echo "corpus now: $(ls "$work/corpus" | wc -l) inputs; log: $work/fuzz.log"
  if [ "$status" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
    echo "FOUND: $target: libFuzzer exited with $status; artifacts in $work/artifacts"
    found=1
  fi
}

for t in "${targets[@]}"; do
  case $t in
  fuzz_cgf_reader) run_fuzzer "$t" cgf 65536 ;;
  fuzz_cgc_description)
    run_fuzzer "$t" json 16384 -dict="$root/tests/fuzz/cgc_description.dict" ;;
  *) echo "unknown fuzz target '$t'"; exit 2 ;;
  esac
done
[ "$found" -ne 0 ] && exit 1
echo "nothing found"
