#!/usr/bin/env bash
# gpu_run.sh BUNDLE.tar.xz [OUT_DIR]: on the GPU machine, unpacks the bundle made by
# scripts/gpu-bundle.sh and runs, in one go: --list-devices, the ptxas test and the
# CUDA conformance suite, `cgrun compare` cpu vs cuda on every example, bench_cuda
# (with the nvcc-built hand-written reference). Output: stdout, bench.json in OUT_DIR.
set -u
# A bundle made before it shipped clang's OpenCL headers: CGRAPH_CLANG_RESOURCE_DIR
# may point at a directory with include/opencl-c.h carried beside it.
[ -n "${CGRAPH_CLANG_RESOURCE_DIR:-}" ] && export CGRAPH_CLANG_RESOURCE_DIR="$(cd "$CGRAPH_CLANG_RESOURCE_DIR" && pwd)"
bundle="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="${2:-$PWD}"
t="$(mktemp -d)"
tar -C "$t" -xJf "$bundle" || exit 1
cd "$t/cgraph-gpu" || exit 1
nvidia-smi -L 2>/dev/null
./run.sh cgrun --list-devices
echo "== tests"
timeout "${CGRAPH_TEST_TIMEOUT:-240}" ./run-tests.sh 2>&1 | tee "$out/tests.log" | tail -"${CGRAPH_TEST_TAIL:-60}"
# Every example with the inputs it needs (cgrun --random), for compare and bench below.
examples="saxpy --random y:1
stencil --random f:1
chain1000 --random y:1
gramschmidt --random a:1
image --random input:1 --random edges:2 --random crop:3
mlp --random x:1 --random w1:2 --random b1:3 --random w2:4 --random b2:5 --random wc:6 --random bc:7 --random probs:8"
echo "== cgrun compare cpu vs cuda"
while read -r ex args; do
  echo "-- $ex"
  # shellcheck disable=SC2086
  timeout 60 ./run.sh cgrun compare "cgf/$ex.cgf" $args --backend cpu --backend cuda 2>&1 | tail -3
  if [ -f "cgf/$ex.sm90.cgf" ]; then
    echo "-- $ex (cgc --target cuda:sm_90 --target cuda:sm_80: embedded cubin/PTX)"
    # shellcheck disable=SC2086
    timeout 60 ./run.sh cgrun compare "cgf/$ex.sm90.cgf" $args --backend cpu --backend cuda 2>&1 | tail -2
  fi
done <<<"$examples"
echo "== conditional nodes: jacobi-converge, native CUDA conditional nodes vs runtime-driven vs cpu; the fixed-iteration stencil"
timeout 60 ./run.sh cgrun bench cgf/jacobi-converge.cgf --backend cuda --repetitions 10 2>&1 | grep -E "^Device|total|error" | head -5
CGRAPH_CUDA_CONDITIONALS=staged timeout 120 ./run.sh cgrun bench cgf/jacobi-converge.cgf --backend cuda --repetitions 5 2>&1 | grep -E "total|error" | head -3
timeout 60 ./run.sh cgrun bench cgf/jacobi-converge.cgf --backend cpu --repetitions 5 2>&1 | grep -E "total|error" | head -3
timeout 60 ./run.sh cgrun bench cgf/stencil.cgf --random f:1 --backend cuda --repetitions 10 2>&1 | grep -E "total|error" | head -3
echo "== issue 10/12 on cuda: conditional nodes, stored expressions, update costs"
timeout 60 ./run.sh cgrun cgf/jacobi-converge.cgf --backend cuda 2>&1 | tail -5
timeout 60 ./run.sh cgrun cgf/jacobi-converge.cgf --backend cpu 2>&1 | tail -4
timeout 120 ./run.sh cgrun compare cgf/jacobi-converge.cgf --backend cpu --backend cuda 2>&1 | tail -3
if ./run.sh cgc src/examples/lu/lu_n.json -o lu_n.cgf -q 2>/dev/null; then
  for n in 256 100 17; do
    timeout 60 ./run.sh cgrun compare lu_n.cgf --param n=$n --random a:1 --backend cpu --backend cuda --modes replay --rtol 1e-3 --atol 1e-4 2>&1 | tail -1
  done
  timeout 60 ./run.sh cgrun bench lu_n.cgf --backend cuda --random a:1 --param n=256 --param n=128 --repetitions 10 2>&1 | tail -8
fi
timeout 90 ./run.sh cgrun bench cgf/chain1000.cgf --backend cuda --random y:1 --repetitions 20 --modes replay,update-node,update-graph 2>&1 | tail -8
echo "== bench_cuda"
timeout "${CGRAPH_BENCH_TIMEOUT:-200}" ./run.sh bench_cuda --handwritten src/handwritten.cu --json "$out/bench.json" 2>&1 | tee "$out/bench.log" | tail -90
grep -E "^alternated|^rebinding" "$out/bench.log"
echo "== PyTorch next to cgrun on the chain1000 chain (benchmark 5)"
timeout 120 python3 src/torch_chain.py --json "$out/torch.json" 2>&1 | tail -6
timeout 60 ./run.sh cgrun bench cgf/chain1000.cgf --backend cuda --random y:1 --repetitions 30 2>&1 | tail -7
echo "== the Python package with torch tensors: 1 and 4 tensors bound, and spliced into a torch graph"
PYTHONPATH="$PWD/python" CGRAPH_LIBRARY="$PWD/lib/libcgraph.so" LD_LIBRARY_PATH="$PWD/lib" \
  CGRAPH_LIBCLC_DIR="$PWD/share/clc" timeout 200 python3 src/bench_torch_cuda.py cgf/chain1000.cgf 300 2>&1 | tail -14
# Before/after: another build's cgrun put at old/cgrun in the unpacked bundle (its
# libraries are the bundle's), timed round by round against this one.
if [ -x old/cgrun ]; then
  echo "== this build's cgrun against old/cgrun, cuda and cpu, alternated rounds"
  for backend in cuda cpu; do
    LD_LIBRARY_PATH="$PWD/lib" CGRAPH_LIBCLC_DIR="$PWD/share/clc" timeout 500 python3 src/compare_builds.py \
      --old old/cgrun --new bin/cgrun --backend "$backend" --rounds 3 \
      "cgf/saxpy.cgf:--random y:1" "cgf/stencil.cgf:--random f:1" "cgf/chain1000.cgf:--random y:1" \
      "cgf/mlp.cgf:--random x:1 --random w1:2 --random b1:3 --random w2:4 --random b2:5 --random wc:6 --random bc:7 --random probs:8" 2>&1
  done
fi
echo "== every example: cuda replay vs eager, and NVIDIA's OpenCL driver (benchmark 6)"
while read -r ex args; do
  for spec in cuda opencl:0 opencl:1; do
    echo "-- $ex on $spec"
    # shellcheck disable=SC2086
    timeout 90 ./run.sh cgrun bench "cgf/$ex.cgf" $args --backend "$spec" --repetitions 10 2>&1 | grep -E "^Device|^eager +total|^replay +total|error" | head -4
  done
done <<<"$examples"
echo "== cpu backend on this host's cores (bundled bench_nodes / cpu_backend_tests, when present)"
if [ -x bin/cpu_backend_tests ]; then
  CGRAPH_TEST_SOURCE_DIR="$PWD/src" CGRAPH_CACHE_DIR="$PWD/cache" timeout 120 ./run.sh cpu_backend_tests "[barrier]" 2>&1 | tail -2
fi
if [ -x bin/bench_nodes ]; then
  for cpus in all 0-7 0-1; do
    echo "-- chain1000 on cpu, cores: $cpus"
    pin=""
    [ "$cpus" != all ] && pin="taskset -c $cpus"
    $pin timeout 60 ./run.sh cgrun bench cgf/chain1000.cgf --backend cpu --random y:1 --repetitions 30 2>&1 | tail -4
  done
  # shellcheck disable=SC2046
  CGRAPH_CACHE_PERSISTENT=0 timeout 240 ./run.sh bench_nodes -n 11 $(ls cgf/*.cgf | grep -v sm90) 2>&1 | tail -40
fi
if [ -x bin/bench_cases ]; then
  echo "-- every test-suite kernel case, cpu vs PoCL"
  CGRAPH_CACHE_PERSISTENT=0 timeout 240 ./run.sh bench_cases -n 11 src/tests/cpu/kernels src/tests/opencl/kernels 2>&1 | tail -"${CGRAPH_CASES_TAIL:-130}"
fi
if [ -x bin/bench_nodes ]; then
  echo "-- the same for mlp with kernels that have barriers run as work-item fibers (A/B)"
  CGRAPH_CPU_FIBERS=1 CGRAPH_CACHE_PERSISTENT=0 timeout 120 ./run.sh bench_nodes -n 11 cgf/mlp.cgf 2>&1 | tail -9
fi
