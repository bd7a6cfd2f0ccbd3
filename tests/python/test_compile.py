"""cgraph.compile, Graph.fuse and Graph.save: descriptions compiled in-process give the
graphs cgc writes (same results on the cpu), errors name the line, fusion keeps results."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import cgraph

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def inputs(graph, seed=1):
    """Arrays for every external slot of `graph`, filled from a fixed seed."""
    rng = np.random.default_rng(seed)
    out = {}
    for s in graph.slots:
        if not s.external:
            continue
        dtype = np.dtype({"f32": np.float32, "i32": np.int32, None: np.uint8}.get(s.element, np.float32))
        n = s.size // dtype.itemsize
        if dtype.kind == "f":
            out[s.name] = rng.uniform(-1.0, 1.0, n).astype(dtype)
        else:
            out[s.name] = rng.integers(0, 100, n).astype(dtype)
    return out


def run(graph, **params):
    arrays = inputs(graph)
    graph.finalize(device="cpu").run(**arrays, **params)
    return arrays


def assert_same_graph(a, b):
    assert a.name == b.name and a.node_count == b.node_count
    assert a.slots == b.slots and a.params == b.params


def cgc(description, out):
    subprocess.run([os.environ["CGC"], "-q", str(description), "-o", str(out)], check=True)
    return cgraph.load(out)


def test_compile_saxpy_equals_the_cgc_compiled_file(saxpy_path):
    compiled = cgraph.compile(EXAMPLES / "saxpy" / "graph.json")
    loaded = cgraph.load(saxpy_path)
    assert_same_graph(compiled, loaded)
    want, got = run(loaded, a=0.5), run(compiled, a=0.5)
    np.testing.assert_array_equal(got["y"], want["y"])
    np.testing.assert_allclose(got["y"], inputs(loaded)["y"] + 0.5, rtol=1e-6)


def test_compile_mlp_batch_equals_the_cgc_compiled_file(tmp_path):
    description = EXAMPLES / "mlp" / "mlp_batch.json"
    loaded = cgc(description, tmp_path / "mlp_batch.cgf")
    compiled = cgraph.compile(str(description))
    assert_same_graph(compiled, loaded)
    assert any(s.size_varies for s in compiled.slots)
    for batch in (64, 8):
        want, got = run(loaded, batch=batch), run(compiled, batch=batch)
        assert want.keys() == got.keys()
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    written = [s.name for s in compiled.slots if s.external and s.written]
    assert written and any(np.any(want[n] != inputs(compiled)[n]) for n in written)


def test_compile_from_a_dict(monkeypatch, saxpy_path):
    description = json.loads((EXAMPLES / "saxpy" / "graph.json").read_text())
    with_base = cgraph.compile(description, base_dir=EXAMPLES / "saxpy")
    monkeypatch.chdir(EXAMPLES / "saxpy")
    from_cwd = cgraph.compile(description)
    loaded = cgraph.load(saxpy_path)
    assert_same_graph(with_base, loaded)
    assert_same_graph(from_cwd, loaded)
    np.testing.assert_array_equal(run(with_base)["y"], run(loaded)["y"])


def test_a_malformed_description_names_the_line(tmp_path):
    path = tmp_path / "graph.json"
    path.write_text('{\n  "name": "g",\n  "nodez": []\n}\n')
    with pytest.raises(cgraph.InvalidError) as e:
        cgraph.compile(path)
    assert f"{path}:3:3: error: unknown key 'nodez' in graph description (did you mean 'nodes'?)" in str(e.value)
    assert e.value.code == 1 and isinstance(e.value, ValueError)
    path.write_text('{\n  "name": "g",\n  "nodes": [,]\n}\n')
    with pytest.raises(cgraph.InvalidError, match=rf"{path}:3:13: error: "):
        cgraph.compile(path)


def test_a_malformed_dict_names_the_line_of_its_json():
    with pytest.raises(cgraph.InvalidError, match=r"<dict>:2:12: error: 'nodes' must be an array, found number"):
        cgraph.compile({"nodes": 3})


def test_every_error_is_in_the_message(tmp_path):
    (tmp_path / "graph.json").write_text(json.dumps({
        "slots": [{"name": "s", "count": 4, "type": "f32"}, {"name": "s", "count": 4, "type": "f32"}],
    }, indent=2))
    with pytest.raises(cgraph.InvalidError) as e:
        cgraph.compile(tmp_path / "graph.json")
    lines = str(e.value).splitlines()
    assert any(": error: " in line and "'s'" in line for line in lines)
    assert any(": note: slot 's' first declared here" in line for line in lines)


def test_a_missing_description_is_an_io_error(tmp_path):
    with pytest.raises(cgraph.IoError) as e:
        cgraph.compile(tmp_path / "none.json")
    assert str(tmp_path / "none.json") in str(e.value) and isinstance(e.value, OSError)


def test_source_must_be_a_path_or_a_dict():
    with pytest.raises(TypeError):
        cgraph.compile(42)
    with pytest.raises(TypeError):
        cgraph.compile(EXAMPLES / "saxpy" / "graph.json", base_dir=".")


def write_value_graph(root):
    """A one-kernel graph whose kernel writes VALUE (from include/value.h) to y."""
    (root / "kernels").mkdir()
    (root / "include").mkdir()
    (root / "include" / "value.h").write_text("#define VALUE (SCALE * 3.0f)\n")
    (root / "kernels" / "k.cl").write_text(
        '#include "value.h"\n__kernel void k(__global float *y) { y[get_global_id(0)] = VALUE; }\n')
    return {
        "name": "value",
        "kernels": [{"file": "kernels/k.cl"}],
        "slots": [{"name": "y", "count": 64, "type": "f32", "external": True}],
        "nodes": [{"name": "k", "kernel": "k", "global": [64], "args": ["y"]}],
    }


def test_include_dirs_and_defines_reach_the_kernels(tmp_path):
    description = write_value_graph(tmp_path)
    with pytest.raises(cgraph.InvalidError, match="value.h"):
        cgraph.compile(description, base_dir=tmp_path)
    for defines in ({"SCALE": 2}, ["SCALE=2"]):
        g = cgraph.compile(description, base_dir=tmp_path, include_dirs=[tmp_path / "include"], defines=defines)
        y = np.zeros(64, np.float32)
        g.finalize("cpu").run(y=y)
        assert np.all(y == 6.0)


def test_files_outside_the_allowed_directories_are_refused(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    description = write_value_graph(other)
    description["kernels"] = [{"file": str(other / "kernels" / "k.cl")}]
    base = tmp_path / "base"
    base.mkdir()
    options = dict(base_dir=base, include_dirs=[other / "include"], defines={"SCALE": 1})
    refused = r"outside the allowed directories \(.*\); add its directory to allow_dirs"
    with pytest.raises(cgraph.InvalidError, match=refused):
        cgraph.compile(description, **options)
    g = cgraph.compile(description, allow_dirs=[other / "kernels"], **options)
    assert g.node_count == 1


def test_compiler_warnings_are_python_warnings(tmp_path):
    description = write_value_graph(tmp_path)
    (tmp_path / "kernels" / "helpers.cl").write_text("float twice(float v) { return 2.0f * v; }\n")
    description["kernels"].append({"file": "kernels/helpers.cl"})
    with pytest.warns(cgraph.CompileWarning, match="defines no kernels"):
        cgraph.compile(description, base_dir=tmp_path, include_dirs=[tmp_path / "include"], defines=["SCALE=1"])


@pytest.fixture(scope="module")
def chain():
    return cgraph.compile(EXAMPLES / "chain1000" / "graph.json")


@pytest.fixture(scope="module")
def fused(chain):
    return chain.fuse()


def test_fusing_chain1000_drops_nodes_and_keeps_results(chain, fused):
    assert chain.node_count == 1000
    assert fused.node_count < 100
    assert fused.slots == chain.slots and fused.params == chain.params
    want, got = run(chain, a=0.25), run(fused, a=0.25)
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5, atol=1e-6)
    assert np.any(got["y"] != inputs(chain)["y"])


def test_fuse_function_and_remarks(chain, fused):
    remarks = []
    again = cgraph.fuse(chain, max_group=500, remarks=remarks)
    assert again.node_count < fused.node_count
    assert any("fused" in r for r in remarks)


def test_explicit_groups(chain):
    names = ["axpy.0", "axpy.1", "axpy.2"]
    g = chain.fuse(auto=False, groups=[names])
    assert g.node_count == chain.node_count - 2


def test_fuse_errors(chain):
    with pytest.raises(cgraph.InvalidError, match="nothing to fuse"):
        chain.fuse(auto=False)
    with pytest.raises(cgraph.InvalidError, match="nosuch"):
        chain.fuse(internalize=["nosuch"])
    with pytest.raises(cgraph.InvalidError, match="nosuch"):
        chain.fuse(auto=False, groups=[["axpy.0", "nosuch"]])


def test_save_and_load_again(tmp_path, fused):
    path = tmp_path / "fused.cgf"
    fused.save(path)
    loaded = cgraph.load(path)
    assert_same_graph(loaded, fused)
    np.testing.assert_array_equal(run(loaded)["y"], run(fused)["y"])
    with pytest.raises(cgraph.Error, match=str(tmp_path)):
        fused.save(tmp_path)  # a directory


def test_threads_compile_at_once(saxpy_path):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        graphs = list(pool.map(lambda _: cgraph.compile(EXAMPLES / "saxpy" / "graph.json"), range(8)))
    loaded = cgraph.load(saxpy_path)
    for g in graphs:
        assert_same_graph(g, loaded)
    np.testing.assert_array_equal(run(graphs[-1])["y"], run(loaded)["y"])
