"""The data-parallel example's training in one float64 numpy process: the weights after
`steps` SGD steps on `rows` rows (make_shard's data and targets, kernels/linear.cl),
for tests that check every rank of a run against it."""

import numpy as np


def weights(rows, steps, lr=0.5, d=16):
    g = np.arange(rows)[:, None]
    j = np.arange(d)[None, :]
    x = ((g * 7 + j * 3) % 11).astype(np.float64) / 11.0 - 0.5
    t = x @ ((np.arange(d) % 5) - 2).astype(np.float64)
    w = np.zeros(d)
    for _ in range(steps):
        w -= lr * (2.0 / rows) * ((x @ w - t) @ x)
    return w
