"""Host time per submission of a 1000-node chain from Python on a CUDA GPU, side by
side in one run: cgraph's replay of chain1000.cgf with a torch tensor bound in place,
``torch.cuda.CUDAGraph.replay()`` of the same chain captured from torch (1000 ``y.add_(x,
alpha=a)``), and the chain as eager torch calls. Each submission is timed with its
completion (synchronized), and as a stream of back-to-back submissions (one wait at the
end). Then the same with four torch tensors bound per submission: a 1000-node chain made
with ``cgraph.GraphBuilder`` whose nodes go round three outputs ``y0..y2`` reading ``x``,
against the same chain captured by torch. Last, the splice: the chain's cgraph run
recorded into a torch graph (``enqueue_on_stream`` inside ``torch.cuda.graph``) and
replayed by torch, against cgraph's own replay, back to back (device-bound: the time per
node is the device's). Results are checked against each other.

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


AXPY_CL = """
__kernel void axpy(__global float *y, __global const float *x, float a) {
  size_t i = get_global_id(0);
  y[i] += a * x[i];
}
"""


def four_tensor_graph() -> "cgraph.Graph":
    """1000 axpy nodes in one chain, node i updating y{i % 3} from x: four external
    slots, each bound to a torch tensor per submission."""
    b = cgraph.GraphBuilder("chain1000x4", edges="explicit")
    b.kernel_source(AXPY_CL, name="axpy.cl")
    b.slot("x", count=N, type="f32")
    for j in range(3):
        b.slot(f"y{j}", count=N, type="f32")
    a = b.param("a", "f32", A)
    prev = None
    for i in range(NODES):
        prev = b.add_kernel("axpy", [N], local_size=[64], args=[f"y{i % 3}", "x", a],
                            name=f"axpy{i}", after=[prev] if prev else [])
    return b.build()


def four_tensors(submissions: int) -> list:
    x = torch.ones(N, device="cuda")
    ys_cg = [torch.zeros(N, device="cuda") for _ in range(3)]
    ys_tg = [torch.zeros(N, device="cuda") for _ in range(3)]
    torch.cuda.synchronize()
    exe = four_tensor_graph().finalize(device="cuda")
    run_cgraph = lambda: exe.run(x=x, y0=ys_cg[0], y1=ys_cg[1], y2=ys_cg[2], a=A)

    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            ys_tg[0].add_(x, alpha=A)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for i in range(NODES):
            ys_tg[i % 3].add_(x, alpha=A)
    rows = [
        ("4 tensors: cgraph exe.run (waits)", timed(run_cgraph, submissions, False)),
        ("4 tensors: torch CUDAGraph.replay + sync", timed(g.replay, submissions, True)),
    ]
    # Node i adds A to y{i % 3}: y0 gets 334 adds per submission, y1 and y2 333.
    for j, adds in enumerate((334, 333, 333)):
        per = ys_cg[j][0].item() / (adds * A)
        print(f"check: y{j} holds {per:.0f} submissions' worth (cgraph)")
    return rows


def splice(exe, submissions: int) -> list:
    """The cgraph run of chain1000 captured into a torch graph and replayed by torch,
    next to cgraph's own replay of it: both back to back, one wait at the end."""
    y_sp = torch.zeros(N, device="cuda")
    y_own = torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        exe.enqueue_on_stream(torch.cuda.current_stream(), y=y_sp, a=A)
    events = []
    rows = [
        ("spliced into a torch graph, back to back", timed(g.replay, submissions, False)),
        ("cgraph exe.enqueue, back to back (again)", timed(lambda: events.append(exe.enqueue(y=y_own, a=A)),
                                                           submissions, False)),
    ]
    for ev in events:
        ev.wait()
    torch.cuda.synchronize()
    sp, own = y_sp[0].item() / (NODES * A), y_own[0].item() / (NODES * A)
    print(f"check: spliced graph ran {sp:.0f} submissions' worth, cgraph {own:.0f}")
    return rows


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
    rows.extend(splice(exe, submissions))
    for name, us in rows[-2:]:
        print(f"{name:40s} {us:14.1f} {us / NODES:8.3f}")
    print(f"spliced / cgraph alone (device time per node): {rows[-2][1] / rows[-1][1]:.3f}")
    rows4 = four_tensors(submissions)
    for name, us in rows4:
        print(f"{name:40s} {us:14.1f} {us / NODES:8.3f}")
    print(f"cgraph / torch CUDAGraph, 4 tensors bound (synchronized): {rows4[0][1] / rows4[1][1]:.3f}")


if __name__ == "__main__":
    main()
