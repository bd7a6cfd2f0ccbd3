#!/usr/bin/env python3
"""GPT-2 decode step on one GPU: cgraph's replay of the one examples/gpt-decode .cgf
against PyTorch (eager, and CUDA graphs), in one run, side by side.

  a) step latency at each (b, t): cgraph cuda replay of the one file (finalized once,
     bound to torch's tensors in place) vs torch eager vs a torch CUDA graph captured
     for that exact (b, t) (sliced attention) and one captured per b (t read on the
     device, masked attention over T_MAX); median of --steps synchronized steps; the
     weight + key/value bytes each step reads per measured time, as a fraction of the
     device-to-device copy bandwidth measured in the same run. Results are compared with
     torch eager once per size before timing (next tokens, max |logits difference|).
  b) start-up: cgraph load + finalize in a fresh process with an empty kernel cache
     (cold) and again with the cache filled (warm), vs torch capturing CUDA graphs for
     vLLM's 67 default batch sizes (1, 2, 4, 8, 16, ..., 512): wall time, device memory.
  c) shape changes: cgraph replay with t advancing every step, and with (b, t) cycling
     through the sizes, vs replay at a fixed (b, t).
  d) with --profile BxT: where a cgraph step's time goes at that size: the .cgf
     finalized in eager mode, every node timed, medians per node summed per kernel and
     per node name.

--weights-dtype f16 runs cgraph's fp16-weights variant (gen_graph.py --weights f16): the
matrices stored as float16, computed with in fp32. Torch stays fp32, with the same
float16-rounded values widened, so the results still compare.

Usage (PYTHONPATH=<bundle>/python CGRAPH_LIBRARY=<bundle>/lib/libcgraph.so):
  bench_decode.py --cgf gpt2.cgf [--config gpt2] [--weights DIR] [--json out.json]
  bench_decode.py --cgf gpt2_f16.cgf --weights-dtype f16 --skip startup,shapes
  bench_decode.py --cgf gpt2.cgf --skip latency,startup,shapes --profile 64x128,256x128
  bench_decode.py --config small --device cpu --quick        # smoke run, no GPU

Every measurement is guarded: a failure prints its error and the run goes on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode_common as dc  # noqa: E402
import torch_model as tm  # noqa: E402

# vLLM's default CUDA graph capture sizes: 1, 2, 4, then multiples of 8 up to 512.
VLLM_CAPTURE_SIZES = [1, 2, 4] + [8 * i for i in range(1, 65)]
DEFAULT_SIZES = [(b, t) for b in (1, 8, 64, 256) for t in (128, 1024)]
PROFILE_WARMUP = 3

ERRORS: list[str] = []


def guarded(what: str, fn, *args, **kwargs):
    """fn(*args, **kwargs), or None after printing the failure (kept for --json)."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - one failure must not lose the other figures
        msg = f"{what}: {type(e).__name__}: {e}"
        print(f"error: {msg}", flush=True)
        traceback.print_exc(limit=4)
        ERRORS.append(msg)
        if torch.cuda.is_available():
            try:
                torch.cuda.synchronize()
            except Exception:  # noqa: BLE001
                pass
        return None


# ---- the cgraph side -------------------------------------------------------------------

class CgraphDecode:
    """The .cgf finalized once, bound to torch tensors (weights, caches, the step's
    inputs and outputs) in place on every run."""

    def __init__(self, exe, cfg, weights, k_cache, v_cache, device) -> None:
        self.exe, self.cfg = exe, cfg
        self.sizes = {s.name: s.size for s in exe.slots}
        self.tokens = torch.zeros(cfg.batch_max, dtype=torch.int32, device=device)
        self.next = torch.zeros(cfg.batch_max, dtype=torch.int32, device=device)
        self.logits = torch.zeros(cfg.batch_max * cfg.vocab, dtype=torch.float32, device=device)
        self.fixed = {name: w.reshape(-1) for name, w in weights.items()}
        self.fixed["k_cache"], self.fixed["v_cache"] = k_cache.reshape(-1), v_cache.reshape(-1)
        known = set(self.fixed) | {"tokens", "next", "logits"}
        missing = [s.name for s in exe.slots if s.external and s.name not in known]
        if missing:
            raise RuntimeError(f"the graph has external slots this benchmark does not bind: {missing}")
        for name, w in weights.items():
            nbytes = w.numel() * w.element_size()
            if self.sizes.get(name) != nbytes:
                raise RuntimeError(f"slot {name} of the .cgf has {self.sizes.get(name)} bytes, the {w.dtype} weight "
                                   f"{nbytes}: --weights-dtype must be the .cgf's (gen_graph.py --weights)")

    def _cut(self, name: str, buf: torch.Tensor, rows: int, per_row: int) -> torch.Tensor:
        """`buf` whole when the slot has its size (B_MAX rows); else the first `rows`
        rows (a slot whose size is an expression of b)."""
        if self.sizes.get(name) == buf.numel() * buf.element_size():
            return buf
        return buf[: rows * per_row]

    def arguments(self, b: int, t: int) -> dict:
        args = dict(self.fixed)
        args["tokens"] = self._cut("tokens", self.tokens, b, 1)
        args["next"] = self._cut("next", self.next, b, 1)
        args["logits"] = self._cut("logits", self.logits, b, self.cfg.vocab)
        args["b"], args["t"] = b, t
        return args

    def run(self, b: int, t: int) -> None:
        self.exe.run(**self.arguments(b, t))


def make_cgraph(args, cfg, weights, model, mode="replay"):
    import cgraph
    graph = cgraph.load(args.cgf)
    exe = graph.finalize(device=args.cg_device, mode=mode)
    return CgraphDecode(exe, cfg, weights, model.k_cache, model.v_cache, model.device)


def weight_dtype(args, cfg, name: str) -> torch.dtype:
    """The dtype cgraph's graph takes weight `name` in."""
    half = args.weights_dtype == "f16" and name in cfg.half_weights()
    return torch.float16 if half else torch.float32


def load_weights(args, cfg, device) -> tuple[dict, dict]:
    """(torch's weights, cgraph's): one set with --weights-dtype f32. With f16 cgraph's
    matrices are float16 (rounded to nearest even, as make_weights.to_f16 does; a
    directory of make_weights.py --f16 holds them so already) and torch's fp32 tensors
    hold the same values, so both compute in fp32 from the same numbers."""
    weights = tm.load_weights(args.weights, device)
    if args.weights_dtype == "f32":
        return weights, weights
    half = {n: weights[n].to(weight_dtype(args, cfg, n)) for n in cfg.half_weights()}
    for n, w in half.items():
        weights[n].copy_(w)
    return weights, dict(weights, **half)


# ---- a) latency ------------------------------------------------------------------------

def copy_bandwidth(device, sync) -> float:
    """Bytes moved (read + written) per second by a large device-to-device copy."""
    n = (1 << 28) if device.type == "cuda" else (1 << 25)  # 1 GiB on a GPU
    src = torch.ones(n, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    r = dc.time_steps(lambda: dst.copy_(src), sync, steps=10, warmup=3)
    del src, dst
    return 2 * n * 4 / (r["median_us"] * 1e-6)


def check_size(cg, model, b, t, tokens, sync) -> dict:
    """cgraph against torch eager at (b, t): next tokens equal, max |logits diff|."""
    cg.tokens[:b].copy_(tokens)
    sync()  # cgraph's stream does not wait for torch's
    cg.run(b, t)
    cg_logits = cg.logits[: b * model.vocab].view(b, model.vocab).clone()
    cg_next = cg.next[:b].clone()
    ref_logits, ref_next = model.step(tokens, t)
    sync()
    diff = (cg_logits - ref_logits).abs().max().item()
    scale = ref_logits.abs().max().item()
    close = bool(torch.allclose(cg_logits, ref_logits, rtol=1e-3, atol=1e-3 * max(1.0, scale)))
    equal = int((cg_next == ref_next).sum().item())
    return {"max_abs_diff": diff, "max_abs_logit": scale, "allclose": close, "next_equal": equal, "b": b}


def torch_graph_row(model, b, t, tokens, sync, steps, warmup, per_b: bool) -> dict:
    """A CUDA graph of the step at (b, t) (sliced) or per b (masked, t on the device):
    capture time, replay latency and its difference from eager."""
    t0 = time.perf_counter()
    g = tm.StaticStep(model, b, t=None if per_b else t)
    sync()
    capture_s = time.perf_counter() - t0
    logits, nxt = g(tokens, t)
    ref_logits, ref_next = model.step(tokens, t)
    sync()
    out = {"capture_s": capture_s, "max_abs_diff_vs_eager": (logits - ref_logits).abs().max().item(),
           "next_equal_vs_eager": int((nxt == ref_next).sum().item())}
    out.update(dc.time_steps(lambda: g(tokens, t), sync, steps, warmup))
    del g
    return out


def latency_size(args, cfg, cg, model, wbytes, copy_bw, b, t, sync) -> dict:
    """One row of a); `wbytes`: the weight bytes a step reads, {"torch": .., "cgraph": ..}."""
    row = {"b": b, "t": t, "weights_dtype": args.weights_dtype}
    gen = torch.Generator().manual_seed(1000 * b + t)
    tokens = torch.randint(0, cfg.vocab, (b,), generator=gen, dtype=torch.int64).to(torch.int32).to(model.device)
    kv = tm.kv_bytes(cfg.layers, b, t, cfg.d_model)
    row["bytes_read"], row["cgraph_bytes_read"] = wbytes["torch"] + kv, wbytes["cgraph"] + kv
    if cg is not None:
        row["check"] = guarded(f"check cgraph vs torch at b={b} t={t}", check_size, cg, model, b, t, tokens, sync)
        cg.tokens[:b].copy_(tokens)
        sync()
        cg_args = cg.arguments(b, t)
        row["cgraph"] = guarded(f"cgraph replay b={b} t={t}", dc.time_steps,
                                lambda: cg.exe.run(**cg_args), lambda: None, args.steps, args.warmup)
    with torch.no_grad():
        row["torch_eager"] = guarded(f"torch eager b={b} t={t}", dc.time_steps,
                                     lambda: model.step(tokens, t), sync, args.steps, args.warmup)
        if model.device.type == "cuda":
            row["torch_graph"] = guarded(f"torch CUDA graph b={b} t={t}", torch_graph_row,
                                         model, b, t, tokens, sync, args.steps, args.warmup, False)
            row["torch_graph_per_b"] = guarded(f"torch CUDA graph per b={b} (t on device)", torch_graph_row,
                                               model, b, t, tokens, sync, args.steps, args.warmup, True)
    for key in ("cgraph", "torch_eager", "torch_graph", "torch_graph_per_b"):
        r = row.get(key)
        if r and copy_bw:
            nbytes = row["cgraph_bytes_read" if key == "cgraph" else "bytes_read"]
            r["fraction_of_copy_bw"] = nbytes / (r["median_us"] * 1e-6) / copy_bw
    if model.device.type == "cuda":
        torch.cuda.empty_cache()
    return row


def print_latency(rows, copy_bw, weights_dtype, wbytes) -> None:
    print(f"\n== a) step latency, median ms (fraction of copy bandwidth {copy_bw / 1e9:.0f} GB/s in brackets)")
    if weights_dtype == "f16":
        print(f"cgraph with fp16 weight matrices, torch fp32 (the same values): MB read is torch's; cgraph's step "
              f"reads {(wbytes['torch'] - wbytes['cgraph']) / 1e6:.1f} MB less, which its fraction counts")
    cols = [("cgraph", "cgraph replay"), ("torch_eager", "torch eager"), ("torch_graph", "torch graph b,t"),
            ("torch_graph_per_b", "torch graph per b")]
    head = f"{'b':>4} {'t':>5} {'weights':>7} {'MB read':>8} " + " ".join(f"{c[1]:>19}" for c in cols)
    print(head + f" {'cg/graph':>8} {'max|diff|':>10} {'next eq':>8}")
    for row in rows:
        cells = []
        for key, _ in cols:
            r = row.get(key)
            if r:
                frac = r.get("fraction_of_copy_bw")
                cells.append(f"{r['median_us'] / 1e3:10.3f} ({frac:5.1%})" if frac is not None
                             else f"{r['median_us'] / 1e3:19.3f}")
            else:
                cells.append(f"{'-':>19}")
        cg, tg = row.get("cgraph"), row.get("torch_graph")
        ratio = f"{cg['median_us'] / tg['median_us']:8.2f}" if cg and tg else f"{'-':>8}"
        chk = row.get("check")
        diff = f"{chk['max_abs_diff']:10.2e}" if chk else f"{'-':>10}"
        eq = f"{chk['next_equal']:>4}/{chk['b']:<3}" if chk else f"{'-':>8}"
        label = "fp16" if row["weights_dtype"] == "f16" else "fp32"
        print(f"{row['b']:4d} {row['t']:5d} {label:>7} {row['bytes_read'] / 1e6:8.1f} " + " ".join(cells)
              + f" {ratio} {diff} {eq}")


# ---- c) shape changes ------------------------------------------------------------------

def shape_changes(args, cg, sizes, sync) -> dict:
    """Per-step cgraph replay time: fixed (b, t); t advancing by one each step; (b, t)
    cycling through `sizes`, each shape against its own fixed-shape time."""
    out = {}
    b0, t0 = sizes[0]
    t_max = cg.cfg.context_max
    sync()
    out["fixed"] = {"b": b0, "t": t0, **dc.time_steps(lambda: cg.run(b0, t0), lambda: None, args.steps, args.warmup)}
    n = args.steps + args.warmup
    t_from = max(0, min(t0, t_max - n))
    it = iter([min(t_from + i, t_max - 1) for i in range(n)])
    out["t_advancing"] = {"b": b0, "t_from": t_from, **dc.time_steps(lambda: cg.run(b0, next(it)), lambda: None,
                                                                     args.steps, args.warmup)}
    # Each cycled shape timed alone, then all in turn.
    per_shape = {}
    for b, t in sizes:
        per_shape[(b, t)] = dc.time_steps(lambda: cg.run(b, t), lambda: None, args.steps, args.warmup)["median_us"]
    times = {p: [] for p in sizes}
    for _ in range(args.warmup):
        for b, t in sizes:
            cg.run(b, t)
    for _ in range(max(1, args.steps // len(sizes)) * 2):
        for b, t in sizes:
            t_start = time.perf_counter()
            cg.run(b, t)
            times[(b, t)].append((time.perf_counter() - t_start) * 1e6)
    out["cycle"] = [{"b": b, "t": t, "fixed_median_us": per_shape[(b, t)],
                     "cycling_median_us": statistics.median(times[(b, t)])} for b, t in sizes]
    return out


def torch_t_advancing(args, model, b0, t0, sync) -> dict:
    """A torch CUDA graph per b (t on the device) with t advancing: torch's counterpart
    of one capture serving every position."""
    tokens = torch.zeros(b0, dtype=torch.int32, device=model.device)
    g = tm.StaticStep(model, b0)
    n = args.steps + args.warmup
    t_from = max(0, min(t0, model.t_max - n))
    ts = iter([min(t_from + i, model.t_max - 1) for i in range(n)])
    r = dc.time_steps(lambda: g(tokens, next(ts)), sync, args.steps, args.warmup)
    del g
    return r


def print_shapes(res, torch_adv) -> None:
    print("\n== c) shape changes: cgraph replay, median us per step")
    f, a = res["fixed"], res["t_advancing"]
    print(f"fixed (b={f['b']}, t={f['t']}): {f['median_us']:.1f}   t advancing from {a['t_from']}: "
          f"{a['median_us']:.1f}" + (f"   torch graph per b, t advancing: {torch_adv['median_us']:.1f}"
                                     if torch_adv else ""))
    print(f"{'b':>4} {'t':>5} {'fixed':>10} {'cycling':>10} {'diff':>8}")
    for r in res["cycle"]:
        d = r["cycling_median_us"] - r["fixed_median_us"]
        print(f"{r['b']:4d} {r['t']:5d} {r['fixed_median_us']:10.1f} {r['cycling_median_us']:10.1f} {d:8.1f}")


# ---- d) node profile -------------------------------------------------------------------

def node_profile(args, cfg, weights, model, replay, sync) -> list[dict]:
    """d) at every --profile size: profile_size on an executable finalized in eager
    mode (cuda times nodes only there), and the replay step's median for reference."""
    eager = make_cgraph(args, cfg, weights, model, mode="eager")
    sync()  # the caches were written on torch's stream
    out = []
    for b, t in args.profile:
        arguments = eager.arguments(b, t)
        r = guarded(f"profile b={b} t={t}", dc.profile_size, lambda: eager.exe.profile(**arguments), b, t,
                    args.profile_runs, PROFILE_WARMUP)
        if r and replay is not None:
            replay_args = replay.arguments(b, t)
            r["replay_us"] = dc.time_steps(lambda: replay.exe.run(**replay_args), lambda: None,
                                           args.profile_runs, PROFILE_WARMUP)["median_us"]
        if r:
            out.append(r)
    return out


def print_profile(res, weights_dtype) -> None:
    for r in res:
        replay = f"; replay step {r['replay_us']:.1f} us" if "replay_us" in r else ""
        dc.print_profile(r, f"d) node profile at b={r['b']} t={r['t']} ({weights_dtype} weights), eager", replay)


# ---- b) start-up (each in a fresh process) ---------------------------------------------

def child_cgraph_startup(args, cfg) -> dict:
    """load + finalize (twice: the second in the same process), device memory around
    them, then the first run at (B_MAX, T_MAX - 1) with torch tensors bound."""
    import cgraph
    dev = torch.device("cuda")
    torch.zeros(1, device=dev)
    torch.cuda.synchronize()
    free0 = torch.cuda.mem_get_info()[0]
    t0 = time.perf_counter()
    graph = cgraph.load(args.cgf)
    t1 = time.perf_counter()
    exe = graph.finalize(device=args.cg_device)
    t2 = time.perf_counter()
    free1 = torch.cuda.mem_get_info()[0]
    exe2 = graph.finalize(device=args.cg_device)
    t3 = time.perf_counter()
    del exe2
    out = {"load_s": t1 - t0, "finalize_s": t2 - t1, "second_finalize_s": t3 - t2,
           "finalize_device_bytes": free0 - free1}
    shapes = cfg.weight_shapes()
    weights = {n: torch.zeros(s, dtype=weight_dtype(args, cfg, n), device=dev) for n, s in shapes.items()}
    caches = [torch.zeros(cfg.cache_shape(), dtype=torch.float32, device=dev) for _ in range(2)]
    torch.cuda.synchronize()
    free2, reserved2 = torch.cuda.mem_get_info()[0], torch.cuda.memory_reserved()
    cg = CgraphDecode(exe, cfg, weights, caches[0], caches[1], dev)
    torch.cuda.synchronize()
    t4 = time.perf_counter()
    cg.run(cfg.batch_max, cfg.context_max - 1)
    out["first_run_at_max_s"] = time.perf_counter() - t4
    growth = free2 - torch.cuda.mem_get_info()[0] - (torch.cuda.memory_reserved() - reserved2)
    out["first_run_device_bytes"] = growth
    return out


def child_torch_startup(args, cfg) -> dict:
    """CUDA graphs of the masked step for every capture size, largest first, in one
    shared memory pool (as vLLM does)."""
    tm.exact_fp32()
    dev = torch.device("cuda")
    t0 = time.perf_counter()
    weights = tm.load_weights(args.weights, dev)
    model = tm.GPT2Decode(weights, cfg.heads, cfg.batch_max, cfg.context_max)
    torch.cuda.synchronize()
    load_s = time.perf_counter() - t0
    sizes = sorted({b for b in args.capture_sizes if b <= cfg.batch_max}, reverse=True)
    free0 = torch.cuda.mem_get_info()[0]
    alloc0, reserved0 = torch.cuda.memory_allocated(), torch.cuda.max_memory_reserved()
    pool = torch.cuda.graph_pool_handle()
    graphs = []
    t1 = time.perf_counter()
    with torch.no_grad():
        for b in sizes:
            graphs.append(tm.StaticStep(model, b, pool=pool))
    torch.cuda.synchronize()
    capture_s = time.perf_counter() - t1
    return {"weights_load_s": load_s, "capture_s": capture_s, "graphs": len(graphs),
            "memory_allocated_delta": torch.cuda.memory_allocated() - alloc0,
            "max_memory_reserved_delta": torch.cuda.max_memory_reserved() - reserved0,
            "device_bytes_delta": free0 - torch.cuda.mem_get_info()[0]}


def run_child(args, kind: str, env_extra: dict, cgf=None) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--config", args.config,
           "--cgf", str(cgf or args.cgf), "--weights", args.weights, "--example", args.example,
           "--cg-device", args.cg_device, "--capture-sizes", ",".join(map(str, args.capture_sizes)),
           "--weights-dtype", args.weights_dtype]
    env = dict(os.environ, **env_extra)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.child_timeout)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"{kind} exited {p.returncode}: {(p.stderr or p.stdout)[-2000:]}")
    return json.loads(lines[-1])


def startup(args) -> dict:
    out = {}
    cache = tempfile.mkdtemp(prefix="cgraph-cache-")
    if args.cgf:
        # Cold: cgraph's cache empty and the driver's JIT cache off, so every kernel is
        # compiled and loaded from PTX; warm: cgraph's cache as the cold run left it.
        out["cgraph_cold"] = guarded("cgraph start-up, empty cache", run_child, args, "cgraph-startup",
                                     {"CGRAPH_CACHE_DIR": cache, "CUDA_CACHE_DISABLE": "1"})
        out["cgraph_warm"] = guarded("cgraph start-up, filled cache", run_child, args, "cgraph-startup",
                                     {"CGRAPH_CACHE_DIR": cache})
    if args.cgf_aot:
        # The same step with its kernels compiled ahead of time (cgc --target cuda:sm_XY):
        # empty caches, and nothing to compile at start-up.
        out["cgraph_aot_cold"] = guarded("cgraph start-up, cubin in the file", run_child, args, "cgraph-startup",
                                         {"CGRAPH_CACHE_DIR": tempfile.mkdtemp(prefix="cgraph-cache-"),
                                          "CUDA_CACHE_DISABLE": "1"}, args.cgf_aot)
    out["torch_capture"] = guarded("torch CUDA graph capture", run_child, args, "torch-startup", {})
    return out


def print_startup(res, capture_sizes) -> None:
    print(f"\n== b) start-up for every size (fresh processes)")
    gib = 1 << 20
    for key, label in (("cgraph_cold", "cgraph, empty kernel cache"), ("cgraph_warm", "cgraph, filled kernel cache"),
                       ("cgraph_aot_cold", "cgraph, cubin in the file")):
        r = res.get(key)
        if r:
            print(f"{label:30s} load {r['load_s']:.3f} s + finalize {r['finalize_s']:.3f} s "
                  f"(again in-process {r['second_finalize_s']:.3f} s); device memory at finalize "
                  f"{r['finalize_device_bytes'] / gib:.1f} MiB, at the first run at (B_MAX, T_MAX-1) "
                  f"+{r['first_run_device_bytes'] / gib:.1f} MiB ({r['first_run_at_max_s']:.3f} s)")
    r = res.get("torch_capture")
    if r:
        print(f"{'torch, ' + str(r['graphs']) + ' CUDA graphs':30s} capture {r['capture_s']:.3f} s "
              f"(weights load {r['weights_load_s']:.3f} s); memory_allocated +{r['memory_allocated_delta'] / gib:.1f} MiB, "
              f"max_memory_reserved +{r['max_memory_reserved_delta'] / gib:.1f} MiB, "
              f"device +{r['device_bytes_delta'] / gib:.1f} MiB")


# ---- driver ----------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="gpt2")
    ap.add_argument("--cgf", help="the compiled graph of --config (built with gen_graph.py + cgc when omitted)")
    ap.add_argument("--cgc", help="cgc, to build the .cgf when --cgf is not given")
    ap.add_argument("--cgf-aot", help="the same step compiled ahead of time (cgc --target cuda:sm_XY): "
                                      "start-up also measured from it, with empty caches")
    ap.add_argument("--weights", help="directory of the weight .npy files (generated when missing)")
    ap.add_argument("--weights-dtype", choices=["f32", "f16"], default="f32",
                    help="cgraph's weight matrices (gen_graph.py --weights); torch stays fp32")
    ap.add_argument("--example", help="examples/gpt-decode (found beside this file when omitted)")
    ap.add_argument("--sizes", help="BxT pairs, e.g. 1x128,8x1024 (t = T_MAX means the last position)")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="a tiny run: a smoke check")
    ap.add_argument("--device", default="cuda", help="torch device (cpu: a smoke run without CUDA graphs)")
    ap.add_argument("--cg-device", help="cgraph device spec (default: cuda:0, or cpu with --device cpu)")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: latency,startup,shapes")
    ap.add_argument("--capture-sizes", help="torch capture sizes for start-up (default vLLM's 67)")
    ap.add_argument("--profile", action="append", default=[],
                    help="BxT pairs (repeatable): cgraph's time per kernel and node at that size (eager)")
    ap.add_argument("--profile-runs", type=int, default=10, help="profiled steps per --profile size")
    ap.add_argument("--child-timeout", type=int, default=300)
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.cg_device = args.cg_device or ("cpu" if args.device == "cpu" else "cuda:0")
    if args.capture_sizes:
        args.capture_sizes = [int(x) for x in args.capture_sizes.split(",")]
    else:
        args.capture_sizes = [1, 2, 4] if args.quick else VLLM_CAPTURE_SIZES
    if args.quick:
        args.steps, args.warmup = min(args.steps, 5), min(args.warmup, 2)
    return args


def setup(args):
    args.example = dc.find_example(args.example)
    cfg = dc.config(args.example, args.config)
    args.weights = dc.ensure_weights(args.example, cfg, args.weights)
    if not args.child:
        args.cgf = guarded("building the .cgf", dc.ensure_cgf, args.example, cfg, args.cgf, args.cgc,
                           os.path.dirname(os.path.abspath(args.weights)), args.weights_dtype)
    sizes = dc.clamp_sizes(dc.parse_sizes(args.sizes) if args.sizes else DEFAULT_SIZES, cfg)
    if args.quick and not args.sizes:
        sizes = sizes[:2]
    args.profile = dc.clamp_sizes(dc.parse_sizes(",".join(args.profile), "--profile"), cfg) if args.profile else []
    return cfg, sizes


def measure(args, cfg, sizes, results) -> None:
    """Parts a), c) and d) in this process (after b), whose children need the memory)."""
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    tm.exact_fp32()
    copy_bw = guarded("copy bandwidth", copy_bandwidth, device, sync)
    results["copy_bandwidth_bytes_per_s"] = copy_bw
    weights, cg_weights = load_weights(args, cfg, device)
    model = tm.GPT2Decode(weights, cfg.heads, cfg.batch_max, cfg.context_max)
    torch.manual_seed(0)
    model.k_cache.normal_()
    model.v_cache.normal_()
    cg = guarded("cgraph load + finalize", make_cgraph, args, cfg, cg_weights, model) if args.cgf else None
    wbytes = {"torch": tm.weight_bytes(weights), "cgraph": tm.weight_bytes(cg_weights)}
    results["weight_bytes"], results["cgraph_weight_bytes"] = wbytes["torch"], wbytes["cgraph"]
    if "latency" not in args.skip:
        rows = [guarded(f"latency b={b} t={t}", latency_size, args, cfg, cg, model, wbytes, copy_bw, b, t, sync)
                for b, t in sizes]
        results["latency"] = [r for r in rows if r]
        print_latency(results["latency"], copy_bw or 0.0, args.weights_dtype, wbytes)
    if "shapes" not in args.skip and cg is not None:
        res = guarded("shape changes", shape_changes, args, cg, sizes, sync)
        adv = None
        if device.type == "cuda":
            with torch.no_grad():
                adv = guarded("torch graph per b, t advancing", torch_t_advancing, args, model, *sizes[0], sync)
        if res:
            results["shapes"] = dict(res, torch_graph_per_b_t_advancing=adv)
            print_shapes(res, adv)
    if args.profile and args.cgf:
        results["profile"] = guarded("node profile", node_profile, args, cfg, cg_weights, model, cg, sync)
        if results["profile"]:
            print_profile(results["profile"], args.weights_dtype)


def main(argv=None) -> int:
    args = parse_args(argv)
    cfg, sizes = setup(args)
    if args.child:
        fn = {"cgraph-startup": child_cgraph_startup, "torch-startup": child_torch_startup}[args.child]
        print(json.dumps(fn(args, cfg)))
        return 0
    results = {"config": cfg.name, "torch": torch.__version__, "device": args.device, "sizes": sizes,
               "steps": args.steps, "warmup": args.warmup, "weights_dtype": args.weights_dtype}
    if args.cgf:
        with open(args.cgf, "rb") as f:
            results["cgf"] = {"path": args.cgf, "sha256": hashlib.sha256(f.read()).hexdigest()}
    if args.device.startswith("cuda"):
        results["gpu"] = torch.cuda.get_device_name()
    print(f"GPT-2 decode benchmark: config {cfg.name}, {args.device}"
          f"{' (' + results['gpu'] + ')' if 'gpu' in results else ''}, torch {torch.__version__}, "
          f"cgf {args.cgf}, {args.steps} steps after {args.warmup}", flush=True)
    if args.weights_dtype == "f16":
        print("weights: cgraph's matrices fp16 (computed with in fp32); torch fp32 with the same fp16-rounded values",
              flush=True)
    if "startup" not in args.skip and args.device.startswith("cuda"):
        results["startup"] = startup(args)
        print_startup(results["startup"], args.capture_sizes)
    measure(args, cfg, sizes, results)
    results["errors"] = ERRORS
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(f"\n{len(ERRORS)} error(s)" + "".join(f"\n  {e}" for e in ERRORS))
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main())
