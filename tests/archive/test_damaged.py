"""A damaged archive or snapshot is named as damaged, with what the user can do, by every command that opens it;
a file of another kind is still "not an archive". Damage as it happens: a file cut short (a disk that filled, a
copy that stopped), cut to nothing, a Parquet file of a snapshot cut in half."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import clade
from archive import Archive, ArchiveDamaged, ArchiveError
from tests.conftest import REPO
from tests.engine.plots.run_fixture import shared_small_run

DAMAGED = "is a damaged archive: DuckDB cannot read all of it"
WHAT_TO_DO = "restore the run from a snapshot if one was exported (clade snapshot restore SNAPSHOT FOLDER)"


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    return shared_small_run(tmp_path_factory)


def cut_copy(run: Path, where: Path, fraction: float) -> Path:
    """A copy of the run's folder whose archive keeps only the first `fraction` of its bytes."""
    shutil.copytree(run, where)
    file = where / "archive.duckdb"
    os.truncate(file, int(file.stat().st_size * fraction))
    return where


def command(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="300")
    return subprocess.run([sys.executable, "-m", "clade", *args], cwd=REPO, env=env, capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("fraction", [0.0, 0.02, 0.5, 0.9])
def test_a_cut_archive_is_named_damaged_with_what_to_do(real_run, tmp_path, fraction):
    run = cut_copy(real_run, tmp_path / "cut", fraction)
    for args in (["runs", "show", str(run)], ["runs", "sql", str(run), "SELECT 1"], ["search", "--resume", str(run)]):
        done = command(*args)
        assert done.returncode == 2, (args, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith(f"error: {run / 'archive.duckdb'} {DAMAGED}") and WHAT_TO_DO in line, line
    with pytest.raises(clade.UserError, match=DAMAGED):
        clade.open_run(run).nodes()


def test_the_archive_class_says_damaged_and_other_files_are_no_archive(real_run, tmp_path):
    run = cut_copy(real_run, tmp_path / "cut", 0.5)
    with pytest.raises(ArchiveDamaged, match=WHAT_TO_DO.replace("(", r"\(").replace(")", r"\)")):
        Archive.open(run, read_only=True)
    other = tmp_path / "other" / "archive.duckdb"
    other.parent.mkdir()
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    with pytest.raises(ArchiveError, match="is not a Clade archive") as raised:
        Archive.open(other.parent, read_only=True)
    assert not isinstance(raised.value, ArchiveDamaged)


def test_a_snapshot_with_a_cut_parquet_file_is_damaged(real_run, tmp_path):
    snapshot = tmp_path / "snap"
    assert command("snapshot", "export", str(real_run), str(snapshot)).returncode == 0
    table = snapshot / "evaluations.parquet"
    os.truncate(table, table.stat().st_size // 2)
    for args in (["snapshot", "verify", str(snapshot)], ["snapshot", "restore", str(snapshot)]):
        done = command(*args)
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert f"{snapshot} is damaged: evaluations.parquet does not match its sha256" in line
        assert "export the run again (clade snapshot export RUN NEW_FOLDER)" in line
