#!/usr/bin/env bash
# gpu-bundle.sh [BUILD_DIR] [OUT.tar.xz]: builds cgrun, cgc, the CUDA tests and
# benchmarks with the CUDA backend (Release), and packs them with every shared library
# they load (ldd closure) except the glibc / libstdc++ / libgcc basics every Ubuntu 24.04
# has, plus libclc's nvptx64 bitcode, the examples and the test kernels, into one
# tar.xz. On the GPU machine (no LLVM 14 there):
#
#   tar xJf cgraph-gpu.tar.xz && cd cgraph-gpu && ./run.sh cgrun --list-devices
#
# run.sh sets LD_LIBRARY_PATH=lib and CGRAPH_LIBCLC_DIR=share/clc. Needs the CUDA
# toolkit headers here (cuda.h) so that the backend is compiled in.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-gpu}"
out="${2:-$build/cgraph-gpu.tar.xz}"
targets="cgrun cgc cgfuse test_cuda_backend test_cuda_collectives test_cuda_multi_gpu test_cuda_ptxas cgraph_capi"
[ -f "$root/benchmarks/cuda/CMakeLists.txt" ] && targets="$targets bench_cuda"
# cpu next to PoCL on the GPU machine's 16 cores (bench_nodes, bench_cases), and the cpu
# suite there: with CGRAPH_GPU_BUNDLE_CPU=1 added to the CUDA programs (about 5 MB more:
# over 64 MiB with the sources), with CGRAPH_GPU_BUNDLE_CPU=only
# instead of them (no CUDA programs, no cubin forms; run-tests.sh runs the cpu suite).
cpu="${CGRAPH_GPU_BUNDLE_CPU:-0}"
# CGRAPH_GPU_BUNDLE_TESTS=0: no CUDA test programs (a faster build and a smaller archive
# for benchmark runs; run-tests.sh then has nothing to run but the Python tests).
tests="${CGRAPH_GPU_BUNDLE_TESTS:-1}"
[ "$tests" = 0 ] && targets="$(echo "$targets" | tr ' ' '\n' | grep -v '^test_cuda_' | tr '\n' ' ')"
[ "$cpu" = 1 ] && targets="$targets bench_nodes bench_cases cpu_backend_tests"
[ "$cpu" = only ] && targets="cgrun cgc bench_nodes bench_cases cpu_backend_tests"
CGRAPH_TARGETS="$targets" bash "$root/scripts/build.sh" "$build"
[ "$cpu" = only ] || grep -q "CGRAPH_CUDA_INCLUDE:PATH=.*include" "$build/CMakeCache.txt" ||
  { echo "gpu-bundle.sh: cuda.h was not found at configure time: the CUDA backend is not built" >&2; exit 1; }

stage="$(mktemp -d)/cgraph-gpu"
mkdir -p "$stage/bin" "$stage/lib" "$stage/share/clc" "$stage/cgf"
bins=("$build/tools/cgrun/cgrun" "$build/tools/cgc/cgc")
if [ "$cpu" != only ]; then
  bins+=("$build/tools/cgfuse/cgfuse")
  [ "$tests" = 0 ] || bins+=("$build/tests/cuda/test_cuda_backend" "$build/tests/cuda/test_cuda_ptxas"
                             "$build/tests/cuda/test_cuda_collectives" "$build/tests/cuda/test_cuda_multi_gpu")
  [ -x "$build/benchmarks/cuda/bench_cuda" ] && bins+=("$build/benchmarks/cuda/bench_cuda")
fi
if [ "$cpu" != 0 ]; then
  for extra in benchmarks/cpu/bench_nodes benchmarks/cpu/bench_cases tests/cpu/cpu_backend_tests; do
    [ -x "$build/$extra" ] && bins+=("$build/$extra")
  done
fi
cp "${bins[@]}" "$stage/bin/"
# Libraries Ubuntu 24.04 has in a compatible (same or newer) version: not shipped.
skip='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libresolv|libutil)\.so'
capi=()
[ "$cpu" != only ] && [ -f "$build/lib/capi/libcgraph.so" ] && capi=("$build/lib/capi/libcgraph.so")
for b in "${bins[@]}" "${capi[@]}"; do
  ldd "$b" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  name="$(basename "$lib")"
  if [[ "$name" =~ $skip ]]; then continue; fi
  cp -L "$lib" "$stage/lib/$name"
done
cp /usr/lib/clc/nvptx64--nvidiacl.bc "$stage/share/clc/"
# The Python package (pure Python over libcgraph.so) and its GPU tests and benchmark.
if [ ${#capi[@]} -gt 0 ]; then
  cp -L "${capi[0]}" "$stage/lib/libcgraph.so"
  cp -r "$root/python" "$stage/python"
  mkdir -p "$stage/src/tests"
  cp -r "$root/tests/python_gpu" "$stage/src/tests/"
  cp "$root/benchmarks/python/bench_torch_cuda.py" "$root/benchmarks/compare_builds.py" "$stage/src/"
fi
# clang's OpenCL headers (in-process OpenCL C compiles: tests, builtin kernels, cgc),
# where lib/kernel looks for them beside the loaded libclang-cpp.
resdir="$(ls -d /usr/lib/llvm-14/lib/clang/*/ | head -1)"
mkdir -p "$stage/lib/clang/$(basename "$resdir")/include"
cp "$resdir/include/opencl-c.h" "$resdir/include/opencl-c-base.h" "$stage/lib/clang/$(basename "$resdir")/include/"
# Sources the tests read (CGRAPH_SOURCE_DIR is baked in; run.sh links it), the examples
# as .cgf files (compiled here: cgc needs nothing there, but saves the time).
mkdir -p "$stage/src"
cp -r "$root/examples" "$stage/src/"
mkdir -p "$stage/src/benchmarks" && cp -r "$root/benchmarks/gpt-decode" "$stage/src/benchmarks/"
cp "$root/benchmarks/cuda/handwritten.cu" "$root/benchmarks/cuda/torch_chain.py" "$root/benchmarks/cuda/torch_chain4.py" "$stage/src/"
cp "$root/benchmarks/cuda/fusion_gpu.sh" "$root/benchmarks/cuda/fusion_e2e_gpu.sh" "$stage/"
mkdir -p "$stage/src/tests/fusion"
cp -r "$root/tests/cpu" "$root/tests/opencl" "$stage/src/tests/"
cp -r "$root/tests/fusion/data" "$root/tests/fusion/run_e2e.sh" "$stage/src/tests/fusion/"
for g in "$root"/examples/*/graph.json; do
  ex="$(basename "$(dirname "$g")")"
  "$build/tools/cgc/cgc" "$g" -o "$stage/cgf/$ex.cgf" --keep-source
  # the same with PTX + cubin forms (cgc --target), so the backend loads a cubin
  [ "$cpu" = only ] ||
    "$build/tools/cgc/cgc" "$g" -o "$stage/cgf/$ex.sm90.cgf" --target cuda:sm_90 --target cuda:sm_80 -q
done
cat > "$stage/run.sh" <<'RUN'
#!/usr/bin/env bash
# ./run.sh PROGRAM [ARGS...]: runs bin/PROGRAM with the bundled libraries.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CGRAPH_LIBCLC_DIR="$here/share/clc"
prog="$1"; shift
exec "$here/bin/$prog" "$@"
RUN
chmod +x "$stage/run.sh"
cat > "$stage/run-tests.sh" <<'RUN'
#!/usr/bin/env bash
# ./run-tests.sh [catch args]: the ptxas test (where the toolkit's ptxas is on PATH or
# in /usr/local/cuda/bin) and the CUDA conformance suite, on the bundled sources.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CGRAPH_TEST_SOURCE_DIR="$here/src"
export CGRAPH_TEST_OUT_DIR="${TMPDIR:-/tmp}/cgraph-ptxas-out"
export CGRAPH_CACHE_DIR="${CGRAPH_CACHE_DIR:-$here/cache}"
export CGRAPH_PTXAS="${CGRAPH_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}"
tests=0; [ -x "$here/bin/test_cuda_backend" ] && tests=1 # CGRAPH_GPU_BUNDLE_TESTS=0 bundles have none
if [ $tests = 1 ]; then
  "$here/run.sh" test_cuda_ptxas | tail -3; echo "test_cuda_ptxas exit ${PIPESTATUS[0]}"
  "$here/run.sh" test_cuda_backend "$@"; echo "test_cuda_backend exit $?"
fi
# The kernel suite again with every 1-D range coarsened where the kernel allows it
# (the default coarsens only ranges of a million items and more).
# The Python package on cuda with torch tensors, where torch is installed.
if [ -f "$here/lib/libcgraph.so" ] && python3 -c "import torch" 2>/dev/null; then
  PYTHONPATH="$here/python" CGRAPH_LIBRARY="$here/lib/libcgraph.so" CGRAPH_TEST_SAXPY="$here/cgf/saxpy.cgf" \
    LD_LIBRARY_PATH="$here/lib" CGRAPH_LIBCLC_DIR="$here/share/clc" PYTHONDONTWRITEBYTECODE=1 \
    python3 -m pytest -q -p no:cacheprovider "$here/src/tests/python_gpu"
  echo "pytest python_gpu exit $?"
fi
if [ $# -eq 0 ] && [ $tests = 1 ]; then
  CGRAPH_CUDA_COARSEN_MIN=1 "$here/run.sh" test_cuda_backend "[kernels]" | tail -3
  echo "test_cuda_backend [kernels], coarsened from 1 item, exit ${PIPESTATUS[0]}"
  # The whole suite again with the parameter table loader instead of the ring.
  CGRAPH_CUDA_TABLE_RING=0 "$here/run.sh" test_cuda_backend | tail -3
  echo "test_cuda_backend, parameter table loader (CGRAPH_CUDA_TABLE_RING=0), exit ${PIPESTATUS[0]}"
fi
RUN
chmod +x "$stage/run-tests.sh"
if [ "$cpu" = only ]; then
  cat > "$stage/run-tests.sh" <<'RUN'
#!/usr/bin/env bash
# ./run-tests.sh [catch args]: the cpu backend's suite on the bundled sources, with a
# cache of its own.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CGRAPH_TEST_SOURCE_DIR="$here/src"
export CGRAPH_CACHE_DIR="${CGRAPH_CACHE_DIR:-$here/cache}"
"$here/run.sh" cpu_backend_tests "$@"; echo "cpu_backend_tests exit $?"
RUN
fi
# Symbols off the programs and libcgraph.so (a few MB less in the archive; the run's
# carry limit counts it with the sources).
strip "$stage"/bin/* 2>/dev/null || true
[ -f "$stage/lib/libcgraph.so" ] && strip "$stage/lib/libcgraph.so"
tar -C "$(dirname "$stage")" -cf - cgraph-gpu | xz "-${CGRAPH_XZ_LEVEL:-9}e" -T2 > "$out"
echo "gpu-bundle.sh: $out ($(du -h "$out" | cut -f1))"
