"""Objects in CUDA device memory (``__cuda_array_interface__``, or a DLPack device of
type CUDA) are refused by cpu executables, naming the slot: never read as host memory.
(Binding them on a cuda device is tested on a GPU: tests/python_gpu.)"""

import numpy as np
import pytest

import cgraph

N = 1 << 20


class FakeCudaTensor:
    """The CUDA array interface of a tensor on cuda:0 (its pointer is never touched)."""

    def __init__(self, nbytes: int, typestr: str = "<f4") -> None:
        self.__cuda_array_interface__ = {"shape": (nbytes // 4,), "typestr": typestr,
                                         "data": (0x7F0000000000, False), "version": 3, "strides": None}


def test_a_cuda_tensor_is_refused_by_a_cpu_executable(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': the array is on DLPack device \(2, -1\), not in host memory"):
        saxpy_exe.run(y=FakeCudaTensor(4 * N))


def test_host_arrays_still_bind_in_place_next_to_it(saxpy_exe):
    y = np.zeros(N, dtype=np.float32)
    saxpy_exe.run(y=y, a=1.0)
    assert saxpy_exe.bound_address("y") == y.__array_interface__["data"][0]
    assert (y == 1.0).all()
