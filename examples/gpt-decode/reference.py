"""One decode step in numpy: the math the graph computes, as a library.

    logits, next_tokens = step(weights, cfg, tokens, t, k_cache, v_cache)

float32 inputs, float32 arithmetic as numpy does it (matmuls through numpy's BLAS).
k_cache and v_cache ([L, B_MAX, T_MAX, D]) are updated in place at position t.
"""

import numpy as np

EPS = np.float32(1e-5)


def layernorm(x, g, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * g + b


def gelu_tanh(x):
    c = np.float32(np.sqrt(2.0 / np.pi))
    return np.float32(0.5) * x * (np.float32(1.0) + np.tanh(c * (x + np.float32(0.044715) * x * x * x)))


def attention(q, k_cache, v_cache, t, heads):
    """q [b, D]; caches [b, T_MAX, D] of one layer, positions 0..t filled."""
    b, D = q.shape
    hd = D // heads
    out = np.empty_like(q)
    scale = np.float32(1.0 / np.sqrt(hd))
    for j in range(heads):
        cols = slice(j * hd, (j + 1) * hd)
        k = k_cache[:b, : t + 1, cols]  # [b, t+1, hd]
        v = v_cache[:b, : t + 1, cols]
        s = np.einsum("bd,btd->bt", q[:, cols], k) * scale
        s = np.exp(s - s.max(axis=1, keepdims=True))
        s /= s.sum(axis=1, keepdims=True)
        out[:, cols] = np.einsum("bt,btd->bd", s, v)
    return out


def step(weights, cfg, tokens, t, k_cache, v_cache):
    """One step for len(tokens) sequences at position t; returns (logits [b, V], next [b])."""
    w = weights
    D = cfg.d_model
    tokens = np.asarray(tokens, dtype=np.int64)
    b = tokens.shape[0]
    assert 1 <= b <= cfg.batch_max and 0 <= t < cfg.context_max
    x = w["wte"][tokens] + w["wpe"][t]
    for layer in range(cfg.layers):
        h = layernorm(x, w["ln1_g"][layer], w["ln1_b"][layer])
        qkv = h @ w["wqkv"][layer].T + w["bqkv"][layer]
        k_cache[layer, :b, t] = qkv[:, D : 2 * D]
        v_cache[layer, :b, t] = qkv[:, 2 * D :]
        a = attention(qkv[:, :D], k_cache[layer], v_cache[layer], t, cfg.heads)
        x = x + (a @ w["wo"][layer].T + w["bo"][layer])
        h = layernorm(x, w["ln2_g"][layer], w["ln2_b"][layer])
        m = gelu_tanh(h @ w["w1"][layer].T + w["b1"][layer])
        x = x + (m @ w["w2"][layer].T + w["b2"][layer])
    x = layernorm(x, w["lnf_g"], w["lnf_b"])
    logits = x @ w["wte"].T
    return logits, np.argmax(logits, axis=1).astype(np.int32)  # argmax: lowest index on ties
