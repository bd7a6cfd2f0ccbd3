"""cgraph.GraphBuilder: graphs made in Python (kernels from source strings, slots,
parameters, expressions, repeat blocks, conditionals, edges) compile to the graphs cgc
makes and run right on the cpu; mistakes are errors naming what is wrong."""

import json
import os
import subprocess

import numpy as np
import pytest

import cgraph

KERNELS = r"""
__kernel void saxpy(__global float *y, __global const float *x, float a, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}
__kernel void add_index(__global float *dst, __global const float *src, int k) {
  size_t i = get_global_id(0);
  dst[i] = src[i] + (float)k;
}
__kernel void count_down(__global uint *counter, __global uint *flag, __global float *y) {
  size_t i = get_global_id(0);
  y[i] += 1.0f;
  if (i == 0) {
    uint c = counter[0] - 1;
    counter[0] = c;
    flag[0] = c > 0;
  }
}
__kernel void group_sum(__global float *out, __global const float *in, __local float *tmp) {
  size_t l = get_local_id(0), g = get_group_id(0), n = get_local_size(0);
  tmp[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    float s = 0.0f;
    for (size_t j = 0; j < n; ++j) s += tmp[j];
    out[g] = s;
  }
}
"""


def saxpy_builder():
    b = cgraph.GraphBuilder("saxpy")
    b.kernel_source(KERNELS, name="ops.cl")
    n = b.param("n", "u32", 1024)
    a = b.param("a", "f32", 2.0)
    b.slot("x", count=n, type="f32")
    b.slot("y", count=n, type="f32")
    b.add_kernel("saxpy", [n], args=["y", "x", a, n], name="axpy")
    return b


def test_a_built_graph_runs_and_takes_its_shape_from_parameters():
    graph = saxpy_builder().build()
    assert [s.name for s in graph.slots] == ["x", "y"]
    assert [p.name for p in graph.params] == ["n", "a"]
    exe = graph.finalize(device="cpu")
    for n in (1024, 300):
        x = np.arange(n, dtype=np.float32)
        y = np.ones(n, dtype=np.float32)
        exe.run(x=x, y=y, n=n, a=0.5)
        np.testing.assert_array_equal(y, 1.0 + 0.5 * x)


def test_a_saved_graph_loads_and_matches_what_cgc_makes_of_the_description(tmp_path):
    b = saxpy_builder()
    b.save(tmp_path / "built.cgf")
    (tmp_path / "graph.json").write_text(json.dumps(b.description()))
    subprocess.run([os.environ["CGC"], "-q", str(tmp_path / "graph.json"), "-o", str(tmp_path / "cgc.cgf")],
                   check=True)
    assert (tmp_path / "built.cgf").read_bytes() == (tmp_path / "cgc.cgf").read_bytes()
    loaded = cgraph.load(tmp_path / "built.cgf")
    assert loaded.node_count == 1 and loaded.slot("y").external


def test_repeat_blocks_rotate_slots_and_fold_their_variable():
    b = cgraph.GraphBuilder("pingpong")
    b.kernel_source(KERNELS, name="ops.cl")
    b.slot("u0", count=64, type="f32")
    b.slot("u1", count=64, type="f32", init="transient")
    with b.repeat(4, var="i", swap=[("u0", "u1")]) as i:
        assert i == "$i"
        b.add_kernel("add_index", [64], args=["u1", "u0", "$i + 1"], name="step")
    graph = b.build()
    assert graph.node_count == 4
    u0 = np.zeros(64, dtype=np.float32)
    graph.finalize(device="cpu").run(u0=u0)
    # Four steps ping-pong between u0 and u1, the last writes u0: 1 + 2 + 3 + 4.
    np.testing.assert_array_equal(u0, np.full(64, 10.0, dtype=np.float32))


def test_a_while_node_runs_its_body_until_the_condition_clears():
    b = cgraph.GraphBuilder("countdown")
    b.kernel_source(KERNELS, name="ops.cl")
    b.slot("counter", init=np.array([5], dtype=np.uint32))
    b.slot("flag", init=np.array([1], dtype=np.uint32))
    b.slot("y", count=32, type="f32")
    with b.while_("flag", max_trips=100, name="loop"):
        b.add_kernel("count_down", [32], local_size=[32], args=["counter", "flag", "y"], name="tick")
    y = np.zeros(32, dtype=np.float32)
    b.build().finalize(device="cpu").run(y=y)
    np.testing.assert_array_equal(y, np.full(32, 5.0, dtype=np.float32))


def test_slot_references_local_memory_fills_copies_and_edges():
    b = cgraph.GraphBuilder("misc")
    b.kernel_source(KERNELS, name="ops.cl")
    b.slot("inp", count=256, type="f32")
    b.slot("sums", count=8, type="f32", init="transient")
    b.slot("out", count=16, type="f32")
    fill = b.add_fill("sums", 0.0)
    reduce = b.add_kernel("group_sum", [256], local_size=[64], args=["sums", "inp", cgraph.local(64 * 4)])
    b.add_edge(fill, reduce)
    b.add_copy("sums", cgraph.at("out", 4 * 4), bytes=4 * 4, name="place")
    inp = np.arange(256, dtype=np.float32)
    out = np.full(16, -1.0, dtype=np.float32)
    b.build().finalize(device="cpu").run(inp=inp, out=out)
    want = inp.reshape(4, 64).sum(axis=1)
    np.testing.assert_array_equal(out[4:8], want)
    np.testing.assert_array_equal(out[:4], -1.0)
    np.testing.assert_array_equal(out[8:], -1.0)


def test_mistakes_are_errors_that_name_them():
    b = saxpy_builder()
    b.add_kernel("saxpy", [16], args=["nowhere", "x", 1.0, 16], name="bad")
    with pytest.raises(cgraph.InvalidError, match="nowhere"):
        b.build()

    broken = cgraph.GraphBuilder("broken")
    broken.kernel_source("__kernel void k(__global float *p) { p[0] = undefined_name; }", name="broken.cl")
    with pytest.raises(cgraph.InvalidError, match="broken.cl.*undefined_name"):
        broken.build()

    b = saxpy_builder()
    with pytest.raises(ValueError, match="added twice"):
        b.add_kernel("saxpy", [16], args=["y", "x", 1.0, 16], name="axpy")
    with pytest.raises(ValueError, match="unknown node 'nope'"):
        b.add_edge("nope", "axpy")
    with pytest.raises(TypeError, match="numpy array"):
        b.slot("z", init=[1, 2, 3])
    with pytest.raises(ValueError, match="edges must be"):
        cgraph.GraphBuilder(edges="sometimes")
