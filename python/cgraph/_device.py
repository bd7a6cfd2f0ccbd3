"""Devices of the backends compiled into libcgraph.so."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Union

from . import _native
from ._errors import InvalidError


@dataclass(frozen=True)
class Device:
    """One device: what ``cgraph.devices()`` lists and ``Graph.finalize`` accepts.

    Attributes:
        index: its position in ``cgraph.devices()``.
        spec: ``"backend:index"`` (``"cpu:0"``), also accepted by ``Graph.finalize``.
        backend: ``"cpu"``, ``"opencl"``, ``"cuda"``, ...
        name, vendor: as the driver reports them.
        memory_bytes: global memory (0 when unknown).
        compute_units: as the driver reports them.
        host_memory: True when arrays in host memory can be bound in place (cpu).
    """

    index: int
    spec: str
    backend: str
    name: str
    vendor: str
    memory_bytes: int
    compute_units: int
    host_memory: bool


DeviceLike = Union[str, int, Device]


def _text(b: bytes | None) -> str:
    return b.decode("utf-8", "replace") if b else ""


def _describe(handle: ctypes.c_void_p, index: int) -> Device:
    info = _native.DeviceInfo()
    _native.check(_native.lib.cgraph_device_get_info(handle, ctypes.byref(info)))
    return Device(index=index, spec=_text(info.spec), backend=_text(info.backend), name=_text(info.name),
                  vendor=_text(info.vendor), memory_bytes=info.memory_bytes, compute_units=info.compute_units,
                  host_memory=bool(info.host_memory))


def devices() -> list[Device]:
    """Every device of the compiled-in backends whose driver is present, cpu first.

    Drivers are probed once per process (the first call may take a moment)."""
    out = []
    for i in range(_native.lib.cgraph_device_count()):
        handle = ctypes.c_void_p()
        _native.check(_native.lib.cgraph_device_get(i, ctypes.byref(handle)))
        try:
            out.append(_describe(handle, i))
        finally:
            _native.lib.cgraph_device_release(handle)
    return out


def open_device(device: DeviceLike) -> tuple[ctypes.c_void_p, Device]:
    """A C device handle (the caller releases it) and the device's description.

    `device`: a spec string (``"cpu"``, ``"opencl:1"``), an index into ``devices()`` or
    a ``Device``. Raises InvalidError for an unknown device."""
    handle = ctypes.c_void_p()
    if isinstance(device, Device):
        device = device.spec
    if isinstance(device, bool) or not isinstance(device, (str, int)):
        raise InvalidError(f"device must be a spec string, an index or a cgraph.Device, not {type(device).__name__}")
    if isinstance(device, int):
        _native.check(_native.lib.cgraph_device_get(device, ctypes.byref(handle)))
    else:
        _native.check(_native.lib.cgraph_device_open(device.encode(), ctypes.byref(handle)))
    try:
        return handle, _describe(handle, -1)
    except BaseException:
        _native.lib.cgraph_device_release(handle)
        raise
