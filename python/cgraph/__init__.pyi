# Type stubs of the public cgraph API (the implementation is in the _*.py modules).
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Union

__version__: str
LIBRARY_PATH: str

class Error(Exception):
    code: int
    message: str
    def __init__(self, message: str, code: Optional[int] = ...) -> None: ...

class InvalidError(Error, ValueError): ...
class OutOfMemoryError(Error, MemoryError): ...
class DeviceLostError(Error, RuntimeError): ...
class UnsupportedError(Error, RuntimeError): ...
class IoError(Error, OSError): ...
class WaitTimeoutError(Error, TimeoutError): ...
class InternalError(Error, RuntimeError): ...
class CompileWarning(UserWarning): ...

@dataclass(frozen=True)
class Device:
    index: int
    spec: str
    backend: str
    name: str
    vendor: str
    memory_bytes: int
    compute_units: int
    host_memory: bool

DeviceLike = Union[str, int, Device]

def devices() -> list[Device]: ...

class Buffer:
    device: Device
    size: int
    def __init__(self, device: DeviceLike, size: int) -> None: ...
    def write(self, data: Any, offset: int = ...) -> None: ...
    def read(self, out: Any = ..., offset: int = ..., size: Optional[int] = ...) -> Any: ...

@dataclass(frozen=True)
class Slot:
    index: int
    name: str
    size: int
    alignment: int
    element: Optional[str]
    external: bool
    read: bool
    written: bool
    size_varies: bool = ...

@dataclass(frozen=True)
class Param:
    index: int
    name: str
    type: str
    default: Union[int, float]

class Graph:
    name: str
    slots: tuple[Slot, ...]
    params: tuple[Param, ...]
    node_count: int
    def slot(self, name: str) -> Slot: ...
    def fuse(self, auto: bool = ..., *, groups: Iterable[Iterable[str]] = ..., max_group: int = ...,
             internalize: Iterable[str] = ..., remarks: Optional[list[str]] = ...) -> Graph: ...
    def save(self, path: Union[str, os.PathLike[str]]) -> None: ...
    def finalize(self, device: DeviceLike = ..., mode: str = ..., cache: bool = ...,
                 base_dir: Optional[Union[str, os.PathLike[str]]] = ...,
                 plan_memory: bool = ...) -> Executable: ...

class Event:
    def wait(self) -> None: ...
    @property
    def done(self) -> bool: ...

class Executable:
    name: str
    slots: tuple[Slot, ...]
    params: tuple[Param, ...]
    device: Device
    mode: str
    @property
    def memory(self) -> dict[str, int]: ...
    def run(self, **arguments: Any) -> None: ...
    def enqueue(self, **arguments: Any) -> Event: ...
    def enqueue_on_stream(self, stream: Any, **arguments: Any) -> Event: ...
    def bound_address(self, slot: str) -> Optional[int]: ...
    def read(self, slot: str, out: Any = ...) -> Any: ...
    def write(self, slot: str, data: Any) -> None: ...

def load(path: Union[str, os.PathLike[str]]) -> Graph: ...
def compile(source: Union[str, os.PathLike[str], Mapping[str, Any]], *,
            include_dirs: Iterable[Union[str, os.PathLike[str]]] = ...,
            allow_dirs: Optional[Iterable[Union[str, os.PathLike[str]]]] = ...,
            defines: Union[None, Mapping[str, Any], Iterable[str]] = ...,
            base_dir: Optional[Union[str, os.PathLike[str]]] = ...,
            cl_std: Optional[str] = ..., keep_source: bool = ...) -> Graph: ...
def fuse(graph: Graph, auto: bool = ..., *, groups: Iterable[Iterable[str]] = ..., max_group: int = ...,
         internalize: Iterable[str] = ..., remarks: Optional[list[str]] = ...) -> Graph: ...
def loads(data: bytes) -> Graph: ...
