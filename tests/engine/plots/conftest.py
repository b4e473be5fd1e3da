"""Fixtures of the plot tests: archives made once per session (tests/engine/plots/run_fixture.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.plots.run_fixture import shared_small_run, shared_synthetic_run


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Path:
    return shared_small_run(tmp_path_factory)


@pytest.fixture(scope="session")
def synthetic_run(tmp_path_factory) -> Path:
    return shared_synthetic_run(tmp_path_factory, 60)


@pytest.fixture(scope="session")
def large_synthetic_run(tmp_path_factory) -> Path:
    """400 nodes: large enough that small nodes fade."""
    return shared_synthetic_run(tmp_path_factory, 400)
