"""Loaded graphs: slots, parameters, finalize."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Union

from . import _native
from ._arrays import TYPE_NAMES
from ._device import DeviceLike
from ._errors import InvalidError

if TYPE_CHECKING:
    from ._comm import Communicator


@dataclass(frozen=True)
class Slot:
    """One binding slot of a graph.

    Attributes:
        index: its index in the graph.
        name: its name (the keyword ``Executable.run`` binds it by).
        size: bytes an array bound to it must have.
        alignment: a bound array's address must be a multiple of it.
        element: element type the kernels use it as (``"f32"``, ``"i32"``, ...), or None
            when no kernel types it or two disagree (then any dtype is accepted).
        external: True when the caller binds it per run; False when the graph owns it
            (read and write it with ``Executable.read`` / ``Executable.write``).
        read, written: whether some node reads / writes it.
        size_varies: the size is an expression over the graph's parameters; ``size`` is
            its value at the defaults, and a bound array must hold at least the size at
            the run's parameter values (the run checks it, naming the slot).
    """

    index: int
    name: str
    size: int
    alignment: int
    element: Optional[str]
    external: bool
    read: bool
    written: bool
    size_varies: bool = False


@dataclass(frozen=True)
class Param:
    """One scalar parameter of a graph: ``index``, ``name``, ``type`` (``"f32"``, ``"i32"``,
    ...) and its ``default`` value (int or float)."""

    index: int
    name: str
    type: str
    default: Union[int, float]


def _text(b: bytes | None) -> str:
    return b.decode("utf-8", "replace") if b else ""


def _slots(handle: ctypes.c_void_p) -> tuple[Slot, ...]:
    out = []
    for i in range(_native.lib.cgraph_graph_slot_count(handle)):
        s = _native.SlotInfo()
        _native.check(_native.lib.cgraph_graph_slot_info(handle, i, ctypes.byref(s)))
        out.append(Slot(i, _text(s.name), s.size, s.alignment, TYPE_NAMES.get(s.element), bool(s.external),
                        bool(s.read), bool(s.written), bool(s.size_varies)))
    return tuple(out)


def _params(handle: ctypes.c_void_p) -> tuple[Param, ...]:
    out = []
    for i in range(_native.lib.cgraph_graph_param_count(handle)):
        p = _native.ParamInfo()
        _native.check(_native.lib.cgraph_graph_param_info(handle, i, ctypes.byref(p)))
        kind = TYPE_NAMES.get(p.type, "unknown")
        out.append(Param(i, _text(p.name), kind, p.default_float if kind.startswith("f") else p.default_int))
    return tuple(out)


class Graph:
    """A graph (immutable). Make one with ``cgraph.load`` or ``cgraph.loads`` (a .cgf file),
    ``cgraph.compile`` (a description) or ``Graph.fuse``.

    Attributes:
        name: the graph's name.
        slots: its binding slots (``Slot``), by index.
        params: its parameters (``Param``), by index.
        node_count: number of top-level nodes.

    Thread-safety: a Graph may be used from several threads at once.
    """

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self._handle = handle
        self.name: str = _text(_native.lib.cgraph_graph_name(handle))
        self.slots: tuple[Slot, ...] = _slots(handle)
        self.params: tuple[Param, ...] = _params(handle)
        self.node_count: int = _native.lib.cgraph_graph_node_count(handle)

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            _native.lib.cgraph_graph_release(handle)

    def __repr__(self) -> str:
        return f"<cgraph.Graph '{self.name}': {len(self.slots)} slots, {len(self.params)} params, " \
               f"{self.node_count} nodes>"

    def slot(self, name: str) -> Slot:
        """The slot called `name`. Raises InvalidError (a ValueError) naming the slots."""
        index = ctypes.c_uint32()
        _native.check(_native.lib.cgraph_graph_find_slot(self._handle, name.encode(), ctypes.byref(index)))
        return self.slots[index.value]

    def fuse(self, auto: bool = True, **options) -> "Graph":
        """A new graph with chains of kernel nodes fused into single kernels; the same as
        ``cgraph.fuse(self, auto, **options)`` (see there)."""
        from ._compile import fuse

        return fuse(self, auto, **options)

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the graph as a .cgf file (a regular file is replaced atomically).
        Raises IoError naming the path."""
        from ._compile import save

        save(self, path)

    def finalize(self, device: DeviceLike = "cpu", mode: str = "replay", cache: bool = True,
                 base_dir: Optional[Union[str, os.PathLike]] = None,
                 plan_memory: bool = True, communicator: Optional["Communicator"] = None,
                 collective_timeout: float = 60.0,
                 progress: Optional[Callable[[str, int, int], None]] = None) -> "Executable":
        """Compiles the graph for `device` and returns an ``Executable``.

        Args:
            device: a spec (``"cpu"``, ``"cpu:0"``, ``"opencl:1"``), an index into
                ``cgraph.devices()`` or a ``cgraph.Device``.
            mode: ``"replay"`` (pre-resolved schedule, the default) or ``"eager"``
                (node by node).
            cache: use the kernel binary cache (in memory and on disk).
            base_dir: directory that the graph's relative file paths resolve against and
                stay inside; None = the current directory.
            plan_memory: let transient slots whose lifetimes do not overlap share
                memory (``Executable.memory`` shows the plan); False gives each its own.
            communicator: the ranks collective nodes run across (``cgraph.Communicator``);
                the graph's ``rank`` and ``world`` parameters are the caller's to set.
            collective_timeout: seconds a collective may wait for the other ranks.
            progress: called as ``progress(phase, done, total)`` while the kernels are
                compiled (``"compiling kernels"``, once per module; ``done == total`` at
                the end), on this thread; an exception it raises is printed and ignored.

        Raises:
            InvalidError: unknown device or mode, a graph the device cannot run.
            UnsupportedError: the device cannot run some part of it.
            OutOfMemoryError: allocating its slots failed.
        """
        from ._executable import Executable
        from ._device import open_device

        if mode not in ("replay", "eager"):
            raise InvalidError(f"mode must be 'replay' or 'eager', not {mode!r}")
        dev_handle, info = open_device(device)
        try:
            opts = _native.lib.cgraph_finalize_options_default()
            opts.mode = 0 if mode == "replay" else 1
            opts.use_cache = 1 if cache else 0
            opts.plan_memory = 1 if plan_memory else 0
            opts.base_dir = os.fsencode(base_dir) if base_dir is not None else None
            opts.communicator = communicator._handle if communicator is not None else None
            opts.collective_timeout_ms = int(collective_timeout * 1000)
            exe = ctypes.c_void_p()
            callback = _native.ProgressFn()  # NULL: no progress
            if progress is not None:
                callback = _native.ProgressFn(lambda phase, done, total, _user: progress(phase.decode(), done, total))
            _native.check(_native.lib.cgraph_finalize_progress(dev_handle, self._handle, ctypes.byref(opts),
                                                                callback, None, ctypes.byref(exe)))
        finally:
            _native.lib.cgraph_device_release(dev_handle)
        return Executable(exe, self, info, mode)


def load(path: Union[str, os.PathLike]) -> Graph:
    """Loads a .cgf file (made by ``cgc``) and returns its ``Graph``.

    Raises:
        IoError (an OSError): the file cannot be read; the message names it.
        InvalidError (a ValueError): the file is not a valid .cgf.
    """
    handle = ctypes.c_void_p()
    _native.check(_native.lib.cgraph_graph_load(os.fsencode(path), ctypes.byref(handle)))
    return Graph(handle)


def loads(data: bytes) -> Graph:
    """Loads a .cgf image from `data` (bytes-like; copied). Raises InvalidError when it
    is not a valid .cgf."""
    view = bytes(data)
    handle = ctypes.c_void_p()
    _native.check(_native.lib.cgraph_graph_load_memory(view, len(view), ctypes.byref(handle)))
    return Graph(handle)
