"""NCCL's own all_reduce figure through torch.distributed, for bench_nccl.sh.

Run under torchrun (one process per GPU). For each size (bytes, f32): the median of
synchronized single calls (the latency a submission sees) and the mean of 50 calls
enqueued back to back (throughput), with algorithm and bus bandwidth
(busbw = algbw * 2 (world - 1) / world, as nccl-tests reports it).
"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist


def main():
    sizes = [int(s) for s in sys.argv[1:]] or [1 << 20, 1 << 30]
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    for nbytes in sizes:
        x = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        single = []
        for _ in range(30):
            t0 = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize()
            single.append(time.perf_counter() - t0)
        reps = 50 if nbytes <= (64 << 20) else 20
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        mean = (time.perf_counter() - t0) / reps
        med = statistics.median(single)
        if rank == 0:
            for what, t in (("synchronized call, median", med), ("back to back, mean", mean)):
                algbw = nbytes / t / 1e9
                print(f"torch.distributed all_reduce {nbytes} B x {world} ranks, {what}: {t * 1e6:.1f} us, "
                      f"algbw {algbw:.1f} GB/s, busbw {algbw * 2 * (world - 1) / world:.1f} GB/s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
