"""cgraph: load command graphs (.cgf files made by ``cgc``) or compile their descriptions,
fuse their kernels, finalize them for a device and run them on arrays in place.

    import numpy as np, cgraph
    g = cgraph.load("saxpy.cgf")          # or cgraph.compile("examples/saxpy/graph.json"),
                                          # or cgraph.GraphBuilder(...).build()
    exe = g.finalize(device="cpu")
    y = np.zeros(1 << 20, dtype=np.float32)
    exe.run(y=y, a=3.0)        # the graph writes y itself: nothing is copied

Pure Python over the C library libcgraph.so (ctypes): located through the
CGRAPH_LIBRARY environment variable, next to this package, or in the source
checkout's build tree. Failures raise ``cgraph.Error`` subclasses carrying the
library's message and status code.
"""

from ._buffer import Buffer
from ._builder import GraphBuilder, at, local, typed
from ._comm import Communicator, nccl_unique_id
from ._compile import CompileWarning, compile, fuse
from ._device import Device, devices
from ._errors import (DeviceLostError, Error, InternalError, InvalidError, IoError, OutOfMemoryError,
                      UnsupportedError, WaitTimeoutError)
from ._executable import Event, Executable
from ._graph import Graph, Param, Slot, load, loads
from ._native import LIBRARY_PATH, lib as _lib
from ._profile import NodeTime, cache_stats

__version__: str = _lib.cgraph_version().decode()

__all__ = [
    "Buffer", "Communicator", "CompileWarning", "Device", "DeviceLostError", "Error", "Event", "Executable", "Graph",
    "GraphBuilder", "InternalError", "InvalidError", "IoError", "LIBRARY_PATH", "NodeTime", "OutOfMemoryError", "Param",
    "Slot", "UnsupportedError", "WaitTimeoutError",
    "at", "cache_stats", "compile", "devices", "fuse", "load", "loads", "local", "nccl_unique_id", "typed",
]
