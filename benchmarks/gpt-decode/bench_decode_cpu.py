#!/usr/bin/env python3
"""GPT-2 decode step on the CPU: cgraph's cpu backend replaying the one
examples/gpt-decode .cgf against the example's numpy reference (reference.py, matrix
products through numpy's BLAS), side by side, per-step time at each (b, t).

Usage (PYTHONPATH=<source>/python CGRAPH_LIBRARY=<build>/lib/capi/libcgraph.so):
  bench_decode_cpu.py [--config small|gpt2] [--cgf FILE] [--sizes 1x128,8x128] [--json OUT]
                      [--profile 1x128 [--profile-runs 5]]

--profile BxT: where a cgraph step's time goes at that size (the replay executable's
node times: median per node, summed per kernel and per node name without the layer
index), as bench_decode.py's profile on the GPU.

Both sides read the same weights and the same key/value caches (numpy arrays bound to
the graph in place; caches are allocated zeroed and only the rows a step touches become
resident, so gpt2's 2 x 19 GB caches fit in a few GB). Results are compared once per
size before timing (next tokens, max |logits difference|).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode_common as dc  # noqa: E402


def blas_name() -> str:
    """The BLAS library numpy has loaded (from the process's mappings after a product)."""
    np.ones((4, 4), np.float32) @ np.ones((4, 4), np.float32)
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
        return ", ".join(sorted(os.path.realpath(p) for p in paths)) or "unknown"
    except OSError:
        return "unknown"


class Step:
    """The arrays of one (b, t): the graph's arguments and the reference's."""

    def __init__(self, cfg, weights, k_cache, v_cache, b: int, t: int) -> None:
        rng = np.random.default_rng(1000 * b + t)
        self.b, self.t = b, t
        self.tokens = np.zeros(cfg.batch_max, np.int32)
        self.tokens[:b] = rng.integers(0, cfg.vocab, b)
        self.next = np.zeros(cfg.batch_max, np.int32)
        self.logits = np.zeros(cfg.batch_max * cfg.vocab, np.float32)
        self.args = {name: w.reshape(-1) for name, w in weights.items()}
        self.args.update(k_cache=k_cache.reshape(-1), v_cache=v_cache.reshape(-1), tokens=self.tokens,
                         next=self.next, logits=self.logits, b=b, t=t)


def check(exe, ref, cfg, weights, k_cache, v_cache, s: Step) -> dict:
    exe.run(**s.args)
    cg_logits = s.logits[: s.b * cfg.vocab].reshape(s.b, cfg.vocab).copy()
    cg_next = s.next[: s.b].copy()
    ref_logits, ref_next = ref.step(weights, cfg, s.tokens[: s.b], s.t, k_cache, v_cache)
    scale = float(np.abs(ref_logits).max())
    return {"max_abs_diff": float(np.abs(cg_logits - ref_logits).max()), "max_abs_logit": scale,
            "allclose": bool(np.allclose(cg_logits, ref_logits, rtol=1e-3, atol=1e-3 * max(1.0, scale))),
            "next_equal": int((cg_next == ref_next).sum())}


def measure(args, cfg, exe, ref, weights, k_cache, v_cache, b, t) -> dict:
    s = Step(cfg, weights, k_cache, v_cache, b, t)
    row = {"b": b, "t": t, "check": check(exe, ref, cfg, weights, k_cache, v_cache, s)}
    row["cgraph_cpu"] = dc.time_steps(lambda: exe.run(**s.args), lambda: None, args.steps, args.warmup)
    tokens = s.tokens[:b]
    row["numpy_reference"] = dc.time_steps(lambda: ref.step(weights, cfg, tokens, t, k_cache, v_cache),
                                           lambda: None, args.steps, args.warmup)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="small")
    ap.add_argument("--cgf", help="the compiled graph of --config (compiled with cgc when omitted)")
    ap.add_argument("--cgc", help="cgc, to compile the .cgf when --cgf is not given")
    ap.add_argument("--weights", help="directory of the weight .npy files (generated when missing)")
    ap.add_argument("--example", help="examples/gpt-decode (found beside this file when omitted)")
    ap.add_argument("--sizes", default="1x128,8x128", help="BxT pairs (t = T_MAX means the last position)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--profile", action="append", default=[],
                    help="BxT (repeatable or a comma list): node times of a step at that size")
    ap.add_argument("--profile-runs", type=int, default=5, help="profiled steps per --profile size")
    args = ap.parse_args(argv)

    import cgraph
    example = dc.find_example(args.example)
    cfg = dc.config(example, args.config)
    wdir = dc.ensure_weights(example, cfg, args.weights)
    cgf = dc.ensure_cgf(example, cfg, args.cgf, args.cgc, os.path.dirname(os.path.abspath(wdir)))
    ref = dc.import_from(example, "reference")
    weights = {n: np.ascontiguousarray(np.load(os.path.join(wdir, n + ".npy")), np.float32)
               for n in cfg.weight_shapes()}
    k_cache = np.zeros(cfg.cache_shape(), np.float32)  # zero pages: resident only where written
    v_cache = np.zeros(cfg.cache_shape(), np.float32)
    import time
    t0 = time.perf_counter()
    exe = cgraph.load(cgf).finalize(device="cpu")
    finalize_s = time.perf_counter() - t0
    sizes = dc.clamp_sizes(dc.parse_sizes(args.sizes), cfg)
    print(f"GPT-2 decode step on the CPU: config {cfg.name}, {os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
          f"numpy {np.__version__} (BLAS {blas_name()}), cgraph cpu finalize {finalize_s:.2f} s; "
          f"median of {args.steps} steps after {args.warmup}")
    profile_sizes = dc.clamp_sizes(dc.parse_sizes(",".join(args.profile), "--profile"), cfg) if args.profile else []
    rows = [measure(args, cfg, exe, ref, weights, k_cache, v_cache, b, t) for b, t in sizes]
    print(f"{'b':>4} {'t':>5} {'cgraph cpu ms':>14} {'numpy ms':>10} {'numpy/cgraph':>13} {'max|diff|':>10} {'next eq':>8}")
    for r in rows:
        c, n, k = r["cgraph_cpu"]["median_us"] / 1e3, r["numpy_reference"]["median_us"] / 1e3, r["check"]
        print(f"{r['b']:4d} {r['t']:5d} {c:14.3f} {n:10.3f} {n / c:13.2f} {k['max_abs_diff']:10.2e} "
              f"{k['next_equal']:>4}/{r['b']:<3}")
    profiles = []
    for b, t in profile_sizes:
        s = Step(cfg, weights, k_cache, v_cache, b, t)
        r = dc.profile_size(lambda: exe.profile(**s.args), b, t, args.profile_runs, args.warmup)
        dc.print_profile(r, f"node profile at b={b} t={t}, cpu replay")
        profiles.append(r)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": cfg.name, "cores": os.cpu_count(), "numpy": np.__version__,
                       "finalize_s": finalize_s, "rows": rows, "profile": profiles}, f, indent=1)
    bad = [r for r in rows if not r["check"]["allclose"] or r["check"]["next_equal"] != r["b"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
