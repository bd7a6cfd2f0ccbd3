"""The Python package on a CUDA device with PyTorch tensors: zero-copy bindings (the
tensor's own memory, checked by a write seen through the tensor at the same address) and
the errors for tensors that cannot be bound. cgraph submits on a stream of its own, not
torch's: each test synchronizes torch's work before a run reads what torch wrote. Needs a CUDA GPU and torch: run on such a
machine with `pytest tests/python_gpu` (CGRAPH_LIBRARY, PYTHONPATH and
CGRAPH_TEST_SAXPY / CGRAPH_TEST_CHAIN set as for tests/python); CI has no GPU."""

import os

import pytest
import torch

import cgraph


@pytest.fixture(scope="module")
def saxpy():
    return cgraph.load(os.environ["CGRAPH_TEST_SAXPY"]).finalize(device="cuda")


N = 1 << 20


def test_a_cuda_tensor_is_bound_in_place(saxpy):
    y = torch.ones(N, device="cuda", dtype=torch.float32)
    before = y.data_ptr()
    torch.cuda.synchronize()
    saxpy.run(y=y, a=3.0)
    assert y.data_ptr() == before
    assert torch.all(y == 4.0).item()  # x is filled with 1.0: y = 3 * 1 + 1, written in place
    saxpy.run(y=y, a=0.5)
    assert torch.all(y == 4.5).item()


def test_a_view_at_an_offset_binds_its_own_first_element(saxpy):
    big = torch.zeros(N + 64, device="cuda", dtype=torch.float32)
    view = big[64:]
    torch.cuda.synchronize()
    saxpy.run(y=view, a=2.0)
    assert torch.all(big[:64] == 0.0).item()
    assert torch.all(view == 2.0).item()


def test_a_repeated_call_follows_a_tensor_given_other_memory(saxpy):
    # The same Python object with other memory, then another dtype: a call that repeats
    # the tensor binds it anew, never the memory it had.
    y = torch.zeros(N, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    saxpy.run(y=y, a=1.0)
    other = torch.full((N,), 5.0, device="cuda", dtype=torch.float32)
    y.data = other
    torch.cuda.synchronize()
    saxpy.run(y=y, a=1.0)
    assert torch.all(other == 6.0).item()
    y.data = torch.zeros(N, device="cuda", dtype=torch.float64)
    with pytest.raises(ValueError, match="element type"):
        saxpy.run(y=y, a=1.0)


def test_enqueue_returns_an_event(saxpy):
    y = torch.zeros(N, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    ev = saxpy.enqueue(y=y, a=1.0)
    ev.wait()
    assert torch.all(y == 1.0).item()


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: torch.ones(N, device="cuda", dtype=torch.float64), "element type"),
        (lambda: torch.ones(N, dtype=torch.float32), "not in CUDA device memory"),
        (lambda: torch.ones(2 * N, device="cuda", dtype=torch.float32)[::2], "not contiguous"),
        (lambda: torch.ones(N - 1, device="cuda", dtype=torch.float32), "bytes"),
    ],
)
def test_tensors_that_cannot_be_bound_are_value_errors_naming_the_slot(saxpy, make, words):
    with pytest.raises(ValueError) as info:
        saxpy.run(y=make())
    assert "slot 'y'" in str(info.value)
    assert words in str(info.value)


def test_dlpack_capsule_of_a_cuda_tensor_binds_in_place(saxpy):
    y = torch.ones(N, device="cuda", dtype=torch.float32)

    class OnlyDLPack:  # hides __cuda_array_interface__: the DLPack path
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    torch.cuda.synchronize()
    saxpy.run(y=OnlyDLPack(y), a=1.0)
    assert torch.all(y == 2.0).item()


def test_enqueue_on_torchs_stream_needs_no_synchronize(saxpy):
    # A long torch kernel queued before the run, and a read queued after it, all on
    # torch's current stream with no host synchronization in between: the run must see
    # the value torch wrote last, and torch must see the run's result.
    stream = torch.cuda.current_stream()
    for _ in range(3):
        y = torch.empty(N, device="cuda", dtype=torch.float32)
        big = torch.randn(4096, 4096, device="cuda")
        for _ in range(4):
            big = big @ big.T / 4096.0  # keeps the stream busy for a while
        y.fill_(2.0)
        ev = saxpy.enqueue_on_stream(stream, y=y, a=3.0)  # y = 3 * x + y = 5
        z = y * 2.0  # queued on torch's stream after the run
        assert torch.all(z == 10.0).item()
        ev.wait()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        y = torch.full((N,), 1.0, device="cuda", dtype=torch.float32)
        saxpy.enqueue_on_stream(side, y=y, a=1.0).wait()
        assert torch.all(y == 2.0).item()


def test_a_stream_on_a_cpu_executable_is_refused():
    exe = cgraph.load(os.environ["CGRAPH_TEST_SAXPY"]).finalize(device="cpu")
    y = torch.zeros(N, dtype=torch.float32)
    with pytest.raises(cgraph.UnsupportedError, match="caller's stream"):
        exe.enqueue_on_stream(torch.cuda.current_stream(), y=y, a=1.0)


def axpy_exe():
    """y += a * 1 over N floats, kernels only (saxpy.cgf ends with a host task, which a
    capture refuses)."""
    b = cgraph.GraphBuilder("axpy")
    b.kernel_source("__kernel void axpy(__global float *y, float a) { y[get_global_id(0)] += a; }",
                    name="axpy.cl")
    b.slot("y", count=N, type="f32")
    b.param("a", "f32", 1.0)
    b.add_kernel("axpy", [N], args=["y", "$a"])
    return b.build().finalize(device="cuda")


def test_a_run_on_a_capturing_stream_is_recorded_into_torchs_graph():
    # Inside torch.cuda.graph the run becomes nodes of torch's graph, between torch's
    # own nodes, with the tensor and the value given at capture; nothing runs before
    # the graph is replayed.
    saxpy = axpy_exe()
    y = torch.full((N,), 2.0, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y.mul_(2.0)
        ev = saxpy.enqueue_on_stream(torch.cuda.current_stream(), y=y, a=3.0)  # y = 3 * 1 + y
        y.add_(1.0)
    assert ev.done
    torch.cuda.synchronize()
    assert torch.all(y == 2.0).item()
    g.replay()
    torch.cuda.synchronize()
    assert torch.all(y == 8.0).item()  # 2 * 2 + 3 + 1
    # The executable's own runs keep their bindings; the captured run keeps its own.
    z = torch.full((N,), 1.0, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    saxpy.run(y=z, a=1.0)
    assert torch.all(z == 2.0).item()
    g.replay()
    torch.cuda.synchronize()
    assert torch.all(y == 20.0).item()  # 8 * 2 + 3 + 1
    saxpy.run(y=z, a=1.0)
    assert torch.all(z == 3.0).item()


def test_a_graph_with_a_host_task_is_not_captured():
    b = cgraph.GraphBuilder("host-in-the-middle")
    b.kernel_source("__kernel void inc(__global float *y) { y[get_global_id(0)] += 1.0f; }", name="inc.cl")
    b.slot("y", count=1024, type="f32")
    b.add_kernel("inc", [1024], args=["y"])
    b.add_host("checksum", ["y"])
    exe = b.build().finalize(device="cuda")
    y = torch.zeros(1024, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(cgraph.UnsupportedError, match="host task"):
        with torch.cuda.graph(g):
            exe.enqueue_on_stream(torch.cuda.current_stream(), y=y)
