"""The GPT-2 decode step of examples/gpt-decode in PyTorch (fp32, TF32 off), for the
benchmarks beside it.

One step for b sequences all at position t: x = wte[tokens] + wpe[t]; per layer
pre-LN attention over the key/value cache positions 0..t (k, v of this step written at
[l, i, t, :] of caches shaped [L, B_MAX, T_MAX, D]) and a gelu(tanh) MLP; the final
LayerNorm; logits = x @ wte.T; next = argmax. Projections are [out, in] (F.linear).

Two forms of the step, chosen by the type of ``t``:

- ``t`` a Python int: attention over the cache sliced to t + 1 positions. The kernel
  shapes depend on t, so a CUDA graph is captured per (b, t): what a torch user does for
  a fixed-size latency measurement (``StaticStep(model, b, t=...)``).
- ``t`` a 0-dim int64 tensor on the device: attention over all T_MAX positions with the
  positions after t masked out, the k/v write and the position embedding indexed by the
  tensor. Nothing depends on t's value on the host, so one CUDA graph per batch size
  serves every t, as serving engines capture them (``StaticStep(model, b)``).

Works on torch 1.13 (manual attention) and 2.x (``F.scaled_dot_product_attention``).
"""

from __future__ import annotations

import math
import os
from typing import Optional, Union

import numpy as np
import torch
import torch.nn.functional as F

LAYER_TENSORS = ("ln1_g", "ln1_b", "wqkv", "bqkv", "wo", "bo", "ln2_g", "ln2_b", "w1", "b1", "w2", "b2")
GLOBAL_TENSORS = ("wte", "wpe", "lnf_g", "lnf_b")
WEIGHT_NAMES = GLOBAL_TENSORS + LAYER_TENSORS


def exact_fp32() -> None:
    """fp32 matrix products without TF32, so torch and cgraph compute the same math."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")


def load_weights(directory: Union[str, os.PathLike], device: Union[str, torch.device]) -> dict[str, torch.Tensor]:
    """Every weight tensor ``NAME.npy`` of `directory` as a contiguous fp32 tensor on
    `device`. Raises FileNotFoundError naming a missing file."""
    out = {}
    for name in WEIGHT_NAMES:
        path = os.path.join(directory, name + ".npy")
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: missing weight file")
        array = np.ascontiguousarray(np.load(path), dtype=np.float32)
        out[name] = torch.from_numpy(array).to(device).contiguous()
    return out


def weight_bytes(weights: dict[str, torch.Tensor]) -> int:
    """Bytes of weights one step reads: every tensor whole, except one row of wpe."""
    total = sum(w.numel() * w.element_size() for name, w in weights.items() if name != "wpe")
    return total + weights["wpe"].shape[1] * weights["wpe"].element_size()


def kv_bytes(layers: int, b: int, t: int, d_model: int, element: int = 4) -> int:
    """Bytes of key/value cache one step reads at (b, t): positions 0..t of both caches."""
    return 2 * layers * b * (t + 1) * d_model * element


class GPT2Decode:
    """The model on one device with its key/value caches.

    `weights`: the tensors of ``load_weights`` (kept by reference). `k_cache`/`v_cache`:
    fp32 [L, B_MAX, T_MAX, D] tensors to share (e.g. with a cgraph executable bound to
    the same memory), or None to allocate zeroed ones.
    """

    def __init__(self, weights: dict[str, torch.Tensor], heads: int, b_max: int, t_max: int,
                 k_cache: Optional[torch.Tensor] = None, v_cache: Optional[torch.Tensor] = None) -> None:
        self.w = weights
        self.layers, self.d_model = weights["ln1_g"].shape
        self.vocab = weights["wte"].shape[0]
        self.heads = heads
        if self.d_model % heads:
            raise ValueError(f"d_model {self.d_model} is not a multiple of heads {heads}")
        self.head_dim = self.d_model // heads
        self.b_max, self.t_max = b_max, t_max
        self.device = weights["wte"].device
        shape = (self.layers, b_max, t_max, self.d_model)
        self.k_cache = k_cache if k_cache is not None else torch.zeros(shape, device=self.device)
        self.v_cache = v_cache if v_cache is not None else torch.zeros(shape, device=self.device)
        for name, cache in (("k_cache", self.k_cache), ("v_cache", self.v_cache)):
            if tuple(cache.shape) != shape or cache.dtype != torch.float32:
                raise ValueError(f"{name}: expected float32 {shape}, got {cache.dtype} {tuple(cache.shape)}")
        self.positions = torch.arange(t_max, device=self.device)
        self.sdpa = getattr(F, "scaled_dot_product_attention", None)

    def step(self, tokens: torch.Tensor, t: Union[int, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """One decode step for ``tokens`` (int [b] on the device) at position `t` (an int:
        sliced attention; a 0-dim int64 device tensor: masked attention). Writes k/v at
        [l, :b, t] and returns (logits fp32 [b, V], next int32 [b])."""
        w = self.w
        b = tokens.shape[0]
        if isinstance(t, int):
            if not 0 <= t < self.t_max or not 1 <= b <= self.b_max:
                raise ValueError(f"(b, t) = ({b}, {t}) outside b <= {self.b_max}, t < {self.t_max}")
            pos = w["wpe"][t]
            mask = None
        else:
            pos = w["wpe"].index_select(0, t.view(1))
            mask = (self.positions <= t).view(1, 1, 1, self.t_max)
        x = w["wte"].index_select(0, tokens.long()) + pos
        for layer in range(self.layers):
            x = self._layer(x, layer, t, mask)
        x = F.layer_norm(x, (self.d_model,), w["lnf_g"], w["lnf_b"], 1e-5)
        logits = F.linear(x, w["wte"])
        return logits, logits.argmax(dim=-1).to(torch.int32)

    def _layer(self, x: torch.Tensor, l: int, t, mask) -> torch.Tensor:
        w, d = self.w, self.d_model
        h = F.layer_norm(x, (d,), w["ln1_g"][l], w["ln1_b"][l], 1e-5)
        qkv = F.linear(h, w["wqkv"][l], w["bqkv"][l])
        q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
        attn = self._attention(q, k, v, l, t, mask)
        x = x + F.linear(attn, w["wo"][l], w["bo"][l])
        h = F.layer_norm(x, (d,), w["ln2_g"][l], w["ln2_b"][l], 1e-5)
        h = F.gelu(F.linear(h, w["w1"][l], w["b1"][l]), approximate="tanh")
        return x + F.linear(h, w["w2"][l], w["b2"][l])

    def _attention(self, q, k, v, l: int, t, mask) -> torch.Tensor:
        b, hn, hd = q.shape[0], self.heads, self.head_dim
        kc, vc = self.k_cache[l, :b], self.v_cache[l, :b]
        if mask is None:
            kc[:, t] = k
            vc[:, t] = v
            n = t + 1
        else:
            kc.index_copy_(1, t.view(1), k.unsqueeze(1))
            vc.index_copy_(1, t.view(1), v.unsqueeze(1))
            n = self.t_max
        keys = kc[:, :n].view(b, n, hn, hd).transpose(1, 2)    # [b, H, n, hd]
        values = vc[:, :n].view(b, n, hn, hd).transpose(1, 2)
        query = q.reshape(b, hn, 1, hd)
        if self.sdpa is not None:
            out = self.sdpa(query, keys, values, attn_mask=mask)
        else:
            scores = torch.matmul(query, keys.transpose(-1, -2)) * (1.0 / math.sqrt(hd))
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            out = torch.matmul(torch.softmax(scores, dim=-1), values)
        return out.reshape(b, self.d_model)


class StaticStep:
    """One CUDA graph of ``GPT2Decode.step`` at batch size `b`: at position `t` (an int,
    sliced attention) or, with t None, at any position read from a device tensor (masked
    attention). Static input buffers are filled before each replay; the outputs are the
    graph's own tensors, overwritten by the next replay.

    `pool`: a ``torch.cuda.graph_pool_handle()`` to share memory between captures (as
    serving engines do, capturing the largest batch first). Capture writes the caches at
    position t (warm-up runs execute the step).
    """

    def __init__(self, model: GPT2Decode, b: int, t: Optional[int] = None, pool=None, warmup: int = 2) -> None:
        dev = model.device
        self.model, self.b, self.t = model, b, t
        self.tokens = torch.zeros(b, dtype=torch.int32, device=dev)
        self.t_dev = torch.zeros((), dtype=torch.int64, device=dev)
        arg = t if t is not None else self.t_dev
        side = torch.cuda.Stream(device=dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(warmup):
                model.step(self.tokens, arg)
        torch.cuda.current_stream(dev).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, pool=pool):
            self.logits, self.next = model.step(self.tokens, arg)

    def __call__(self, tokens: torch.Tensor, t: Optional[int] = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Replays the step for `tokens` ([b] on the device) at `t` (ignored by a graph
        captured at a fixed t). Returns the graph's (logits, next), not synchronized."""
        self.tokens.copy_(tokens)
        if self.t is None:
            self.t_dev.fill_(int(t))
        elif t is not None and t != self.t:
            raise ValueError(f"graph captured at t={self.t}, asked for t={t}")
        self.graph.replay()
        return self.logits, self.next
