#!/usr/bin/env bash
# nccl_cgrun_check.sh BUNDLE [RANKS]: cgrun under torchrun on cuda, one process per GPU,
# collectives through NCCL (the unique id through a file, then over TCP at torchrun's
# MASTER_ADDR and MASTER_PORT + 1): 20 data-parallel SGD steps on RANKS x 16 rows give
# every rank the weights of one cpu process on RANKS * 16 rows; a launcher world with
# neither an id file nor a rendezvous address is refused by name.
set -euo pipefail
bundle=$(cd "${1:?usage: nccl_cgrun_check.sh BUNDLE [RANKS]}" && pwd)
ranks=${2:-2}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
nccl_dir=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))')
export LD_LIBRARY_PATH="$bundle/lib:$nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CGRAPH_LIBCLC_DIR="$bundle/share/clc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bundle/bin/cgc" "$root/examples/data-parallel/graph.json" -o dp.cgf
"$bundle/bin/cgrun" dp.cgf --backend cpu -n 20 --param batch=$((16 * ranks)) --output w=ref.npy
for mode in file tcp; do
  id=()
  [ "$mode" = file ] && id=(--nccl-id-file "$work/id.$mode")
  torchrun --standalone --nproc-per-node "$ranks" --no-python "$bundle/bin/cgrun" dp.cgf --backend cuda -n 20 \
    "${id[@]}" --output "w=w.$mode.{rank}.npy"
  python3 - "$ranks" "$mode" <<'PY'
import sys, numpy as np
ranks, mode = int(sys.argv[1]), sys.argv[2]
ref = np.load("ref.npy")
for r in range(ranks):
    w = np.load(f"w.{mode}.{r}.npy")
    assert np.allclose(w, ref, rtol=1e-5, atol=1e-6), (mode, r, w, ref)
print(f"{mode}: {ranks} ranks on cuda equal one cpu process: max |diff| "
      f"{max(np.abs(np.load(f'w.{mode}.{r}.npy') - ref).max() for r in range(ranks)):.2e}")
PY
done
if WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 "$bundle/bin/cgrun" dp.cgf --backend cuda 2> err.txt; then
  echo "FAIL: a launcher world without an id file ran"; exit 1
fi
grep -q "give --nccl-id-file" err.txt && echo "refused: $(cat err.txt)"
echo "nccl_cgrun_check: passed"
