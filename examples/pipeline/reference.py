#!/usr/bin/env python3
"""The pipeline example's result in numpy: layers 0 .. world-1 of kernels/stage.cl applied
in turn to each of the 4 microbatches of the input, as the last rank's 'result' slot
holds it after one run of graph.json with `world` ranks.

Usage: reference.py WORLD RESULT.bin   (exit 0 when RESULT.bin, raw f32, agrees)
"""
import sys

import numpy as np

MICRO, ROWS, D = 4, 8, 64


def layer(rank: int, x: np.ndarray) -> np.ndarray:
    j = np.arange(D).reshape(D, 1)
    k = np.arange(D).reshape(1, D)
    w = ((rank * 31 + j * 7 + k * 3) % 17 - 8).astype(np.float64) / (8.0 * D)
    b = ((rank * 5 + np.arange(D)) % 7 - 3).astype(np.float64) / 16.0
    y = x @ w.T + b
    return np.where(y > 0, y, 0.125 * y)


def pipeline(world: int) -> np.ndarray:
    i = np.arange(MICRO * ROWS * D)
    x = (((i * 13) % 29 - 14) / 14.0).reshape(MICRO * ROWS, D)
    for r in range(world):
        x = layer(r, x)
    return x.reshape(-1)


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    world = int(sys.argv[1])
    got = np.fromfile(sys.argv[2], dtype=np.float32)
    want = pipeline(world)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        worst = np.max(np.abs(got.astype(np.float64) - want)) if got.shape == want.shape else float("nan")
        print(f"pipeline: {world} ranks: result differs from the reference (max |diff| {worst:.3g})")
        return 1
    print(f"pipeline: {world} ranks: ok ({got.size} values)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
