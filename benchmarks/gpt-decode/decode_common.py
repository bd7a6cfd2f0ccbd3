"""What the GPT-2 decode benchmarks share: finding examples/gpt-decode and its config,
weights generated on demand, the .cgf built on demand, and step timing."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
# Generated weights and compiled graphs, unless --weights / --cgf say otherwise.
WORKDIR = os.path.join(tempfile.gettempdir(), "cgraph-gpt-decode")


def find_example(given: Optional[str]) -> str:
    """The examples/gpt-decode directory: `given`, else beside the source checkout or
    an unpacked bundle (src/examples/gpt-decode). Raises SystemExit naming the places."""
    candidates = [given] if given else [
        os.path.join(HERE, "..", "..", "examples", "gpt-decode"),
        os.path.join(HERE, "..", "examples", "gpt-decode"),
        os.path.join(HERE, "..", "src", "examples", "gpt-decode"),
    ]
    for c in candidates:
        if c and os.path.isfile(os.path.join(c, "model.py")):
            return os.path.abspath(c)
    raise SystemExit("examples/gpt-decode not found (looked in: " + ", ".join(map(str, candidates)) +
                     "); pass --example DIR")


def import_from(directory: str, name: str):
    """Imports `name`.py of `directory` (the example's modules import each other by
    plain name, so the directory goes on sys.path)."""
    if directory not in sys.path:
        sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location(name, os.path.join(directory, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def config(example: str, name: str):
    """The example's model.Config called `name`."""
    return import_from(example, "model").get(name)


def ensure_weights(example: str, cfg, directory: Optional[str]) -> str:
    """`directory` holding every weight .npy of `cfg`; written with the example's
    make_weights.py (seed 0) where a file is missing. None: WORKDIR/weights-<config>."""
    directory = directory or os.path.join(WORKDIR, "weights-" + cfg.name)
    names = list(cfg.weight_shapes())
    if all(os.path.exists(os.path.join(directory, n + ".npy")) for n in names):
        return directory
    import numpy as np
    mw = import_from(example, "make_weights")
    print(f"writing {cfg.name} weights to {directory} ...", flush=True)
    os.makedirs(directory, exist_ok=True)
    for n, w in mw.make(cfg, 0).items():
        np.save(os.path.join(directory, n + ".npy"), w)
    return directory


def find_cgc(given: Optional[str]) -> str:
    cgc = given or shutil.which("cgc") or os.path.join(HERE, "..", "..", "build", "tools", "cgc", "cgc")
    if not os.path.isfile(cgc):
        raise SystemExit("cgc not found: pass --cgc PATH or put it on PATH")
    return cgc


def graph_name(cfg, weights_dtype: str = "f32") -> str:
    """The example's description of `cfg` without extension: <config>, or <config>_f16
    for fp16 weights (gen_graph.py --weights f16)."""
    return cfg.name + ("_f16" if weights_dtype == "f16" else "")


def ensure_cgf(example: str, cfg, cgf: Optional[str], cgc: Optional[str], workdir: str,
               weights_dtype: str = "f32") -> str:
    """`cgf` when given, else <workdir>/<name>.cgf compiled by cgc from the example's
    <name>.json (graph_name; written by its gen_graph.py where missing); compiled again
    when the description or a kernel is newer than it."""
    if cgf:
        if not os.path.isfile(cgf):
            raise SystemExit(f"{cgf}: no such file")
        return cgf
    name = graph_name(cfg, weights_dtype)
    out = os.path.join(workdir, name + ".cgf")
    description = os.path.join(example, name + ".json")  # its kernels/ paths are relative to it
    sources = [description] + [os.path.join(example, "kernels", k) for k in os.listdir(os.path.join(example, "kernels"))]
    if os.path.isfile(out) and all(os.path.getmtime(s) <= os.path.getmtime(out) for s in sources if os.path.exists(s)):
        return out
    if not os.path.isfile(description):
        subprocess.run([sys.executable, os.path.join(example, "gen_graph.py"), "--config", cfg.name,
                        "--weights", weights_dtype, "-o", description], check=True)
    os.makedirs(workdir, exist_ok=True)
    print(f"compiling {description} -> {out} ...", flush=True)
    subprocess.run([find_cgc(cgc), "-q", description, "-o", out], check=True)
    return out


def time_steps(fn: Callable[[], object], sync: Callable[[], object], steps: int, warmup: int) -> dict:
    """Times `steps` calls of `fn` each followed by `sync`, after `warmup` untimed ones.
    Returns median, min and mean in microseconds."""
    for _ in range(warmup):
        fn()
        sync()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e6)
    return {"median_us": statistics.median(times), "min_us": min(times), "mean_us": statistics.fmean(times),
            "steps": steps}


def clamp_sizes(pairs, cfg) -> list[tuple[int, int]]:
    """(b, t) pairs limited to b <= B_MAX and t < T_MAX (t = T_MAX asks for the last
    position), without repeats, in order."""
    out = []
    for b, t in pairs:
        p = (max(1, min(b, cfg.batch_max)), max(0, min(t, cfg.context_max - 1)))
        if p not in out:
            out.append(p)
    return out


def parse_sizes(text: str, option: str = "--sizes") -> list[tuple[int, int]]:
    """'1x128,8x1024' -> [(1, 128), (8, 1024)]; `option` names the source in errors."""
    pairs = []
    for item in text.split(","):
        b, _, t = item.strip().partition("x")
        if not t:
            raise SystemExit(f"{option}: '{item}' is not BxT (e.g. 8x128)")
        pairs.append((int(b), int(t)))
    return pairs


# ---- node profiles ----------------------------------------------------------------------

def node_medians(samples) -> list[dict]:
    """Per node (each runs once per step: the graph has no loops), in the order of the
    first run: name, kind, kernel and the median duration over the runs in us."""
    first = sorted(samples[0], key=lambda x: x.start_ns)
    durations = {x.node: [] for x in first}
    for run in samples:
        for x in run:
            durations.setdefault(x.node, []).append(x.duration_ns / 1e3)
    return [{"node": x.node, "name": x.name, "kind": x.kind, "kernel": x.kernel,
             "median_us": statistics.median(durations[x.node])} for x in first]


def group_nodes(nodes, key, step_us) -> list[dict]:
    """`nodes` summed per key(node): calls per step, us per step, share of the step;
    the largest first."""
    groups: dict[str, dict] = {}
    for n in nodes:
        g = groups.setdefault(key(n), {"name": key(n), "calls": 0, "total_us": 0.0})
        g["calls"] += 1
        g["total_us"] += n["median_us"]
    for g in groups.values():
        g["share"] = g["total_us"] / step_us if step_us else 0.0
    return sorted(groups.values(), key=lambda g: -g["total_us"])


def layer_dropped(name: str) -> str:
    """A node's name without its layer index: qkv.3 -> qkv, fc2.3.sum -> fc2.sum."""
    return re.sub(r"\.\d+(?=\.|$)", "", name) or "(unnamed)"


def profile_size(profile: Callable[[], list], b: int, t: int, runs: int, warmup: int) -> dict:
    """`runs` calls of `profile` (one profiled step at (b, t): its node times, as
    Executable.profile returns them) after `warmup`: the median time of every node,
    their sum (the step) and its groups per kernel and per node name without the layer
    index; `span_us`: the median from the first node's start to the last one's end
    (with the gaps between nodes)."""
    for _ in range(warmup):
        profile()
    samples = [profile() for _ in range(runs)]
    nodes = node_medians(samples)
    step_us = sum(n["median_us"] for n in nodes)
    spans = [(max(x.end_ns for x in run) - min(x.start_ns for x in run)) / 1e3 for run in samples]
    return {"b": b, "t": t, "runs": runs, "warmup": warmup, "step_us": step_us,
            "span_us": statistics.median(spans), "nodes": nodes,
            "by_kernel": group_nodes(nodes, lambda n: n["kernel"] or f"({n['kind']})", step_us),
            "by_node": group_nodes(nodes, lambda n: layer_dropped(n["name"]), step_us)}


def print_groups(title: str, groups) -> None:
    print(f"{title:24s} {'calls':>6} {'us/step':>10} {'share':>7}")
    for g in groups:
        print(f"{g['name']:24s} {g['calls']:6d} {g['total_us']:10.1f} {g['share']:7.1%}")


def print_profile(r: dict, title: str, extra: str = "") -> None:
    """One profile_size result: its heading, then the groups per kernel and per node."""
    print(f"\n== {title}, median of {r['runs']} runs after {r['warmup']}: step {r['step_us']:.1f} us "
          f"(node times summed), {r['span_us']:.1f} us first start to last end{extra}")
    print_groups("kernel", r["by_kernel"])
    print_groups("node (layer dropped)", r["by_node"])
