"""Arrays that offer only DLPack (``__dlpack__``), bound in place like numpy arrays."""

import sys

import numpy as np
import pytest

import cgraph

N = 1 << 20


class DLPackOnly:
    """Exposes an array through DLPack alone (no __array_interface__)."""

    def __init__(self, array, device=(1, 0)):
        self.array = array
        self.device = device

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.device


def test_dlpack_array_is_bound_in_place(saxpy_exe):
    y = np.full(N, 1.0, dtype=np.float32)
    saxpy_exe.run(y=DLPackOnly(y), a=2.0)
    assert (y == 3.0).all()
    assert saxpy_exe.bound_address("y") == y.__array_interface__["data"][0]


def test_the_dlpack_tensor_is_released_after_the_run(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    before = sys.getrefcount(y)
    saxpy_exe.run(y=DLPackOnly(y))
    assert sys.getrefcount(y) == before  # the consumer called the tensor's deleter


def test_enqueue_keeps_the_dlpack_tensor_until_the_event_goes(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    before = sys.getrefcount(y)
    ev = saxpy_exe.enqueue(y=DLPackOnly(y), a=1.0)
    assert sys.getrefcount(y) > before
    ev.wait()
    del ev
    assert sys.getrefcount(y) == before and y[5] == 1.0


def test_dlpack_wrong_dtype_and_size(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': the array's element type is dlpack\(code=0, bits=32"):
        saxpy_exe.run(y=DLPackOnly(np.zeros(N, dtype=np.int32)))
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': the array has 8 bytes"):
        saxpy_exe.run(y=DLPackOnly(np.zeros(2, dtype=np.float32)))


def test_dlpack_non_contiguous(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': the array is not contiguous"):
        saxpy_exe.run(y=DLPackOnly(np.zeros(2 * N, dtype=np.float32)[::2]))


def test_dlpack_device_other_than_cpu_is_refused(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': the array is on DLPack device \(2, 0\)"):
        saxpy_exe.run(y=DLPackOnly(np.zeros(N, dtype=np.float32), device=(2, 0)))
