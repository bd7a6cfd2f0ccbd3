#!/bin/bash
# Collective nodes under mpirun (tests/mpi/CMakeLists.txt registers each case).
# Usage: run_mpi_tests.sh CASE MPIRUN CGC CGRUN SOURCE_DIR WORK_DIR
set -euo pipefail
case_name=$1 mpirun=$2 cgc=$3 cgrun=$4 src=$5 work=$6
rm -rf "$work"
mkdir -p "$work"
cd "$work"
# Two ranks on one machine over loopback TCP only (no shared-memory or fabric setup).
mpi=("$mpirun" --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo)
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cgc" "$src/examples/data-parallel/graph.json" -o dp.cgf

case "$case_name" in
data_parallel)
  # The reference: one process, the global batch of 2 x 16 rows, 20 SGD steps.
  "$cgrun" dp.cgf -n 20 --param batch=32 --output w=ref.npy
  # Two ranks, 16 rows each from $rank, the gradient summed by all_reduce: every rank
  # ends with the reference's weights (up to summation order).
  "${mpi[@]}" -np 2 "$cgrun" dp.cgf -n 20 --param batch=16 --check w=@ref.npy --rtol 1e-4 --atol 1e-6 \
    --output 'w=w_{rank}.npy' --all-ranks > ranks.out
  [ "$(grep -c '^check w: ok' ranks.out)" = 2 ] || fail "expected 'check w: ok' from both ranks: $(cat ranks.out)"
  [ -f w_0.npy ] && [ -f w_1.npy ] || fail "each rank writes its w_{rank}.npy"
  # And both against numpy: the same model, data and steps in float64.
  PYTHONPATH="$src/examples/data-parallel" /usr/bin/python3 - <<'PY'
import numpy as np
from reference import weights
w = weights(rows=32, steps=20)
for r in (0, 1):
    got = np.load(f"w_{r}.npy")
    assert got.dtype == np.float32, got.dtype
    err = np.max(np.abs(got - w))
    assert err < 1e-4, f"rank {r}: max abs err {err} vs numpy"
    assert np.any(got != 0), "the weights never moved"
print("numpy reference: ok")
PY
  ;;
compare)
  # cgrun compare under mpirun: each rank's weights and all-reduced gradient after one
  # step against the one-process step of the global batch (--reference-param).
  "${mpi[@]}" -np 2 "$cgrun" compare dp.cgf --backend cpu --param batch=16 --reference-param batch=32 \
    --slot w --slot grad --rtol 1e-4 --atol 1e-6 > agree.out
  grep -q "^2 ranks agree with the one-process run on 'w', 'grad'" agree.out || fail "expected agreement: $(cat agree.out)"
  # The same ranks against a one-process run of only 16 rows: every rank fails, naming
  # the slot, and exits 1 (no rank left waiting, no abort).
  rc=0
  "${mpi[@]}" -np 2 "$cgrun" compare dp.cgf --backend cpu --param batch=16 --slot w > differ.out 2> differ.err || rc=$?
  [ "$rc" = 1 ] || fail "expected exit 1 when the ranks differ, got $rc: $(cat differ.err)"
  grep -q "cgrun: rank 1: slot 'w': element" differ.err || fail "expected rank 1's difference: $(cat differ.err)"
  # --slot of a slot the ranks size differently: a clear error on every rank.
  cat > sized.json <<'JSON'
{
  "name": "sized",
  "kernels": [{ "file": "sized.cl" }],
  "slots": [{ "name": "part", "count": "4 * $world", "type": "f32", "external": true }],
  "params": [{ "name": "rank", "type": "i32" }, { "name": "world", "type": "i32", "default": 1 }],
  "nodes": [{ "name": "set", "kernel": "set", "global": ["4 * $world"], "args": ["part"] }]
}
JSON
  echo '__kernel void set(__global float *p) { p[get_global_id(0)] = 1.0f; }' > sized.cl
  "$cgc" sized.json -o sized.cgf
  rc=0
  "${mpi[@]}" -np 2 "$cgrun" compare sized.cgf --backend cpu --slot part > sized.out 2> sized.err || rc=$?
  [ "$rc" = 1 ] || fail "expected exit 1 for a slot sized differently, got $rc"
  grep -q "16 bytes in the one-process run, 32 in each rank's" sized.err || fail "expected the sizes: $(cat sized.err)"
  echo "compare: ok"
  ;;
ring)
  # One file for every rank and world size: each rank sends to the next and receives
  # from the previous one, all sending first (the MPI communicator completes a send
  # later, so nobody waits on itself), with 3 ranks.
  cat > ring.cl <<'CL'
__kernel void set(__global int *x, int r) { x[get_global_id(0)] = 100 * r + (int)get_global_id(0); }
CL
  cat > ring.json <<'JSON'
{
  "name": "ring",
  "kernels": [{ "file": "ring.cl" }],
  "slots": [
    { "name": "mine", "count": 4, "type": "i32", "init": "transient" },
    { "name": "got", "count": 4, "type": "i32", "external": true }
  ],
  "params": [{ "name": "rank", "type": "i32" }, { "name": "world", "type": "i32", "default": 1 }],
  "nodes": [
    { "name": "set", "kernel": "set", "global": [4], "args": ["mine", "$rank"] },
    { "name": "tx", "send": { "slot": "mine", "peer": "($rank + 1) % $world", "count": 4, "type": "i32" } },
    { "name": "rx", "recv": { "slot": "got", "peer": "($rank + $world - 1) % $world", "count": 4, "type": "i32" } }
  ]
}
JSON
  "$cgc" ring.json -o ring.cgf
  "${mpi[@]}" -np 3 "$cgrun" ring.cgf --collective-timeout 30 --output 'got=got_{rank}.bin'
  /usr/bin/python3 - <<'PY'
import numpy as np
for r in range(3):
    got = np.fromfile(f"got_{r}.bin", dtype=np.int32)
    want = 100 * ((r + 2) % 3) + np.arange(4)
    assert (got == want).all(), (r, got, want)
print("ring: ok")
PY
  ;;
conditional)
  # An all_reduce inside a while loop's body (the cpu backend runs the loop as
  # runtime-driven stages): 3 trips, each adding the sum over the ranks of 1, so every
  # rank ends with 3 * world; one rank without mpirun, then 2.
  cat > loop.cl <<'CL'
__kernel void ones(__global float *x) { x[get_global_id(0)] = 1.0f; }
__kernel void step(__global const float *x, __global float *acc, __global uint *n, __global uint *flag) {
  acc[0] += x[0];
  n[0] += 1;
  flag[0] = n[0] < 3u ? 1u : 0u;
}
CL
  cat > loop.json <<'JSON'
{
  "name": "collective-loop",
  "kernels": [{ "file": "loop.cl" }],
  "slots": [
    { "name": "x", "count": 4, "type": "f32", "init": "transient" },
    { "name": "acc", "count": 1, "type": "f32", "external": true },
    { "name": "n", "count": 1, "type": "u32", "init": { "fill": 0, "type": "u32" } },
    { "name": "flag", "count": 1, "type": "u32", "init": { "fill": 1, "type": "u32" } }
  ],
  "params": [{ "name": "rank", "type": "i32" }, { "name": "world", "type": "i32", "default": 1 }],
  "nodes": [
    { "name": "loop", "while": "flag", "max_trips": 10, "body": [
      { "name": "one", "kernel": "ones", "global": [4], "args": ["x"] },
      { "name": "sum", "all_reduce": { "slot": "x", "count": 4, "op": "sum", "type": "f32" } },
      { "name": "add", "kernel": "step", "global": [1], "args": ["x", "acc", "n", "flag"] }
    ] }
  ]
}
JSON
  "$cgc" loop.json -o loop.cgf
  "$cgrun" loop.cgf --zeros acc --output acc=one.bin
  "${mpi[@]}" -np 2 "$cgrun" loop.cgf --zeros acc --collective-timeout 30 --output 'acc=two_{rank}.bin'
  /usr/bin/python3 - <<'PY'
import numpy as np
for name, want in (("one.bin", 3.0), ("two_0.bin", 6.0), ("two_1.bin", 6.0)):
    got = np.fromfile(name, dtype=np.float32)
    assert got.shape == (1,) and got[0] == want, (name, got, want)
print("conditional: ok")
PY
  ;;
pipeline)
  # examples/pipeline: rank r runs layer r on each microbatch, receiving from r - 1 and
  # sending to r + 1 (the ends move nothing: counts of zero); one rank without mpirun,
  # then 2 and 3 ranks; the last rank's result against the numpy reference.
  "$cgc" "$src/examples/pipeline/graph.json" -o pipeline.cgf
  "$cgrun" pipeline.cgf --output result=one.bin
  /usr/bin/python3 "$src/examples/pipeline/reference.py" 1 one.bin
  for n in 2 3; do
    "${mpi[@]}" -np "$n" "$cgrun" pipeline.cgf --collective-timeout 30 --output "result=r${n}_{rank}.bin"
    /usr/bin/python3 "$src/examples/pipeline/reference.py" "$n" "r${n}_$((n - 1)).bin"
  done
  ;;
kinds)
  # Every kind through MPI, with 2 and 3 ranks: all_reduce (sum f32, max i32, prod f32)
  # in place, all_gather, reduce_scatter (min), broadcast from root 1; every rank's
  # slots against numpy.
  cat > kinds.cl <<'CL'
__kernel void init(__global float *a, __global int *m, __global float *p, __global float *part,
                   __global float *big, __global float *b, int rank, int world) {
  const int i = get_global_id(0);
  if (i < 8) { a[i] = 10 * rank + i; m[i] = (rank + 1) * (i + 1); p[i] = rank + 2; b[i] = 1000 * rank + i; }
  if (i < 4) part[i] = 100 * rank + i;
  if (i < 4 * world) big[i] = (float)((rank * 7 + i * 3) % 10);
}
CL
  cat > kinds.json <<'JSON'
{
  "name": "kinds",
  "kernels": [{ "file": "kinds.cl" }],
  "slots": [
    { "name": "a", "count": 8, "type": "f32", "init": "transient" },
    { "name": "m", "count": 8, "type": "i32", "init": "transient" },
    { "name": "p", "count": 8, "type": "f32", "init": "transient" },
    { "name": "part", "count": 4, "type": "f32", "init": "transient" },
    { "name": "whole", "count": 16, "type": "f32", "init": "transient" },
    { "name": "big", "count": 16, "type": "f32", "init": "transient" },
    { "name": "mine", "count": 4, "type": "f32", "init": "transient" },
    { "name": "b", "count": 8, "type": "f32", "init": "transient" }
  ],
  "params": [{ "name": "rank", "type": "i32" }, { "name": "world", "type": "i32", "default": 1 }],
  "nodes": [
    { "name": "init", "kernel": "init", "global": [16], "args": ["a", "m", "p", "part", "big", "b", "$rank", "$world"] },
    { "name": "sum", "all_reduce": { "slot": "a", "count": 8 } },
    { "name": "max", "all_reduce": { "slot": "m", "count": 8, "op": "max", "type": "i32" } },
    { "name": "prod", "all_reduce": { "slot": "p", "count": 8, "op": "prod" } },
    { "name": "gather", "all_gather": { "src": "part", "dst": "whole", "count": 4 } },
    { "name": "scatter", "reduce_scatter": { "src": "big", "dst": "mine", "count": 4, "op": "min" } },
    { "name": "bcast", "broadcast": { "slot": "b", "count": 8, "root": 1 } }
  ]
}
JSON
  "$cgc" kinds.json -o kinds.cgf
  for n in 2 3; do
    outs=()
    for s in a m p whole mine b; do outs+=(--output "$s=${s}_${n}_{rank}.bin"); done
    "${mpi[@]}" -np "$n" "$cgrun" kinds.cgf --collective-timeout 30 "${outs[@]}"
  done
  /usr/bin/python3 - <<'PY'
import numpy as np
def load(s, n, r, t=np.float32): return np.fromfile(f"{s}_{n}_{r}.bin", dtype=t)
for n in (2, 3):
    R = np.arange(n)[:, None]
    i8, i4 = np.arange(8), np.arange(4)
    big = ((R * 7 + np.arange(4 * n)[None, :] * 3) % 10).astype(np.float32)
    for r in range(n):
        assert (load("a", n, r) == (10 * R + i8).sum(0)).all(), ("sum", n, r)
        assert (load("m", n, r, np.int32) == n * (i8 + 1)).all(), ("max", n, r)
        assert (load("p", n, r) == np.prod(np.arange(n) + 2)).all(), ("prod", n, r)
        assert (load("whole", n, r)[:4 * n] == (100 * R + i4).reshape(-1)).all(), ("gather", n, r)
        assert (load("mine", n, r) == big[:, 4 * r:4 * r + 4].min(0)).all(), ("scatter", n, r)
        assert (load("b", n, r) == 1000 + i8).all(), ("bcast", n, r)
print("every kind: ok")
PY
  ;;
early_exit)
  # Rank 1 runs one step and exits; rank 0 waits in its second step's all_reduce until
  # the timeout (3 s), then fails naming the node and rank, and the run ends
  # (MPI_Abort) instead of hanging.
  start=$(date +%s)
  set +e
  timeout 120 "${mpi[@]}" -np 1 "$cgrun" dp.cgf -n 5 --collective-timeout 3 : -np 1 "$cgrun" dp.cgf -n 1 \
    > run.out 2> run.err
  rc=$?
  set -e
  elapsed=$(( $(date +%s) - start ))
  [ "$rc" != 0 ] || fail "the run succeeded although rank 1 left"
  [ "$rc" != 124 ] || fail "the run hung until the test's own timeout"
  grep -q "node 'sum_grad' (rank 0 of 2): all_reduce: no progress after 3000 ms" run.err ||
    fail "no timeout error naming the node and rank: $(cat run.err)"
  [ "$elapsed" -lt 60 ] || fail "took ${elapsed}s"
  echo "rank 0 failed after ${elapsed}s as expected"
  ;;
mismatch)
  # Rank 1 runs a graph whose all_reduce differs (8 of the 16 gradients): both ranks
  # fail at finalize saying so, before any step runs; and a rank that runs a graph
  # without collectives leaves the other failing within its timeout in that comparison.
  sed 's/"count": 16, "op": "sum"/"count": 8, "op": "sum"/' "$src/examples/data-parallel/graph.json" > half.json
  grep -q '"count": 8' half.json || fail "could not derive the mismatched graph"
  cp -r "$src/examples/data-parallel/kernels" .
  "$cgc" half.json -o half.cgf
  set +e
  timeout 120 "${mpi[@]}" -np 1 "$cgrun" dp.cgf --all-ranks : -np 1 "$cgrun" half.cgf --all-ranks > run.out 2> run.err
  rc=$?
  set -e
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "rc $rc: $(cat run.err)"
  grep -q "the ranks run different collectives: rank 0 has 1 all_reduce/all_gather/reduce_scatter/broadcast nodes, rank 1 has 1 that differ" run.err ||
    fail "no mismatch error: $(cat run.err)"
  "$cgc" "$src/examples/saxpy/graph.json" -o other.cgf
  set +e
  timeout 120 "${mpi[@]}" -np 1 "$cgrun" dp.cgf --collective-timeout 3 : -np 1 "$cgrun" other.cgf > run2.out 2> run2.err
  rc=$?
  set -e
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "rc $rc: $(cat run2.err)"
  grep -q "finalize: comparing the ranks' collective nodes (rank 0 of 2): all_gather: no progress after 3000 ms" run2.err ||
    fail "no timeout in finalize's comparison: $(cat run2.err)"
  echo "mismatch refused at finalize"
  ;;
*) fail "unknown case $case_name" ;;
esac
