"""How the suite's tests share the machine when pytest-xdist runs them on several workers (`-n`, pyproject.toml).

Three rules, all keyed on a test's path so that the test files stay as they are:

- GROUPS: tests that must run on one worker, one after another (xdist's `loadgroup` distribution sends an
  `xdist_group` to a single worker): tests that start, join or stop Ray (`ray stop` ends every Ray on the
  machine, and `ray.init()` joins a cluster another test started), the README's commands (each uses the runs
  the ones before it made, in one module-wide workspace), load-sensitive tests (throughput benchmarks, the
  live readers, headless browsers), and modules whose module-wide fixture builds a run (built once, not
  once on each worker).
- ALONE: tests that run while no other test runs, on any worker: they count every process of the machine
  (a fork bomb must leave nothing), hold a job to a wall-clock bound (jobs that run side by side, a
  timeout close to its limit), or read a running search at the lowest CPU priority. A test takes a shared
  lock for its whole run (its fixtures' setup included), these an exclusive one; a turnstile lets a waiting
  exclusive test in before new shared ones.
- `built_once`: a folder (a finished run) built by one worker and read by all, instead of once per worker.

With `-n 0` (no workers) the rules change nothing: one process runs every test in turn.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

TURNS_ENV = "CLADE_TEST_TURNS"  # the folder of the lock files the workers share, set by the controller

GROUPS: dict[str, str] = {
    "tests/engine/test_ray_cluster.py": "ray",
    "tests/test_readme_cluster.py": "ray",
    "tests/engine/test_search_ray.py": "ray",
    "tests/engine/sandbox/test_ray_executor.py": "ray",
    "tests/engine/test_gateway.py::test_a_local_ray_worker_reaches_the_gateway": "ray",
    "tests/scripts/test_bench_cluster.py": "ray",
    "tests/engine/sweep/test_ray_cells.py": "ray",
    "tests/engine/sweep/test_sweep_clusters.py::test_cells_as_ray_tasks_give_the_local_table": "ray",
    "tests/engine/sweep/test_sweep_clusters.py::test_cells_as_slurm_jobs_give_the_local_table": "slurm",
    "tests/engine/sweep/test_slurm_cells.py": "slurm",
    "tests/engine/test_search_slurm.py": "slurm",  # its module-wide fixture may start a Slurm: once, on one worker
    "tests/test_readme.py": "readme",
    "tests/scripts/test_bench_live.py": "load",
    "tests/scripts/test_bench_sandbox.py": "load",
    "tests/engine/test_live_readers.py": "load",
    "tests/engine/test_reader_priority.py": "load",
    "tests/engine/live/test_live_browser.py": "load",
    "tests/scripts/test_report.py": "load",
    "tests/scripts/test_plot_arena.py": "plot_arena",
    "tests/engine/test_newcomer.py": "newcomer",
    "tests/engine/test_snapshot.py": "snapshot",
    "tests/engine/live/test_live_page.py": "live_page",
    "tests/test_docs_site.py": "docs_site",  # its module-wide fixture builds the site: once, on one worker
}

ALONE: tuple[str, ...] = (
    "tests/engine/sandbox/test_bwrap.py::test_fork_bomb_is_contained",
    "tests/engine/sandbox/test_bwrap.py::test_jobs_run_concurrently",
    "tests/engine/sandbox/test_bwrap.py::test_timeout_kills_everything",
    "tests/engine/sandbox/test_containment.py::test_fork_bomb_is_capped_and_leaves_nothing",
    "tests/engine/sandbox/test_containment.py::test_cancellation_kills_the_job_and_removes_the_directory",
    "tests/engine/sandbox/test_process.py::test_jobs_run_concurrently",
    "tests/engine/sandbox/test_process.py::test_infinite_loop_times_out_close_to_the_limit",
    "tests/engine/front/test_cli.py::test_help_is_fast_and_imports_nothing_heavy",
    # readers of a running search yield the CPU to everything else (autogroup nice 19): beside another worker
    # they would wait minutes for their share, or read too late (bench_live counts their requests)
    "tests/engine/test_live_readers.py",
    "tests/engine/live/test_live_browser.py",
    "tests/engine/test_reader_priority.py",
    "tests/scripts/test_bench_live.py",
)


def _matches(nodeid: str, key: str) -> bool:
    """A key names a file (every test in it) or a test (every parametrization of it)."""
    return nodeid == key or nodeid.startswith(key + "::") or nodeid.startswith(key + "[")


def group_of(nodeid: str) -> str | None:
    return next((group for key, group in GROUPS.items() if _matches(nodeid, key)), None)


def runs_alone(nodeid: str) -> bool:
    return any(_matches(nodeid, key) for key in ALONE)


def configure(config: pytest.Config) -> None:
    """The `alone` marker; in the controller (or a run without xdist), the folder of the workers' locks."""
    config.addinivalue_line("markers", "alone: runs while no other test runs (tests/parallel.py)")
    if hasattr(config, "workerinput"):  # a worker: it uses its controller's folder
        return
    folder, before = tempfile.mkdtemp(prefix="clade-test-turns-"), os.environ.get(TURNS_ENV)
    os.environ[TURNS_ENV] = folder  # the workers it starts inherit it

    def cleanup() -> None:
        shutil.rmtree(folder, ignore_errors=True)
        if before is None:
            os.environ.pop(TURNS_ENV, None)
        else:
            os.environ[TURNS_ENV] = before

    config.add_cleanup(cleanup)


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups (and renames the tests after them)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        group = group_of(item.nodeid)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
        if runs_alone(item.nodeid):
            item.add_marker(pytest.mark.alone)


@contextlib.contextmanager
def _turn(folder: Path, alone: bool) -> Iterator[None]:
    with open(folder / "turnstile", "a") as gate, open(folder / "room", "a") as room:
        fcntl.flock(gate, fcntl.LOCK_EX)
        if alone:
            fcntl.flock(room, fcntl.LOCK_EX)  # waits for the tests inside; none new comes in past the gate
            fcntl.flock(gate, fcntl.LOCK_UN)
        else:
            fcntl.flock(gate, fcntl.LOCK_UN)
            fcntl.flock(room, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(room, fcntl.LOCK_UN)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Each test (setup, call, teardown) inside its turn, when xdist runs it beside other tests."""
    folder = os.environ.get(TURNS_ENV)
    if folder is None or "PYTEST_XDIST_WORKER" not in os.environ:
        return (yield)
    with _turn(Path(folder), item.get_closest_marker("alone") is not None):
        return (yield)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `build(folder)` once for the whole test session: under xdist, by the
    first worker that asks (the others wait for it), in the base folder the workers share."""
    base = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        base = base.parent  # pytest-of-<user>/pytest-<n>/, above each worker's popen-gw<k>/
    return _built_once(base, name, build)


@functools.cache
def _built_once(base: Path, name: str, build: Callable[[Path], None]) -> Path:
    folder, done = base / name, base / f"{name}.done"
    with open(base / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)  # a worker that failed half-way
                folder.mkdir()
                build(folder)
                done.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


def is_venv(folder: str | Path) -> bool:
    """A virtual environment (a user's `.venv` inside the checkout): not the project's files."""
    return (Path(folder) / "pyvenv.cfg").is_file()
