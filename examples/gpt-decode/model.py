"""The GPT-2-shaped decoder's configurations: one dataclass, one dict of named configs.

Every script of this example (make_weights.py, gen_graph.py, reference.py, decode.py and
the tests) takes its shapes from here, so a name means the same shapes everywhere.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    name: str
    layers: int  # L
    d_model: int  # D
    heads: int  # H; the head dimension is D / H
    vocab: int  # V
    positions: int  # P, rows of wpe
    batch_max: int  # B_MAX, the most sequences one step takes
    context_max: int  # T_MAX, cache positions per sequence

    @property
    def d_ff(self) -> int:  # F = 4D
        return 4 * self.d_model

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    def weight_shapes(self) -> dict:
        """Every weight's name and shape (fp32, C order; projections are [out, in])."""
        L, D, F, V, P = self.layers, self.d_model, self.d_ff, self.vocab, self.positions
        return {
            "wte": (V, D), "wpe": (P, D), "lnf_g": (D,), "lnf_b": (D,),
            "ln1_g": (L, D), "ln1_b": (L, D), "wqkv": (L, 3 * D, D), "bqkv": (L, 3 * D),
            "wo": (L, D, D), "bo": (L, D), "ln2_g": (L, D), "ln2_b": (L, D),
            "w1": (L, F, D), "b1": (L, F), "w2": (L, D, F), "b2": (L, D),
        }

    def half_weights(self) -> tuple:
        """The matrices the fp16 variant stores as float16 (gen_graph.py --weights f16):
        every projection and the (tied) embedding table; vectors stay float32."""
        return ("wte", "wqkv", "wo", "w1", "w2")

    def cache_shape(self) -> tuple:
        """k_cache and v_cache: [L, B_MAX, T_MAX, D]."""
        return (self.layers, self.batch_max, self.context_max, self.d_model)


CONFIGS = {
    "gpt2": Config("gpt2", layers=12, d_model=768, heads=12, vocab=50257, positions=1024,
                   batch_max=512, context_max=1024),
    # CI-sized; V = 1000 is deliberately not a multiple of any work-group size.
    "small": Config("small", layers=2, d_model=128, heads=4, vocab=1000, positions=128,
                    batch_max=8, context_max=128),
}


def get(name: str) -> Config:
    try:
        return CONFIGS[name]
    except KeyError:
        raise SystemExit(f"unknown config '{name}' (known: {', '.join(CONFIGS)})") from None
