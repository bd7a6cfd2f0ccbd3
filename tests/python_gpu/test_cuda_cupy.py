"""The Python package on a CUDA device with CuPy arrays: bound in place through
`__cuda_array_interface__` and through DLPack (the array's own memory: a write seen
through the array at the same address), the arrays that cannot be bound, and runs
ordered on a CuPy stream. Needs a CUDA GPU and CuPy (the module is skipped, saying so,
where CuPy is not installed); run as tests/python_gpu/test_cuda_torch.py is."""

import os

import numpy as np
import pytest

import cgraph

cupy = pytest.importorskip("cupy", reason="CuPy is not installed here")

N = 1 << 20


@pytest.fixture(scope="module")
def saxpy():
    return cgraph.load(os.environ["CGRAPH_TEST_SAXPY"]).finalize(device="cuda")


def test_a_cupy_array_is_bound_in_place(saxpy):
    y = cupy.ones(N, dtype=cupy.float32)
    before = y.data.ptr
    cupy.cuda.Device().synchronize()
    saxpy.run(y=y, a=3.0)  # y = 3 * x + y with x filled with 1.0
    assert y.data.ptr == before
    assert bool((y == 4.0).all())
    saxpy.run(y=y, a=0.5)
    assert bool((y == 4.5).all())


def test_a_view_at_an_offset_binds_its_own_first_element(saxpy):
    big = cupy.zeros(N + 64, dtype=cupy.float32)
    view = big[64:]
    cupy.cuda.Device().synchronize()
    saxpy.run(y=view, a=2.0)
    assert bool((big[:64] == 0.0).all())
    assert bool((view == 2.0).all())


def test_a_dlpack_capsule_of_a_cupy_array_binds_in_place(saxpy):
    y = cupy.ones(N, dtype=cupy.float32)

    class OnlyDLPack:  # hides __cuda_array_interface__: the DLPack path
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    cupy.cuda.Device().synchronize()
    saxpy.run(y=OnlyDLPack(y), a=1.0)
    assert bool((y == 2.0).all())


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: cupy.ones(N, dtype=cupy.float64), "element type"),
        (lambda: np.ones(N, dtype=np.float32), "not in CUDA device memory"),
        (lambda: cupy.ones(2 * N, dtype=cupy.float32)[::2], "not contiguous"),
        (lambda: cupy.ones(N - 1, dtype=cupy.float32), "bytes"),
    ],
)
def test_arrays_that_cannot_be_bound_are_value_errors_naming_the_slot(saxpy, make, words):
    with pytest.raises(ValueError) as info:
        saxpy.run(y=make())
    assert "slot 'y'" in str(info.value)
    assert words in str(info.value)


def test_enqueue_on_a_cupy_stream_needs_no_synchronize(saxpy):
    # CuPy's fill queued before the run and a read queued after it, all on one CuPy
    # stream with no host synchronization in between.
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        y = cupy.empty(N, dtype=cupy.float32)
        big = cupy.random.rand(2048, 2048, dtype=cupy.float32)
        for _ in range(4):
            big = big @ big.T / 2048.0  # keeps the stream busy for a while
        y.fill(2.0)
        ev = saxpy.enqueue_on_stream(stream, y=y, a=3.0)  # y = 3 * 1 + 2 = 5
        z = y * 2.0  # queued on the stream after the run
    stream.synchronize()
    assert bool((z == 10.0).all())
    ev.wait()
