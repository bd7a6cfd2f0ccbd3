"""Fixtures of the cgraph Python package tests: the saxpy graph compiled at build time
(CGRAPH_TEST_SAXPY, set by tests/python/CMakeLists.txt) and its cpu executable."""

import os

import pytest


@pytest.fixture(scope="session")
def saxpy_path():
    path = os.environ.get("CGRAPH_TEST_SAXPY")
    assert path and os.path.isfile(path), "CGRAPH_TEST_SAXPY must name the compiled saxpy.cgf (run through ctest)"
    return path


@pytest.fixture(scope="session")
def saxpy_exe(saxpy_path):
    import cgraph

    return cgraph.load(saxpy_path).finalize(device="cpu")
