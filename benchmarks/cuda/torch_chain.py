#!/usr/bin/env python3
"""PyTorch next to cgrun on the same chain (issue 8, benchmark 5).

The chain of examples/chain1000 (`y = a * x + y` over 4096 floats, N dependent nodes) as
PyTorch runs it: eager (`y.add_(x, alpha=a)` N times) and replayed from a
`torch.cuda.CUDAGraph` captured once. Per node: host time to submit, and time to
completion (submit + synchronize), median of the repetitions. benchmarks/cuda/gpu_run.sh
prints it next to `cgrun bench chain1000.cgf --backend cuda` in the same run.

Usage: torch_chain.py [--nodes N] [--reps R] [--json FILE]
"""
import argparse
import json
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--elements", type=int, default=4096)
    ap.add_argument("--json", help="write the figures as JSON (Google Benchmark's shape)")
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"torch_chain: PyTorch is not available ({e})", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("torch_chain: no CUDA device for PyTorch", file=sys.stderr)
        return 77

    dev = torch.device("cuda")
    x = torch.rand(args.elements, device=dev)
    y = torch.rand(args.elements, device=dev)
    a = 0.5
    y0 = y.clone()

    def chain():
        for _ in range(args.nodes):
            y.add_(x, alpha=a)

    def measure(run):
        submit, total = [], []
        for _ in range(3):  # warm-up
            run()
        torch.cuda.synchronize()
        for _ in range(args.reps):
            t0 = time.perf_counter()
            run()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            submit.append((t1 - t0) * 1e6 / args.nodes)
            total.append((t2 - t0) * 1e6 / args.nodes)
        return statistics.median(submit), statistics.median(total)

    eager = measure(chain)

    # Capture on a side stream, as PyTorch's documentation asks.
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        chain()  # warm-up inside the side stream before capture
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        chain()
    graph = measure(g.replay)

    # The replayed graph computes what eager does: one more replay from a known state.
    y.copy_(y0)
    g.replay()
    torch.cuda.synchronize()
    want = y0.clone()
    for _ in range(args.nodes):
        want.add_(x, alpha=a)
    ok = torch.allclose(y, want, rtol=1e-5, atol=1e-5)

    print(f"PyTorch {torch.__version__}, {torch.cuda.get_device_name()}, {args.nodes} nodes of "
          f"y.add_(x, alpha) over {args.elements} floats, median of {args.reps}")
    print(f"{'mode':<18}{'submit us/node':>16}{'total us/node':>16}")
    print(f"{'torch eager':<18}{eager[0]:>16.3f}{eager[1]:>16.3f}")
    print(f"{'torch CUDAGraph':<18}{graph[0]:>16.3f}{graph[1]:>16.3f}")
    print(f"graph replay result {'matches' if ok else 'DIFFERS FROM'} eager")
    if args.json:
        bench = []
        for name, (sub, tot) in (("torch_eager", eager), ("torch_cudagraph", graph)):
            bench.append({"name": f"{name}/submit", "real_time": sub, "time_unit": "us",
                          "iterations": args.reps, "per": "node"})
            bench.append({"name": f"{name}/total", "real_time": tot, "time_unit": "us",
                          "iterations": args.reps, "per": "node"})
        with open(args.json, "w") as f:
            json.dump({"context": {"library": "torch " + torch.__version__,
                                   "device": torch.cuda.get_device_name()},
                       "benchmarks": bench}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
