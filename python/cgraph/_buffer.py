"""Device memory the library allocates: what a slot is bound to on devices that cannot
use host memory in place (``Device.host_memory`` False, e.g. opencl)."""

from __future__ import annotations

import ctypes
from typing import Any, Optional

from . import _native
from ._arrays import KDL_CPU, host_array
from ._device import Device, DeviceLike, open_device
from ._errors import InvalidError


class Buffer:
    """`size` bytes of memory on `device` (contents undefined until written).

    Bind it to a slot like an array (``exe.run(y=buffer)``); it must be on the
    executable's device and hold at least the slot's size. Copies in and out with
    ``write`` and ``read``, which must not overlap a run that uses the buffer (wait
    first). Raises OutOfMemoryError when the device has no room, InvalidError for an
    unknown device.
    """

    def __init__(self, device: DeviceLike, size: int) -> None:
        dev_handle, self.device = open_device(device)
        self._handle = ctypes.c_void_p()
        try:
            _native.check(_native.lib.cgraph_buffer_alloc(dev_handle, int(size), ctypes.byref(self._handle)))
        finally:
            _native.lib.cgraph_device_release(dev_handle)
        self.size: int = _native.lib.cgraph_buffer_size(self._handle)

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            _native.lib.cgraph_buffer_release(handle)  # runs that bind it keep it alive

    def __repr__(self) -> str:
        return f"<cgraph.Buffer {self.size} bytes on {self.device.spec}>"

    def write(self, data: Any, offset: int = 0) -> None:
        """Copies the contiguous host array `data` (``__array_interface__`` or
        ``__dlpack__``) into the buffer at byte `offset`. Raises InvalidError for a
        range past the end or an array that is not contiguous host memory."""
        arr = _host("data", data)
        _native.check(_native.lib.cgraph_buffer_write(self._handle, offset, arr.address, arr.nbytes))

    def read(self, out: Any = None, offset: int = 0, size: Optional[int] = None) -> Any:
        """Copies buffer bytes from `offset` into the writable contiguous array `out`
        (as many as it holds; returned), or into a new ``bytearray`` of `size` bytes
        (default: to the end). Raises InvalidError for a range past the end."""
        if out is None:
            n = self.size - offset if size is None else size
            buf = bytearray(n)
            c = (ctypes.c_char * n).from_buffer(buf)
            _native.check(_native.lib.cgraph_buffer_read(self._handle, offset, c, n))
            return buf
        arr = _host("out", out)
        if arr.readonly:
            raise InvalidError("out: the array is read-only")
        _native.check(_native.lib.cgraph_buffer_read(self._handle, offset, arr.address, arr.nbytes))
        return out


def _host(what: str, value: Any):
    arr = host_array(value)
    if arr is None or arr.device[0] != KDL_CPU or not arr.contiguous:
        raise InvalidError(f"{what}: a contiguous array in host memory is needed, not a {type(value).__name__}")
    return arr


