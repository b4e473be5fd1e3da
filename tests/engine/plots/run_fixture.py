"""Archives shared by the tests of engine/plots, engine/runinfo and the plot scripts.

One real small run (`python -m engine.search`, budget 40, 2 workers) and one
synthetic archive with invalid and failed children and priced LLM calls are
made once per test session (in pytest's session base folder, shared by every
test module's fixtures that call these helpers, and by every xdist worker:
tests/parallel.py's `built_once`; see tests/engine/plots/conftest.py).
"""

from __future__ import annotations

import functools
from pathlib import Path

from tests.conftest import run_cli, small_instances
from tests.parallel import built_once

SMALL_RUN_BUDGET = 40


def _build_small_run(folder: Path) -> None:
    instances = small_instances(folder / "instances.json")
    out = run_cli(
        "--budget",
        str(SMALL_RUN_BUDGET),
        "--workers",
        "2",
        "--sandbox",
        "process",
        "--quiet",
        "--instances",
        str(instances),
        "--run-dir",
        str(folder / "runs"),
        timeout=240,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _build_synthetic_run(n_nodes: int, folder: Path) -> None:
    from engine.plots.synthetic import synthetic_archive

    run = folder / "synthetic-run"
    run.mkdir()
    synthetic_archive(run / "archive.duckdb", n_nodes=n_nodes, seed=3, n_dev=6, n_holdout=2)


def shared_small_run(tmp_path_factory) -> Path:
    """The folder of a real finished run (offline mutator, 10-odd nodes, 4 dev instances)."""
    (run,) = list((built_once(tmp_path_factory, "shared-small-run", _build_small_run) / "runs").iterdir())
    return run


def shared_synthetic_run(tmp_path_factory, n_nodes: int = 60) -> Path:
    """The folder of a synthetic finished run: invalid and failed children, failed evaluations, priced
    LLM calls (engine/plots/synthetic.py)."""
    build = functools.partial(_build_synthetic_run, n_nodes)
    return built_once(tmp_path_factory, f"shared-synthetic-{n_nodes}", build) / "synthetic-run"
