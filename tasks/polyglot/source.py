"""Where Polyglot's exercises come from: a copy the user names, else a cache filled from the pinned commit.

The exercises are Exercism's (MIT licence), selected by Aider in Aider-AI/polyglot-benchmark; Clade carries
none of them. As DGM's and Aider's harnesses do, it fetches that repository at one pinned commit: the
archive GitHub serves for the commit, unpacked into `<cache>/polyglot/<commit>/` and verified against
the digest of that commit's tree (every file's path and bytes) before it is used. `CLADE_POLYGLOT_DIR`
names a copy the user already has (a clone or an unpacked archive; its layout is checked, its bytes are
the user's business); `CLADE_POLYGLOT_URL` replaces the download address (a mirror, or a local file).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from engine.errors import UserError
from tasks.polyglot.exercises import LANGUAGES

REPOSITORY = "Aider-AI/polyglot-benchmark"
COMMIT = "7e0611e77b54e2dea774cdc0aa00cf9f7ed6144f"
URL = f"https://github.com/{REPOSITORY}/archive/{COMMIT}.tar.gz"
# sha256 over every file of the commit's tree, in path order: "<path>\0<sha256 of its bytes>\n" (tree_digest)
TREE_DIGEST = "e40e8d29b1b63bd339bf3de8cf3257755effddd40d9478bf2aceb7970724edb8"
DIR_VARIABLE = "CLADE_POLYGLOT_DIR"
URL_VARIABLE = "CLADE_POLYGLOT_URL"
VERIFIED = ".clade-verified"  # written into a fetched copy once its digest matched
_DOWNLOAD_TIMEOUT_S = 60


def cache_root(environ: dict[str, str] | None = None) -> Path:
    """Clade's cache folder: $CLADE_CACHE_DIR, else $XDG_CACHE_HOME/clade, else ~/.cache/clade."""
    env = os.environ if environ is None else environ
    if env.get("CLADE_CACHE_DIR"):
        return Path(env["CLADE_CACHE_DIR"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "clade"


def fetched_dir(environ: dict[str, str] | None = None) -> Path:
    return cache_root(environ) / "polyglot" / COMMIT


def tree_digest(root: Path) -> str:
    """The digest of every regular file under `root`: paths relative to it, bytes hashed, in path order."""
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != VERIFIED)
    for path in files:
        digest.update(
            f"{path.relative_to(root).as_posix()}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode()
        )
    return digest.hexdigest()


def layout_problem(root: Path) -> str | None:
    """Why `root` is not a copy of the benchmark (one line), or None when it looks like one."""
    if not root.is_dir():
        return f"{root} is not a folder"
    missing = [lang for lang in LANGUAGES if not (root / lang / "exercises" / "practice").is_dir()]
    if missing:
        return f"{root} has no {missing[0]}/exercises/practice (not a copy of {REPOSITORY})"
    return None


def exercises_dir(fetch: bool = True, say: Callable[[str], None] | None = None) -> Path:
    """The benchmark's root folder: $CLADE_POLYGLOT_DIR, else the verified cache (fetched now if `fetch`).

    UserError (one line) when the named copy is not one, or when there is none and it cannot be fetched."""
    named = os.environ.get(DIR_VARIABLE)
    if named:
        root = Path(named).expanduser()
        problem = layout_problem(root)
        if problem:
            raise UserError(f"{DIR_VARIABLE}: {problem}")
        return root
    root = fetched_dir()
    if (root / VERIFIED).is_file():
        return root
    if not fetch:
        raise UserError(f"the Polyglot exercises are not fetched: run `clade data fetch polyglot` (into {root})")
    return fetch_exercises(say=say)


def fetch_exercises(url: str | None = None, say: Callable[[str], None] | None = None) -> Path:
    """Download the pinned commit's archive, check its digest, and move it into the cache; the folder.

    UserError (one line) when the download fails (with what to do offline) or the digest differs."""
    url = url or os.environ.get(URL_VARIABLE) or URL
    target = fetched_dir()
    if say:
        say(f"fetching the Polyglot exercises ({REPOSITORY} at {COMMIT[:12]}) from {url}")
    data = _download(url)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".fetch-", dir=target.parent))
    try:
        root = _unpack(data, scratch, url)
        digest = tree_digest(root)
        if digest != TREE_DIGEST:
            raise UserError(
                f"the archive from {url} is not {REPOSITORY} at {COMMIT[:12]} (its files' digest is {digest[:16]}, "
                f"expected {TREE_DIGEST[:16]}); nothing was kept"
            )
        (root / VERIFIED).write_text(digest + "\n", encoding="ascii")
        if target.exists():
            shutil.rmtree(target)
        root.rename(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if say:
        say(f"the Polyglot exercises are in {target} (verified)")
    return target


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response:  # noqa: S310 - http(s) or file
            return response.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise UserError(
            f"could not fetch the Polyglot exercises from {url} ({reason}); without network, copy {REPOSITORY} at "
            f"commit {COMMIT} to a folder (git clone, or its archive unpacked) and set {DIR_VARIABLE}=that folder"
        ) from None


def _unpack(data: bytes, scratch: Path, url: str) -> Path:
    """The archive's single top folder (GitHub's `<name>-<commit>/`), unpacked into `scratch`."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            archive.extractall(scratch, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise UserError(f"the archive from {url} cannot be unpacked ({exc}); nothing was kept") from None
    tops = [p for p in scratch.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise UserError(f"the archive from {url} does not hold one top folder as GitHub's archives do")
    return tops[0]
