"""Memory planning through the Python package: transient slots of the batch-sized MLP
(examples/mlp/mlp_batch.json) share memory, the results equal an unplanned executable's
at every batch size, and transient slots cannot be read (their memory is shared)."""

import os
import subprocess

import numpy as np
import pytest

import cgraph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def mlp_batch(tmp_path_factory):
    cgc = os.environ.get("CGC")
    assert cgc and os.path.isfile(cgc), "CGC must name the built cgc (run through ctest)"
    out = tmp_path_factory.mktemp("plan") / "mlp_batch.cgf"
    subprocess.run([cgc, os.path.join(ROOT, "examples", "mlp", "mlp_batch.json"), "-o", str(out)], check=True)
    return cgraph.load(out)


def inputs(batch, rng):
    f = lambda *shape: rng.standard_normal(shape, dtype=np.float32) * 0.05
    return dict(x=f(batch, 512), w1=f(512, 2048), b1=f(2048), w2=f(2048, 512), b2=f(512), wc=f(512, 256), bc=f(256))


def test_planned_and_unplanned_runs_agree(mlp_batch):
    planned = mlp_batch.finalize("cpu")
    unplanned = mlp_batch.finalize("cpu", plan_memory=False)
    rng = np.random.default_rng(3)
    for batch in (48, 16, 64):
        args = inputs(batch, rng)
        results = []
        for exe in (planned, unplanned):
            probs = np.zeros((batch, 256), dtype=np.float32)
            logits = np.zeros((batch, 256), dtype=np.float32)
            exe.run(**args, probs=probs, logits_out=logits, batch=batch)
            results.append((probs, logits))
        np.testing.assert_array_equal(results[0][0], results[1][0])
        np.testing.assert_array_equal(results[0][1], results[1][1])
        assert np.isfinite(results[0][0]).all() and (results[0][0] > 0).all()
    on, off = planned.memory, unplanned.memory
    assert on["plan_slots"] == 4 and off["plan_slots"] == 0
    assert on["plan_bytes_after"] < on["plan_bytes_before"]
    assert on["owned_bytes"] < off["owned_bytes"]


def test_a_transient_slot_cannot_be_read(mlp_batch):
    exe = mlp_batch.finalize("cpu")
    with pytest.raises(cgraph.UnsupportedError, match="transient"):
        exe.read("h")


def test_a_slot_sized_by_parameters_takes_the_runs_size(mlp_batch):
    exe = mlp_batch.finalize("cpu")
    assert exe.slots[mlp_batch.slot("x").index].size_varies
    assert not exe.slots[mlp_batch.slot("w1").index].size_varies
    args = inputs(8, np.random.default_rng(1))
    probs = np.zeros((8, 256), dtype=np.float32)
    exe.run(**args, probs=probs, logits_out=np.zeros((8, 256), np.float32), batch=8)
    assert np.isfinite(probs).all()
    with pytest.raises(cgraph.InvalidError, match="slot 'x'"):
        exe.run(**args, probs=probs, logits_out=np.zeros((8, 256), np.float32), batch=9)
