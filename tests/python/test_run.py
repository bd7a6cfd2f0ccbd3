"""Running graphs on numpy arrays bound in place, parameters, graph-owned slots."""

import numpy as np
import pytest

import cgraph

N = 1 << 20


def ramp():
    return (np.arange(N) % 100).astype(np.float32)


def test_run_writes_the_callers_array_in_place(saxpy_exe):
    y = ramp()
    expected = y + 2.0  # x is the graph's fill of 1.0; a defaults to 2
    saxpy_exe.run(y=y)
    np.testing.assert_array_equal(y, expected)


def test_the_bound_address_is_the_arrays_own(saxpy_exe):
    y = ramp()
    saxpy_exe.run(y=y, a=0.0)
    assert saxpy_exe.bound_address("y") == y.__array_interface__["data"][0]


def test_a_write_through_the_array_is_seen_by_the_next_run(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    saxpy_exe.run(y=y, a=1.0)
    y[7] = 100.0  # through the array, no call in between
    saxpy_exe.run(y=y, a=1.0)
    assert y[7] == 101.0 and y[8] == 2.0


def test_a_view_of_a_larger_buffer_is_bound_where_it_starts(saxpy_exe):
    big = np.zeros(N + 16, dtype=np.float32)
    view = big[16:]
    saxpy_exe.run(y=view, a=1.0)
    assert big[:16].sum() == 0.0 and big[16] == 1.0 and big[-1] == 1.0


def test_params_by_name_int_and_float(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    saxpy_exe.run(y=y, a=3)
    assert y[0] == 3.0
    saxpy_exe.run(y=y, a=np.float32(0.5))
    assert y[0] == 3.5
    saxpy_exe.run(y=y)  # a back at its default
    assert y[0] == 5.5


def test_a_repeated_call_sees_changes_made_to_the_array_in_place(saxpy_exe):
    # A call that repeats the previous one's array skips re-binding it only while the
    # array's memory and layout are unchanged.
    y = np.zeros(N, dtype=np.float32)
    saxpy_exe.run(y=y, a=1.0)
    y.dtype = np.int32  # the same object, now of another element type
    with pytest.raises(ValueError, match="slot 'y'.*element type"):
        saxpy_exe.run(y=y, a=1.0)
    y.dtype = np.float32
    y.setflags(write=False)
    with pytest.raises(ValueError, match="slot 'y'.*read-only"):
        saxpy_exe.run(y=y, a=1.0)
    y.setflags(write=True)
    saxpy_exe.run(y=y, a=1.0)
    assert y[0] == 2.0


def test_a_repeated_call_follows_a_reallocated_array(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    saxpy_exe.run(y=y, a=1.0)
    before = y.__array_interface__["data"][0]
    y.resize(4 * N, refcheck=False)  # moves the memory (numpy reallocates)
    y.resize(N, refcheck=False)
    y[:] = 10.0
    saxpy_exe.run(y=y, a=1.0)
    assert saxpy_exe.bound_address("y") == y.__array_interface__["data"][0]
    assert y[0] == 11.0 and y[-1] == 11.0, f"moved from {before:#x}"


def test_another_array_or_a_dropped_name_is_bound_anew(saxpy_exe):
    a, b = np.zeros(N, dtype=np.float32), np.zeros(N, dtype=np.float32)
    saxpy_exe.run(y=a, a=1.0)
    saxpy_exe.run(y=b, a=1.0)
    saxpy_exe.run(y=b, a=1.0)
    assert a[0] == 1.0 and b[0] == 2.0
    with pytest.raises(ValueError, match="'y'"):
        saxpy_exe.run(a=1.0)  # y was unbound: the call names no array for it
    saxpy_exe.run(y=b, a=1.0)
    assert b[0] == 3.0


def test_a_call_that_fails_midway_leaves_nothing_bound_for_the_next(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    saxpy_exe.run(a=1.0, y=y)
    with pytest.raises(ValueError, match="no slot or param 'bogus'"):
        saxpy_exe.run(y=y, a=5.0, bogus=1)  # y and a were set before the bad name
    saxpy_exe.run(y=y)  # a is back at its default, 2
    assert y[0] == 1.0 + 2.0
    with pytest.raises(ValueError, match="no slot or param 'bogus'"):
        saxpy_exe.run(y=y, bogus=1)
    with pytest.raises(ValueError, match="'y'"):
        saxpy_exe.run()  # y is not left bound by the failed call


def test_a_param_repeated_or_retyped_keeps_its_value(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    saxpy_exe.run(y=y, a=3.0)
    saxpy_exe.run(y=y, a=3.0)  # the same value: not set again, still 3
    saxpy_exe.run(y=y, a=3)    # an int equal to the float: set as an int, still 3
    saxpy_exe.run(y=y)         # back at the default, 2
    saxpy_exe.run(y=y, a=3.0)
    assert y[0] == 3.0 + 3.0 + 3.0 + 2.0 + 3.0


def test_enqueue_then_wait(saxpy_exe):
    y = np.ones(N, dtype=np.float32)
    ev = saxpy_exe.enqueue(y=y, a=4.0)
    ev.wait()
    assert ev.done and y[123] == 5.0
    ev.wait()  # again: same result


def test_owned_slot_read_and_write(saxpy_exe):
    x = np.empty(N, dtype=np.float32)
    assert saxpy_exe.read("x", out=x) is x
    assert (x == 1.0).all()
    raw = saxpy_exe.read("x")
    assert isinstance(raw, bytearray) and len(raw) == 4 * N


def test_owned_slot_write_is_seen_by_runs(saxpy_path):
    exe = cgraph.load(saxpy_path).finalize()
    exe.write("x", np.full(N, 2.0, dtype=np.float32))
    y = np.zeros(N, dtype=np.float32)
    exe.run(y=y, a=1.0)
    assert (y == 2.0).all()


def test_eager_mode_gives_the_same_result(saxpy_path):
    exe = cgraph.load(saxpy_path).finalize(device="cpu:0", mode="eager", cache=False)
    y = ramp()
    expected = y + 2.0
    exe.run(y=y)
    np.testing.assert_array_equal(y, expected)


def test_finalize_reports_progress_once_per_kernel_module():
    b = cgraph.GraphBuilder("two-modules")
    b.kernel_source("__kernel void one(__global float *x) { x[get_global_id(0)] += 1.0f; }", name="one.cl")
    b.kernel_source("__kernel void two(__global float *x) { x[get_global_id(0)] *= 2.0f; }", name="two.cl")
    b.slot("x", count=64, type="f32")
    b.add_kernel("one", [64], args=["x"])
    b.add_kernel("two", [64], args=["x"])
    calls = []
    exe = b.build().finalize("cpu", cache=False, progress=lambda *a: calls.append(a))
    assert calls == [("compiling kernels", 1, 2), ("compiling kernels", 2, 2)]
    x = np.ones(64, dtype=np.float32)
    exe.run(x=x)
    assert (x == 4.0).all()
    assert len(calls) == 2  # nothing after finalize
