"""Collective nodes from Python: the data-parallel example (an all_reduce of the
gradient) as a world of one rank through ``cgraph.Communicator.local()`` trains to
numpy's weights; a graph with collectives needs a communicator; NCCL's entry points
say clearly when NCCL cannot be loaded (the NCCL runs themselves need GPUs:
tests/cuda)."""

import os
import sys

import numpy as np
import pytest

import cgraph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DP = os.path.join(ROOT, "examples", "data-parallel", "graph.json")
sys.path.insert(0, os.path.dirname(DP))
from reference import weights as numpy_weights  # noqa: E402


def test_a_world_of_one_trains_like_numpy():
    graph = cgraph.compile(DP)
    comm = cgraph.Communicator.local()
    assert (comm.rank, comm.size, comm.transport) == (0, 1, "local")
    assert "local rank 0 of 1" in repr(comm)
    exe = graph.finalize("cpu", communicator=comm, collective_timeout=5.0)
    del comm  # the executable keeps its own reference
    for _ in range(20):
        exe.run(rank=0, world=1, batch=32)
    w = np.frombuffer(exe.read("w"), dtype=np.float32)
    assert np.max(np.abs(w - numpy_weights(32, 20))) < 1e-4


def test_collectives_need_a_communicator():
    graph = cgraph.compile(DP)
    with pytest.raises(cgraph.InvalidError, match="no communicator was given"):
        graph.finalize("cpu")


def test_nccl_entry_points_without_nccl():
    try:
        uid = cgraph.nccl_unique_id()
    except cgraph.UnsupportedError as e:
        assert ".so" in str(e)  # names the library it could not load
        with pytest.raises(cgraph.UnsupportedError):
            cgraph.Communicator.nccl(bytes(128), 0, 2)
    else:
        assert isinstance(uid, bytes) and len(uid) == 128
    with pytest.raises(cgraph.InvalidError, match="128 bytes"):
        cgraph.Communicator.nccl(b"short", 0, 1)
    with pytest.raises(cgraph.InvalidError):
        cgraph.Communicator.wrap_nccl(0)
