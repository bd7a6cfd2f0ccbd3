"""The memory of array objects, found without copying: numpy's ``__array_interface__``,
``__cuda_array_interface__`` (PyTorch, CuPy, Numba) or a DLPack capsule (``__dlpack__``,
DLPack 0.6 ``DLManagedTensor`` read with ctypes), in host or CUDA device memory."""

from __future__ import annotations

import ctypes
import sys
from ctypes import POINTER, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any

# cgraph_type codes by (kind, bytes): kind 'i' signed, 'u' unsigned, 'f' floating.
_TYPES = {("i", 1): 1, ("i", 2): 2, ("i", 4): 3, ("i", 8): 4, ("u", 1): 5, ("u", 2): 6, ("u", 4): 7,
          ("u", 8): 8, ("f", 2): 9, ("f", 4): 10, ("f", 8): 11}
TYPE_NAMES = {1: "i8", 2: "i16", 3: "i32", 4: "i64", 5: "u8", 6: "u16", 7: "u32", 8: "u64", 9: "f16",
              10: "f32", 11: "f64"}

KDL_CPU = 1  # DLDeviceType kDLCPU
KDL_CUDA = 2  # DLDeviceType kDLCUDA
_DL_KINDS = {0: "i", 1: "u", 2: "f"}  # DLDataTypeCode kDLInt, kDLUInt, kDLFloat


@dataclass
class HostArray:
    """Where an array's elements are: `nbytes` contiguous bytes at `address`."""

    address: int
    nbytes: int
    element: int | None  # cgraph_type code, None when the type has no cgraph equivalent
    type_text: str       # the array's own spelling of its type, for messages
    readonly: bool
    contiguous: bool
    device: tuple[int, int]  # (DLDeviceType, id); (KDL_CPU, 0) for host memory
    owner: Any               # what must stay alive while the memory is bound


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", _DLDevice), ("ndim", c_int32), ("dtype", _DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", c_void_p), ("deleter", _Deleter)]

_capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = c_void_p
_capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
_capsule_set_name.restype = ctypes.c_int
_capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_USED_NAME = b"used_dltensor"  # a module constant: the capsule keeps pointing at it


class _DLPackOwner:
    """Owns a consumed DLManagedTensor: calls its deleter when dropped (DLPack's rule for
    the consumer), which lets the producer free or reuse the memory."""

    def __init__(self, source: Any, managed: ctypes.POINTER(_DLManagedTensor)) -> None:
        self.source = source
        self.managed = managed

    def __del__(self) -> None:
        managed, self.managed = self.managed, None
        if managed and managed.contents.deleter:
            managed.contents.deleter(managed)


def _contiguous(shape: tuple[int, ...], strides: tuple[int, ...] | None, itemsize: int) -> bool:
    """Whether `strides` (bytes) lay `shape` out as one C-order block (None: they do)."""
    if strides is None:
        return True
    expected = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim > 1 and stride != expected:
            return False
        expected *= dim
    return True


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


_TYPESTRS: dict[str, tuple[int | None, int]] = {}


def _typestr(typestr: str) -> tuple[int | None, int]:
    """(cgraph_type code or None, item size) of an array-interface type string."""
    known = _TYPESTRS.get(typestr)
    if known is None:
        byteorder, kind, itemsize = typestr[0], typestr[1], int(typestr[2:])
        native = byteorder in "|=" or byteorder == ("<" if sys.byteorder == "little" else ">")
        known = _TYPESTRS[typestr] = (_TYPES.get((kind, itemsize)) if native else None, itemsize)
    return known


def from_array_interface(obj: Any, ai: dict, device: tuple[int, int] = (KDL_CPU, 0)) -> HostArray:
    typestr = ai["typestr"]
    element, itemsize = _typestr(typestr)
    shape = ai["shape"]
    strides = ai.get("strides")
    address, readonly = ai["data"]
    return HostArray(address or 0, _count(shape) * itemsize, element, typestr, bool(readonly),
                     strides is None or _contiguous(shape, strides, itemsize), device, obj)


def _cuda_ordinal(obj: Any) -> int:
    """The CUDA device of an object with ``__cuda_array_interface__`` (which does not say):
    PyTorch's ``.device.index``, CuPy's ``.device.id``; -1 when it cannot be told."""
    dev = getattr(obj, "device", None)
    for attr in ("index", "id"):
        value = getattr(dev, attr, None)
        if isinstance(value, int):
            return value
    return -1


def from_dlpack(obj: Any) -> HostArray:
    device = tuple(obj.__dlpack_device__()) if hasattr(obj, "__dlpack_device__") else (KDL_CPU, 0)
    if device[0] not in (KDL_CPU, KDL_CUDA):
        return HostArray(0, 0, None, "", False, True, device, obj)
    capsule = obj.__dlpack__()
    if not _capsule_valid(capsule, b"dltensor"):
        raise ValueError("__dlpack__ returned no DLPack capsule (or one already consumed)")
    managed = ctypes.cast(_capsule_get(capsule, b"dltensor"), POINTER(_DLManagedTensor))
    _capsule_set_name(capsule, _USED_NAME)  # consumed: the capsule must not delete it too
    owner = _DLPackOwner(obj, managed)
    t = managed.contents.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    itemsize = t.dtype.bits // 8
    strides = tuple(t.strides[i] * itemsize for i in range(t.ndim)) if t.strides else None
    kind = _DL_KINDS.get(t.dtype.code)
    element = _TYPES.get((kind, itemsize)) if kind and t.dtype.lanes == 1 and t.dtype.bits % 8 == 0 else None
    text = f"dlpack(code={t.dtype.code}, bits={t.dtype.bits}, lanes={t.dtype.lanes})"
    return HostArray(address=(t.data or 0) + t.byte_offset, nbytes=_count(shape) * itemsize * t.dtype.lanes,
                     element=element, type_text=text, readonly=False,
                     contiguous=_contiguous(shape, strides, itemsize * t.dtype.lanes),
                     device=device if hasattr(obj, "__dlpack_device__") else (t.device.device_type, t.device.device_id),
                     owner=owner)


def host_array(obj: Any) -> HostArray | None:
    """The memory of `obj` (host or CUDA device) when it exposes an array interface, the
    CUDA array interface or DLPack, else None."""
    ai = getattr(obj, "__array_interface__", None)  # numpy builds the dict per access: once
    if ai is not None:
        return from_array_interface(obj, ai)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return from_array_interface(obj, cai, (KDL_CUDA, _cuda_ordinal(obj)))
    if hasattr(obj, "__dlpack__"):
        return from_dlpack(obj)
    return None
