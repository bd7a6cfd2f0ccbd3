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


def python_runner(path: str, call: str):
    """A function timing `runs` submissions from Python (microseconds per submission),
    and the array it writes."""
    exe = cgraph.load(path).finalize(device="cpu")
    y = np.zeros(64, dtype=np.float32)
    run = exe.run if call == "run" else (lambda **kw: exe.enqueue(**kw).wait())

    def timed(runs: int) -> float:
        for _ in range(1000):  # warm-up
            run(y=y, s=1.0)
        t0 = time.perf_counter()
        for _ in range(runs):
            run(y=y, s=1.0)
        return (time.perf_counter() - t0) / runs * 1e6

    return timed, y


def c_us_per_run(bench: str, path: str, runs: int) -> float:
    out = subprocess.run([bench, path, str(runs)], check=True, capture_output=True, text=True).stdout
    return float(out.split()[1])


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, bench = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    rounds = 15
    py_run, y_run = python_runner(path, "run")
    py_enqueue, y_enqueue = python_runner(path, "enqueue")
    best = {"c": float("inf"), "run": float("inf"), "enqueue": float("inf")}
    for _ in range(rounds):  # alternated, so that a change in the machine's speed hits all three alike
        best["c"] = min(best["c"], c_us_per_run(bench, path, runs))
        best["run"] = min(best["run"], py_run(runs))
        best["enqueue"] = min(best["enqueue"], py_enqueue(runs))
    expected = rounds * (runs + 1000)  # each submission adds 1 to y, in place
    for y in (y_run, y_enqueue):
        if not (y == expected).all():
            raise SystemExit(f"bench_overhead: error: y[0] is {y[0]} after {expected} submissions")
    c = best["c"]
    print(f"tiny graph (1 kernel, 64 floats) on cpu, {runs} submissions, best of {rounds} alternated rounds, "
          "microseconds per submission")
    print(f"{'C API enqueue+wait':<28}{c:>10.2f}")
    print(f"{'Python exe.run':<28}{best['run']:>10.2f}   (+{best['run'] - c:.2f} over C)")
    print(f"{'Python enqueue().wait()':<28}{best['enqueue']:>10.2f}   (+{best['enqueue'] - c:.2f} over C)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
