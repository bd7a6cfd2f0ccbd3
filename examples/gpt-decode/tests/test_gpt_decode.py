"""The small config's decode step against reference.py: one executable per device serves
every (b, t); cgfuse --auto fuses the step's elementwise epilogues and keeps the tokens; both drivers agree with the reference.

Tolerance: logits are compared with rtol = atol = 1e-4. The kernels sum in another order
than numpy's BLAS (K split over work-items and reduced as a tree; softmax and layernorm
sums likewise), so results differ by float32 rounding, about 1e-6 relative for this
depth and width; 1e-4 leaves a wide margin while any indexing or layout mistake moves
logits by 1e-2 or more. `next` must equal the reference argmax wherever the top two
logits differ by more than the tolerance, and be one of the near-maximal ones elsewhere.
"""

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import EXAMPLE, device_spec, tool

sys.path.insert(0, EXAMPLE)
import decode  # noqa: E402
import gen_graph  # noqa: E402
import make_weights  # noqa: E402
import model  # noqa: E402
import reference  # noqa: E402

TOL = 1e-4
# (b, t) per step, all on one executable: b = 1, B_MAX and sizes that are not powers of
# two, positions in and out of order, and the last position (the most attention chunks).
# With the small config's linear.cl settings b <= 4 takes the matrix-vector way (b = 3:
# two row blocks, one partial) and b > 4 the tiles.
SHAPES = [(8, 0), (1, 1), (5, 2), (8, 3), (3, 4), (7, 5), (8, 127)]


def check_tokens(got, logits):
    """`got` [b] against reference `logits` [b, V], with the margin rule above."""
    order = np.argsort(-logits, axis=1, kind="stable")
    for i, row in enumerate(logits):
        top = row[order[i, 0]]
        if top - row[order[i, 1]] > TOL:
            assert got[i] == order[i, 0], f"sequence {i}: next {got[i]}, reference {order[i, 0]}"
        else:
            assert top - row[got[i]] <= TOL, f"sequence {i}: next {got[i]} is not a near-maximal logit"


def run_shapes(decoder, cfg, weights, shapes):
    """Runs `shapes` on `decoder` and reference.step side by side; returns every step's next."""
    rk = np.zeros(cfg.cache_shape(), np.float32)
    rv = np.zeros_like(rk)
    rng = np.random.default_rng(7)
    tokens_seen = []
    for b, t in shapes:
        tokens = rng.integers(0, cfg.vocab, b, dtype=np.int32)
        decoder.step(b, t, tokens)
        ref_logits, _ = reference.step(weights, cfg, tokens, t, rk, rv)
        np.testing.assert_allclose(decoder.last_logits(b), ref_logits, rtol=TOL, atol=TOL,
                                   err_msg=f"logits at b={b} t={t}")
        got = decoder.last_tokens(b)
        check_tokens(got, ref_logits)
        tokens_seen.append(got)
    np.testing.assert_allclose(decoder.k_cache.read(), rk, rtol=TOL, atol=TOL, err_msg="k_cache")
    np.testing.assert_allclose(decoder.v_cache.read(), rv, rtol=TOL, atol=TOL, err_msg="v_cache")
    return tokens_seen


@pytest.mark.parametrize("backend", ["cpu", "opencl", "cuda"])
def test_one_executable_serves_every_shape(backend, cfg, weights, small_cgf):
    decoder = decode.Decoder(small_cgf, weights, cfg, device_spec(backend))
    run_shapes(decoder, cfg, weights, SHAPES)


@pytest.mark.parametrize("backend", ["cpu", "opencl", "cuda"])
def test_f16_weights_match_the_reference_of_the_rounded_weights(backend, cfg, weights, small_f16_cgf):
    """small_f16.json (gen_graph.py --weights f16): the matrices bound as float16 arrays,
    read as half and computed with in float32; the reference takes the same rounded
    weights, so the tolerance is the float32 one."""
    half = make_weights.to_f16(cfg, weights)
    assert half["wqkv"].dtype == np.float16 and half["bqkv"].dtype == np.float32
    decoder = decode.Decoder(small_f16_cgf, half, cfg, device_spec(backend))
    run_shapes(decoder, cfg, make_weights.as_f32(half), SHAPES)


def test_out_of_range_batch_or_position_is_refused(cfg, weights, small_cgf):
    import cgraph

    decoder = decode.Decoder(small_cgf, weights, cfg, "cpu")
    # Each refusal names what is out of range: a slot too small for b, an nd-range of
    # no work-items, the caches' guard for t (t = -1 also leaves attention no chunk).
    for b, t, names in [(cfg.batch_max + 1, 0, "'tokens'"), (0, 0, "'embed'"),
                        (1, cfg.context_max, "'k_cache'"), (1, -1, "'k_cache'|'attn.0'")]:
        with pytest.raises(cgraph.InvalidError, match=names):
            decoder.step(b, t, np.zeros(min(max(b, 1), cfg.batch_max), np.int32))


def test_a_binding_off_the_kernels_float4_alignment_is_refused(cfg, weights, small_cgf):
    # linear.cl and attention.cl read float4s with one 16-byte load; the slots' default
    # alignment (16) makes the runtime refuse an array that starts between two float4s.
    import cgraph

    decoder = decode.Decoder(small_cgf, weights, cfg, "cpu")
    wte = weights["wte"]
    spare = np.zeros(wte.size + 4, np.float32)
    start = next(i for i in range(4) if spare[i:].ctypes.data % 16 == 4)
    shifted = spare[start:start + wte.size].reshape(wte.shape)
    shifted[...] = wte
    binding = decoder.binding()
    binding["wte"] = shifted
    with pytest.raises(cgraph.InvalidError, match="'wte'.*alignment 16"):
        decoder.exe.run(b=1, t=0, **binding)


def greedy_reference(cfg, weights, prompts, steps):
    """Tokens of reference.step fed as decode.generate feeds the graph; a sequence stops
    being compared (-1) after a step whose top two logits are within TOL."""
    b, n_prompt = prompts.shape
    rk = np.zeros(cfg.cache_shape(), np.float32)
    rv = np.zeros_like(rk)
    out = np.full((b, steps), -1, np.int32)
    tokens, live = prompts[:, 0], np.ones(b, bool)
    for t in range(steps):
        if t < n_prompt:
            tokens = prompts[:, t]
        logits, tokens = reference.step(weights, cfg, tokens, t, rk, rv)
        top2 = np.sort(logits, axis=1)[:, -2:]
        out[live, t] = tokens[live]
        live &= top2[:, 1] - top2[:, 0] > TOL
    return out


def compare_greedy(got, expected):
    known = expected >= 0
    np.testing.assert_array_equal(got[known], expected[known])
    assert known.sum() >= got.size // 2, "too few steps with a clear maximum to compare"


def test_greedy_generation_swaps_buffers_and_matches_reference(cfg, weights, small_cgf):
    decoder = decode.Decoder(small_cgf, weights, cfg, "cpu")
    prompts = decode.make_prompts(cfg, 3, 4)
    got, _ = decode.generate(decoder, prompts, 24)
    compare_greedy(got, greedy_reference(cfg, weights, prompts, 24))


def compiled(description, tmp_path, name):
    """`description` (gen_graph.describe's) compiled by cgc, its kernel files found from
    tmp_path."""
    for i, k in enumerate(description["kernels"]):  # the kernel files, found from tmp_path
        if isinstance(k, str):
            description["kernels"][i] = os.path.join(EXAMPLE, k)
        else:
            k["file"] = os.path.join(EXAMPLE, k["file"])
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(description))
    out = str(tmp_path / f"{name}.cgf")
    subprocess.run([tool("CGC"), str(path), "-o", out, "--allow-dir", EXAMPLE], check=True)
    return out


def separate_epilogues_cgf(cfg, tmp_path):
    """The small step with each projection's bias, GELU and residual add as nodes of their
    own (gen_graph.py --epilogues separate), compiled by cgc."""
    return compiled(gen_graph.describe(cfg, separate=True), tmp_path, "small_separate")


def test_matrix_vector_blocks_of_more_rows_than_work_items_per_column_group(cfg, tmp_path, monkeypatch):
    # linear.cl with 32 rows per block: 32 x LIN_OR = 128 sums per work-group, more than
    # its 64 work-items store at once (gen_graph.py --lin-rows 32).
    big = dataclasses.replace(cfg, batch_max=40, context_max=32)
    monkeypatch.setattr(gen_graph, "ROWS", 32)
    path = compiled(gen_graph.describe(big), tmp_path, "small_rows32")
    weights = make_weights.make(big, seed=0)
    run_shapes(decode.Decoder(path, weights, big, "cpu"), big, weights, [(32, 0), (40, 1), (17, 2)])


def test_every_projection_splits_k_when_asked_and_matches_the_reference(cfg, tmp_path, monkeypatch):
    # gen_graph.py --lin-split-groups: qkv, proj, fc1 and fc2 split K into a number of
    # parts that depends on $b (from 8 at one row tile down to 1), each with its
    # linear_sum node; shapes on both sides of the tiles' threshold.
    big = dataclasses.replace(cfg, batch_max=40, context_max=32)
    monkeypatch.setattr(gen_graph, "SPLIT_GROUPS", 64)
    monkeypatch.setattr(gen_graph, "TILED_MIN", 4)
    monkeypatch.setattr(gen_graph, "TILED_MIN_MID", 4)
    desc = gen_graph.describe(big)
    sums = [n["name"] for n in desc["nodes"] if n["kernel"] == "linear_sum"]
    assert len(sums) == 4 * big.layers
    path = compiled(desc, tmp_path, "small_split_all")
    weights = make_weights.make(big, seed=0)
    run_shapes(decode.Decoder(path, weights, big, "cpu"), big, weights, [(3, 0), (32, 1), (40, 2)])


def test_cgfuse_auto_fuses_the_epilogue_chains_and_keeps_the_tokens(cfg, weights, small_cgf, tmp_path):
    # Sizes and ranges are expressions over $b: cgfuse fuses chains of equal ranges.
    separate = separate_epilogues_cgf(cfg, tmp_path)
    fused = str(tmp_path / "small_separate.fused.cgf")
    res = subprocess.run([tool("CGFUSE"), "--auto", "--json", separate, "-o", fused], check=True,
                         capture_output=True, text=True)
    groups = [g["from"] for g in json.loads(res.stdout)["fused"]]
    assert len(groups) == 3 * cfg.layers, groups  # bias+residual (proj, fc2), bias+gelu (fc1)
    assert ["fc1.0.bias", "fc1.0.gelu"] in groups, groups
    shapes = SHAPES[:4]
    plain = run_shapes(decode.Decoder(small_cgf, weights, cfg, "cpu"), cfg, weights, shapes)
    for path in (separate, fused):  # each against the reference, and the same tokens
        for a, b in zip(plain, run_shapes(decode.Decoder(path, weights, cfg, "cpu"), cfg, weights, shapes)):
            np.testing.assert_array_equal(a, b)


def driver_tokens(output, batch):
    rows = [line for line in output.splitlines() if line.startswith("seq ")]
    assert len(rows) == batch, output
    return np.array([[int(v) for v in r.split("| next ")[1].split()] for r in rows], np.int32)


def test_drivers_print_the_reference_tokens(cfg, weights, small_cgf, tmp_path):
    wdir = str(tmp_path / "weights")
    subprocess.run([sys.executable, os.path.join(EXAMPLE, "make_weights.py"), "--config", "small",
                    "--out", wdir], check=True)
    args = ["--cgf", small_cgf, "--weights", wdir, "--batch", "3", "--steps", "16"]
    expected = greedy_reference(cfg, weights, decode.make_prompts(cfg, 3, 4), 16)
    for cmd in ([sys.executable, os.path.join(EXAMPLE, "decode.py")], [tool("GPT_DECODE_CPP")]):
        res = subprocess.run(cmd + args, check=True, capture_output=True, text=True)
        assert "tokens/s" in res.stdout
        compare_greedy(driver_tokens(res.stdout, 3), expected)


@pytest.mark.parametrize("name", sorted(model.CONFIGS))
@pytest.mark.parametrize("weights_type", ["f32", "f16"])
def test_committed_descriptions_are_what_gen_graph_writes(name, weights_type, tmp_path):
    file = f"{name}.json" if weights_type == "f32" else f"{name}_f16.json"
    out = tmp_path / file
    subprocess.run([sys.executable, os.path.join(EXAMPLE, "gen_graph.py"), "--config", name,
                    "--weights", weights_type, "-o", str(out)], check=True)
    with open(os.path.join(EXAMPLE, file)) as f:
        assert out.read_text() == f.read(), f"{file} is stale: rerun gen_graph.py"


@pytest.mark.parametrize("b,t", [(8, 127), (5, 64), (3, 9), (1, 0)])
def test_no_kernel_reaches_outside_its_buffers(b, t, small_cgf):
    """cgrun --check-bounds (cpu): every buffer access checked against its binding; the
    external slots are zeros, so every token is 0 and every value finite."""
    subprocess.run([tool("CGRUN"), small_cgf, "--check-bounds", "--param", f"b={b}", "--param", f"t={t}"],
                   check=True, capture_output=True)


def test_gpt2_description_compiles(tmp_path):
    out = str(tmp_path / "gpt2.cgf")
    subprocess.run([tool("CGC"), os.path.join(EXAMPLE, "gpt2.json"), "-o", out], check=True)
    assert os.path.getsize(out) > 0


@pytest.mark.parametrize("name", ["gpt2.json", "gpt2_f16.json"])
def test_the_gpu_lowering_keeps_every_kernel_array_in_registers(name, tmp_path):
    # An array that a kernel indexes with anything but constants (a loop over it that the
    # compiler does not unroll) stays in memory: on a GPU a local-memory store and load
    # per multiply-add of linear.cl's partial sums. The cuda lowering's optimized IR of
    # every kernel module (cgc --target cuda:sm_90, no GPU needed) holds no alloca.
    dump = tmp_path / "ir"
    dump.mkdir()
    env = dict(os.environ, CGRAPH_CUDA_DUMP_IR=str(dump))
    subprocess.run([tool("CGC"), os.path.join(EXAMPLE, name), "-o", str(tmp_path / "g.cgf"), "--target",
                    "cuda:sm_90"], check=True, env=env, capture_output=True)
    modules = [p for p in dump.glob("*.ll") if not p.name.endswith(".pre-opt.ll")]
    assert {p.name for p in modules} >= {"kernels_linear.cl.ll", "kernels_attention.cl.ll"}
    for p in modules:
        assert "alloca" not in p.read_text(), f"{name}: {p.name} keeps an array in memory"


def test_the_memory_plan_folds_the_layers_activations(cfg, weights, small_cgf):
    """Every layer's activations are slots of their own; the memory plan lets those whose
    lifetimes do not overlap share memory, with the same logits as without it."""
    planned = decode.Decoder(small_cgf, weights, cfg, "cpu")
    unplanned = decode.Decoder(small_cgf, weights, cfg, "cpu", plan_memory=False)
    for b, t in [(8, 0), (3, 1), (8, 2)]:
        tokens = np.arange(b, dtype=np.int32) * 7 + t
        planned.step(b, t, tokens)
        unplanned.step(b, t, tokens)
        np.testing.assert_array_equal(planned.last_logits(b), unplanned.last_logits(b))
    on, off = planned.exe.memory, unplanned.exe.memory
    assert on["plan_slots"] >= 10 and off["plan_slots"] == 0
    assert on["plan_bytes_after"] * 3 < on["plan_bytes_before"]
    assert on["owned_bytes"] * 2 < off["owned_bytes"]


def test_the_cpu_benchmark_runs_and_its_profile_covers_every_node(small_cgf, tmp_path):
    """benchmarks/gpt-decode/bench_decode_cpu.py at a tiny size (a smoke run: nothing
    about its times is asserted): it checks its step against the reference (exit 0),
    and its --profile has one entry per kernel node of the step, grouped per node name
    with the layer index dropped wherever it stands (fc2.0.sum -> fc2.sum)."""
    bench = os.path.join(EXAMPLE, "..", "..", "benchmarks", "gpt-decode", "bench_decode_cpu.py")
    out = tmp_path / "bench.json"
    env = dict(os.environ, TMPDIR=str(tmp_path))
    subprocess.run([sys.executable, bench, "--config", "small", "--cgf", small_cgf, "--weights", str(tmp_path / "w"),
                    "--sizes", "2x5", "--steps", "1", "--warmup", "0", "--profile", "3x4", "--profile-runs", "2",
                    "--json", str(out)], check=True, capture_output=True, env=env)
    res = json.loads(out.read_text())
    assert res["rows"][0]["check"]["allclose"] and res["rows"][0]["check"]["next_equal"] == 2
    (prof,) = res["profile"]
    cfg = model.CONFIGS["small"]
    with open(os.path.join(EXAMPLE, "small.json")) as f:
        kernel_nodes = [n for n in json.load(f)["nodes"] if "kernel" in n]
    assert (prof["b"], prof["t"]) == (3, 4) and len(prof["nodes"]) == len(kernel_nodes)
    by_node = {g["name"]: g["calls"] for g in prof["by_node"]}
    assert by_node["qkv"] == cfg.layers and by_node["logits"] == 1
    assert all(not any(part.isdigit() for part in name.split(".")) for name in by_node)
    assert abs(sum(g["share"] for g in prof["by_kernel"]) - 1.0) < 1e-9
