#!/usr/bin/env python3
"""Greedy decoding with the decode-step graph through the cgraph Python package.

    decode.py --cgf small.cgf --weights weights-small [--backend cpu] [--batch 4] [--steps 64]

The executable is finalized once; every step is one run with parameters b and t. Prompt
tokens are fed one per step; after the prompt, the `next` buffer of a step is bound as
the `tokens` of the following one (the two buffers swap; nothing is copied).
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model  # noqa: E402


def import_cgraph():
    try:
        import cgraph
    except ImportError:  # run from a source checkout without PYTHONPATH
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        import cgraph
    return cgraph


class Memory:
    """One slot's memory: a numpy array bound in place where the device uses host memory,
    else a cgraph.Buffer of the device with copies in and out."""

    def __init__(self, cgraph, exe, shape, dtype, data=None):
        self.array = np.zeros(shape, dtype) if data is None else np.ascontiguousarray(data)
        self.buffer = None
        if not exe.device.host_memory:
            self.buffer = cgraph.Buffer(exe.device, self.array.nbytes)
            self.buffer.write(self.array)

    def bound(self):
        return self.array if self.buffer is None else self.buffer

    def write(self, values):
        self.array[: len(values)] = values
        if self.buffer is not None:
            self.buffer.write(self.array)

    def read(self):
        if self.buffer is not None:
            self.buffer.read(out=self.array)
        return self.array


class Decoder:
    """An executable of the decode step with its weights, caches and token buffers.

    Every external slot is bound at its largest size (b = B_MAX); the graph uses the first
    b rows. `step` runs one position; `tokens_in` is the buffer the next step reads.
    """

    def __init__(self, cgf, weights, cfg, device="cpu", plan_memory=True):
        cgraph = import_cgraph()
        self.cfg = cfg
        self.exe = cgraph.load(cgf).finalize(device=device, plan_memory=plan_memory)
        B, V = cfg.batch_max, cfg.vocab
        mem = lambda shape, dtype, data=None: Memory(cgraph, self.exe, shape, dtype, data)  # noqa: E731
        self.weights = {name: mem(w.shape, np.float32, w) for name, w in weights.items()}
        self.k_cache = mem(cfg.cache_shape(), np.float32)
        self.v_cache = mem(cfg.cache_shape(), np.float32)
        self.logits = mem((B, V), np.float32)
        self.tokens_in = mem((B,), np.int32)
        self.tokens_out = mem((B,), np.int32)

    def step(self, b, t, tokens=None):
        """Runs position t for sequences 0..b-1. `tokens` (b ints) are written into the
        input buffer first; without them the input is the previous step's `next`.
        Afterwards the output buffer becomes the next step's input (swapped)."""
        if tokens is not None:
            self.tokens_in.write(np.asarray(tokens, np.int32))
        self.exe.run(b=b, t=t, **self.binding())
        self.tokens_in, self.tokens_out = self.tokens_out, self.tokens_in

    def binding(self):
        """Every external slot's array, as exe.run takes them."""
        binding = {name: m.bound() for name, m in self.weights.items()}
        binding.update(tokens=self.tokens_in.bound(), next=self.tokens_out.bound(),
                       logits=self.logits.bound(), k_cache=self.k_cache.bound(),
                       v_cache=self.v_cache.bound())
        return binding

    def last_tokens(self, b):
        """The `next` tokens of the latest step (now the input buffer)."""
        return self.tokens_in.read()[:b].copy()

    def last_logits(self, b):
        return self.logits.read()[:b].copy()


def make_prompts(cfg, batch, length):
    """Token (1 + 131 i + 17 t) mod V for sequence i at position t (decode.cpp's too)."""
    i, t = np.meshgrid(np.arange(batch), np.arange(length), indexing="ij")
    return ((1 + 131 * i + 17 * t) % cfg.vocab).astype(np.int32)


def generate(decoder, prompts, steps):
    """Feeds prompts[i] (equal lengths) one token per step, then decodes greedily until
    `steps` positions ran. Returns ([b, steps] tokens produced, seconds of the loop)."""
    b, n_prompt = prompts.shape
    out = np.zeros((b, steps), np.int32)
    start = time.perf_counter()
    for t in range(steps):
        decoder.step(b, t, prompts[:, t] if t < n_prompt else None)
        out[:, t] = decoder.last_tokens(b)
    return out, time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cgf", required=True)
    ap.add_argument("--weights", required=True, help="directory of .npy files (make_weights.py)")
    ap.add_argument("--config", default=None, help="default: the .cgf's name (gpt-decode-NAME[-f16])")
    ap.add_argument("--backend", default="cpu", help="device spec: cpu, opencl, cuda, opencl:1, ...")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--prompt-len", type=int, default=4)
    args = ap.parse_args()
    cgraph = import_cgraph()
    name = args.config or cgraph.load(args.cgf).name.removeprefix("gpt-decode-").removesuffix("-f16")
    cfg = model.get(name)
    import make_weights
    if not 1 <= args.batch <= cfg.batch_max or not 1 <= args.steps <= cfg.context_max:
        raise SystemExit(f"--batch must be 1..{cfg.batch_max} and --steps 1..{cfg.context_max}")
    decoder = Decoder(args.cgf, make_weights.load(args.weights, cfg), cfg, args.backend)
    prompts = make_prompts(cfg, args.batch, max(1, min(args.prompt_len, args.steps)))
    tokens, seconds = generate(decoder, prompts, args.steps)
    for i, row in enumerate(tokens):
        print(f"seq {i}: prompt {' '.join(map(str, prompts[i]))} | next {' '.join(map(str, row))}")
    print(f"{decoder.exe.device.spec}: {args.steps} steps x {args.batch} sequences in {seconds:.3f} s: "
          f"{args.steps * args.batch / seconds:.1f} tokens/s ({args.steps / seconds:.1f} steps/s)")


if __name__ == "__main__":
    main()
