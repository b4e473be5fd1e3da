"""Reading a user's agent (`--agent PATH`) into a node's file set."""

from __future__ import annotations

from pathlib import Path

from engine.errors import UserError

MAX_FILES = 200
MAX_BYTES = 2 * 2**20


def load_agent(path: str, entry_file: str) -> dict[str, str]:
    """A file becomes the task's entry file; a folder's text files keep their relative paths
    and must include the entry file."""
    p = Path(path)
    if p.is_file():
        return {entry_file: _read(p)}
    if not p.is_dir():
        raise UserError(f"--agent {path}: no such file or folder")
    files: dict[str, str] = {}
    total = 0
    for f in sorted(p.rglob("*")):
        if not f.is_file() or any(part.startswith(".") or part == "__pycache__" for part in f.relative_to(p).parts):
            continue
        if len(files) >= MAX_FILES:
            raise UserError(f"--agent {path}: more than {MAX_FILES} files")
        text = _read(f)
        total += len(text)
        if total > MAX_BYTES:
            raise UserError(f"--agent {path}: more than {MAX_BYTES // 2**20} MiB of files")
        files[f.relative_to(p).as_posix()] = text
    if entry_file not in files:
        raise UserError(f"--agent {path}: the folder has no {entry_file}, the task's entry file")
    return files


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"--agent: {path} is not a UTF-8 text file") from None
    except OSError as exc:
        raise UserError(f"--agent: cannot read {path}: {exc.strerror}") from None
