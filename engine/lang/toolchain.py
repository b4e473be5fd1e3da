"""A language's compiler as the user installed it: found on the engine's PATH at run start, with what it needs.

Rust is installed with rustup more often than from Debian, Go is unpacked in
/usr/local/go or ~/sdk, gfortran comes from conda or a `module load`: the
compiler a user runs is the first one on their PATH, wherever that is. At run
start `find_toolchain` looks the language's compiler up there (g++, gcc,
rustc, go, gfortran, julia), follows its symlinks, and asks it what else it
reads:

- rustup's `rustc` in `~/.cargo/bin` is a proxy: it reads `RUSTUP_HOME`
  (`settings.toml` and the toolchain it picks, `rustc --print sysroot`) and
  `CARGO_HOME`; a job's HOME is its own folder, so those are passed by name,
  and the toolchain rustup picked at run start is pinned (`RUSTUP_TOOLCHAIN`),
  with `RUSTUP_AUTO_INSTALL=0` (a proxy that may install first writes to
  `RUSTUP_HOME`);
- Go reads its `GOROOT` (`go env GOROOT`);
- any other compiler outside the system's directories reads its own prefix
  (`/opt/julia-1.10` for `/opt/julia-1.10/bin/julia`, a conda environment),
  and the entries of `LD_LIBRARY_PATH` inside it (what a `module load` sets
  for its libraries) are passed on.

The sandboxes use the result: `bwrap` binds `binds` read-only at the same
paths (the job's PATH is the engine's, so the same compiler comes first), and
both `bwrap` and `process` add `env` to the job's environment. Nothing of a
toolchain is bound writable, and of `CARGO_HOME` only `bin` is bound (its
`credentials.toml` stays out).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from engine.lang.registry import Language

# language -> the compiler its programs are built with (what an evaluator calls by name)
COMPILERS: dict[str, str] = {
    "c": "gcc",
    "cpp": "g++",
    "rust": "rustc",
    "go": "go",
    "fortran": "gfortran",
    "julia": "julia",
}
# What a bwrap job sees anyway (engine/sandbox/bwrap.py binds these read-only): nothing under them is bound again.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ASK_S = 20.0  # a compiler's answer to --version and the like (rustup may read its whole toolchain list)


@dataclass(frozen=True)
class Toolchain:
    """One language's compiler as the engine found it, and what a job needs to run it."""

    language: str
    name: str  # what a program calls it by: rustc
    path: str  # where it is on PATH: /root/.cargo/bin/rustc
    kind: str  # rustup, go, system (under /usr), local (elsewhere), or data (files its tests read: docker binds them)
    version: str  # the compiler's own first line: rustc 1.95.0 (59807616e 2026-04-14)
    binds: tuple[str, ...] = ()  # directories and files a bwrap job needs, bound read-only at the same paths
    env: tuple[tuple[str, str], ...] = ()  # variables a job needs (RUSTUP_HOME, CARGO_HOME, ...)

    @property
    def said(self) -> str:
        """The header's words: `rustc: /root/.cargo/bin/rustc (rustup, 1.95.0)`."""
        number = re.search(r"\d+\.\d+(?:\.\d+)?", self.version)
        return f"{self.name}: {self.path} ({self.kind}, {number.group(0) if number else 'version unknown'})"


def under_system(path: str) -> bool:
    return any(path == s or path.startswith(s + "/") for s in SYSTEM_DIRS)


def find_toolchain(language: Language | str, environ: Mapping[str, str] | None = None) -> Toolchain | None:
    """The language's compiler on `environ`'s PATH (the engine's by default), or None when there is none (or the
    language has no compiler Clade knows)."""
    env = dict(os.environ if environ is None else environ)
    lang = language if isinstance(language, str) else language.name
    name = COMPILERS.get(lang)
    if name is None:
        return None
    found = shutil.which(name, path=env.get("PATH") or os.defpath)
    if found is None:
        return None
    found = os.path.abspath(found)
    if _is_rustup(found, env):
        return _rustup(lang, name, found, env)
    real = os.path.realpath(found)
    binds = _outside_system(os.path.dirname(found), _prefix(real, env))
    kind = "system" if not binds else "local"
    extra: tuple[tuple[str, str], ...] = ()
    if lang == "go":
        goroot = _ask([found, "env", "GOROOT"], env)
        if goroot:
            binds = _outside_system(*binds, goroot)
            kind = "go" if not under_system(goroot) else kind
            extra = (("GOROOT", goroot),) if env.get("GOROOT") else ()
    version = _ask([found, "version"] if lang == "go" else [found, "--version"], env)
    libraries = _inside(env.get("LD_LIBRARY_PATH", ""), binds)  # what a `module load` adds for its libraries
    if libraries:
        extra += (("LD_LIBRARY_PATH", libraries),)
    return Toolchain(lang, name, found, kind, version, binds, extra)


def _is_rustup(found: str, env: Mapping[str, str]) -> bool:
    """A rustup proxy: a link to the `rustup` binary, or anything in `$CARGO_HOME/bin` (rustup's own place)."""
    if os.path.basename(os.path.realpath(found)).startswith("rustup"):
        return True
    return os.path.dirname(found) == os.path.join(_cargo_home(env), "bin")


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _cargo_home(env: Mapping[str, str]) -> str:
    return os.path.abspath(env.get("CARGO_HOME") or os.path.join(_home(env), ".cargo"))


def _rustup(lang: str, name: str, found: str, env: Mapping[str, str]) -> Toolchain:
    rustup_home = os.path.abspath(env.get("RUSTUP_HOME") or os.path.join(_home(env), ".rustup"))
    cargo_home = _cargo_home(env)
    sysroot = _ask([found, "--print", "sysroot"], env)
    settings = os.path.join(rustup_home, "settings.toml")
    hashes = os.path.join(rustup_home, "update-hashes")  # an older rustup makes it (exists: nothing to do)
    binds = _outside_system(os.path.dirname(found), os.path.realpath(found), sysroot, settings, hashes)
    pinned: tuple[tuple[str, str], ...] = ()
    toolchains = os.path.join(rustup_home, "toolchains")
    if sysroot and os.path.dirname(sysroot) != toolchains:  # `rustup toolchain link NAME DIR`: the link, by name
        linked = [e.path for e in _entries(toolchains) if os.path.realpath(e.path) == os.path.realpath(sysroot)]
        if linked:
            binds += (linked[0],)  # bwrap binds what the link points to at the link's own path
            sysroot = linked[0]
    if sysroot and os.path.dirname(sysroot) == toolchains:  # the toolchain rustup chose here (an override too)
        pinned = (("RUSTUP_TOOLCHAIN", os.path.basename(sysroot)),)
    elif env.get("RUSTUP_TOOLCHAIN"):
        pinned = (("RUSTUP_TOOLCHAIN", env["RUSTUP_TOOLCHAIN"]),)
    # RUSTUP_AUTO_INSTALL=0: a proxy that may install would first make RUSTUP_HOME/update-hashes, which a
    # read-only bind refuses; nothing is installed from inside a sandbox (it has no network either)
    named = (("RUSTUP_HOME", rustup_home), ("CARGO_HOME", cargo_home), *pinned, ("RUSTUP_AUTO_INSTALL", "0"))
    version = _ask([found, "--version"], env)
    return Toolchain(lang, name, found, "rustup", version, binds, named)


def _prefix(real: str, env: Mapping[str, str]) -> str:
    """What a compiler outside the system reads: the folder above its `bin` (a conda environment, /opt/julia-1.10),
    or its own folder when that would be a home directory or the root."""
    folder = os.path.dirname(real)
    if os.path.basename(folder) != "bin":
        return folder
    above = os.path.dirname(folder)
    home = os.path.realpath(_home(env))
    if above in ("/", "") or above == home or home.startswith(above.rstrip("/") + "/"):
        return folder
    return above


def _outside_system(*paths: str) -> tuple[str, ...]:
    """The existing paths not already visible in bwrap, deduplicated, each once (a path inside another: dropped)."""
    kept: list[str] = []
    for raw in sorted({p for p in paths if p}, key=len):
        path = os.path.abspath(raw)
        if not os.path.exists(path) or under_system(path) or path == "/":
            continue
        if any(path == k or path.startswith(k + "/") for k in kept):
            continue
        kept.append(path)
    return tuple(kept)


def _inside(search_path: str, binds: tuple[str, ...]) -> str:
    """The entries of a search path (LD_LIBRARY_PATH) that lie in the toolchain's bound paths, in order."""
    kept = [p for p in search_path.split(os.pathsep) if p and any(p == b or p.startswith(b + "/") for b in binds)]
    return os.pathsep.join(kept)


def _ask(argv: list[str], env: Mapping[str, str]) -> str:
    """The first line a command prints, '' when it fails."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_ASK_S, env=dict(env), errors="replace", check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = done.stdout.strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else ""


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as found:
            return sorted(found, key=lambda e: e.name)
    except OSError:
        return []
