"""cgraph.Buffer: library-allocated device memory, on every device this build found
(cpu always; opencl where PoCL or another driver is present)."""

import numpy as np
import pytest

import cgraph

N = 1 << 20
SPECS = [d.spec for d in cgraph.devices()]
NO_HOST_MEMORY = [d.spec for d in cgraph.devices() if not d.host_memory]


@pytest.mark.parametrize("spec", SPECS)
def test_run_on_a_buffer(saxpy_path, spec):
    exe = cgraph.load(saxpy_path).finalize(device=spec)
    buf = cgraph.Buffer(spec, 4 * N)
    ramp = (np.arange(N) % 100).astype(np.float32)
    buf.write(ramp)
    exe.run(y=buf, a=0.5)
    out = buf.read(np.empty(N, dtype=np.float32))
    np.testing.assert_array_equal(out, ramp + 0.5)
    assert bytes(buf.read(offset=4, size=4)) == out[1:2].tobytes()


def test_a_buffer_too_small_names_the_slot(saxpy_exe):
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': bound range is 16 bytes, the graph needs at least 4194304"):
        saxpy_exe.run(y=cgraph.Buffer("cpu", 16))


def test_buffer_copies_past_the_end(saxpy_exe):
    buf = cgraph.Buffer("cpu", 8)
    with pytest.raises(cgraph.InvalidError):
        buf.write(np.zeros(4, dtype=np.float32))
    with pytest.raises(cgraph.InvalidError):
        buf.read(offset=4, size=8)


@pytest.mark.parametrize("spec", NO_HOST_MEMORY)
def test_host_arrays_are_refused_where_the_device_cannot_use_them(saxpy_path, spec):
    exe = cgraph.load(saxpy_path).finalize(device=spec)
    with pytest.raises(cgraph.InvalidError, match=rf"slot 'y': device {spec} cannot use host memory in place"):
        exe.run(y=np.zeros(N, dtype=np.float32))


@pytest.mark.parametrize("spec", NO_HOST_MEMORY)
def test_a_buffer_of_another_device_is_refused(saxpy_path, spec):
    exe = cgraph.load(saxpy_path).finalize(device=spec)
    with pytest.raises(cgraph.InvalidError, match=r"slot 'y': buffer belongs to device"):
        exe.run(y=cgraph.Buffer("cpu", 4 * N))
