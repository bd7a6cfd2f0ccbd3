#!/usr/bin/env python3
"""PyTorch next to cgfuse on the GPU (issue 9): the 4-kernel elementwise chain of
tests/fusion/data/chain4.json, y = (2x + 0.5)^2 + x over N floats, as PyTorch eager and
as torch.compile (which fuses it into one kernel), timed with CUDA events: ms per run and
the effective bandwidth counting the minimal traffic (read x, write y: 8 bytes per element).
benchmarks/cuda/fusion_gpu.sh prints it next to cgrun on the same chain unfused and fused.

Usage: torch_chain4.py [--elements N] [--reps R]
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=256 << 20)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"torch_chain4: PyTorch is not available ({e})", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("torch_chain4: no CUDA device for PyTorch", file=sys.stderr)
        return 77
    x = torch.rand(args.elements, device="cuda")

    def chain(x):
        t1 = x * 2.0
        t2 = t1 + 0.5
        t3 = t2 * t2
        return t3 + x

    def timed(fn, name):
        for _ in range(3):
            fn(x)
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(args.reps):
            fn(x)
        b.record()
        b.synchronize()
        ms = a.elapsed_time(b) / args.reps
        gbs = 8.0 * args.elements / (ms * 1e-3) / 1e9
        print(f"{name:<24} {ms:10.3f} ms {gbs:10.1f} GB/s")

    timed(chain, "torch eager")
    try:
        compiled = torch.compile(chain)
        timed(compiled, "torch.compile")
    except Exception as e:  # no Triton / compiler on the machine
        print(f"torch.compile unavailable: {type(e).__name__}: {e}".splitlines()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
