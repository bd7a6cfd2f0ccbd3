"""Host time per submission of a 1000-node chain from Python on a CUDA GPU, side by
side in one run: cgraph's replay of chain1000.cgf with a torch tensor bound in place,
``torch.cuda.CUDAGraph.replay()`` of the same chain captured from torch (1000 ``y.add_(x,
alpha=a)``), and the chain as eager torch calls. Each submission is timed with its
completion (synchronized), and as a stream of back-to-back submissions (one wait at the
end). Results are checked against each other.

Usage: python3 bench_torch_cuda.py CHAIN1000.cgf [SUBMISSIONS]
with PYTHONPATH=<source>/python and CGRAPH_LIBRARY=<libcgraph.so>.
"""

import sys
import time

import torch

import cgraph

N, NODES, A = 4096, 1000, 0.001


def timed(fn, submissions: int, sync_each: bool) -> float:
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(submissions):
            fn()
            if sync_each:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / submissions * 1e6)
    return best


def main() -> None:
    path = sys.argv[1]
    submissions = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    x = torch.ones(N, device="cuda")
    y_cg = torch.zeros(N, device="cuda")
    y_tg = torch.zeros(N, device="cuda")
    y_eager = torch.zeros(N, device="cuda")

    torch.cuda.synchronize()  # cgraph submits on a stream of its own: torch's zeros first
    exe = cgraph.load(path).finalize(device="cuda")
    run_cgraph = lambda: exe.run(y=y_cg, a=A)
    events = []
    enqueue_cgraph = lambda: events.append(exe.enqueue(y=y_cg, a=A))

    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # warm-up before capture, as torch's docs ask
            y_tg.add_(x, alpha=A)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(NODES):
            y_tg.add_(x, alpha=A)

    def eager():
        for _ in range(NODES):
            y_eager.add_(x, alpha=A)

    rows = [
        ("cgraph exe.run (replay, waits)", timed(run_cgraph, submissions, False)),
        ("torch CUDAGraph.replay + synchronize", timed(g.replay, submissions, True)),
        ("cgraph exe.enqueue, back to back", timed(enqueue_cgraph, submissions, False)),
        ("torch CUDAGraph.replay, back to back", timed(g.replay, submissions, False)),
        ("torch eager 1000 add_ + synchronize", timed(eager, max(10, submissions // 10), True)),
    ]
    for ev in events:
        ev.wait()
    # Same math on both graphs: y grows by 1000 * A per submission; compare per step.
    steps_cg = y_cg[0].item() / (NODES * A)
    steps_tg = y_tg[0].item() / (NODES * A)
    print(f"{'path':40s} {'us/submission':>14s} {'us/node':>8s}")
    for name, us in rows:
        print(f"{name:40s} {us:14.1f} {us / NODES:8.3f}")
    print(f"check: cgraph ran {steps_cg:.0f} submissions' worth, torch graph {steps_tg:.0f} (float32 sums)")
    ratio = rows[0][1] / rows[1][1]
    print(f"cgraph / torch CUDAGraph (synchronized): {ratio:.3f}")


if __name__ == "__main__":
    main()
