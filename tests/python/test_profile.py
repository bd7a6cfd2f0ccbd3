"""Per-node times of profiled runs, their Chrome trace, and the kernel cache's counters."""

import json
from pathlib import Path

import numpy as np
import pytest

import cgraph

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
N = 1 << 20


def assert_times_cover(times, names):
    """One NodeTime per node of `names` (by index), each with start <= end."""
    assert sorted(t.node for t in times) == list(range(len(names)))
    for t in times:
        assert t.name == names[t.node]
        assert 0 <= t.start_ns <= t.end_ns and t.duration_ns == t.end_ns - t.start_ns


def test_profile_times_every_node_of_saxpy(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    times = saxpy_exe.profile(y=y, a=3.0)
    assert saxpy_exe.nodes == ["saxpy", "sum"]
    assert_times_cover(times, ["saxpy", "sum"])
    by_name = {t.name: t for t in times}
    assert by_name["saxpy"].kind == "kernel" and by_name["saxpy"].kernel == "saxpy"
    assert by_name["sum"].kind == "host" and by_name["sum"].kernel == ""
    assert by_name["saxpy"].end_ns <= by_name["sum"].start_ns  # the checksum reads what saxpy wrote
    np.testing.assert_array_equal(y, np.full(N, 3.0, np.float32))  # the run itself ran


def test_profile_times_every_node_of_chain1000():
    exe = cgraph.compile(EXAMPLES / "chain1000" / "graph.json").finalize(device="cpu")
    y = np.zeros(4096, dtype=np.float32)
    times = exe.profile(y=y, a=1.0)
    assert_times_cover(times, [f"axpy.{i}" for i in range(1000)])
    assert all(t.kernel == "axpy" for t in times)
    ordered = sorted(times, key=lambda t: t.node)
    assert all(a.end_ns <= b.start_ns for a, b in zip(ordered, ordered[1:]))  # a dependent chain
    np.testing.assert_array_equal(y, np.full(4096, 1000.0, np.float32))


def test_runs_that_are_not_profiled_have_no_times(saxpy_exe, tmp_path):
    event = saxpy_exe.enqueue(y=np.zeros(N, dtype=np.float32))
    assert event.node_times() == []
    with pytest.raises(cgraph.InvalidError, match="no node times"):
        event.write_trace(tmp_path / "unused.json")
    assert not (tmp_path / "unused.json").exists()


def test_trace_writes_chrome_json_with_one_event_per_node(saxpy_exe, tmp_path):
    path = tmp_path / "saxpy.trace.json"
    times = saxpy_exe.trace(path, y=np.zeros(N, dtype=np.float32))
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert sorted(e["name"] for e in complete) == ["saxpy", "sum"]
    assert sorted(e["cat"] for e in complete) == ["host", "kernel"]
    for e in complete:
        t = next(t for t in times if t.name == e["name"])
        assert e["args"]["node"] == str(t.node)
        assert e["ts"] == pytest.approx(t.start_ns / 1000.0) and e["dur"] >= 0
    names = [e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"]
    assert names == ["cgraph cpu:0"]


def test_trace_of_chain1000_and_a_failed_write(tmp_path):
    exe = cgraph.compile(EXAMPLES / "chain1000" / "graph.json").finalize(device="cpu")
    event = exe.enqueue_profiled(y=np.zeros(4096, dtype=np.float32))
    path = tmp_path / "chain.json"
    event.write_trace(path, process_name="chain")
    events = json.loads(path.read_text())["traceEvents"]
    assert len([e for e in events if e["ph"] == "X"]) == 1000
    with pytest.raises(cgraph.IoError, match="no-such-dir"):
        event.write_trace(tmp_path / "no-such-dir" / "t.json")


def unique_graph(tmp_path, tag):
    """A one-kernel graph whose kernel no other test compiles (`tag` in its source)."""
    (tmp_path / "k.cl").write_text(
        f"__kernel void add_{tag}(__global float *y) {{ y[get_global_id(0)] += {len(tag)}.0f; }}\n")
    return cgraph.compile({"name": tag, "kernels": [{"file": "k.cl"}],
                           "slots": [{"name": "y", "count": 64, "type": "f32", "external": True}],
                           "nodes": [{"name": "add", "kernel": f"add_{tag}", "global": [64], "args": ["y"]}]},
                          base_dir=tmp_path)


def test_cache_stats_count_a_miss_then_a_hit(tmp_path):
    g = unique_graph(tmp_path, f"stats{np.random.default_rng().integers(1 << 40)}")
    before = cgraph.cache_stats()
    assert set(before) == {"memory_hits", "memory_misses", "disk_hits", "disk_rejects", "builds", "build_failures"}
    g.finalize(device="cpu")
    first = cgraph.cache_stats()
    missed = first["memory_misses"] - before["memory_misses"]
    assert missed >= 1
    # Every miss was answered from disk or by a build (this kernel is new to this process).
    assert (first["disk_hits"] - before["disk_hits"]) + (first["builds"] - before["builds"]) == missed
    exe = g.finalize(device="cpu")
    second = cgraph.cache_stats()
    assert second["memory_misses"] == first["memory_misses"]
    assert second["memory_hits"] - first["memory_hits"] >= 1
    assert second["builds"] == first["builds"]
    y = np.zeros(64, dtype=np.float32)
    exe.run(y=y)
    assert np.all(y > 0)
    g.finalize(device="cpu", cache=False)  # bypasses the cache: not counted
    assert cgraph.cache_stats() == second
