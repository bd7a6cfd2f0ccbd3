#!/usr/bin/env bash
# bench_nccl.sh BUNDLE [RANKS]: collective nodes on cuda through NCCL against NCCL's own
# figure from torch.distributed, in one run on one machine with RANKS GPUs (default 2):
#  1. an all_reduce node (sum, f32) of 1 MiB and of 1 GiB per rank, replayed and eager
#     (cgrun bench under torchrun, one process per GPU, the unique id through a file);
#  2. torch.distributed's all_reduce of the same sizes (torch_allreduce.py);
#  3. the data-parallel example's step, replay against eager (kernel launches and NCCL
#     calls one by one).
# BUNDLE: an unpacked scripts/gpu-bundle.sh tree. NCCL is torch's (pip's nvidia-nccl),
# found next to it and put on LD_LIBRARY_PATH for cgraph's dlopen.
set -euo pipefail
bundle=$(cd "${1:?usage: bench_nccl.sh BUNDLE [RANKS]}" && pwd)
ranks=${2:-2}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
nccl_dir=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))')
export LD_LIBRARY_PATH="$bundle/lib:$nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CGRAPH_LIBCLC_DIR="$bundle/share/clc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bundle/bin/cgc" "$here/../mpi/allreduce.json" -o "$work/allreduce.cgf"
"$bundle/bin/cgc" "$here/../../examples/data-parallel/graph.json" -o "$work/dp.cgf"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n "$ranks"
python3 -c 'import torch; print("torch", torch.__version__, "nccl", ".".join(map(str, torch.cuda.nccl.version())))'
run() { # run NAME ARGS...: cgrun under torchrun, the unique id through a fresh file
  local id="$work/nccl-$1.id"; shift
  rm -f "$id"
  torchrun --standalone --nproc-per-node "$ranks" --no-python "$bundle/bin/cgrun" "$@" --backend cuda --nccl-id-file "$id"
}
for n in 262144 268435456; do
  echo "== all_reduce node, $((n * 4)) bytes per rank, $ranks ranks"
  run "ar$n" bench "$work/allreduce.cgf" --param "n=$n" --fill buf=1 --modes replay,replay-stream,eager --repetitions 30
done
echo "== torch.distributed all_reduce"
torchrun --standalone --nproc-per-node "$ranks" "$here/torch_allreduce.py" 1048576 1073741824
echo "== data-parallel step, $ranks ranks"
run dp bench "$work/dp.cgf" --modes replay,replay-stream,eager --repetitions 200
