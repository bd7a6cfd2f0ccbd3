"""Collective nodes from Python on several GPUs, one process per GPU under torchrun:

    torchrun --standalone --nproc-per-node 2 tests/python_gpu/torchrun_collectives.py \\
        DATA_PARALLEL.cgf ALLREDUCE.cgf

- ``Communicator.from_torch()`` forms an NCCL world with torch.distributed's ranks;
- an all_reduce node over a torch tensor bound zero-copy gives torch.distributed's
  all_reduce of the same tensors, replayed twice with other values;
- the data-parallel example trains every rank to one numpy process's weights on
  ``world * batch`` rows;
- ranks that finalize different collectives all fail with one message.

Every rank prints ``ok`` lines; any failure raises (torchrun exits non-zero). Needs
CUDA GPUs, NCCL and torch; CI has none (tests/python covers the cpu side)."""

import os
import sys

import numpy as np
import torch
import torch.distributed as dist

import cgraph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "data-parallel"))
from reference import weights as numpy_weights  # noqa: E402


def say(rank, what):
    print(f"rank {rank}: ok: {what}", flush=True)


def allreduce_matches_torch(allreduce_cgf, comm, device):
    rank, world = comm.rank, comm.size
    n = (1 << 20) + 3  # not a multiple of any vector width
    exe = cgraph.load(allreduce_cgf).finalize(device, communicator=comm)
    for round_ in range(2):
        base = torch.arange(n, device="cuda", dtype=torch.float32) % 1000
        ours = base * (rank + 1) + round_
        theirs = ours.clone()
        address = ours.data_ptr()
        torch.cuda.synchronize()  # cgraph submits on its own stream
        exe.run(buf=ours, n=n)
        dist.all_reduce(theirs)
        torch.cuda.synchronize()
        assert ours.data_ptr() == address
        assert torch.equal(ours, theirs), (round_, (ours - theirs).abs().max().item())
    say(rank, f"all_reduce of {n} floats in a bound torch tensor equals torch.distributed's, twice")


def data_parallel_trains(dp_cgf, comm, device):
    rank, world = comm.rank, comm.size
    exe = cgraph.load(dp_cgf).finalize(device, communicator=comm)
    for _ in range(20):
        exe.run(rank=rank, world=world, batch=16)
    w = np.frombuffer(exe.read("w"), dtype=np.float32)
    ref = numpy_weights(16 * world, 20)
    diff = float(np.max(np.abs(w - ref)))
    assert diff < 1e-4, (w, ref)
    say(rank, f"20 data-parallel steps equal one numpy process on {16 * world} rows (max |diff| {diff:.1e})")


def mismatch_fails_everywhere(dp_cgf, allreduce_cgf, comm, device):
    # Rank 0 finalizes the data-parallel step, the others the lone all_reduce.
    path = dp_cgf if comm.rank == 0 else allreduce_cgf
    try:
        cgraph.load(path).finalize(device, communicator=comm, collective_timeout=30.0)
    except cgraph.InvalidError as e:
        assert "the ranks run different collectives" in str(e), str(e)
        box = [str(e)]
    else:
        raise AssertionError("ranks with different collectives finalized")
    every = [None] * comm.size
    dist.all_gather_object(every, box[0])
    assert all(m == every[0] for m in every), every
    say(comm.rank, "different collectives: every rank fails at finalize with one message")


def main():
    dp_cgf, allreduce_cgf = sys.argv[1], sys.argv[2]
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    comm = cgraph.Communicator.from_torch()
    assert (comm.rank, comm.size) == (dist.get_rank(), dist.get_world_size())
    assert comm.transport == "nccl", comm.transport
    device = f"cuda:{local}"
    allreduce_matches_torch(allreduce_cgf, comm, device)
    data_parallel_trains(dp_cgf, comm, device)
    if comm.size > 1:
        mismatch_fails_everywhere(dp_cgf, allreduce_cgf, comm, device)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
