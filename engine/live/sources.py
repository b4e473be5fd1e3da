"""Which runs the live page shows: the folders given on the command line, looked at again on every request,
so a search started after the server shows up without a restart."""

from __future__ import annotations

from pathlib import Path

from archive import ArchiveError
from archive.store import ARCHIVE_FILE


def is_run(folder: Path) -> bool:
    return (folder / ARCHIVE_FILE).is_file()


def _all_starting(folder: Path) -> bool:
    """Nothing in the folder but empty folders (or nothing at all): runs a search has just begun. A search
    makes its run's folder some 0.1 s before the archive in it, and a page started beside it must not take
    that moment for a folder that is not one of runs."""
    return all(entry.is_dir() and not any(entry.iterdir()) for entry in folder.iterdir())


def check_source(path: Path) -> Path:
    """A run folder (or its archive.duckdb) or a folder of runs, as given; ArchiveError in one line otherwise.
    A folder of runs may still be empty (runs appear when searches start)."""
    if path.is_file() and path.name == ARCHIVE_FILE:
        return path.parent
    if not path.exists():
        raise ArchiveError(f"{path} does not exist (give a run folder or a folder of runs)")
    if not path.is_dir():
        raise ArchiveError(f"{path} is not a run (give a run folder, its {ARCHIVE_FILE}, or a folder of runs)")
    if not is_run(path) and not any(is_run(p) for p in path.iterdir() if p.is_dir()) and not _all_starting(path):
        raise ArchiveError(f"{path} is not a run nor a folder of runs (no {ARCHIVE_FILE} in it or its subfolders)")
    return path


class Sources:
    """The run folders under the given paths, by a short unique name (the folder's name, `-2`... on a clash)."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = list(paths)

    def folders(self) -> list[Path]:
        out: list[Path] = []
        for path in self.paths:
            if is_run(path):
                out.append(path)
            elif path.is_dir():
                out += sorted(p for p in path.iterdir() if p.is_dir() and is_run(p))
        return out

    def runs(self) -> dict[str, Path]:
        named: dict[str, Path] = {}
        for folder in self.folders():
            name, k = folder.name, 1
            while name in named and named[name].resolve() != folder.resolve():
                k += 1
                name = f"{folder.name}-{k}"
            named[name] = folder
        return named

    def find(self, name: str) -> Path | None:
        return self.runs().get(name)
