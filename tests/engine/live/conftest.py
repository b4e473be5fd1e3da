"""The live page's tests share one finished run of a real small search, built once for the whole session
(by the first xdist worker that asks: tests/parallel.py's `built_once`); every test only reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import small_instances
from tests.engine.test_search_e2e import only_run
from tests.parallel import built_once


def _build(folder: Path) -> None:
    from engine.front.cli import build_parser
    from engine.front.run import run_from_args

    instances = small_instances(folder / "instances.json")
    args = build_parser().parse_args(
        [
            "--task",
            "binpack",
            "--budget",
            "12",
            "--instances",
            str(instances),
            "--run-dir",
            str(folder / "runs"),
            "--sandbox",
            "process",
            "--quiet",
        ]
    )
    assert run_from_args(args) == 0


@pytest.fixture(scope="session")
def run(tmp_path_factory) -> Path:
    """A finished run of a real small search (binpack, budget 12, the offline mutator)."""
    return only_run(built_once(tmp_path_factory, "live-page-run", _build) / "runs")
