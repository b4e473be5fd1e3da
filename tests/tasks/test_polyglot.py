"""The Polyglot task's parts that need no sandbox: the exercises as read, the split, what a solution may change,
`--instances`, fetching and verifying the benchmark, and the one-line refusals of a run that cannot start."""

from __future__ import annotations

import http.server
import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
from collections import Counter
from pathlib import Path

import pytest

from engine.errors import UserError
from tasks.polyglot import source
from tasks.polyglot.exercises import LANGUAGES, all_exercises, split_of
from tasks.polyglot.instances import select
from tests.conftest import REPO
from tests.tasks.polyglot_support import SHARED, needs_exercises, polyglot_env

pytestmark = needs_exercises


@pytest.fixture(scope="module")
def exercises():
    return {e.id: e for e in all_exercises(SHARED)}


def test_the_benchmark_is_aiders_selection_split_half_and_half_within_each_language(exercises):
    assert Counter(e.language for e in exercises.values()) == Counter(LANGUAGES)
    assert len(exercises) == 225
    splits = split_of(list(exercises.values()))
    for language, n in LANGUAGES.items():
        dev = [i for i, s in splits.items() if s == "dev" and i.startswith(language + "/")]
        assert len(dev) == (n + 1) // 2  # alternating in name order, the first one dev
    assert splits["python/affine-cipher"] == "dev" and splits["python/beer-song"] == "holdout"


def test_a_reference_goes_where_the_solution_files_are(exercises):
    cpp = exercises["cpp/all-your-base"].reference()
    assert set(cpp) == {"all_your_base.cpp", "all_your_base.h"}
    bowling = exercises["java/bowling"].reference()  # a helper class beside the listed solution file
    assert set(bowling) == {"src/main/java/BowlingGame.java", "src/main/java/Frame.java"}
    grep = exercises["rust/grep"].reference()  # its own Cargo.toml names the crates it uses
    assert set(grep) == {"src/lib.rs", "Cargo.toml"} and "thiserror" in grep["Cargo.toml"]
    counter = exercises["go/counter"]  # the exercise asks for a test suite
    assert (
        set(counter.reference()) == {"counter_test.go"} and "func TestNoAdd" in counter.reference()["counter_test.go"]
    )


def test_the_agent_sees_no_reference_and_grading_takes_only_solution_and_new_source_files(exercises):
    python = exercises["python/affine-cipher"]
    shown = python.files()
    assert "affine_cipher.py" in shown and "affine_cipher_test.py" in shown
    assert not any(p.startswith(".meta/") or p.startswith(".docs/") for p in shown)
    answer = {
        "affine_cipher.py": "solution",
        "helper.py": "a module of its own",
        "affine_cipher_test.py": "def test_x(): pass",
        "conftest.py": "import pytest",
        "test_more.py": "",
        "../escape.py": "",
    }
    assert python.accepted(answer) == {"affine_cipher.py": "solution", "helper.py": "a module of its own"}
    graded = python.graded_files(answer)
    assert graded["affine_cipher_test.py"] == shown["affine_cipher_test.py"]
    js = exercises["javascript/affine-cipher"]
    tricks = {"jest.config.js": "", "babel.config.js": "", "x.spec.js": "", "__mocks__/fs.js": "", "util.js": "ok"}
    assert js.accepted(tricks) == {"util.js": "ok"}
    go = exercises["go/beer-song"]
    assert go.accepted({"beer_song.go": "a", "extra_test.go": "b", "util.go": "c"}) == {
        "beer_song.go": "a",
        "util.go": "c",
    }


def test_instances_pick_languages_and_exercises_in_their_own_splits(exercises, tmp_path):
    splits = split_of(list(exercises.values()))
    both = select(exercises, splits, "python,go")
    assert len(both) == 34 + 39 and {i.split("/")[0] for i in both} == {"python", "go"}
    assert [splits[i] for i in both] == sorted((splits[i] for i in both), key=["dev", "holdout"].index)
    assert select(exercises, splits, "python/affine-cipher,python/beer-song") == [
        "python/affine-cipher",
        "python/beer-song",
    ]
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"dev": ["rust"], "holdout": 2}))
    chosen = select(exercises, splits, str(subset))
    assert chosen[:15] == [i for i in exercises if i.startswith("rust/") and splits[i] == "dev"]
    assert len(chosen) == 17
    with pytest.raises(UserError, match="neither a language"):
        select(exercises, splits, "cobol")
    with pytest.raises(UserError, match="no exercise 'python/nope'"):
        select(exercises, splits, "python/nope")
    with pytest.raises(UserError, match="at least one dev"):
        select(exercises, splits, "python/beer-song")


# ----- fetching -------------------------------------------------------------------------------------
def archive_of(root: Path, top: str, tamper: str | None = None) -> bytes:
    """A tar.gz of `root` under one top folder, as GitHub serves a commit; `tamper`: a file whose bytes change."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for path in sorted(root.rglob("*")):
            if not path.is_file():
                continue
            data = path.read_bytes()
            relative = path.relative_to(root).as_posix()
            if relative == tamper:
                data += b"\n// changed\n"
            info = tarfile.TarInfo(f"{top}/{relative}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The benchmark's archive (and a tampered one) served by an HTTP server on loopback."""
    folder = tmp_path_factory.mktemp("served")
    top = f"polyglot-benchmark-{source.COMMIT}"
    (folder / "good.tar.gz").write_bytes(archive_of(SHARED, top))
    (folder / "bad.tar.gz").write_bytes(
        archive_of(SHARED, top, tamper="python/exercises/practice/affine-cipher/affine_cipher.py")
    )

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_pinned_digest_is_that_of_the_published_benchmark():
    assert source.tree_digest(SHARED) == source.TREE_DIGEST


@pytest.mark.slow
def test_a_fetch_verifies_the_archive_and_keeps_it_in_the_cache(served, tmp_path, monkeypatch):
    monkeypatch.setenv("CLADE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(source.DIR_VARIABLE, raising=False)
    said: list[str] = []
    root = source.fetch_exercises(url=f"{served}/good.tar.gz", say=said.append)
    assert root == source.fetched_dir() and (root / source.VERIFIED).is_file()
    assert (root / "python" / "exercises" / "practice" / "affine-cipher" / ".meta" / "example.py").is_file()
    assert source.exercises_dir(fetch=False) == root  # found again, not fetched again
    assert any("verified" in line for line in said)


@pytest.mark.slow
def test_a_tampered_archive_is_refused_and_nothing_is_kept(served, tmp_path, monkeypatch):
    monkeypatch.setenv("CLADE_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(UserError, match="is not Aider-AI/polyglot-benchmark at 7e0611e77b54"):
        source.fetch_exercises(url=f"{served}/bad.tar.gz")
    assert not source.fetched_dir().exists()
    assert list(source.fetched_dir().parent.iterdir()) == []  # no scratch folder left behind


@pytest.mark.slow
def test_no_network_says_in_one_line_how_to_use_a_copy(tmp_path, monkeypatch):
    monkeypatch.setenv("CLADE_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(UserError) as caught:
        source.fetch_exercises(url=f"http://127.0.0.1:{closed_port()}/archive.tar.gz")
    said = str(caught.value)
    assert "\n" not in said and "CLADE_POLYGLOT_DIR" in said and source.COMMIT in said


def test_a_named_copy_that_is_not_the_benchmark_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(source.DIR_VARIABLE, str(tmp_path))
    with pytest.raises(UserError, match="has no cpp/exercises/practice"):
        source.exercises_dir()


@pytest.mark.slow
def test_clade_data_fetch_from_a_mirror_then_where(served, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != source.DIR_VARIABLE}
    env["CLADE_CACHE_DIR"] = str(tmp_path / "cache")
    fetch = [sys.executable, "-m", "clade", "data", "fetch", "polyglot", "--url", f"{served}/good.tar.gz"]
    done = subprocess.run(fetch, capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    where = [sys.executable, "-m", "clade", "data", "where", "polyglot"]
    done = subprocess.run(where, capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 0 and done.stdout.strip().endswith(source.COMMIT)


def search(tmp_path, env, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "clade", "search", "--task", "polyglot", "--model", "openai/gpt-4o-mini"]
    argv += ["--mutator", "self", "--budget", "4", "--run-dir", str(tmp_path / "runs"), *extra]
    env = {**env, "OPENAI_API_KEY": "sk-not-used", "PYTHONPATH": str(REPO)}
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=600)


@pytest.mark.slow
def test_a_search_without_the_exercises_or_network_stops_in_one_line_and_makes_no_run(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != source.DIR_VARIABLE}
    env["CLADE_CACHE_DIR"] = str(tmp_path / "cache")
    env[source.URL_VARIABLE] = f"http://127.0.0.1:{closed_port()}/archive.tar.gz"
    done = search(tmp_path, env)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "CLADE_POLYGLOT_DIR" in errors[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.slow
def test_a_search_missing_a_languages_toolchain_names_the_package_and_makes_no_run(tmp_path):
    bare = tmp_path / "bin"  # a PATH with no node (nor anything else)
    bare.mkdir()
    env = {**polyglot_env(), "PATH": str(bare)}
    done = search(tmp_path, env, "--instances", "javascript", "--sandbox", "process")
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: the Polyglot JavaScript exercises need Node.js: apt-get install nodejs npm"], done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_crates_come_from_debian_or_from_a_registry_the_user_vendored(exercises, tmp_path, monkeypatch):
    import shutil

    from tasks.polyglot.toolchains import REGISTRY_VARIABLE, find_all

    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    rust = [e for e in exercises.values() if e.language == "rust"]
    vendored = tmp_path / "vendor"
    for crate in ("anyhow", "rand-0.8.5"):  # `cargo vendor` names a crate's folder with or without its version
        (vendored / crate).mkdir(parents=True)
    monkeypatch.setenv(REGISTRY_VARIABLE, str(vendored))
    with pytest.raises(UserError, match=rf"need the crates time offline: {REGISTRY_VARIABLE}=.* lacks them"):
        find_all(rust)
    (vendored / "time").mkdir()
    found = find_all(rust)
    assert found.runner["cargo_registry"] == [str(vendored)]
    assert any(str(vendored) in chain.binds for chain in found.toolchains if chain.kind == "data")


def test_an_exercise_left_out_here_is_refused_when_named_and_skipped_when_its_language_is_asked(
    polyglot_dir, tmp_path, monkeypatch
):
    import shutil

    from tasks.polyglot.task import PolyglotTask

    if shutil.which("javac") is None or not Path("/usr/share/java/junit-platform-console-standalone.jar").is_file():
        pytest.skip("no JDK with JUnit 5 here")
    monkeypatch.delenv("CLADE_POLYGLOT_JAVA_JARS", raising=False)  # no RxJava: hangman cannot run
    with pytest.raises(UserError, match="names java/hangman, which cannot run here: its tests need RxJava 2"):
        PolyglotTask(instances_path="java/hangman,java/bowling").instances()
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"dev": ["python"], "holdout": ["java/hangman"]}))
    with pytest.raises(UserError, match="names java/hangman"):
        PolyglotTask(instances_path=str(subset)).instances()
    task = PolyglotTask(instances_path="java")
    ids = [i.id for i in task.instances()]
    assert "java/hangman" not in ids and "java/rest-api" not in ids and len(ids) >= 44
    assert "left out java/hangman: its tests need RxJava 2" in task.setup_note()
