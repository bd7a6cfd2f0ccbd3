"""Node times of profiled runs, their Chrome trace, and the kernel cache's counters."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Any, Optional, Union

from . import _native


@dataclass(frozen=True)
class NodeTime:
    """One timed node of a profiled run: times in nanoseconds from the run's start, on
    the device's clock (the host's steady clock on the cpu)."""

    node: int    # index in the executable's graph as finalized (subgraphs flattened)
    name: str    # the node's name ("" when it has none)
    kind: str    # "kernel", "copy", "fill", "host", ...
    kernel: str  # a kernel node's kernel ("" for other kinds)
    start_ns: int
    end_ns: int
    lane: int    # thread / queue / stream that ran it

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


def node_infos(exe_handle: ctypes.c_void_p) -> list[tuple[str, str, str]]:
    """(name, kind, kernel) of every node of the executable's graph, by index."""
    out = []
    info = _native.NodeInfo()
    for i in range(_native.lib.cgraph_executable_node_count(exe_handle)):
        _native.check(_native.lib.cgraph_executable_node_info(exe_handle, i, ctypes.byref(info)))
        out.append((info.name.decode(), info.kind.decode(), info.kernel.decode()))
    return out


def node_times(event_handle: ctypes.c_void_p, nodes: list[tuple[str, str, str]]) -> list[NodeTime]:
    """The event's node times (waits for it), named from `nodes` (node_infos)."""
    count = ctypes.c_size_t()
    _native.check(_native.lib.cgraph_event_node_times(event_handle, None, 0, ctypes.byref(count)))
    entries = (_native.NodeTimeEntry * count.value)()
    _native.check(_native.lib.cgraph_event_node_times(event_handle, entries, count.value, ctypes.byref(count)))
    return [NodeTime(e.node, *nodes[e.node], e.start_ns, e.end_ns, e.lane) for e in entries[:count.value]]


def write_trace(event_handle: ctypes.c_void_p, path: Union[str, os.PathLike[str]],
                process_name: Optional[str] = None) -> None:
    _native.check(_native.lib.cgraph_event_write_trace(event_handle, os.fsencode(path),
                                                       None if process_name is None else process_name.encode()))


def cache_stats() -> dict[str, int]:
    """Counters of the kernel cache, summed over every device of the process since it
    started: ``memory_hits`` (kernels found compiled in memory), ``memory_misses`` (not
    in memory: then loaded from disk or built), ``disk_hits`` (loaded from the persistent
    cache), ``disk_rejects`` (binaries on disk the device refused, then rebuilt),
    ``builds`` (kernels compiled) and ``build_failures``. Finalizes with
    ``cache=False`` are not counted."""
    c = _native.CacheCounters()
    _native.check(_native.lib.cgraph_cache_stats(ctypes.byref(c)))
    return {name: getattr(c, name) for name, _ in _native.CacheCounters._fields_}


