"""GraphBuilder: a graph made in Python, without writing JSON. It mirrors the C++
explicit builder (slots, parameters, kernels, nodes, edges) and the description's
repeat blocks, conditionals and expressions, and writes a graph description
(docs/graph-json.md) that the in-process description compiler turns into a ``Graph``:
the same checks and diagnostics as ``cgc``, the same .cgf when saved."""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Optional, Union

from ._graph import Graph

PathLike = Union[str, os.PathLike]
Size = Union[int, str]  # a number or an expression over integer parameters ("$n * 4")

_NUMPY_TYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "int16": "i16",
                "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
                "uint64": "u64"}


def at(slot: str, offset: Size) -> dict[str, Any]:
    """A slot reference at a byte offset (a number or an expression), where a node takes a
    slot: ``b.add_kernel("k", [n], args=[at("x", 256)])``."""
    return {"slot": slot, "offset": offset}


def local(size: Size) -> dict[str, Any]:
    """The byte size of a ``__local`` pointer argument."""
    return {"local": size}


def typed(type: str, value: Union[int, float, str]) -> dict[str, Any]:
    """A scalar argument of an explicit type (``typed("u64", "$k * 4096")``)."""
    return {type: value}


def _list(value: Union[Size, Sequence[Size], None]) -> Optional[list[Size]]:
    if value is None:
        return None
    if isinstance(value, (int, str)):
        return [value]
    return list(value)


def _data_init(data: Any) -> dict[str, Any]:
    """A slot's embedded contents: a numpy array (its dtype is the type) or bytes."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return {"data": list(bytes(data)), "type": "u8"}
    dtype = getattr(data, "dtype", None)
    if dtype is None or str(dtype) not in _NUMPY_TYPES:
        raise TypeError("slot data must be bytes or a numpy array of a scalar type, "
                        f"not {type(data).__name__}")
    return {"data": data.reshape(-1).tolist(), "type": _NUMPY_TYPES[str(dtype)]}


class GraphBuilder:
    """Builds a graph node by node. Every ``add_*`` appends a node in program order and
    returns its name, for ``after=`` and ``add_edge``; edges also come from slot hazards
    (``edges="both"``, the default, as in a description). Slots are referred to by
    name, parameters as ``"$name"`` (what ``param`` returns), and any integer field may
    be an expression string (``"$n * 4"``, ``"ceil_div($n, 64)"``).

    Nothing is checked until ``build()``: it compiles the description in-process and
    raises ``InvalidError`` (a ValueError) holding every diagnostic, naming the node.

        b = cgraph.GraphBuilder("saxpy")
        b.kernel_source(SAXPY_CL, name="saxpy.cl")
        n = b.param("n", "u32", 1024); a = b.param("a", "f32", 2.0)
        b.slot("x", count=n, type="f32"); b.slot("y", count=n, type="f32")
        b.add_kernel("saxpy", [n], args=["y", "x", a])
        graph = b.build()           # or b.save("saxpy.cgf")

    Not thread-safe: one thread builds; the built Graph is independent of the builder.
    """

    def __init__(self, name: str = "graph", *, edges: str = "both",
                 metadata: Optional[Mapping[str, str]] = None) -> None:
        if edges not in ("both", "infer", "explicit"):
            raise ValueError(f"edges must be 'both', 'infer' or 'explicit', not {edges!r}")
        self._desc: dict[str, Any] = {"name": name, "edges": edges, "kernels": [], "slots": [],
                                      "params": [], "nodes": []}
        if metadata:
            self._desc["metadata"] = dict(metadata)
        self._scopes: list[list[dict[str, Any]]] = [self._desc["nodes"]]  # innermost last
        self._names: dict[str, dict[str, Any]] = {}
        self._counter = 0

    # -- kernels, slots, parameters ------------------------------------------------
    def kernel_source(self, source: str, name: str = "kernels.cl", *,
                      defines: Union[None, Mapping[str, Any], Iterable[str]] = None,
                      include: Iterable[PathLike] = (), cl_std: Optional[str] = None,
                      options: Iterable[str] = ()) -> None:
        """Adds OpenCL C kernels from a source string; `name` names the module (unique per
        graph) and what diagnostics call the file."""
        entry: dict[str, Any] = {"name": name, "source": source}
        self._kernel_options(entry, defines, include, cl_std, options)
        self._desc["kernels"].append(entry)

    def kernel_file(self, path: PathLike, *, defines: Union[None, Mapping[str, Any], Iterable[str]] = None,
                    include: Iterable[PathLike] = (), cl_std: Optional[str] = None,
                    options: Iterable[str] = ()) -> None:
        """Adds the kernels of an OpenCL C (``.cl``) or SPIR-V (``.spv``) file; a relative
        path resolves against ``build(base_dir=...)``."""
        entry: dict[str, Any] = {"file": os.fspath(path)}
        self._kernel_options(entry, defines, include, cl_std, options)
        self._desc["kernels"].append(entry)

    @staticmethod
    def _kernel_options(entry: dict[str, Any], defines, include, cl_std, options) -> None:
        if defines:
            entry["defines"] = dict(defines) if isinstance(defines, Mapping) else list(defines)
        if include:
            entry["include"] = [os.fspath(i) for i in include]
        if cl_std is not None:
            entry["cl_std"] = cl_std
        if options:
            entry["options"] = list(options)

    def slot(self, name: str, *, bytes: Optional[Size] = None, count: Optional[Size] = None,
             type: Optional[str] = None, align: Optional[int] = None, init: Any = None) -> str:
        """Adds a slot and returns its name. Size: `bytes`, or `count` elements of `type`
        (either may be an expression). `init`: None or "external" (bound per submission),
        "transient" (runtime-owned, undefined until written), ``{"fill": v, "type": t}``,
        or embedded contents: a numpy array or bytes."""
        entry: dict[str, Any] = {"name": name}
        for key, value in (("bytes", bytes), ("count", count), ("type", type), ("align", align)):
            if value is not None:
                entry[key] = value
        if init is not None:
            entry["init"] = init if isinstance(init, (str, Mapping)) else _data_init(init)
        self._desc["slots"].append(entry)
        return name

    def param(self, name: str, type: str, default: Union[int, float, None] = None) -> str:
        """Adds a parameter (set per run: ``exe.run(..., name=value)``) and returns its
        reference ``"$name"``."""
        entry: dict[str, Any] = {"name": name, "type": type}
        if default is not None:
            entry["default"] = default
        self._desc["params"].append(entry)
        return "$" + name

    # -- nodes ---------------------------------------------------------------------
    def _add(self, kind: str, node: dict[str, Any], name: Optional[str], after: Iterable[str],
             device: Optional[Size]) -> str:
        if name is None:
            self._counter += 1
            name = f"{kind}_{self._counter}"
        if name in self._names:
            raise ValueError(f"node '{name}' is added twice")
        entry: dict[str, Any] = {"name": name, **node}
        after = [after] if isinstance(after, str) else list(after)
        if after:
            entry["after"] = after
        if device is not None:
            entry["device"] = device
        self._scopes[-1].append(entry)
        self._names[name] = entry
        return name

    def add_kernel(self, kernel: str, global_size: Union[Size, Sequence[Size]], *, args: Sequence[Any] = (),
                   local_size: Union[Size, Sequence[Size], None] = None,
                   offset: Union[Size, Sequence[Size], None] = None, name: Optional[str] = None,
                   after: Iterable[str] = (), device: Optional[Size] = None,
                   alternatives: Iterable[str] = ()) -> str:
        """A kernel launch: `args` one per kernel parameter (a slot name, ``at(...)``, a
        number, ``"$param"`` or an expression, ``typed(...)``, ``local(...)``)."""
        node: dict[str, Any] = {"kernel": kernel, "global": _list(global_size), "args": list(args)}
        if local_size is not None:
            node["local"] = _list(local_size)
        if offset is not None:
            node["offset"] = _list(offset)
        if alternatives:
            node["alternatives"] = list(alternatives)
        return self._add(kernel, node, name, after, device)

    def add_copy(self, src: Any, dst: Any, *, bytes: Optional[Size] = None, name: Optional[str] = None,
                 after: Iterable[str] = (), device: Optional[Size] = None) -> str:
        """Copies `bytes` (default: the rest of `src`) between slot references."""
        op: dict[str, Any] = {"src": src, "dst": dst}
        if bytes is not None:
            op["bytes"] = bytes
        return self._add("copy", {"copy": op}, name, after, device)

    def add_fill(self, dst: Any, value: Union[int, float, Sequence[Union[int, float]]], type: str = "f32", *,
                 bytes: Optional[Size] = None, name: Optional[str] = None, after: Iterable[str] = (),
                 device: Optional[Size] = None) -> str:
        """Fills `bytes` (default: the rest of the slot) with a value or pattern of `type`."""
        op: dict[str, Any] = {"dst": dst, "value": value if isinstance(value, (int, float)) else list(value),
                              "type": type}
        if bytes is not None:
            op["bytes"] = bytes
        return self._add("fill", {"fill": op}, name, after, device)

    def add_host(self, op: str, args: Sequence[Any] = (), *, library: Optional[str] = None,
                 name: Optional[str] = None, after: Iterable[str] = ()) -> str:
        """A host task: a built-in (checksum, print, compare, read_file, write_file) or,
        with `library`, a plugin symbol."""
        node: dict[str, Any] = {"host": op, "args": list(args)}
        if library is not None:
            node["library"] = library
        return self._add(op, node, name, after, None)

    def add_barrier(self, name: Optional[str] = None) -> str:
        """Waits for every node since the previous barrier; every later node waits for it."""
        return self._add("barrier", {"barrier": True}, name, (), None)

    def add_collective(self, kind: str, name: Optional[str] = None, after: Iterable[str] = (),
                       **fields: Any) -> str:
        """A collective node (`kind`: all_reduce, all_gather, reduce_scatter, broadcast,
        send, recv) with the description's fields (``slot=``, ``src=``, ``count=``,
        ``op=``, ``peer=``...); rank and world size are parameters ``$rank``, ``$world``."""
        kinds = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "send", "recv")
        if kind not in kinds:
            raise ValueError(f"unknown collective {kind!r} (expected one of {', '.join(kinds)})")
        return self._add(kind, {kind: dict(fields)}, name, after, None)

    def add_edge(self, before: str, after: str) -> None:
        """`after` starts only when `before` has completed."""
        for n in (before, after):
            if n not in self._names:
                raise ValueError(f"unknown node '{n}'")
        self._names[after].setdefault("after", []).append(before)

    # -- blocks --------------------------------------------------------------------
    @contextlib.contextmanager
    def repeat(self, count: int, var: Optional[str] = None,
               swap: Iterable[Sequence[str]] = ()) -> Iterator[str]:
        """Nodes added inside the ``with`` are templates instantiated `count` times
        (names get ``.i`` appended); yields ``"$var"`` for expressions. `swap`: groups of
        slot names rotated every iteration (a pair is ping-pong)."""
        block: dict[str, Any] = {"repeat": count, "nodes": []}
        if var is not None:
            block["var"] = var
        if swap:
            block["swap"] = [list(group) for group in swap]
        self._scopes[-1].append(block)
        self._scopes.append(block["nodes"])
        try:
            yield "$" + var if var is not None else ""
        finally:
            self._scopes.pop()

    @contextlib.contextmanager
    def if_(self, condition: Any, *, name: Optional[str] = None,
            after: Iterable[str] = ()) -> Iterator[str]:
        """Nodes added inside the ``with`` run once when the u32 `condition` (a slot
        reference) is nonzero. Yields the conditional node's name."""
        with self._conditional("if", condition, None, name, after) as n:
            yield n

    @contextlib.contextmanager
    def while_(self, condition: Any, max_trips: int, *, name: Optional[str] = None,
               after: Iterable[str] = ()) -> Iterator[str]:
        """Nodes added inside the ``with`` run while the u32 `condition` is nonzero, at
        most `max_trips` times (more is a run-time error naming the node)."""
        with self._conditional("while", condition, max_trips, name, after) as n:
            yield n

    @contextlib.contextmanager
    def _conditional(self, kind: str, condition: Any, max_trips: Optional[int], name: Optional[str],
                     after: Iterable[str]) -> Iterator[str]:
        node: dict[str, Any] = {kind: condition, "body": []}
        if max_trips is not None:
            node["max_trips"] = max_trips
        n = self._add(kind, node, name, after, None)
        self._scopes.append(node["body"])
        try:
            yield n
        finally:
            self._scopes.pop()

    # -- output --------------------------------------------------------------------
    def description(self) -> dict[str, Any]:
        """The graph description built so far (a copy; ``json.dump`` it for ``cgc``)."""
        return copy.deepcopy(self._desc)

    def build(self, *, base_dir: Optional[PathLike] = None, **options: Any) -> Graph:
        """Compiles the description into a ``Graph`` (``cgraph.compile``'s `options`:
        include_dirs, allow_dirs, defines, cl_std, keep_source). Raises InvalidError with
        every diagnostic."""
        from ._compile import compile as compile_description

        return compile_description(self._desc, base_dir=base_dir, **options)

    def save(self, path: PathLike, **options: Any) -> Graph:
        """Builds the graph, writes it as a .cgf file and returns it."""
        graph = self.build(**options)
        graph.save(path)
        return graph
