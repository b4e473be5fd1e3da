"""archive_path: what a path a user gives stands for."""

from __future__ import annotations

from archive.store import ARCHIVE_FILE, archive_path


def test_a_run_folder_a_file_and_a_sweeps_cell(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    assert archive_path(run) == run / ARCHIVE_FILE and archive_path(run / ARCHIVE_FILE) == run / ARCHIVE_FILE
    cell = tmp_path / "cell"  # a sweep's cell: its run file beside the one run folder its search made
    (cell / "binpack-hgm-s0-1").mkdir(parents=True)
    (cell / "run.toml").write_text("[search]\n")
    assert archive_path(cell) == cell / ARCHIVE_FILE  # no run made yet: the folder itself (and its error)
    (cell / "binpack-hgm-s0-1" / ARCHIVE_FILE).write_bytes(b"")
    assert archive_path(cell) == cell / "binpack-hgm-s0-1" / ARCHIVE_FILE
    (cell / "binpack-hgm-s0-2").mkdir()
    (cell / "binpack-hgm-s0-2" / ARCHIVE_FILE).write_bytes(b"")
    assert archive_path(cell) == cell / ARCHIVE_FILE  # two runs: not one to stand for
    plain = tmp_path / "runs"  # a folder of runs without a run file is not a cell
    (plain / "r1").mkdir(parents=True)
    (plain / "r1" / ARCHIVE_FILE).write_bytes(b"")
    assert archive_path(plain) == plain / ARCHIVE_FILE
