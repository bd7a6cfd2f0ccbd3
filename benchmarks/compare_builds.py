#!/usr/bin/env python3
"""Two builds of cgrun side by side on the same graphs and device: `cgrun bench --json`
of each, alternated round by round (the order flips every round, so drift in the
machine's state falls on both), the median over rounds of each build's median time per
mode, and the median of the per-round ratios new / old. Prints a Markdown table.

Usage: compare_builds.py --old OLD/cgrun --new NEW/cgrun --backend cuda [--rounds 5]
                         [--repetitions 10] [--modes eager,replay] GRAPH.cgf[:ARGS] ...
ARGS: extra cgrun arguments for that graph, e.g. "chain1000.cgf:--random y:1".
Both binaries must find their libraries (LD_LIBRARY_PATH) and CGRAPH_LIBCLC_DIR as usual.
"""

import argparse
import json
import shlex
import statistics
import subprocess
import sys


def bench(cgrun: str, graph: str, extra: list, args) -> dict:
    cmd = [cgrun, "bench", graph, "--backend", args.backend, "--json", "--repetitions", str(args.repetitions),
           "--modes", args.modes] + extra
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()[-400:]}")
    times = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        name = b["name"]  # "<graph>/<mode>/total_median"
        if name.endswith("/total_median"):
            times[name.split("/")[-2]] = b["real_time"]
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repetitions", type=int, default=10)
    ap.add_argument("--modes", default="eager,replay")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("graphs", nargs="+")
    args = ap.parse_args()
    print(f"| graph ({args.backend}) | mode | old us | new us | new / old (median of rounds) | quartiles | new faster |")
    print("|---|---|---|---|---|---|---|")
    failed = 0
    for spec in args.graphs:
        graph, _, extra = spec.partition(":")
        extra = shlex.split(extra)
        runs = {"old": [], "new": []}
        try:
            for r in range(args.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for which in order:
                    runs[which].append(bench(getattr(args, which), graph, extra, args))
        except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
            print(f"compare_builds: {graph}: {e}", file=sys.stderr)
            failed += 1
            continue
        name = graph.rsplit("/", 1)[-1]
        for mode in runs["old"][0]:
            old = [t[mode] for t in runs["old"]]
            new = [t[mode] for t in runs["new"]]
            ratios = [n / o for n, o in zip(new, old)]
            q1, q2, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
            faster = sum(r < 1 for r in ratios)
            print(f"| {name} | {mode} | {statistics.median(old):.1f} | {statistics.median(new):.1f} | {q2:.3f} | "
                  f"{q1:.3f}-{q3:.3f} | {faster}/{len(ratios)} |")
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
