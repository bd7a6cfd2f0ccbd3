"""Communicators: the ranks that collective nodes (all_reduce, all_gather, ...) run across.

    comm = cgraph.Communicator.local()                        # one rank, cpu
    comm = cgraph.Communicator.from_torch()                   # torch.distributed's ranks, cuda
    exe = graph.finalize("cuda:0", communicator=comm)
    exe.run(..., rank=comm.rank, world=comm.size)

A communicator is bound at finalize; executables keep it alive. Every rank must
finalize the same collectives (the ranks compare them at finalize).
"""

from __future__ import annotations

import ctypes
from typing import Optional

from . import _native

UNIQUE_ID_BYTES = 128


def nccl_unique_id() -> bytes:
    """A new NCCL unique id (128 bytes), made by rank 0 and given to every rank.

    Raises:
        UnsupportedError: libnccl.so.2 or a CUDA driver cannot be loaded.
    """
    buf = ctypes.create_string_buffer(UNIQUE_ID_BYTES)
    _native.check(_native.lib.cgraph_nccl_unique_id(buf))
    return buf.raw


class Communicator:
    """A rank's handle on its world. Create with ``local``, ``nccl``, ``wrap_nccl`` or
    ``from_torch``."""

    def __init__(self, handle: ctypes.c_void_p):
        self._handle = handle
        rank, world, name = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_char_p()
        _native.check(_native.lib.cgraph_communicator_info(handle, ctypes.byref(rank), ctypes.byref(world),
                                                           ctypes.byref(name)))
        self.rank: int = rank.value
        self.size: int = world.value
        self.transport: str = name.value.decode()

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _native.lib.cgraph_communicator_release(handle)
            self._handle = None

    def __repr__(self) -> str:
        return f"<cgraph.Communicator {self.transport} rank {self.rank} of {self.size}>"

    @classmethod
    def local(cls) -> "Communicator":
        """A world of one rank (every collective copies): for the cpu backend."""
        h = ctypes.c_void_p()
        _native.check(_native.lib.cgraph_communicator_local(ctypes.byref(h)))
        return cls(h)

    @classmethod
    def nccl(cls, unique_id: bytes, rank: int, world: int, device: int = 0,
             timeout: float = 60.0) -> "Communicator":
        """Joins an NCCL world as `rank` of `world` on CUDA device `device` (the device
        the executables use). Blocks until every rank joined.

        Raises:
            InvalidError: an id that is not 128 bytes, a rank outside the world.
            WaitTimeoutError: the world did not form within `timeout` seconds.
            UnsupportedError: NCCL or a CUDA driver cannot be loaded.
        """
        if not isinstance(unique_id, (bytes, bytearray)) or len(unique_id) != UNIQUE_ID_BYTES:
            from ._errors import InvalidError
            raise InvalidError(f"an NCCL unique id is {UNIQUE_ID_BYTES} bytes", 1)
        h = ctypes.c_void_p()
        _native.check(_native.lib.cgraph_communicator_nccl(bytes(unique_id), rank, world, device,
                                                           int(timeout * 1000), ctypes.byref(h)))
        return cls(h)

    @classmethod
    def wrap_nccl(cls, nccl_comm: int) -> "Communicator":
        """A communicator over an ``ncclComm_t`` the caller made (its address as an
        int) and keeps; destroy it only after every executable using it is gone."""
        h = ctypes.c_void_p()
        _native.check(_native.lib.cgraph_communicator_wrap_nccl(ctypes.c_void_p(nccl_comm), ctypes.byref(h)))
        return cls(h)

    @classmethod
    def from_torch(cls, group=None, device: Optional[int] = None, timeout: float = 60.0) -> "Communicator":
        """An NCCL world with torch.distributed's ranks (`group`, default the whole
        world): rank 0's unique id goes to the others by
        ``torch.distributed.broadcast_object_list``; the device defaults to
        ``torch.cuda.current_device()``."""
        import torch
        import torch.distributed as dist
        rank, world = dist.get_rank(group), dist.get_world_size(group)
        box = [nccl_unique_id() if rank == 0 else None]
        src = dist.get_global_rank(group, 0) if group is not None else 0
        dist.broadcast_object_list(box, src=src, group=group)
        if device is None:
            device = torch.cuda.current_device()
        return cls.nccl(box[0], rank, world, device, timeout)
