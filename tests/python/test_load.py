"""Loading graphs, their slots and parameters, and the devices."""

import pytest

import cgraph


def test_load_describes_slots_and_params(saxpy_path):
    g = cgraph.load(saxpy_path)
    assert g.name == "saxpy"
    assert g.node_count == 2
    assert [s.name for s in g.slots] == ["x", "y"]
    y = g.slot("y")
    assert (y.index, y.size, y.element, y.external, y.read, y.written) == (1, 4 << 20, "f32", True, True, True)
    x = g.slot("x")
    assert (x.external, x.written) == (False, False)
    assert [(p.name, p.type, p.default) for p in g.params] == [("a", "f32", 2.0)]


def test_loads_from_bytes(saxpy_path):
    with open(saxpy_path, "rb") as f:
        g = cgraph.loads(f.read())
    assert g.name == "saxpy"


def test_bad_path_is_an_io_error_naming_the_file(tmp_path):
    missing = tmp_path / "missing.cgf"
    with pytest.raises(cgraph.IoError) as info:
        cgraph.load(missing)
    assert isinstance(info.value, OSError) and isinstance(info.value, cgraph.Error)
    assert info.value.code == 5
    assert str(missing) in str(info.value)


def test_garbage_is_invalid():
    with pytest.raises(cgraph.InvalidError) as info:
        cgraph.loads(b"definitely not a cgf file")
    assert info.value.code == 1 and str(info.value)


def test_unknown_slot_name_gives_the_library_message(saxpy_path):
    with pytest.raises(ValueError, match=r"graph has no slot 'z' \(x, y\)"):
        cgraph.load(saxpy_path).slot("z")


def test_devices_list_cpu_first():
    devs = cgraph.devices()
    assert devs and devs[0].backend == "cpu" and devs[0].spec == "cpu:0" and devs[0].index == 0
    assert devs[0].host_memory and devs[0].memory_bytes > 0


def test_unknown_device_and_mode(saxpy_path):
    g = cgraph.load(saxpy_path)
    with pytest.raises(cgraph.InvalidError, match="no backend 'nosuch'"):
        g.finalize(device="nosuch")
    with pytest.raises(cgraph.InvalidError, match="mode"):
        g.finalize(mode="sometimes")


def test_help_says_what_run_needs():
    doc = cgraph.Executable.run.__doc__
    assert "__array_interface__" in doc and "__dlpack__" in doc and "contiguous" in doc
    for obj in (cgraph.load, cgraph.devices, cgraph.Graph.finalize, cgraph.Executable.enqueue, cgraph.Event.wait):
        assert obj.__doc__
