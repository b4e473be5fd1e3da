"""What each Polyglot language's tests run on, found where users install it, and the caches made once per machine.

| language   | the tests run with                                  | Debian packages                              |
| ---------- | --------------------------------------------------- | -------------------------------------------- |
| Python     | pytest, in the task's interpreter                   | (pip install pytest)                         |
| Go         | `go test`, Go 1.21 or newer (dnd-character: slices) | golang-1.23-go (bookworm-backports)          |
| Rust       | `cargo test --offline`; anyhow, rand and time from  | cargo (or rustup), librust-anyhow-dev,       |
|            | Debian's crate registry (/usr/share/cargo/registry, | librust-rand-dev, librust-time-dev           |
|            | or CLADE_POLYGLOT_CARGO_REGISTRY: `cargo vendor`'s) |                                              |
| C++        | CMake and g++ against the exercise's catch.hpp      | cmake g++ make libboost-date-time-dev        |
| Java       | javac, then JUnit 5's console launcher, AssertJ     | default-jdk-headless junit5                  |
|            | (3.17 or newer for mazy-mice: Debian 13's)          | libassertj-core-java                         |
| JavaScript | Node and Jest with Babel, from npm into the cache   | nodejs npm                                   |

Made once and then only read (the sandboxes bind them read-only): Catch's main compiled (the same catch.hpp
in every C++ exercise; 7 s of g++ that every build would repeat), a Go build cache holding the standard
library (Go 1.20+ ships none compiled: 11 s a build without it; each job copies it into its own folder, as Go
writes to its cache), and Jest with Babel installed by npm from the package-lock shipped here. Java's
hangman needs RxJava 2 and rest-api JSON-java (org.json), which no Debian package holds (Android's
org.json in Debian throws checked exceptions: neither the tests nor the reference compile against it):
their jars on CLADE_POLYGLOT_JAVA_JARS let them in; without them each is left out of the run, and the
header says so. Jars on that variable also replace Debian's of the same name (a newer AssertJ).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import UserError
from engine.lang.toolchain import Toolchain, find_toolchain
from tasks.polyglot.exercises import LANGUAGE_NAMES, Exercise
from tasks.polyglot.source import cache_root

HERE = Path(__file__).resolve().parent
JAVA_JARS_VARIABLE = "CLADE_POLYGLOT_JAVA_JARS"
CARGO_REGISTRY = "/usr/share/cargo/registry"  # Debian's librust-*-dev crates, a directory source for cargo
REGISTRY_VARIABLE = "CLADE_POLYGLOT_CARGO_REGISTRY"  # another directory source instead (`cargo vendor`'s output)
DEBIAN_JARS = "/usr/share/java"
_GO_MIN = (1, 21)
_GO_WARM = (
    "bufio bytes container/heap container/list crypto/rand errors fmt io math math/big math/bits math/rand os "
    "reflect regexp runtime slices maps sort strconv strings sync time unicode unicode/utf8"
).split()
_CRATES = {"anyhow": "librust-anyhow-dev", "rand": "librust-rand-dev", "time": "librust-time-dev"}
_ASK_S = 120


@dataclass
class Found:
    """The toolchains of the languages a run uses: what the sandbox binds, what the checker reads, the header."""

    toolchains: list[Toolchain] = field(default_factory=list)
    runner: dict[str, list[str]] = field(default_factory=dict)  # key -> candidate paths, the first present wins
    said: list[str] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)  # exercise id -> why


def runners_dir() -> Path:
    return cache_root() / "polyglot-runners"


@contextlib.contextmanager
def _made_once(name: str) -> Iterator[None]:
    """Held while one cache is made: two runs starting at once make it once, the second then finds it."""
    folder = runners_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _missing(language: str, what: str, how: str) -> UserError:
    return UserError(f"the Polyglot {LANGUAGE_NAMES[language]} exercises need {what}: {how}")


def _first_line(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_ASK_S, check=False, errors="replace")
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else ""


def _system(language: str, name: str, path: str, version: str, binds: Iterable[str] = ()) -> Toolchain:
    kept = tuple(p for p in binds if os.path.exists(p))
    return Toolchain(language, name, path, "system" if path.startswith("/usr/") else "local", version, kept)


def _data(language: str, name: str, paths: Iterable[str], version: str = "") -> Toolchain:
    """Files the tests read, made once (a cache) or installed apart (jars): bwrap and docker bind them read-only."""
    kept = tuple(p for p in paths if os.path.exists(p))
    return Toolchain(language, name, kept[0] if kept else "", "data", version, kept)


# ----- one finder per language ----------------------------------------------------------------------------
def _python(python: str, found: Found) -> None:
    version = _first_line([python, "-m", "pytest", "--version"])
    if not version:
        raise _missing("python", f"pytest in {python}", "pip install pytest")
    found.said.append(f"Python: {version} ({python})")


def _go_version(go: str) -> tuple[int, int] | None:
    match = re.search(r"go(\d+)\.(\d+)", _first_line([go, "version"]))
    return (int(match.group(1)), int(match.group(2))) if match else None


def find_go() -> str | None:
    """A go of version 1.21 or newer: the one on PATH, else Debian's newest /usr/lib/go-1.NN/bin/go."""
    candidates = [shutil.which("go") or ""]
    candidates += sorted(glob.glob("/usr/lib/go-1.*/bin/go"), key=lambda p: [int(x) for x in re.findall(r"\d+", p)])[
        ::-1
    ]
    for go in candidates:
        version = _go_version(go) if go else None
        if version is not None and version >= _GO_MIN:
            return os.path.abspath(go)
    return None


def _go(exercises: list[Exercise], found: Found, say: Callable[[str], None] | None) -> None:
    go = find_go()
    if go is None:
        raise _missing(
            "go",
            "Go 1.21 or newer",
            "apt-get install golang-1.23-go (Debian 12: from bookworm-backports), or golang-go",
        )
    chain = find_toolchain("go", {**os.environ, "PATH": os.path.dirname(go) + os.pathsep + os.environ.get("PATH", "")})
    version = _first_line([go, "version"])
    cache = warm_go_cache(go, version, say)
    found.toolchains += [chain] if chain is not None else []
    found.toolchains.append(_data("go", "go cache", [str(cache)], version))
    found.runner["go"] = [go, "/usr/lib/go-1.23/bin/go", "go"]
    found.runner["go_cache"] = [str(cache)]
    found.said.append(f"Go: {go} ({version.removeprefix('go version ')})")


def warm_go_cache(go: str, version: str, say: Callable[[str], None] | None = None) -> Path:
    """A Go build cache holding the standard library the exercises import, made once per Go version."""
    key = hashlib.sha256(f"{go}|{version}|{' '.join(_GO_WARM)}".encode()).hexdigest()[:12]
    cache = runners_dir() / f"go-{key}"
    if (cache / "READY").is_file():
        return cache
    with _made_once(cache.name):
        if not (cache / "READY").is_file():
            _warm(go, version, cache, say)
    return cache


def _warm(go: str, version: str, cache: Path, say: Callable[[str], None] | None) -> None:
    if say:
        say(f"compiling Go's standard library once into {cache} (about 20 s)")
    scratch = Path(tempfile.mkdtemp(prefix="clade-go-"))
    try:
        (scratch / "go.mod").write_text("module warm\n\ngo 1.21\n")
        imports = "\n".join(f'\t_ "{p}"' for p in _GO_WARM)
        (scratch / "warm.go").write_text(f"package warm\n\nimport (\n{imports}\n)\n")
        (scratch / "warm_test.go").write_text('package warm\n\nimport "testing"\n\nfunc TestWarm(t *testing.T) {}\n')
        cache.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GOCACHE": str(cache), "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
        env.update(CGO_ENABLED="0", GOPATH=str(scratch / "gopath"))
        done = subprocess.run(
            [go, "test", "-count=1", "./..."], cwd=scratch, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise UserError(f"could not build Go's standard library with {go}: {done.stdout + done.stderr}"[:400])
        (cache / "READY").write_text(version + "\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _rust(exercises: list[Exercise], found: Found) -> None:
    chain = find_toolchain("rust")
    cargo = shutil.which("cargo")
    if chain is None or cargo is None:
        raise _missing("rust", "cargo and rustc", "apt-get install cargo (or rustup)")
    named = os.environ.get(REGISTRY_VARIABLE, "")
    registry = named or CARGO_REGISTRY
    needed = sorted({c for e in exercises for c in _crates_of(e)})
    have = os.listdir(registry) if os.path.isdir(registry) else []
    lacking = [c for c in needed if not any(d == c or d.startswith(f"{c}-") for d in have)]
    if lacking:
        packages = " ".join(_CRATES.get(c, f"librust-{c}-dev") for c in lacking)
        where = f"{REGISTRY_VARIABLE}={named} lacks them" if named else f"apt-get install {packages}"
        raise _missing("rust", f"the crates {', '.join(lacking)} offline", where)
    found.toolchains.append(chain)
    if needed or named:
        found.toolchains.append(_data("rust", "crates", [registry]))
        found.runner["cargo_registry"] = [registry]
    found.said.append(
        f"Rust: {chain.said.split(': ', 1)[1]}" + (f", crates from {registry}" if needed or named else "")
    )


def _crates_of(exercise: Exercise) -> list[str]:
    toml = exercise.folder / "Cargo.toml"
    text = toml.read_text(encoding="utf-8") if toml.is_file() else ""
    block = re.search(r"^\[dependencies\]\s*\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    return re.findall(r"^([A-Za-z0-9_-]+)\s*=", block.group(1), re.M) if block else []


def _cpp(exercises: list[Exercise], found: Found, say: Callable[[str], None] | None) -> None:
    for tool, package in (("cmake", "cmake"), ("g++", "g++"), ("make", "make")):
        if shutil.which(tool) is None:
            raise _missing("cpp", tool, f"apt-get install {package}")
    if any("Boost" in (e.folder / "CMakeLists.txt").read_text(encoding="utf-8") for e in exercises):
        if not glob.glob("/usr/include/boost/date_time.hpp") and not glob.glob(
            "/usr/local/include/boost/date_time.hpp"
        ):
            raise _missing("cpp", "Boost.Date_Time (gigasecond, meetup)", "apt-get install libboost-date-time-dev")
    gxx = _first_line(["g++", "--version"])
    main = catch_main(exercises[0], gxx, say)
    found.toolchains.append(_data("cpp", "catch main", [str(main)], gxx))
    found.runner["catch_main"] = [str(main)]
    found.said.append(f"C++: {shutil.which('cmake')} and {gxx}, Catch's main compiled once ({main})")


def catch_main(exercise: Exercise, compiler: str, say: Callable[[str], None] | None = None) -> Path:
    """Catch's main (`test/tests-main.cpp` with the exercise's catch.hpp), compiled once per header and compiler."""
    test = exercise.folder / "test"
    source = (test / "tests-main.cpp").read_bytes() + (test / "catch.hpp").read_bytes()
    key = hashlib.sha256(source + compiler.encode()).hexdigest()[:12]
    target = runners_dir() / f"catch-main-{key}.o"
    if target.is_file():
        return target
    with _made_once(target.name):
        if target.is_file():
            return target
        if say:
            say(f"compiling Catch's main once into {target} (about 10 s)")
        partial = target.with_suffix(".part")
        argv = ["g++", "-std=c++17", "-g", "-c", str(test / "tests-main.cpp"), "-o", str(partial)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise UserError(f"could not compile Catch's main: {done.stderr.strip()}"[:400])
        partial.replace(target)
    return target


# Java exercises whose tests need a library beyond JUnit and AssertJ: (exercise, jar name pattern, what)
_JAVA_LIBRARIES = (
    ("hangman", r"rxjava-2.*\.jar", "RxJava 2 (io.reactivex.rxjava2:rxjava:2.2.12 with reactive-streams)"),
    ("rest-api", r"json-\d{8}\.jar", "JSON-java (org.json:json:20190722)"),
)
_ASSERTJ_MIN = (3, 17)  # mazy-mice's tests call hasDimensions (AssertJ 3.17); Debian 12 has 3.14, Debian 13 3.26


def _jar(name: str, extra: list[str]) -> str:
    """A jar by its Debian name (`assertj-core.jar`): one of CLADE_POLYGLOT_JAVA_JARS with that stem, else
    /usr/share/java's."""
    stem = name.removesuffix(".jar")
    for path in extra:
        if re.fullmatch(rf"{re.escape(stem)}(-[\d.]+)?\.jar", os.path.basename(path)):
            return path
    return f"{DEBIAN_JARS}/{name}"


def _jar_version(path: str) -> tuple[int, ...]:
    match = re.search(r"-(\d+)\.(\d+)(?:\.\d+)*\.jar$", os.path.realpath(path))
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _java(exercises: list[Exercise], found: Found) -> None:
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        raise _missing("java", "a JDK (javac)", "apt-get install default-jdk-headless")
    extra = [p for p in os.environ.get(JAVA_JARS_VARIABLE, "").split(os.pathsep) if p]
    launcher = _jar("junit-platform-console-standalone.jar", extra)
    assertj = _jar("assertj-core.jar", extra)
    for jar, package in ((launcher, "junit5"), (assertj, "libassertj-core-java")):
        if not os.path.isfile(jar):
            raise _missing("java", jar, f"apt-get install {package}")
    names = {e.name for e in exercises}
    for name, pattern, what in _JAVA_LIBRARIES:
        if name in names and not any(re.fullmatch(pattern, os.path.basename(p)) for p in extra):
            found.left_out[f"java/{name}"] = (
                f"its tests need {what}, which no Debian package holds; put its jars on {JAVA_JARS_VARIABLE}"
            )
    if "mazy-mice" in names and _jar_version(assertj) < _ASSERTJ_MIN:
        found.left_out["java/mazy-mice"] = (
            f"its tests need AssertJ 3.17 or newer, and {os.path.realpath(assertj)} is older (Debian 13's "
            f"libassertj-core-java is 3.26; its jar on {JAVA_JARS_VARIABLE} does)"
        )
    classpath = [launcher, assertj, *[p for p in extra if p not in (launcher, assertj)]]
    version = _first_line([javac, "-version"])
    home = os.path.dirname(os.path.dirname(os.path.realpath(javac)))
    # Debian's JDK reads its configuration through links into /etc/java-NN-openjdk, which bwrap binds only now
    etc = sorted({os.path.dirname(os.path.realpath(p)) for p in glob.glob(f"{home}/conf/*") if os.path.islink(p)})
    found.toolchains.append(_system("java", "javac", javac, version, etc))
    if extra:
        found.toolchains.append(_data("java", "jars", extra))
    debian = [f"{DEBIAN_JARS}/junit-platform-console-standalone.jar", f"{DEBIAN_JARS}/assertj-core.jar"]
    found.runner["java_classpath"] = [os.pathsep.join(classpath), os.pathsep.join(debian)]
    found.runner["junit_launcher"] = [launcher, debian[0]]
    said = f"AssertJ {'.'.join(map(str, _jar_version(assertj)))}"
    found.said.append(f"Java: {version} ({javac}), JUnit's console launcher, {said}")


def _javascript(found: Found, say: Callable[[str], None] | None) -> None:
    node = shutil.which("node")
    if node is None:
        raise _missing("javascript", "Node.js", "apt-get install nodejs npm")
    modules = jest_modules(say)
    version = _first_line([node, "--version"])
    found.toolchains.append(_data("javascript", "jest", [str(modules.parent)], version))
    found.runner["node_modules"] = [str(modules)]
    found.said.append(f"JavaScript: Node {version} ({node}), Jest and Babel in {modules}")


def jest_modules(say: Callable[[str], None] | None = None, install: bool = True) -> Path:
    """Jest with Babel from npm, as pinned by javascript/package-lock.json, in the cache (installed once)."""
    lock = (HERE / "javascript" / "package-lock.json").read_bytes()
    target = runners_dir() / f"jest-{hashlib.sha256(lock).hexdigest()[:12]}"
    if (target / "READY").is_file():
        return target / "node_modules"
    npm = shutil.which("npm")
    if not install or npm is None:
        raise _missing("javascript", "Jest and Babel", "apt-get install npm, then clade data fetch polyglot")
    with _made_once(target.name):
        if not (target / "READY").is_file():
            _npm_ci(npm, target, say)
    return target / "node_modules"


def _npm_ci(npm: str, target: Path, say: Callable[[str], None] | None) -> None:
    if say:
        say(f"installing Jest and Babel from npm once into {target} (about 20 s)")
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / "javascript" / name, target / name)
    argv = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run(argv, cwd=target, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[:300]
        raise _missing("javascript", "Jest and Babel", f"npm ci in {target} failed ({said})")
    (target / "READY").write_text("npm ci\n")


def find_all(exercises: list[Exercise], python: str | None = None, say: Callable[[str], None] | None = None) -> Found:
    """Every toolchain the exercises' languages need, with the caches made where missing; UserError (one line,
    naming the package) for the first that is missing."""
    found = Found()
    languages = {e.language for e in exercises}
    by_language = {lang: [e for e in exercises if e.language == lang] for lang in languages}
    if "python" in languages:
        _python(python or sys.executable, found)
    if "go" in languages:
        _go(by_language["go"], found, say)
    if "rust" in languages:
        _rust(by_language["rust"], found)
    if "cpp" in languages:
        _cpp(by_language["cpp"], found, say)
    if "java" in languages:
        _java(by_language["java"], found)
    if "javascript" in languages:
        _javascript(found, say)
    return found
