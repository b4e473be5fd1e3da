"""The live page's tests share one finished run of a real small search (built once per worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import small_instances
from tests.engine.test_search_e2e import only_run


@pytest.fixture(scope="package")
def run(tmp_path_factory) -> Path:
    """A finished run of a real small search (binpack, budget 12, the offline mutator)."""
    from engine.front.cli import build_parser
    from engine.front.run import run_from_args

    tmp = tmp_path_factory.mktemp("live")
    instances = small_instances(tmp / "instances.json")
    args = build_parser().parse_args(
        [
            "--task",
            "binpack",
            "--budget",
            "12",
            "--instances",
            str(instances),
            "--run-dir",
            str(tmp / "runs"),
            "--sandbox",
            "process",
            "--quiet",
        ]
    )
    assert run_from_args(args) == 0
    return only_run(tmp / "runs")
