"""Wrong bindings and values: InvalidError (a ValueError) naming the slot or param."""

import numpy as np
import pytest

import cgraph

N = 1 << 20


def test_wrong_dtype(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': the array's element type is <f8, the graph's kernels use f32"):
        saxpy_exe.run(y=np.zeros(N, dtype=np.float64))


def test_wrong_size(saxpy_exe):
    with pytest.raises(ValueError, match=r"slot 'y': the array has 400 bytes, the slot has 4194304"):
        saxpy_exe.run(y=np.zeros(100, dtype=np.float32))


def test_non_contiguous(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': the array is not contiguous"):
        saxpy_exe.run(y=np.zeros(2 * N, dtype=np.float32)[::2])


def test_read_only_array_for_a_written_slot(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    y.setflags(write=False)
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': the array is read-only"):
        saxpy_exe.run(y=y)


def test_misaligned_address_gives_the_library_message(saxpy_exe):
    big = np.zeros(N + 1, dtype=np.float32)
    y = big[1:]  # 4 bytes past a 16-byte boundary
    assert y.__array_interface__["data"][0] % 16 != 0
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': host address is not a multiple of the slot's alignment 16"):
        saxpy_exe.run(y=y)


def test_unknown_name(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"graph 'saxpy' has no slot or param 'z' \(slots: x, y; params: a\)"):
        saxpy_exe.run(z=np.zeros(N, dtype=np.float32))


def test_missing_binding_names_the_slot(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': no binding"):
        saxpy_exe.run(a=1.0)


def test_owned_slot_cannot_be_bound(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'x' is owned by the graph"):
        saxpy_exe.run(x=np.zeros(N, dtype=np.float32), y=np.zeros(N, dtype=np.float32))


def test_not_an_array(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': a list is not an array"):
        saxpy_exe.run(y=[0.0] * 4)


def test_param_values(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    with pytest.raises(cgraph.InvalidError, match=r"param 'a': .* is out of range for f32"):
        saxpy_exe.run(y=y, a=1e300)
    with pytest.raises(cgraph.InvalidError, match=r"param 'a': a str is not a number"):
        saxpy_exe.run(y=y, a="2")


def test_an_error_leaves_the_executable_usable(saxpy_exe):
    with pytest.raises(cgraph.InvalidError):
        saxpy_exe.run(y=np.zeros(3, dtype=np.float32))
    y = np.zeros(N, dtype=np.float32)
    saxpy_exe.run(y=y, a=1.0)
    assert y[0] == 1.0


def test_a_caller_stream_is_refused_off_cuda(saxpy_exe):
    y = np.zeros(saxpy_exe._slot("y").size // 4, dtype=np.float32)
    with pytest.raises(cgraph.UnsupportedError, match="caller's stream"):
        saxpy_exe.enqueue_on_stream(0x1000, y=y, a=1.0)
    with pytest.raises(cgraph.InvalidError, match="not a CUDA stream"):
        saxpy_exe.enqueue_on_stream("stream", y=y, a=1.0)
