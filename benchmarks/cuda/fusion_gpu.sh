#!/usr/bin/env bash
# fusion_gpu.sh [N]: inside an unpacked GPU bundle (scripts/gpu-bundle.sh), cgfuse on the
# GPU, one run, side by side (issue 9): the 4-kernel elementwise chain of
# tests/fusion/data/chain4.json over N floats (default 256M) unfused, fused without
# internalization and fused with the intermediates in private memory on cuda, next to
# PyTorch eager and torch.compile of the same computation, and chain1000 unfused vs
# `cgfuse --auto`. Bandwidth counts the minimal traffic: read x, write y (8 bytes per
# element); bench_cuda's quality_copy_64M row is the copy bandwidth to compare with.
set -u
n="${1:-268435456}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here" || exit 1
w="$(mktemp -d)"
mkdir -p "$w/kernels"
cp src/tests/fusion/data/kernels/chain.cl "$w/kernels/"
sed -e "s/\"count\": 4096/\"count\": $n/g" -e "s/\"global\": \[4096\], \"local\": \[64\]/\"global\": [$n], \"local\": [256]/g" \
  src/tests/fusion/data/chain4.json > "$w/chain4.json"
./run.sh cgc "$w/chain4.json" -o "$w/unfused.cgf" -q || exit 1
./run.sh cgfuse "$w/unfused.cgf" -o "$w/fused.cgf" --fuse k1,k2,k3,k4 --no-internalize >/dev/null || exit 1
./run.sh cgfuse "$w/unfused.cgf" -o "$w/fused_priv.cgf" --fuse k1,k2,k3,k4 --internalize t1,t2,t3 --remarks || exit 1
# Each with the cuda backend's coarse entries (4 work-items per thread, 16-byte
# accesses: the default) and without (CGRAPH_CUDA_COARSEN_MIN=0), side by side.
for coarse in on off; do
  for v in unfused fused fused_priv; do
    env=""
    [ "$coarse" = off ] && env="CGRAPH_CUDA_COARSEN_MIN=0"
    # replay: each run waited for (submit to completion); replay-stream: 10 runs back
    # to back per sample, as torch_chain4.py times PyTorch (events around 20 runs).
    out="$(env $env ./run.sh cgrun bench "$w/$v.cgf" --backend cuda --random x:1 --repetitions 10 --modes replay,replay-stream 2>&1)"
    for mode in replay replay-stream; do
      med="$(echo "$out" | awk -v m="$mode" '$1 == m && $2 == "total" {print $4}')" # median us
      awk -v name="cgraph $v, coarse $coarse, $mode" -v us="$med" -v n="$n" \
        'BEGIN { if (us > 0) printf "%-46s %10.3f ms %10.1f GB/s\n", name, us / 1000, 8 * n / (us * 1e-6) / 1e9; else print name ": no figure" }'
    done
  done
done
timeout 300 python3 src/torch_chain4.py --elements "$n"
echo "-- chain1000: unfused vs cgfuse --auto (cuda replay)"
./run.sh cgfuse cgf/chain1000.cgf -o "$w/chain1000_auto.cgf" --auto 2>&1 | tail -2
for f in cgf/chain1000.cgf "$w/chain1000_auto.cgf"; do
  ./run.sh cgrun bench "$f" --backend cuda --random y:1 --repetitions 30 --modes replay 2>&1 | grep -E '^replay +total|error'
done
