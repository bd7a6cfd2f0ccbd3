#!/usr/bin/env python3
"""Writes the graph description of one decode step of a config (cgc input).

    gen_graph.py --config small -o small.json [--weights f16] [--epilogues separate]

One file serves every batch size b <= B_MAX and position t < T_MAX: both are integer
parameters, and every size and nd-range that depends on b is an expression over $b that
the runtime evaluates per submission. Layers are unrolled here; layer l reads its
weights at byte offset l * (one layer's size) of the stacked weight slots, and its cache
part at offset l * B_MAX * T_MAX * D * 4 of k_cache and v_cache. With --weights f16
the matrices of Config.half_weights() are float16 slots (2 bytes an element), read by
linear.cl and embed.cl as half (vload_half: core OpenCL C, no extension needed) and
computed with in float32. With --epilogues separate, each projection's bias, GELU and
residual add are elementwise.cl nodes of their own (the unfused step; cgfuse --auto
fuses them back into chains).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

F32 = 4
LIN_WG, LIN_OR, LT_O, LT_R, LT_K = 64, 4, 32, 32, 32  # linear.cl's; the nd-ranges below depend on them
LN_WG, ATT_WG, ATT_CHUNK, AM_WG, SUM_WG = 128, 128, 64, 256, 256
EPI_BIAS, EPI_GELU, EPI_ACCUMULATE = 1, 2, 4
EPS = 1e-5


def in_range(var: str, lo: int, hi: int) -> str:
    """An expression that is 0 when lo <= $var <= hi and 1 otherwise."""
    return f"min(max(${var} - {hi}, 0), 1) + min(max({lo} - ${var}, 0), 1)"


# --lin-rows and --lin-tiled-min[-mid|-wide]: override lin_blocks' values (None: the
# config's).
ROWS = None
TILED_MIN = None
TILED_MIN_MID = None
TILED_MIN_WIDE = None
K_SPLITS = None  # --lin-k-splits
SPLIT_GROUPS = None  # --lin-split-groups
SPLIT_BELOW = None  # --lin-split-below
MID_O, WIDE_O = 2048, 8192  # output columns from which a projection is "mid" (qkv, fc1) or "wide" (logits)


def lin_blocks(cfg: model.Config) -> tuple:
    """linear.cl's LIN_NB (rows per matrix-vector block) and the most rows a projection
    takes as matrix-vector products (more: tiles) for narrow, mid and wide outputs
    (MID_O, WIDE_O): the kernel's `tiled_min` argument. Wider projections have tiles
    enough to fill the GPU at fewer rows. The larger configs' thresholds are where the
    tiles became the faster way for the gpt2 shapes (measured:
    benchmarks/gpt-decode/results/2026-12-06-h100/NOTES.md). The small config's are
    lower, so that its tests reach several blocks and the tiles at B_MAX 8."""
    defaults = (8, 32, 32, 8) if cfg.batch_max > 8 else (2, 4, 4, 4)
    given = (ROWS, TILED_MIN, TILED_MIN_MID, TILED_MIN_WIDE)
    return tuple(d if g is None else g for g, d in zip(given, defaults))


def slots(cfg: model.Config, half: bool = False, separate: bool = False) -> list:
    D, F, V = cfg.d_model, cfg.d_ff, cfg.vocab
    cache = cfg.layers * cfg.batch_max * cfg.context_max * D
    # The caches' size grows past any binding when b or t is out of range, so the
    # runtime refuses such a submission (naming the slot) before a kernel writes
    # outside a sequence's part of the cache.
    guard = f"(1 + {in_range('b', 1, cfg.batch_max)} + {in_range('t', 0, cfg.context_max - 1)})"
    out = [
        {"name": "tokens", "count": "$b", "type": "i32", "external": True},
        {"name": "next", "count": "$b", "type": "i32", "external": True},
        {"name": "logits", "count": f"$b * {V}", "type": "f32", "external": True},
        {"name": "k_cache", "count": f"{cache} * {guard}", "type": "f32", "external": True},
        {"name": "v_cache", "count": f"{cache} * {guard}", "type": "f32", "external": True},
    ]
    for name, shape in cfg.weight_shapes().items():
        count = 1
        for n in shape:
            count *= n
        f16 = half and name in cfg.half_weights()
        out.append({"name": name, "count": count, "type": "f16" if f16 else "f32", "external": True})
    # att_part: attention_part's records, [b, H, NCH_MAX, head_dim + 4] (attention.cl)
    part = cfg.heads * n_chunks(cfg) * (cfg.head_dim + 4)
    # One slot per value, as a framework's recording of the step gives: every layer's
    # activations are slots of their own (x, the residual stream, is updated in place).
    # The runtime's memory plan folds them: slots whose lifetimes the edges keep apart
    # share memory (`cgc dump` shows the plan, `cgrun --no-memory-plan` turns it off).
    activations = [("x", D), ("hf", D)]
    for l in range(cfg.layers):
        activations += [(f"h1.{l}", D), (f"qkv.{l}", 3 * D), (f"att_part.{l}", part), (f"att.{l}", D),
                        (f"h2.{l}", D), (f"m.{l}", F)]
        if separate:  # the projections' outputs before their residual adds
            activations += [(f"o.{l}", D), (f"f.{l}", D)]
        for short, k_dim, o_dim in (("qkv", D, 3 * D), ("proj", D, D), ("fc1", D, F), ("fc2", F, D)):
            most = k_splits(cfg, k_dim, o_dim)[0]
            if most > 1:  # the projection's partial sums (linear.cl's split K)
                activations.append((f"{short}p.{l}", most * o_dim))
    for name, width in activations:
        out.append({"name": name, "count": f"$b * {width}", "type": "f32", "init": "transient"})
    return out


def n_chunks(cfg: model.Config) -> int:
    return -(-cfg.context_max // ATT_CHUNK)


def ref(slot: str, offset: int):
    return {"slot": slot, "offset": offset} if offset else slot


def k_splits(cfg: model.Config, k_dim: int, o_dim: int) -> tuple:
    """How many parts linear.cl's tiles split K into, as (the most, the node's argument:
    a number or an expression of $b). Projections with few tiles (few output columns, or
    few rows) cannot fill the GPU otherwise. By default only narrow projections with a
    long K (fc2: 768 columns, K 3072) split: 8 parts up to 128 rows and 4 above (fewer
    row tiles need more parts; measured: benchmarks/gpt-decode/results/2026-12-05-h100/
    NOTES.md). With --lin-split-groups G every projection narrower than WIDE_O splits
    into enough parts for about G work-groups, at most 8 and at least two K steps each
    (--lin-split-below C: only those narrower than C columns)."""
    if SPLIT_GROUPS:
        most = min(8, k_dim // (2 * LT_K))
        if o_dim >= (SPLIT_BELOW or WIDE_O) or most < 2:
            return 1, 1
        tiles = f"{-(-o_dim // LT_O)} * ceil_div($b, {LT_R})"
        return most, f"min({most}, ceil_div({SPLIT_GROUPS}, {tiles}))"
    if K_SPLITS is not None:
        most, arg = K_SPLITS, K_SPLITS
    elif cfg.batch_max > 8:
        most, arg = 8, "4 + 4 * min(max(129 - $b, 0), 1)"
    else:
        most, arg = 2, 2
    if o_dim >= MID_O or k_dim <= o_dim or most < 2:
        return 1, 1
    return most, arg


def linear(cfg, name, y, x, w, w_off, bias, b_off, k_dim, o_dim, epilogue, part=None):
    """linear.cl's nodes. Its nd-range: for b <= tiled_min one work-group per LIN_OR
    columns and block of LIN_NB rows, else one per tile of LT_O columns x LT_R rows (and
    per part of K: k_splits). The stored expressions pick between the two per run;
    tiled_min is lin_blocks' threshold for o_dim. With K split, `part` is the slot of
    the partial sums ([k_splits, $b, o_dim]) and a linear_sum node follows."""
    assert k_dim % LT_K == 0
    nb, narrow, mid, wide = lin_blocks(cfg)
    tiled_min = wide if o_dim >= WIDE_O else mid if o_dim >= MID_O else narrow
    most, splits = k_splits(cfg, k_dim, o_dim) if part else (1, 1)
    gemv = -(-o_dim // LIN_OR) * LIN_WG
    tiled = -(-o_dim // LT_O) * LIN_WG
    is_tiled = f"min(max($b - {tiled_min}, 0), 1)"
    blocks = f"ceil_div($b, {nb})"
    grid = [f"{gemv} - {gemv - tiled} * {is_tiled}", f"{blocks} - ({blocks} - ceil_div($b, {LT_R})) * {is_tiled}"]
    if most > 1:  # the third dimension: the parts of K (1 on the matrix-vector way)
        grid.append(f"1 + ({splits} - 1) * {is_tiled}")
    nodes = [{"name": name, "kernel": "linear", "global": grid, "local": [LIN_WG, *[1] * (len(grid) - 1)],
              "args": [y, x, ref(w, w_off), ref(bias, b_off), "$b", k_dim, o_dim, epilogue, tiled_min,
                       part if most > 1 else y]}]
    if most > 1:
        every = f"ceil_div($b * {o_dim}, {SUM_WG}) * {SUM_WG}"
        nodes.append({"name": f"{name}.sum", "kernel": "linear_sum",
                      "global": [f"{SUM_WG} + ({every} - {SUM_WG}) * {is_tiled}"], "local": [SUM_WG],
                      "args": [y, part, ref(bias, b_off), "$b", o_dim, epilogue, tiled_min, splits]})
    return nodes


def layernorm(name, y, x, g, b, off, n):
    return {"name": name, "kernel": "layernorm", "global": [f"$b * {LN_WG}"], "local": [LN_WG],
            "args": [y, x, ref(g, off), ref(b, off), n, EPS]}


def elementwise(name, kernel, n, args):
    """An elementwise.cl kernel over a [$b, n] matrix, one work-item per element."""
    return {"name": name, "kernel": kernel, "global": [f"$b * {n}"], "args": args}


def projection(cfg, name, y, x, w, w_off, bias, b_off, k_dim, o_dim, epilogue, separate, raw=None, part=None):
    """linear(), with its epilogue inside, or, with `separate`, as a plain projection
    into `raw` (y itself without EPI_ACCUMULATE) followed by elementwise.cl nodes:
    add_bias, then gelu or add_into(y, raw). `part`: linear()'s split-K slot."""
    if not separate:
        return linear(cfg, name, y, x, w, w_off, bias, b_off, k_dim, o_dim, epilogue, part)
    out = raw if epilogue & EPI_ACCUMULATE else y
    nodes = [*linear(cfg, name, out, x, w, w_off, bias, b_off, k_dim, o_dim, 0, part),
             elementwise(f"{name}.bias", "add_bias", o_dim, [out, ref(bias, b_off), o_dim])]
    if epilogue & EPI_GELU:
        nodes.append(elementwise(f"{name}.gelu", "gelu", o_dim, [out]))
    if epilogue & EPI_ACCUMULATE:
        nodes.append(elementwise(f"{name}.residual", "add_into", o_dim, [y, out]))
    return nodes


def layer_nodes(cfg: model.Config, l: int, half: bool = False, separate: bool = False) -> list:
    D, F = cfg.d_model, cfg.d_ff
    W = 2 if half else F32  # bytes of a matrix element
    cache_off = l * cfg.batch_max * cfg.context_max * D * F32
    return [
        layernorm(f"ln1.{l}", f"h1.{l}", "x", "ln1_g", "ln1_b", l * D * F32, D),
        *projection(cfg, f"qkv.{l}", f"qkv.{l}", f"h1.{l}", "wqkv", l * 3 * D * D * W, "bqkv", l * 3 * D * F32,
                    D, 3 * D, EPI_BIAS, separate, part=f"qkvp.{l}"),
        {"name": f"attn.{l}", "kernel": "attention_part",
         "global": [ATT_WG * cfg.heads, "$b", f"ceil_div($t + 1, {ATT_CHUNK})"], "local": [ATT_WG, 1, 1],
         "args": [f"att_part.{l}", f"qkv.{l}", ref("k_cache", cache_off), ref("v_cache", cache_off), "$t", D]},
        {"name": f"attn_sum.{l}", "kernel": "attention_combine",
         "global": [cfg.head_dim * cfg.heads, "$b"], "local": [cfg.head_dim, 1],
         "args": [f"att.{l}", f"att_part.{l}", "$t", D]},
        *projection(cfg, f"proj.{l}", "x", f"att.{l}", "wo", l * D * D * W, "bo", l * D * F32,
                    D, D, EPI_BIAS | EPI_ACCUMULATE, separate, f"o.{l}", f"projp.{l}"),
        layernorm(f"ln2.{l}", f"h2.{l}", "x", "ln2_g", "ln2_b", l * D * F32, D),
        *projection(cfg, f"fc1.{l}", f"m.{l}", f"h2.{l}", "w1", l * F * D * W, "b1", l * F * F32,
                    D, F, EPI_BIAS | EPI_GELU, separate, part=f"fc1p.{l}"),
        *projection(cfg, f"fc2.{l}", "x", f"m.{l}", "w2", l * D * F * W, "b2", l * D * F32,
                    F, D, EPI_BIAS | EPI_ACCUMULATE, separate, f"f.{l}", f"fc2p.{l}"),
    ]


def describe(cfg: model.Config, half: bool = False, separate: bool = False) -> dict:
    D, V = cfg.d_model, cfg.vocab
    nodes = [{"name": "embed", "kernel": "embed", "global": [f"$b * {LN_WG}"], "local": [LN_WG],
              "args": ["x", "wte", "wpe", "tokens", "$t", D, V]}]
    for l in range(cfg.layers):
        nodes += layer_nodes(cfg, l, half, separate)
    nodes += [
        layernorm("lnf", "hf", "x", "lnf_g", "lnf_b", 0, D),
        # Tied embeddings: logits = h @ wte.T. bias is not read without EPI_BIAS.
        *linear(cfg, "logits", "logits", "hf", "wte", 0, "lnf_b", 0, D, V, 0),
        {"name": "argmax", "kernel": "argmax", "global": [AM_WG, "$b"], "local": [AM_WG, 1],
         "args": ["next", "logits", V]},
    ]
    return {
        "name": f"gpt-decode-{cfg.name}" + ("-f16" if half else ""),
        "metadata": {
            "description": "one GPT-2-style decode step (pre-layernorm, tied embeddings, greedy) "
                           "for b sequences at position t; b and t are parameters",
            "config": cfg.name, "layers": cfg.layers, "d_model": D, "heads": cfg.heads,
            "vocab": V, "positions": cfg.positions, "batch_max": cfg.batch_max,
            "context_max": cfg.context_max, "weights": "f16" if half else "f32",
            **({"epilogues": "separate"} if separate else {}),
        },
        "kernels": [
            {"file": "kernels/embed.cl", "defines": {"EMB_HALF": 1}} if half else "kernels/embed.cl",
            {"file": "kernels/layernorm.cl", "defines": {"LN_WG": LN_WG}},
            {"file": "kernels/linear.cl", "defines": {"LIN_WG": LIN_WG, "LIN_NB": lin_blocks(cfg)[0], "LIN_OR": LIN_OR,
                                                      **({"LIN_HALF": 1} if half else {})}},
            {"file": "kernels/attention.cl",
             "defines": {"ATT_WG": ATT_WG, "ATT_CHUNK": ATT_CHUNK, "HD": cfg.head_dim,
                         "T_MAX": cfg.context_max, "NCH_MAX": n_chunks(cfg)}},
            {"file": "kernels/argmax.cl", "defines": {"AM_WG": AM_WG}},
            *(["kernels/elementwise.cl"] if separate else []),
        ],
        # b defaults to B_MAX: the declared sizes (Slot.size) are then the largest ones.
        "params": [{"name": "b", "type": "i32", "default": cfg.batch_max},
                   {"name": "t", "type": "i32", "default": 0}],
        "slots": slots(cfg, half, separate),
        "nodes": nodes,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, choices=sorted(model.CONFIGS))
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--weights", choices=["f32", "f16"], default="f32",
                    help="f16: the matrices as float16 slots (make_weights.py --f16)")
    ap.add_argument("--epilogues", choices=["fused", "separate"], default="fused",
                    help="separate: bias, GELU and residual adds as elementwise.cl nodes after each "
                         "projection (the unfused step cgfuse --auto fuses)")
    ap.add_argument("--lin-tiled-min", type=int,
                    help=f"the most rows linear.cl takes as matrix-vector products (more: tiles), for "
                         f"projections of fewer than {MID_O} output columns; default: the config's")
    ap.add_argument("--lin-tiled-min-mid", type=int,
                    help=f"the same for projections of {MID_O} to {WIDE_O - 1} output columns (qkv, fc1); "
                         "default: the config's")
    ap.add_argument("--lin-tiled-min-wide", type=int,
                    help=f"the same for projections of at least {WIDE_O} output columns (the logits); "
                         "default: the config's")
    ap.add_argument("--lin-k-splits", type=int,
                    help="parts of K for the tiles of narrow projections with a long K (fc2); 1: none; "
                         "default: the config's")
    ap.add_argument("--lin-split-groups", type=int,
                    help="split K of every projection narrower than the logits into enough parts "
                         "(up to 8) for about this many work-groups; default: only fc2 splits")
    ap.add_argument("--lin-split-below", type=int,
                    help=f"with --lin-split-groups: only projections of fewer output columns split "
                         f"(default {WIDE_O})")
    ap.add_argument("--lin-rows", type=int,
                    help="rows per matrix-vector block in linear.cl (each weight read once per block); "
                         "default: the config's")
    args = ap.parse_args()
    global ROWS, TILED_MIN, TILED_MIN_MID, TILED_MIN_WIDE, K_SPLITS
    ROWS, TILED_MIN, K_SPLITS = args.lin_rows, args.lin_tiled_min, args.lin_k_splits
    TILED_MIN_MID, TILED_MIN_WIDE = args.lin_tiled_min_mid, args.lin_tiled_min_wide
    global SPLIT_GROUPS, SPLIT_BELOW
    SPLIT_GROUPS, SPLIT_BELOW = args.lin_split_groups, args.lin_split_below
    cfg = model.get(args.config)
    groups = ATT_WG // (cfg.head_dim // 4)  # attention.cl's position groups: a power of two
    assert cfg.head_dim % 4 == 0 and groups & (groups - 1) == 0 and ATT_CHUNK <= ATT_WG and cfg.d_model % 4 == 0
    with open(args.output, "w") as f:
        json.dump(describe(cfg, args.weights == "f16", args.epilogues == "separate"), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
