"""Per-submission overhead of the Python package against the C API, on a tiny graph
(one kernel over 64 floats) on the cpu: ``exe.run(y=array, s=1.0)`` in a loop, and the
C program bench_capi_overhead doing the same through cgraph_enqueue + cgraph_event_wait.
Prints both, side by side.

Usage (Debian's Python, numpy): /usr/bin/python3 bench_overhead.py TINY.cgf BENCH_C [RUNS]
with PYTHONPATH=<source>/python and CGRAPH_LIBRARY=<build>/lib/capi/libcgraph.so, or
build the target bench_python_overhead, which runs it so.
"""

import subprocess
import sys
import time

import numpy as np

import cgraph


def python_us_per_run(path: str, runs: int, call: str) -> float:
    exe = cgraph.load(path).finalize(device="cpu")
    y = np.zeros(64, dtype=np.float32)
    run = exe.run if call == "run" else (lambda **kw: exe.enqueue(**kw).wait())
    best = float("inf")
    for _ in range(3):  # best of three, after a warm-up
        for _ in range(1000):
            run(y=y, s=1.0)
        t0 = time.perf_counter()
        for _ in range(runs):
            run(y=y, s=1.0)
        best = min(best, (time.perf_counter() - t0) / runs * 1e6)
    if not (y == 3 * (runs + 1000)).all():  # every submission ran, in place
        raise SystemExit(f"bench_overhead: error: y[0] is {y[0]} after {3 * (runs + 1000)} submissions")
    return best


def c_us_per_run(bench: str, path: str, runs: int) -> float:
    out = subprocess.run([bench, path, str(runs)], check=True, capture_output=True, text=True).stdout
    return float(out.split()[1])


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, bench = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    c = c_us_per_run(bench, path, runs)
    py_run = python_us_per_run(path, runs, "run")
    py_enqueue = python_us_per_run(path, runs, "enqueue")
    print(f"tiny graph (1 kernel, 64 floats) on cpu, {runs} submissions, best of 3, microseconds per submission")
    print(f"{'C API enqueue+wait':<28}{c:>10.2f}")
    print(f"{'Python exe.run':<28}{py_run:>10.2f}   (+{py_run - c:.2f} over C)")
    print(f"{'Python enqueue().wait()':<28}{py_enqueue:>10.2f}   (+{py_enqueue - c:.2f} over C)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
