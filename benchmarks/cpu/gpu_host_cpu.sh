#!/usr/bin/env bash
# gpu_host_cpu.sh BUNDLE OUT_DIR: the cpu backend on the GPU machine's CPU (no LLVM 14
# there), from a bundle built here with
#   CGRAPH_GPU_BUNDLE_CPU=only scripts/gpu-bundle.sh build out/cgraph-cpu.tar.xz
# Runs the cpu backend's test suite, then bench_cases (every test-suite case, cpu next
# to PoCL) with this session's A/B switches off and on, alternated twice, on all cores
# and pinned to two (CI's size), and bench_nodes on every example. Logs go to OUT_DIR.
# Switches that "off" sets (each the default "on" otherwise): CGRAPH_CPU_AB_OFF, shell
# words, e.g.
#   CGRAPH_CPU_AB_OFF="CGRAPH_CPU_FIBERS=1"   (the variables of docs/configuration.md)
set -uo pipefail
bundle=${1:?usage: gpu_host_cpu.sh BUNDLE OUT_DIR}
out=${2:?usage: gpu_host_cpu.sh BUNDLE OUT_DIR}
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$bundle"
cd "$work/cgraph-gpu" || exit 1
{
  echo "== host"; nproc; grep -m1 "model name" /proc/cpuinfo
  grep -o -m1 -w 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
} > "$out/host.log"
export CGRAPH_CACHE_DIR="$work/cache"
./run-tests.sh > "$out/cpu_tests.log" 2>&1
tail -3 "$out/cpu_tests.log"
cases() { ./run.sh bench_cases -n 11 src/tests/cpu/kernels src/tests/opencl/kernels; }
for pin in all 2; do
  for r in 1 2; do
    for side in off on; do
      log="$out/cases_${pin}_${side}$r.log"
      if [ "$side" = off ]; then
        eval "envs=(${CGRAPH_CPU_AB_OFF:-})"
      else
        envs=()
      fi
      if [ "$pin" = all ]; then
        env "${envs[@]}" bash -c "$(declare -f cases); cases" > "$log" 2>&1
      else
        env "${envs[@]}" taskset -c 0,1 bash -c "$(declare -f cases); cases" > "$log" 2>&1
      fi
      echo "$pin $side $r: $(grep -E 'cases above' "$log")"
    done
  done
done
./run.sh bench_nodes -n 11 cgf/*.cgf > "$out/nodes_all.log" 2>&1
taskset -c 0,1 ./run.sh bench_nodes -n 11 cgf/*.cgf > "$out/nodes_2.log" 2>&1
grep -c . "$out/nodes_all.log"
