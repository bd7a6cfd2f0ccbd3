"""Executables (a graph finalized for a device), runs and events."""

from __future__ import annotations

import ctypes
import numbers
import os
from typing import Any, Optional, Union

from . import _native, _profile
from ._arrays import KDL_CPU, KDL_CUDA, TYPE_NAMES, host_array
from ._buffer import Buffer
from ._device import Device
from ._errors import InvalidError

_TYPE_CODES = {name: code for code, name in TYPE_NAMES.items()}
_RUN = _native.lib.cgraph_run  # looked up once: run() is the per-call path


class Event:
    """One submission (``Executable.enqueue``). Holds the bound arrays until it is
    dropped, so they stay alive while the run uses them."""

    def __init__(self, handle: ctypes.c_void_p, owners: list[Any], executable: "Executable") -> None:
        self._handle = handle
        self._owners = owners
        self._executable = executable  # outlives the submission

    def wait(self) -> None:
        """Blocks until the run completed. Raises its failure (an ``Error`` subclass),
        if any; may be called again and returns (or raises) the same."""
        _native.check(_native.lib.cgraph_event_wait(self._handle))

    @property
    def done(self) -> bool:
        """True once the run has completed (successfully or not)."""
        return bool(_native.lib.cgraph_event_is_complete(self._handle))

    def node_times(self) -> list[_profile.NodeTime]:
        """Waits for the run, then returns its node times (``Executable.profile``,
        ``enqueue_profiled``): one ``NodeTime`` per node that ran; empty for a run
        that was not profiled. Raises the run's failure, as ``wait``."""
        return _profile.node_times(self._handle, self._executable._node_infos())

    def write_trace(self, path: Union[str, "os.PathLike[str]"], process_name: Optional[str] = None) -> None:
        """Waits for the run, then writes its node times to `path` as Chrome trace
        event JSON (what ``cgrun --trace`` writes; chrome://tracing and Perfetto open
        it), replacing a file atomically. Raises InvalidError for a run that was not
        profiled, IoError when the file cannot be written."""
        _profile.write_trace(self._handle, path, process_name)

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            _native.lib.cgraph_event_release(handle)  # waits for the run, then the arrays may go
        self._owners = []
        self._executable = None


class Executable:
    """A graph finalized for one device (``Graph.finalize``).

    Attributes:
        name, slots, params: those of the graph it was finalized from.
        device: the ``cgraph.Device`` it runs on.
        mode: ``"replay"`` or ``"eager"``.

    Thread-safety: use one Executable from one thread at a time; runs of one Executable
    execute in submission order.
    """

    def __init__(self, handle: ctypes.c_void_p, graph: Any, device: Device, mode: str) -> None:
        self._handle = handle
        self._bindings = ctypes.c_void_p()
        _native.check(_native.lib.cgraph_bindings_create(handle, ctypes.byref(self._bindings)))
        self.name: str = graph.name
        self.slots = graph.slots
        self.params = graph.params
        self.device = device
        self.mode = mode
        self._slot_index = {s.name: s.index for s in self.slots}
        self._param_index = {p.name: p.index for p in self.params}
        self._bound: set[int] = set()     # slots bound by the previous call
        self._params_set: set[int] = set()  # params not at their default
        self._nodes: Optional[list[tuple[str, str, str]]] = None  # node (name, kind, kernel)
        # What the bindings hold from the previous call, so that a call repeating it skips
        # the checks and native calls: slot -> (object, what keeps its memory bound, key
        # function, key: _layout_key); param -> value (int or float) set last.
        self._same: dict[int, tuple[Any, Any, Any, Any]] = {}
        self._param_values: dict[int, Any] = {}
        # The names the previous call gave (None after a call that failed while binding).
        self._names: Optional[set[str]] = set()

    def __del__(self) -> None:
        bindings, self._bindings = getattr(self, "_bindings", None), None
        if bindings:
            _native.lib.cgraph_bindings_release(bindings)
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            _native.lib.cgraph_executable_release(handle)

    def __repr__(self) -> str:
        return f"<cgraph.Executable '{self.name}' on {self.device.spec} ({self.mode})>"

    @property
    def memory(self) -> dict[str, int]:
        """Device memory held for slots the graph owns, and the memory plan.

        Keys: ``owned_bytes`` (now; transient slots sized by parameters grow to the
        largest values seen), ``plan_slots`` (transient slots that share the plan's arena),
        ``plan_bytes_before`` and ``plan_bytes_after`` (the planned slots' bytes without
        and with sharing, at the parameters' defaults).
        """
        owned, before, after = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        slots = ctypes.c_uint32()
        _native.check(_native.lib.cgraph_executable_memory(self._handle, ctypes.byref(owned), ctypes.byref(slots),
                                                           ctypes.byref(before), ctypes.byref(after)))
        return {"owned_bytes": owned.value, "plan_slots": slots.value,
                "plan_bytes_before": before.value, "plan_bytes_after": after.value}

    # ---- runs ------------------------------------------------------------------------

    def run(self, **arguments: Any) -> None:
        """Runs the graph once and waits for it.

        Keyword arguments name slots or parameters of the graph:

        - every external slot (``Slot.external``) must be given an array: any object
          with ``__array_interface__`` (numpy) or ``__dlpack__`` whose memory is in the
          host (cpu devices), or, on cuda devices, a tensor in that GPU's memory with
          ``__cuda_array_interface__`` or ``__dlpack__`` (PyTorch, CuPy). The array's
          own memory is bound, never copied: the graph
          reads and writes it in place. It must be C-contiguous, have exactly
          ``Slot.size`` bytes (at least the size at the run's parameter values where
          ``Slot.size_varies``), the slot's element type (``Slot.element``, when known)
          and, for a slot the graph writes, be writable. On devices without
          ``Device.host_memory`` other than cuda (opencl, ...) give a ``cgraph.Buffer`` of that device
          instead (at least ``Slot.size`` bytes).
        - parameters (``Param``) take an int or a float; a parameter not given has its
          default value.

        Raises:
            InvalidError (a ValueError): an unknown name, a missing or wrong array
                (the message names the slot), a parameter value out of range.
            Error subclasses: the run itself failed (the library's message).
        """
        owners = self._bind(arguments)
        status = _RUN(self._handle, self._bindings)
        if status:
            _native.check(status)
        del owners

    def enqueue(self, **arguments: Any) -> Event:
        """Submits one run, as ``run`` takes it, and returns its ``Event`` without
        waiting. The arrays must not be resized or freed until the event completed (the
        event holds references to them). Raises as ``run`` for what is checked before
        the submission; failures of the run itself come from ``Event.wait``."""
        owners = self._bind(arguments)
        event = ctypes.c_void_p()
        _native.check(_native.lib.cgraph_enqueue(self._handle, self._bindings, ctypes.byref(event)))
        return Event(event, owners, self)

    def enqueue_on_stream(self, stream: Any, **arguments: Any) -> Event:
        """``enqueue`` ordered with a CUDA stream of the caller, on a cuda executable: the
        run starts after the work already queued on `stream` and work queued on it later
        starts after the run, without the host waiting (no ``torch.cuda.synchronize()``
        needed around it). `stream`: a ``torch.cuda.Stream`` (``cuda_stream``), a CuPy
        stream (``ptr``), an object with ``__cuda_stream__`` or a raw ``CUstream`` int; it
        must stay alive until the event completed. Raises UnsupportedError on devices that
        take no caller streams (every backend but cuda).

        On a stream being captured (inside ``with torch.cuda.graph(g):``), the run is
        recorded into the caller's graph instead, with these arrays and values, and runs
        each time that graph is replayed; the returned event is already complete. The
        captured run shares the executable's runtime-owned memory: do not replay it
        while the executable's own runs are in flight. Graphs with host tasks, conditional
        or collective nodes cannot be captured (UnsupportedError)."""
        handle = _stream_handle(stream)
        owners = self._bind(arguments)
        event = ctypes.c_void_p()
        _native.check(_native.lib.cgraph_enqueue_on_stream(self._handle, self._bindings, ctypes.c_void_p(handle),
                                                           ctypes.byref(event)))
        return Event(event, (owners, stream), self)

    # ---- profiling ---------------------------------------------------------------------

    def enqueue_profiled(self, **arguments: Any) -> Event:
        """``enqueue`` with every node timed; ``Event.node_times`` and
        ``Event.write_trace`` give the times. A device that cannot time nodes in this
        mode (cuda in replay) raises instead of running the graph another way."""
        owners = self._bind(arguments)
        options = _native.lib.cgraph_submit_options_default()
        options.profile = 1
        event = ctypes.c_void_p()
        _native.check(_native.lib.cgraph_enqueue_ex(self._handle, self._bindings, ctypes.byref(options),
                                                    ctypes.byref(event)))
        return Event(event, owners, self)

    def profile(self, **arguments: Any) -> list[_profile.NodeTime]:
        """Runs the graph once, as ``run`` takes it, with every node timed, and returns
        the times: one ``NodeTime`` (node index and name, kind, kernel, start and end in
        ns from the run's start, lane) per node that ran, in the order the device
        reports them."""
        return self.enqueue_profiled(**arguments).node_times()

    def trace(self, path: Union[str, "os.PathLike[str]"], /, **arguments: Any) -> list[_profile.NodeTime]:
        """``profile``, then writes the run's node times to `path` as the Chrome trace
        event JSON ``cgrun --trace`` writes (one complete event per node). Returns the
        times."""
        event = self.enqueue_profiled(**arguments)
        times = event.node_times()
        event.write_trace(path, f"cgraph {self.device.spec}")
        return times

    @property
    def nodes(self) -> list[str]:
        """Names of the nodes as finalized (subgraphs flattened), by the index
        ``NodeTime.node`` gives."""
        return [name for name, _, _ in self._node_infos()]

    def _node_infos(self) -> list[tuple[str, str, str]]:
        if self._nodes is None:
            self._nodes = _profile.node_infos(self._handle)
        return self._nodes

    def bound_address(self, slot: str) -> Optional[int]:
        """The host address bound to `slot` by the latest run or enqueue (None when
        unbound): the array's own data pointer, since nothing is copied."""
        index = self._slot(slot).index
        return _native.lib.cgraph_bound_address(self._bindings, index)

    # ---- graph-owned slots -----------------------------------------------------------

    def read(self, slot: str, out: Any = None) -> Any:
        """Copies the contents of a slot the graph owns (not external).

        `out`: a writable contiguous array of exactly the slot's size to fill (and
        return); None returns a new ``bytearray``. Raises InvalidError for an external
        slot or a wrong `out`."""
        s = self._slot(slot)
        if out is None:
            buf = bytearray(s.size)
            c = (ctypes.c_char * s.size).from_buffer(buf)
            _native.check(_native.lib.cgraph_slot_read(self._handle, s.index, 0, c, s.size))
            return buf
        arr = self._host(s, out, writing=True)
        _native.check(_native.lib.cgraph_slot_read(self._handle, s.index, 0, arr.address, s.size))
        return out

    def write(self, slot: str, data: Any) -> None:
        """Copies `data` (a contiguous array of exactly the slot's size) into a slot the
        graph owns; later runs see it. Raises InvalidError for an external slot or a
        wrong array."""
        s = self._slot(slot)
        arr = self._host(s, data, writing=False)
        _native.check(_native.lib.cgraph_slot_write(self._handle, s.index, 0, arr.address, s.size))

    # ---- helpers ---------------------------------------------------------------------

    def _slot(self, name: str):
        index = self._slot_index.get(name)
        if index is None:
            known = ", ".join(self._slot_index) or "it has none"
            raise InvalidError(f"graph '{self.name}' has no slot '{name}' (slots: {known})")
        return self.slots[index]

    def _bind(self, arguments: dict[str, Any]) -> list[Any]:
        """Binds the call's arrays and parameter values; slots and parameters the previous
        call named and this one does not are unbound and reset to their defaults. Returns
        what must stay alive while the run uses the arrays."""
        owners = []
        same, values, slot_index = self._same, self._param_values, self._slot_index
        try:
            for name, value in arguments.items():
                index = slot_index.get(name)
                if index is not None:
                    last = same.get(index)  # the previous binding, unchanged: skip (the per-call path)
                    if last is not None and last[0] is value and _key_of(value, last[2]) == last[3]:
                        owners.append(last[1])
                    else:
                        owners.append(self._bind_slot(self.slots[index], value))
                elif (index := self._param_index.get(name)) is not None:
                    last = values.get(index)
                    if last is None or type(last) is not type(value) or last != value:
                        self._set_param(self.params[index], value)
                        self._params_set.add(index)
                else:
                    slots = ", ".join(self._slot_index) or "none"
                    names = ", ".join(self._param_index) or "none"
                    raise InvalidError(f"graph '{self.name}' has no slot or param '{name}' "
                                       f"(slots: {slots}; params: {names})")
        except BaseException:
            self._names = None  # what this call bound before failing is released by the next
            raise
        if arguments.keys() != self._names:
            self._release_unnamed(arguments)
        return owners

    def _release_unnamed(self, arguments: dict[str, Any]) -> None:
        """Unbinds the slots and resets the parameters the previous call named and this
        one (`arguments`, all known names) does not."""
        bound = {self._slot_index[n] for n in arguments if n in self._slot_index}
        params = {self._param_index[n] for n in arguments if n in self._param_index}
        for index in self._bound - bound:
            _native.check(_native.lib.cgraph_unbind(self._bindings, index))
            self._same.pop(index, None)
        for index in self._params_set - params:
            p = self.params[index]
            self._set_param(p, p.default)
        self._bound, self._params_set, self._names = bound, params, set(arguments)

    def _bind_slot(self, slot, value: Any) -> Any:
        """Binds `value` to `slot` anew (`_bind` found the previous binding differs) and
        records its layout key for the next call's comparison."""
        self._same.pop(slot.index, None)
        owner = self._bind_slot_anew(slot, value)
        self._bound.add(slot.index)  # bound now, whatever happens to the rest of the call
        key = _layout_key(value)
        if key is not None:
            self._same[slot.index] = (value, owner, key, _key_of(value, key))
        return owner

    def _bind_slot_anew(self, slot, value: Any) -> Any:
        if not slot.external:
            raise InvalidError(f"slot '{slot.name}' is owned by the graph; use Executable.write and read for it")
        if isinstance(value, Buffer):
            _native.check(_native.lib.cgraph_bind_buffer(self._bindings, slot.index, value._handle, 0, 0))
            return value
        if self.device.backend == "cuda":
            arr = self._host(slot, value, writing=slot.written, where=(KDL_CUDA, self._ordinal()))
            _native.check(_native.lib.cgraph_bind_device(self._bindings, slot.index, arr.address, arr.nbytes))
            return arr.owner
        if not self.device.host_memory:
            raise InvalidError(f"slot '{slot.name}': device {self.device.spec} cannot use host memory in place; "
                               "bind a cgraph.Buffer")
        arr = self._host(slot, value, writing=slot.written)
        _native.check(_native.lib.cgraph_bind_host(self._bindings, slot.index, arr.address, arr.nbytes))
        return arr.owner

    def _ordinal(self) -> int:
        """The CUDA device ordinal of a cuda executable ("cuda:1" -> 1)."""
        return int(self.device.spec.rpartition(":")[2] or 0)

    def _host(self, slot, value: Any, writing: bool, where: tuple[int, int] = (KDL_CPU, 0)):
        arr = host_array(value)
        if arr is None:
            raise InvalidError(f"slot '{slot.name}': a {type(value).__name__} is not an array "
                               "(it needs __array_interface__, __cuda_array_interface__ or __dlpack__)")
        problem = _problem(slot, arr, writing, where)
        if problem:
            raise InvalidError(f"slot '{slot.name}': {problem}")
        return arr

    def _set_param(self, param, value: Any) -> None:
        last = self._param_values.get(param.index)
        if last is not None and type(last) is type(value) and last == value:
            return  # bound as the previous call left it (bool, int and float compare by type too)
        self._param_values.pop(param.index, None)
        self._set_param_anew(param, value)
        if type(value) in (int, float):
            self._param_values[param.index] = value

    def _set_param_anew(self, param, value: Any) -> None:
        if type(value) is float:  # the common case, without the ABC checks below
            status = _native.lib.cgraph_set_param_float(self._bindings, param.index, value)
        elif isinstance(value, numbers.Integral):
            status = _native.lib.cgraph_set_param_int(self._bindings, param.index, int(value))
        elif isinstance(value, numbers.Real):
            status = _native.lib.cgraph_set_param_float(self._bindings, param.index, float(value))
        else:
            raise InvalidError(f"param '{param.name}': a {type(value).__name__} is not a number")
        _native.check(status)


def _torch_key(value: Any) -> Any:
    return (value.data_ptr(), value.dtype, value.shape, value.stride(), value.device)


def _key_of(value: Any, key: Any) -> Any:
    """`value`'s layout key by `key` (_layout_key): an interface attribute's name, read
    with getattr (the common numpy case, without a function call), or a function."""
    return getattr(value, key, None) if type(key) is str else key(value)


def _layout_key(value: Any) -> Any:
    """How to read an array's layout key (_key_of): a function of it giving what its binding depends on (address, element type,
    shape, strides, device, writability), cheaper than binding it again; None for objects
    without one. numpy and CuPy: the array interface dict (built anew per access); torch
    tensors, bound through DLPack or the CUDA array interface, whose Python-level
    interfaces cost several microseconds: their data pointer, dtype, shape, strides and
    device (torch tensors are never read-only)."""
    data_ptr = getattr(value, "data_ptr", None)
    if callable(data_ptr) and callable(getattr(value, "stride", None)) and hasattr(value, "dtype"):
        return _torch_key
    for attr in ("__array_interface__", "__cuda_array_interface__"):
        if getattr(value, attr, None) is not None:
            return attr
    return None


def _problem(slot, arr, writing: bool, where: tuple[int, int] = (KDL_CPU, 0)) -> Optional[str]:
    """Why `arr` cannot be bound to `slot` of an executable whose memory is `where`
    ((DLPack device type, ordinal)); None when it can."""
    if where[0] == KDL_CPU and arr.device[0] != KDL_CPU:
        return f"the array is on DLPack device {arr.device}, not in host memory"
    if where[0] == KDL_CUDA:
        if arr.device[0] != KDL_CUDA:
            return f"the array is not in CUDA device memory (DLPack device {arr.device}); the executable is on cuda:{where[1]}"
        if arr.device[1] >= 0 and arr.device[1] != where[1]:
            return f"the array is on cuda:{arr.device[1]}, the executable on cuda:{where[1]}"
    if not arr.contiguous:
        return "the array is not contiguous (numpy.ascontiguousarray makes a copy that is)"
    if slot.element is not None and arr.element != _TYPE_CODES[slot.element]:
        return f"the array's element type is {arr.type_text}, the graph's kernels use {slot.element}"
    if slot.size_varies:
        pass  # the run checks the size its parameter values give
    elif arr.nbytes != slot.size:
        return f"the array has {arr.nbytes} bytes, the slot has {slot.size}"
    if writing and arr.readonly:
        return "the array is read-only, but the graph writes the slot"
    return None


_CU_STREAM_LEGACY = 0x1  # CUDA's handle for the legacy default stream


def _stream_handle(stream: Any) -> int:
    """The CUstream value of a torch / CuPy / CUDA-Python stream or an int; the default
    stream (handle 0, torch's current stream unless one was set) becomes
    CU_STREAM_LEGACY, since a null stream means "no stream" to the library."""
    handle = _raw_stream_handle(stream)
    return handle if handle else _CU_STREAM_LEGACY


def _raw_stream_handle(stream: Any) -> int:
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        value = proto() if callable(proto) else proto
        return int(value[1] if isinstance(value, tuple) else value)
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value
    raise InvalidError(f"a {type(stream).__name__} is not a CUDA stream (it needs cuda_stream, ptr, "
                       "__cuda_stream__, or an int CUstream)")
