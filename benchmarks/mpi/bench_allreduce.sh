#!/usr/bin/env bash
# bench_allreduce.sh BUILD_DIR [RANKS...]: an all_reduce node of 64 MiB (16M floats) per
# rank replayed by cgrun under mpirun, next to a plain MPI program doing the same
# MPI_Allreduce, for each rank count (default 2 and 4), on this machine (loopback).
set -euo pipefail
build=${1:?usage: bench_allreduce.sh BUILD_DIR [RANKS...]}
shift
ranks=("${@:-2 4}")
[ $# -eq 0 ] && ranks=(2 4)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/tools/cgc/cgc" "$here/allreduce.json" -o "$work/allreduce.cgf"
mpicc -O2 -o "$work/plain_allreduce" "$here/plain_allreduce.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo)
for np in "${ranks[@]}"; do
  echo "== $np ranks, 16777216 floats (64 MiB) per rank"
  "${mpi[@]}" -np "$np" "$work/plain_allreduce" 16777216 20
  "${mpi[@]}" -np "$np" "$build/tools/cgrun/cgrun" "$work/allreduce.cgf" --fill buf=1 -n 21 | grep -E "per iteration|first run"
done
