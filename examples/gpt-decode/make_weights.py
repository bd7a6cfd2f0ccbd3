#!/usr/bin/env python3
"""Writes deterministic random weights of a config, one .npy per tensor.

    make_weights.py --config small --out weights-small [--seed 0] [--f16]

--f16 writes the matrices of Config.half_weights() as float16 (the graph made with
gen_graph.py --weights f16 reads them so); the others stay float32.

Matrices and embeddings ~ normal(0, 0.02); biases ~ normal(0, 0.02); layernorm gains
1 + normal(0, 0.02), offsets normal(0, 0.02). Tensors are drawn in model.weight_shapes()
order from numpy's default_rng(seed), so a seed gives the same files everywhere.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402


def make(cfg: model.Config, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in cfg.weight_shapes().items():
        w = rng.normal(0.0, 0.02, size=shape).astype(np.float32)
        if name.endswith("_g"):
            w += np.float32(1.0)
        weights[name] = w
    return weights


def to_f16(cfg: model.Config, weights: dict) -> dict:
    """`weights` with Config.half_weights() rounded to float16 (the fp16 variant's inputs)."""
    return {n: w.astype(np.float16) if n in cfg.half_weights() else w for n, w in weights.items()}


def as_f32(weights: dict) -> dict:
    """Every tensor as float32 (float16 ones exactly): what the reference computes with."""
    return {n: w.astype(np.float32) for n, w in weights.items()}


def load(directory: str, cfg: model.Config) -> dict:
    """Reads the .npy files of `cfg` from `directory`, checking each shape and dtype
    (float32, or float16 for Config.half_weights())."""
    weights = {}
    for name, shape in cfg.weight_shapes().items():
        w = np.load(os.path.join(directory, name + ".npy"))
        ok = w.dtype == np.float32 or (w.dtype == np.float16 and name in cfg.half_weights())
        if w.shape != shape or not ok:
            raise SystemExit(f"{name}.npy: {w.dtype} {w.shape}, expected float32 {shape}")
        weights[name] = np.ascontiguousarray(w)
    return weights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, choices=sorted(model.CONFIGS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--f16", action="store_true", help="the matrices as float16 (gen_graph.py --weights f16)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cfg = model.get(args.config)
    weights = make(cfg, args.seed)
    if args.f16:
        weights = to_f16(cfg, weights)
    for name, w in weights.items():
        np.save(os.path.join(args.out, name + ".npy"), w)
    print(f"wrote {len(model.get(args.config).weight_shapes())} tensors to {args.out}")


if __name__ == "__main__":
    main()
