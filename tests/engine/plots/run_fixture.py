"""Archives shared by the tests of engine/plots, engine/runinfo and the plot scripts.

One real small run (`python -m engine.search`, budget 40, 2 workers) and one
synthetic archive with invalid and failed children and priced LLM calls are
made once per test session (cached on pytest's session base folder, so every
test module's fixtures that call these helpers share them; see
tests/engine/plots/conftest.py).
"""

from __future__ import annotations

import functools
from pathlib import Path

from tests.conftest import run_cli, small_instances

SMALL_RUN_BUDGET = 40


@functools.cache
def _small_run(base: Path) -> Path:
    folder = base / "shared-small-run"
    folder.mkdir()
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
    (run,) = list((folder / "runs").iterdir())
    return run


@functools.cache
def _synthetic_run(base: Path, n_nodes: int) -> Path:
    from engine.plots.synthetic import synthetic_archive

    folder = base / f"shared-synthetic-{n_nodes}" / "synthetic-run"
    folder.mkdir(parents=True)
    synthetic_archive(folder / "archive.duckdb", n_nodes=n_nodes, seed=3, n_dev=6, n_holdout=2)
    return folder


def shared_small_run(tmp_path_factory) -> Path:
    """The folder of a real finished run (offline mutator, 10-odd nodes, 4 dev instances)."""
    return _small_run(tmp_path_factory.getbasetemp())


def shared_synthetic_run(tmp_path_factory, n_nodes: int = 60) -> Path:
    """The folder of a synthetic finished run: invalid and failed children, failed evaluations, priced
    LLM calls (engine/plots/synthetic.py)."""
    return _synthetic_run(tmp_path_factory.getbasetemp(), n_nodes)
