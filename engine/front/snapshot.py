"""Snapshots of a run from the command line, and a new run that continues one.

    python -m engine.snapshot export runs/<run-id> snapshots/s1     # Parquet, one file per table + manifest.json
    python -m engine.snapshot verify snapshots/s1                   # every file present, every checksum right
    python -m engine.snapshot restore snapshots/s1 --run-dir runs   # the run again, exactly, as an archive
    python -m engine.search --resume-from snapshots/s1 --budget 400 # a new run that continues the tree

The work is in archive/snapshot.py. `open_from_snapshot` is what
`python -m engine.search --resume-from` calls: a new run folder whose archive
holds the snapshot's rows, then the search goes on exactly as `--resume`
does (the tree rebuilt from the archive, `--budget` counting the snapshot's
evaluations too).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.errors import UserError
from engine.front.one_line import OneLineParser
from engine.words import plural

EXIT_USER_ERROR = 2


def open_from_snapshot(args):
    """(archive, task, config) of a new run restored from `args.resume_from`, ready to go on."""
    from archive import Archive
    from archive.snapshot import restore_snapshot, snapshot_run_row, verify_snapshot
    from engine.config import OutputSection, RunConfig
    from engine.config.arguments import refuse_given, resumed_config, settings_kept
    from engine.front.opening import new_run_folder, stored_run_task

    # what a resume keeps, a restored run keeps too; but a new run goes where new runs go (--run-dir, default
    # runs), not beside the original
    why = "cannot be set with --resume-from: the snapshot's run keeps its own"
    refuse_given(args, settings_kept(), why, spare=("run_dir",))
    folder = Path(args.resume_from)
    manifest = verify_snapshot(folder)
    stored = RunConfig.from_dict(snapshot_run_row(folder)["config"])
    config = resumed_config(stored, args).with_overrides(run_dir=args.run_dir or OutputSection().run_dir)
    config.validate()
    run_id, run_folder = new_run_folder(config)
    origin = {"snapshot": str(folder.resolve()), "run_id": manifest["run_id"], "created_at": manifest.get("created_at")}
    restore_snapshot(
        folder, run_folder / "archive.duckdb", run_id=run_id, config={**config.to_dict(), "resumed_from": origin}
    )
    archive = Archive.open(run_folder)
    task = stored_run_task(archive, config)  # reads only: the restore event below is still the first one written
    try:
        archive.add_event("restore", None, {**origin, "rows": {t: e["rows"] for t, e in manifest["tables"].items()}})
    except Exception:
        archive.close()
        raise
    return archive, task, config


# ----- python -m engine.snapshot ---------------------------------------------
PROG = "python -m engine.snapshot"  # `clade snapshot` passes its own name (clade/cli.py)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    from clade.version import add_version_flag

    p = OneLineParser(
        prog=prog,
        description="Snapshots of a run: its archive as Parquet files (one per table) and a "
        "manifest (schema version, run id, row counts, sha256 checksums).",
    )
    add_version_flag(p)
    sub = p.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    export = sub.add_parser("export", intermixed=True, help="write RUN's tables to DEST (a new or empty folder)")
    export.add_argument("run", metavar="RUN", help="a run folder or its archive.duckdb")
    export.add_argument("dest", metavar="DEST", help="the snapshot's folder (must not exist, or be empty)")
    verify = sub.add_parser("verify", help="check that SNAPSHOT is whole: manifest, files, checksums")
    verify.add_argument("snapshot", metavar="SNAPSHOT")
    restore = sub.add_parser(
        "restore", intermixed=True, help="rebuild the snapshot's run exactly, as RUN_DIR/<run-id>/archive.duckdb"
    )
    restore.add_argument("snapshot", metavar="SNAPSHOT")
    restore.add_argument("--run-dir", default="runs", help="where the run folder goes (default: runs)")
    return p


def _export(args) -> None:
    import time

    from archive.snapshot import export_snapshot

    start = time.perf_counter()
    manifest = export_snapshot(args.run, args.dest)
    tables = manifest["tables"]
    print(
        f"Snapshot of {manifest['run_id']} -> {args.dest} in {time.perf_counter() - start:.2f} s: "
        + ", ".join(plural(tables[t]["rows"], t[:-1]) for t in ("nodes", "evaluations", "llm_calls", "events"))
    )
    print(f"Continue it as a new run: clade search --resume-from {args.dest} [--budget N]")


def _verify(args) -> None:
    from archive.snapshot import verify_snapshot

    manifest = verify_snapshot(args.snapshot)
    rows = sum(e["rows"] for e in manifest["tables"].values())
    print(
        f"{args.snapshot}: whole. Run {manifest['run_id']}, schema version {manifest['schema_version']}, "
        f"{plural(len(manifest['tables']), 'table')}, {plural(rows, 'row')}, every checksum matches."
    )


def _restore(args) -> None:
    from archive.snapshot import restore_snapshot, verify_snapshot

    manifest = verify_snapshot(args.snapshot)
    folder = Path(args.run_dir) / manifest["run_id"]
    if folder.exists():
        raise UserError(f"{folder} already exists; refusing to overwrite it (give another --run-dir)")
    restore_snapshot(args.snapshot, folder / "archive.duckdb")
    print(f"Restored {manifest['run_id']} -> {folder / 'archive.duckdb'}")


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args = build_parser(prog).parse_args(argv)
    from archive import ArchiveError
    from archive.errors import is_disk_full
    from engine.errors import no_space

    try:
        {"export": _export, "verify": _verify, "restore": _restore}[args.command](args)
    except (UserError, ArchiveError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        target = args.dest if args.command == "export" else getattr(args, "run_dir", None) or "."
        doing = f"the {args.command}: nothing half-written is left"
        print(f"error: {no_space(Path(target).resolve().parent, doing)}", file=sys.stderr)
        return EXIT_USER_ERROR
    return 0
