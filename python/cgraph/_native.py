"""ctypes bindings of libcgraph.so (lib/capi/include/cgraph.h).

Nothing here is compiled: the same package works with any CPython 3 that can load the
native library. The library is found, in order, at the path in the CGRAPH_LIBRARY
environment variable, next to this package (``cgraph/libcgraph.so``), or in a build
tree of the source checkout (``build/lib/capi/libcgraph.so``).
"""

from __future__ import annotations

import ctypes
import os
from ctypes import CFUNCTYPE, POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint32, c_uint64, c_void_p
from pathlib import Path

from ._errors import error_for

LIBRARY_NAME = "libcgraph.so"
API_VERSION = 3


class SlotInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("size", c_uint64), ("alignment", c_uint32), ("element", c_int),
                ("external", c_int), ("read", c_int), ("written", c_int), ("size_varies", c_int)]


class ParamInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("type", c_int), ("default_int", c_int64), ("default_float", c_double)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("backend", c_char_p), ("name", c_char_p), ("vendor", c_char_p), ("spec", c_char_p),
                ("memory_bytes", c_uint64), ("compute_units", c_uint32), ("host_memory", c_int)]


class FinalizeOptions(ctypes.Structure):
    _fields_ = [("mode", c_int), ("use_cache", c_int), ("base_dir", c_char_p), ("plan_memory", c_int),
                ("communicator", c_void_p), ("collective_timeout_ms", c_uint64)]


class SubmitOptions(ctypes.Structure):
    _fields_ = [("profile", c_int), ("stream", c_void_p)]


class NodeTimeEntry(ctypes.Structure):  # cgraph_node_time
    _fields_ = [("node", c_uint32), ("lane", c_uint32), ("start_ns", c_uint64), ("end_ns", c_uint64)]


class NodeInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("kind", c_char_p), ("kernel", c_char_p)]


class CacheCounters(ctypes.Structure):
    _fields_ = [("memory_hits", c_uint64), ("memory_misses", c_uint64), ("disk_hits", c_uint64),
                ("disk_rejects", c_uint64), ("builds", c_uint64), ("build_failures", c_uint64)]


# cgraph_diagnostic_fn: (user_data, text)
DiagnosticFn = CFUNCTYPE(None, c_void_p, c_char_p)
ProgressFn = CFUNCTYPE(None, c_char_p, c_uint64, c_uint64, c_void_p)  # cgraph_progress_fn


class CompileOptions(ctypes.Structure):
    _fields_ = [("include_dirs", POINTER(c_char_p)), ("include_dir_count", c_size_t),
                ("allow_dirs", POINTER(c_char_p)), ("allow_dir_count", c_size_t),
                ("defines", POINTER(c_char_p)), ("define_count", c_size_t),
                ("cl_std", c_char_p), ("keep_source", c_int), ("source_name", c_char_p),
                ("diagnostic", DiagnosticFn), ("user_data", c_void_p)]


class FuseOptions(ctypes.Structure):
    _fields_ = [("auto_fuse", c_int), ("max_group", c_uint32),
                ("groups", POINTER(c_char_p)), ("group_count", c_size_t),
                ("internalize", POINTER(c_char_p)), ("internalize_count", c_size_t),
                ("remark", DiagnosticFn), ("user_data", c_void_p)]


Handle = c_void_p
_S = c_int  # cgraph_status

# name: (restype, argtypes)
_PROTOTYPES = {
    "cgraph_version": (c_char_p, []),
    "cgraph_api_version": (c_int, []),
    "cgraph_last_error": (c_char_p, []),
    "cgraph_status_name": (c_char_p, [c_int]),
    "cgraph_type_name": (c_char_p, [c_int]),
    "cgraph_type_size": (c_size_t, [c_int]),
    "cgraph_graph_load": (_S, [c_char_p, POINTER(Handle)]),
    "cgraph_graph_load_memory": (_S, [c_void_p, c_size_t, POINTER(Handle)]),
    "cgraph_graph_release": (None, [Handle]),
    "cgraph_graph_name": (c_char_p, [Handle]),
    "cgraph_graph_slot_count": (c_uint32, [Handle]),
    "cgraph_graph_param_count": (c_uint32, [Handle]),
    "cgraph_graph_node_count": (c_uint32, [Handle]),
    "cgraph_graph_slot_info": (_S, [Handle, c_uint32, POINTER(SlotInfo)]),
    "cgraph_graph_find_slot": (_S, [Handle, c_char_p, POINTER(c_uint32)]),
    "cgraph_graph_param_info": (_S, [Handle, c_uint32, POINTER(ParamInfo)]),
    "cgraph_graph_find_param": (_S, [Handle, c_char_p, POINTER(c_uint32)]),
    "cgraph_compile_options_default": (CompileOptions, []),
    "cgraph_graph_compile_file": (_S, [c_char_p, POINTER(CompileOptions), POINTER(Handle)]),
    "cgraph_graph_compile_string": (_S, [c_char_p, c_char_p, POINTER(CompileOptions), POINTER(Handle)]),
    "cgraph_fuse_options_default": (FuseOptions, []),
    "cgraph_graph_fuse": (_S, [Handle, POINTER(FuseOptions), POINTER(Handle)]),
    "cgraph_graph_save": (_S, [Handle, c_char_p]),
    "cgraph_device_count": (c_uint32, []),
    "cgraph_device_get": (_S, [c_uint32, POINTER(Handle)]),
    "cgraph_device_open": (_S, [c_char_p, POINTER(Handle)]),
    "cgraph_device_release": (None, [Handle]),
    "cgraph_device_get_info": (_S, [Handle, POINTER(DeviceInfo)]),
    "cgraph_finalize_options_default": (FinalizeOptions, []),
    "cgraph_communicator_local": (_S, [POINTER(Handle)]),
    "cgraph_nccl_unique_id": (_S, [ctypes.c_char_p]),
    "cgraph_communicator_nccl": (_S, [ctypes.c_char_p, c_uint32, c_uint32, c_int, c_uint64, POINTER(Handle)]),
    "cgraph_communicator_wrap_nccl": (_S, [c_void_p, POINTER(Handle)]),
    "cgraph_communicator_info": (_S, [Handle, POINTER(c_uint32), POINTER(c_uint32), POINTER(c_char_p)]),
    "cgraph_communicator_release": (None, [Handle]),
    "cgraph_finalize": (_S, [Handle, Handle, POINTER(FinalizeOptions), POINTER(Handle)]),
    "cgraph_finalize_progress": (_S, [Handle, Handle, POINTER(FinalizeOptions), ProgressFn, c_void_p,
                                      POINTER(Handle)]),
    "cgraph_executable_release": (None, [Handle]),
    "cgraph_executable_memory": (_S, [Handle, POINTER(c_uint64), POINTER(c_uint32), POINTER(c_uint64),
                                      POINTER(c_uint64)]),
    "cgraph_slot_read": (_S, [Handle, c_uint32, c_uint64, c_void_p, c_uint64]),
    "cgraph_slot_write": (_S, [Handle, c_uint32, c_uint64, c_void_p, c_uint64]),
    "cgraph_buffer_alloc": (_S, [Handle, c_uint64, POINTER(Handle)]),
    "cgraph_buffer_size": (c_uint64, [Handle]),
    "cgraph_buffer_write": (_S, [Handle, c_uint64, c_void_p, c_uint64]),
    "cgraph_buffer_read": (_S, [Handle, c_uint64, c_void_p, c_uint64]),
    "cgraph_buffer_release": (None, [Handle]),
    "cgraph_bind_buffer": (_S, [Handle, c_uint32, Handle, c_uint64, c_uint64]),
    "cgraph_bindings_create": (_S, [Handle, POINTER(Handle)]),
    "cgraph_bindings_release": (None, [Handle]),
    "cgraph_bind_host": (_S, [Handle, c_uint32, c_void_p, c_uint64]),
    "cgraph_bind_device": (_S, [Handle, c_uint32, c_uint64, c_uint64]),
    "cgraph_unbind": (_S, [Handle, c_uint32]),
    "cgraph_bound_address": (c_void_p, [Handle, c_uint32]),
    "cgraph_set_param_int": (_S, [Handle, c_uint32, c_int64]),
    "cgraph_set_param_float": (_S, [Handle, c_uint32, c_double]),
    "cgraph_enqueue": (_S, [Handle, Handle, POINTER(Handle)]),
    "cgraph_enqueue_on_stream": (_S, [Handle, Handle, c_void_p, POINTER(Handle)]),
    "cgraph_event_wait": (_S, [Handle]),
    "cgraph_event_is_complete": (c_int, [Handle]),
    "cgraph_event_release": (None, [Handle]),
    "cgraph_run": (_S, [Handle, Handle]),
    "cgraph_submit_options_default": (SubmitOptions, []),
    "cgraph_enqueue_ex": (_S, [Handle, Handle, POINTER(SubmitOptions), POINTER(Handle)]),
    "cgraph_event_node_times": (_S, [Handle, POINTER(NodeTimeEntry), c_size_t, POINTER(c_size_t)]),
    "cgraph_event_write_trace": (_S, [Handle, c_char_p, c_char_p]),
    "cgraph_executable_node_count": (c_uint32, [Handle]),
    "cgraph_executable_node_info": (_S, [Handle, c_uint32, POINTER(NodeInfo)]),
    "cgraph_cache_stats": (_S, [POINTER(CacheCounters)]),
}


def _candidates() -> list[Path]:
    env = os.environ.get("CGRAPH_LIBRARY")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    return [here / LIBRARY_NAME, here.parent.parent / "build" / "lib" / "capi" / LIBRARY_NAME]


def _load() -> ctypes.CDLL:
    tried = _candidates()
    for path in tried:
        if path.is_file():
            lib = ctypes.CDLL(str(path))
            break
    else:
        where = ", ".join(str(p) for p in tried)
        raise ImportError(f"cgraph: cannot find {LIBRARY_NAME} (looked at {where}); "
                          "set CGRAPH_LIBRARY to its path")
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    if lib.cgraph_api_version() != API_VERSION:
        raise ImportError(f"cgraph: {path} implements C API version {lib.cgraph_api_version()}, "
                          f"this package needs {API_VERSION}")
    return lib


lib = _load()
LIBRARY_PATH = str(_candidates()[0]) if os.environ.get("CGRAPH_LIBRARY") else lib._name


def last_error() -> str:
    """The calling thread's last C API error message."""
    return lib.cgraph_last_error().decode("utf-8", "replace")


def check(status: int) -> None:
    """Raises the exception for a failed C API status, with the library's message."""
    if status != 0:
        raise error_for(status, last_error())


