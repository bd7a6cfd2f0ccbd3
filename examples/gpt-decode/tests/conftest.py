"""Fixtures of the gpt-decode tests: the small config's weights, its description compiled
by the cgc of the build (CGC, set by examples/gpt-decode/CMakeLists.txt) and the devices."""

import os
import subprocess
import sys

import pytest

EXAMPLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, EXAMPLE)

import make_weights  # noqa: E402
import model  # noqa: E402


def tool(var):
    path = os.environ.get(var)
    assert path and os.path.isfile(path), f"{var} must name the built tool (run through ctest)"
    return path


@pytest.fixture(scope="session")
def cfg():
    return model.get("small")


@pytest.fixture(scope="session")
def weights(cfg):
    return make_weights.make(cfg, seed=0)


@pytest.fixture(scope="session")
def small_cgf(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cgf") / "small.cgf")
    subprocess.run([tool("CGC"), os.path.join(EXAMPLE, "small.json"), "-o", out], check=True)
    return out


@pytest.fixture(scope="session")
def small_f16_cgf(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cgf") / "small_f16.cgf")
    subprocess.run([tool("CGC"), os.path.join(EXAMPLE, "small_f16.json"), "-o", out], check=True)
    return out


def device_spec(backend):
    """The first device of `backend`, or a visible skip when this machine has none."""
    import cgraph

    found = [d.spec for d in cgraph.devices() if d.backend == backend]
    if not found:
        pytest.skip(f"no {backend} device in cgraph.devices() on this machine")
    return found[0]
