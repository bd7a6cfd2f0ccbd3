"""Graph descriptions compiled in-process (the description compiler of ``cgc`` as a
library), kernel fusion and saving, over cgraph_graph_compile_*, cgraph_graph_fuse and
cgraph_graph_save."""

from __future__ import annotations

import ctypes
import json
import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Callable, Optional, Union

from . import _native
from ._graph import Graph

PathLike = Union[str, os.PathLike]


class CompileWarning(UserWarning):
    """A warning of the description compiler (``graph.json:3:5: warning: ...``)."""


def _c_strings(items: Iterable[Any]) -> tuple[Any, int]:
    """A ``const char *const *`` array of `items` (paths or strings) and its length."""
    encoded = [os.fsencode(i) if isinstance(i, os.PathLike) else str(i).encode() for i in items]
    array = (ctypes.c_char_p * len(encoded))(*encoded)
    return array, len(encoded)


def _define_list(defines: Union[None, Mapping[str, Any], Iterable[str]]) -> list[str]:
    if defines is None:
        return []
    if isinstance(defines, Mapping):
        return [name if value is None else f"{name}={value}" for name, value in defines.items()]
    if isinstance(defines, (str, bytes)):
        raise TypeError("defines must be a mapping or a sequence of 'NAME[=VALUE]' strings, not a string")
    return [str(d) for d in defines]


def _collector(sink: list[str]) -> Callable[[Any, bytes], None]:
    def record(_user_data: Any, text: bytes) -> None:
        sink.append(text.decode("utf-8", "replace"))

    return _native.DiagnosticFn(record)


def compile(source: Union[PathLike, Mapping[str, Any]], *, include_dirs: Iterable[PathLike] = (),
            allow_dirs: Optional[Iterable[PathLike]] = None,
            defines: Union[None, Mapping[str, Any], Iterable[str]] = None,
            base_dir: Optional[PathLike] = None, cl_std: Optional[str] = None,
            keep_source: bool = False) -> Graph:
    """Compiles a graph description (docs/graph-json.md) into a ``Graph``, the graph that
    ``cgc`` would write to a .cgf file, without running ``cgc``.

    Args:
        source: the path of a ``.json`` description, or the description itself as a dict
            (serialized to JSON; diagnostics then name ``<dict>`` and lines of
            ``json.dumps(source, indent=2)``).
        include_dirs: OpenCL C include directories (``cgc -I``).
        allow_dirs: more directories the description may read files from (``cgc
            --allow-dir``); its own folder (for a dict: `base_dir`) and the include
            directories are always allowed, files elsewhere are refused.
        defines: macros for every OpenCL C file: ``{"N": 4, "FAST": None}`` or
            ``["N=4", "FAST"]``.
        base_dir: for a dict, the directory its relative paths resolve against (default:
            the current directory). Not allowed with a path.
        cl_std: OpenCL C version, ``"CL1.2"`` (default), ``"CL2.0"`` or ``"CL3.0"``.
        keep_source: also store each kernel file's OpenCL C source in the graph.

    Warnings of the compiler are issued as ``CompileWarning``.

    Raises:
        InvalidError (a ValueError): anything wrong in the description or its kernels; the
            message holds every diagnostic, one per line (``graph.json:12:7: error: ...``).
        IoError (an OSError): the description file cannot be read.
        TypeError: `source` is neither a path nor a mapping.
    """
    diagnostics: list[str] = []
    callback = _collector(diagnostics)
    opts = _native.lib.cgraph_compile_options_default()
    keep = []  # the arrays must outlive the call
    for field, items in (("include_dirs", include_dirs), ("allow_dirs", allow_dirs or ()),
                         ("defines", _define_list(defines))):
        array, count = _c_strings(items)
        keep.append(array)
        setattr(opts, field, array)
        setattr(opts, field[:-1] + "_count", count)
    opts.cl_std = cl_std.encode() if cl_std is not None else None
    opts.keep_source = 1 if keep_source else 0
    opts.diagnostic = callback
    handle = ctypes.c_void_p()
    if isinstance(source, Mapping):
        text = json.dumps(source, indent=2).encode()
        opts.source_name = b"<dict>"
        directory = os.fsencode(base_dir if base_dir is not None else os.getcwd())
        status = _native.lib.cgraph_graph_compile_string(text, directory, ctypes.byref(opts), ctypes.byref(handle))
    elif isinstance(source, (str, os.PathLike)):
        if base_dir is not None:
            raise TypeError("base_dir is for a description given as a dict; a file's relative paths "
                            "resolve against its own folder")
        status = _native.lib.cgraph_graph_compile_file(os.fsencode(source), ctypes.byref(opts),
                                                       ctypes.byref(handle))
    else:
        raise TypeError(f"source must be a path or a dict, not {type(source).__name__}")
    _native.check(status)
    for text in diagnostics:
        warnings.warn(text, CompileWarning, stacklevel=2)
    return Graph(handle)


def fuse(graph: Graph, auto: bool = True, *, groups: Iterable[Iterable[str]] = (), max_group: int = 256,
         internalize: Iterable[str] = (), remarks: Optional[list[str]] = None) -> Graph:
    """A new graph: `graph` with chains of kernel nodes fused into single kernels (what
    ``cgfuse`` does). `graph` is not changed.

    Args:
        auto: find and fuse chains of kernel nodes (``cgfuse --auto``).
        groups: explicit groups fused first, each a sequence of kernel node names in
            execution order (``cgfuse --fuse a,b,c``).
        max_group: the most kernels one automatic chain takes (0: no limit).
        internalize: scratch slots: transient slots only fused kernels use, whose
            contents nobody needs; they may become private or local memory.
        remarks: a list that receives the fusion remarks (what was fused, and why the
            rest was not: ``[a,b] refused: local sizes differ: 64 vs 128``).

    A chain the fusion rules refuse stays as it was, so the result may equal the input.

    Raises:
        InvalidError: nothing to fuse (``auto=False`` and no groups), an unknown node or
            slot name, an explicit group that breaks a rule.
    """
    sink: list[str] = [] if remarks is None else remarks
    callback = _collector(sink)
    opts = _native.lib.cgraph_fuse_options_default()
    opts.auto_fuse = 1 if auto else 0
    if max_group < 0:
        raise ValueError(f"max_group must be >= 0, not {max_group}")
    opts.max_group = max_group
    group_texts = [g if isinstance(g, str) else ",".join(g) for g in groups]
    group_array, opts.group_count = _c_strings(group_texts)
    scratch_array, opts.internalize_count = _c_strings([internalize] if isinstance(internalize, str)
                                                        else internalize)
    opts.groups, opts.internalize, opts.remark = group_array, scratch_array, callback
    handle = ctypes.c_void_p()
    _native.check(_native.lib.cgraph_graph_fuse(graph._handle, ctypes.byref(opts), ctypes.byref(handle)))
    return Graph(handle)


def save(graph: Graph, path: PathLike) -> None:
    """Writes `graph` as a .cgf file (a regular file is replaced atomically). Raises
    IoError naming the path (a directory, no permission, a full disk)."""
    _native.check(_native.lib.cgraph_graph_save(graph._handle, os.fsencode(path)))
