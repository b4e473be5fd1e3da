"""Toolchains as users install them (issue 28): a compiler on the user's PATH outside /usr (rustup's
`~/.cargo/bin`) is found at run start, named in the header, and is the compiler a job runs, under bwrap and
under process, for the compile check and for the evaluation alike.

A rustup-style toolchain is faked in a temporary home: `~/.cargo/bin/rustc` is a script that, like rustup's
proxy, finds RUSTUP_HOME (~/.rustup unless set), reads its `settings.toml` and runs the toolchain's compiler under
`~/.rustup/toolchains/fake`; it adds `--cfg clade_fake_rustup`, and the programs below refuse to compile
without it, so a program that builds proves that the fake, not /usr/bin/rustc, built it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.lang.registry import language_of
from engine.lang.toolchain import find_toolchain
from engine.sandbox.base import SandboxJob, SandboxLimits
from engine.sandbox.bwrap import bwrap_available
from tests.conftest import REPO
from tests.engine.test_search_e2e import only_run, read

BWRAP, BWRAP_WHY = bwrap_available()
BACKENDS = [
    "process",
    pytest.param("bwrap", marks=[pytest.mark.bwrap, pytest.mark.skipif(not BWRAP, reason=BWRAP_WHY)]),
]
MARK = '#[cfg(not(clade_fake_rustup))]\ncompile_error!("built by a rustc other than the fake rustup\'s");\n'
PROXY = """#!/bin/sh
# a rustup-style proxy (a test's fake): finds its home as rustup does, picks the toolchain as rustup does
RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
toolchain="${RUSTUP_TOOLCHAIN:-$(sed -n 's/^default_toolchain = "\\(.*\\)"$/\\1/p' "$RUSTUP_HOME/settings.toml")}"
exec "$RUSTUP_HOME/toolchains/$toolchain/bin/rustc" --cfg clade_fake_rustup "$@"
"""
FIXTURES = REPO / "tests" / "fixtures" / "tasks"


def _real_sysroot() -> Path:
    """A rustc's sysroot to copy from: the system's where there is one (all of it is visible in bwrap)."""
    rustc = shutil.which("rustc", path="/usr/local/bin:/usr/bin:/bin") or shutil.which("rustc")
    if rustc is None:
        pytest.skip("rustc is not installed (Debian: rustc, or rustup)")
    said = subprocess.run([rustc, "--print", "sysroot"], capture_output=True, text=True, check=True)
    return Path(said.stdout.strip())


@pytest.fixture
def fake_rustup(tmp_path, monkeypatch):
    """A home with a rustup-style toolchain, made the engine's HOME and first on its PATH: (home, the proxy)."""
    sysroot = _real_sysroot()
    home = tmp_path / "home"
    toolchain = home / ".rustup" / "toolchains" / "fake"
    (toolchain / "bin").mkdir(parents=True)
    shutil.copy2(sysroot / "bin" / "rustc", toolchain / "bin" / "rustc")  # a copy finds its sysroot beside it
    if str(sysroot).startswith("/usr"):
        (toolchain / "lib").symlink_to(sysroot / "lib")  # /usr is visible in every backend
    else:  # a rustup toolchain in a home: hard links (same disk) or a copy, so that bwrap sees it through the fake
        try:
            shutil.copytree(sysroot / "lib", toolchain / "lib", copy_function=os.link)
        except OSError:
            pytest.skip(f"cannot link {sysroot}/lib into {tmp_path}")
    (home / ".rustup" / "settings.toml").write_text('version = "12"\ndefault_toolchain = "fake"\n')
    proxy = home / ".cargo" / "bin" / "rustc"
    proxy.parent.mkdir(parents=True)
    proxy.write_text(PROXY)
    proxy.chmod(0o755)
    for name in ("CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTUP_AUTO_INSTALL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    path = [str(proxy.parent), os.path.dirname(sys.executable), "/usr/bin", "/bin"]  # no other rustup on it
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    return home, proxy


def test_a_rustup_style_toolchain_outside_usr_is_found_with_what_it_needs(fake_rustup):
    home, proxy = fake_rustup
    chain = find_toolchain(language_of("a.rs"))
    assert chain is not None and chain.path == str(proxy) and chain.kind == "rustup"
    assert chain.said.startswith(f"rustc: {proxy} (rustup, 1.")  # the version, asked through the proxy
    fake = home / ".rustup" / "toolchains" / "fake"
    assert set(chain.binds) == {str(proxy.parent), str(home / ".rustup" / "settings.toml"), str(fake)}
    assert dict(chain.env) == {
        "RUSTUP_HOME": str(home / ".rustup"),
        "CARGO_HOME": str(home / ".cargo"),
        "RUSTUP_TOOLCHAIN": "fake",  # what rustup chose at run start, pinned
        "RUSTUP_AUTO_INSTALL": "0",
    }
    (home / ".cargo" / "credentials.toml").write_text("token = 'secret'\n")
    assert not any(b == str(home / ".cargo") for b in find_toolchain(language_of("a.rs")).binds)  # bin only


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_compile_check_and_a_job_run_the_users_rustc(fake_rustup, backend):
    """The compile check (choose) and a sandboxed job both build with the fake: the marked program compiles."""
    import asyncio

    from engine.lang.compile_check import choose
    from engine.sandbox import make_sandbox

    _, proxy = fake_rustup
    chain = find_toolchain(language_of("a.rs"))
    program = MARK + 'fn main() { println!("{}", 6 * 7); }\n'
    check, header = choose(language_of("a.rs"), "on", backend, toolchains=(chain,))
    assert header.endswith(f"; rustc: {proxy} (rustup, {chain.said.split(', ')[-1]}")
    assert check is not None and check.problem({"a.rs": program}, "a.rs") is None
    refused = check.problem({"a.rs": program.replace("6 * 7", "six * 7")}, "a.rs")
    assert refused is not None and "six" in refused  # the compiler is really asked
    sandbox = make_sandbox(backend, toolchains=(chain,))
    job = SandboxJob(
        files={"a.rs": program.encode()},
        command=["sh", "-c", "rustc -o prog a.rs && ./prog > answer.txt"],
        answer_file="answer.txt",
        limits=SandboxLimits(timeout_s=60, cpu_s=60, memory_mb=4096),
    )
    result = asyncio.run(sandbox.run(job))
    assert result.status == "ok" and result.answer == b"42\n", (result.reason, result.stderr_tail)
    if backend == "bwrap":  # read-only, and of ~/.cargo only bin: a job neither plants a compiler nor reads a token
        home, _ = fake_rustup
        (home / ".cargo" / "credentials.toml").write_text("[registry]\ntoken = 'secret'\n")
        probe = (
            "{ echo x > $CARGO_HOME/bin/evil || echo x > $RUSTUP_HOME/settings.toml; } 2>/dev/null || echo refused;"
            " cat $CARGO_HOME/credentials.toml 2>/dev/null || echo hidden"
        )
        tried = asyncio.run(
            sandbox.run(SandboxJob(files={}, command=["sh", "-c", f"({probe}) > answer.txt"], answer_file="answer.txt"))
        )
        assert tried.answer == b"refused\nhidden\n", (tried.reason, tried.stderr_tail)
        assert not (proxy.parent / "evil").exists()
    without = make_sandbox(backend)  # no toolchain given: the proxy cannot find its home (as before issue 28)
    failed = asyncio.run(without.run(job))
    assert failed.status != "ok" and failed.answer is None


def _search(folder: Path, runs: Path, backend: str, budget: int) -> Path:
    from engine.front.cli import build_parser
    from engine.front.run import run_from_args

    argv = ["--task", str(folder), "--budget", str(budget), "--sandbox", backend, "--compile-check", "on"]
    argv += ["--run-dir", str(runs), "--quiet"]
    assert run_from_args(build_parser().parse_args(argv)) == 0
    return only_run(runs)


def _improved(run: Path) -> None:
    """Every dev evaluation ok, and a child scored above the seed."""
    statuses = read(run, "SELECT DISTINCT status FROM evaluations WHERE split = 'dev'")
    assert statuses == [("ok",)], statuses
    seed = read(run, "SELECT max(score) FROM evaluations WHERE split = 'dev' AND node_id = 0")[0][0]
    best = read(run, "SELECT max(score) FROM evaluations WHERE split = 'dev' AND node_id > 0")[0][0]
    assert best > seed, (seed, best)


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP, reason=BWRAP_WHY)
def test_a_search_with_the_users_rustup_under_bwrap(fake_rustup, tmp_path):
    """The issue's failure, on a machine whose only rustc is rustup's: the folder's seed (marked: only the fake can
    build it) is evaluated, the children are compile-checked and improve on it; the session names the compiler."""
    _, proxy = fake_rustup
    folder = tmp_path / "shinka_rust"
    shutil.copytree(FIXTURES / "shinka_rust", folder)
    seed = folder / "initial.rs"
    seed.write_text(MARK + seed.read_text())
    run = _search(folder, tmp_path / "runs", "bwrap", 8)
    checks = read(run, "SELECT detail->>'checks' FROM events WHERE kind = 'session'")[0][0]
    assert "compiled by rustc --emit=metadata (in bwrap)" in checks and f"rustc: {proxy} (rustup, 1." in checks
    _improved(run)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("task", ["openevolve_rust", "shinka_rust"])
def test_the_rust_folders_improve_their_seed_with_the_compile_check_on(task, backend, tmp_path):
    """On this machine's own PATH (rustup's rustc first here), as a user runs them."""
    if find_toolchain(language_of("a.rs")) is None:
        pytest.skip("rustc is not installed (Debian: rustc, or rustup)")
    _improved(_search(FIXTURES / task, tmp_path / "runs", backend, 8))


@pytest.fixture
def go_outside_usr(tmp_path, monkeypatch):
    """A Go unpacked outside /usr (as from go.dev into ~/sdk), made of the system's by hard links, first on PATH."""
    system = shutil.which("go", path="/usr/local/bin:/usr/bin:/bin")
    if system is None:
        pytest.skip("go is not installed (Debian: golang-go)")
    goroot = Path(subprocess.run([system, "env", "GOROOT"], capture_output=True, text=True).stdout.strip())
    if not str(goroot).startswith("/usr/"):
        pytest.skip(f"the system's Go is already outside /usr ({goroot})")
    root = tmp_path / "sdk" / "go"
    root.mkdir(parents=True)
    try:
        for name in ("bin", "pkg"):
            shutil.copytree(goroot / name, root / name, copy_function=os.link, symlinks=True)
    except OSError:
        pytest.skip(f"cannot link {goroot} into {tmp_path}")
    (root / "VERSION").write_text((goroot / "VERSION").read_text())
    (root / "src").symlink_to((goroot / "src").resolve())  # the standard library's sources, under /usr
    path = [str(root / "bin"), os.path.dirname(sys.executable), "/usr/bin", "/bin"]  # /usr/bin/go comes after
    monkeypatch.delenv("GOROOT", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    return root


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_go_outside_usr_is_bound_and_is_the_one_a_job_runs(go_outside_usr, backend):
    import asyncio

    from engine.lang.compile_check import choose
    from engine.sandbox import make_sandbox

    chain = find_toolchain(language_of("a.go"))
    assert chain is not None and chain.kind == "go" and chain.binds == (str(go_outside_usr),)
    check, header = choose(language_of("a.go"), "on", backend, toolchains=(chain,))
    assert header.endswith(f"; go: {go_outside_usr}/bin/go (go, {chain.said.split(', ')[-1]}")
    assert check is not None and check.problem({"a.go": "package main\nfunc main() {}\n"}, "a.go") is None
    job = SandboxJob(
        files={"a.go": b'package main\nimport "fmt"\nfunc main() { fmt.Println(42) }\n'},
        command=[
            "sh",
            "-c",
            "go env GOROOT > answer.txt && GO111MODULE=off go build -o prog a.go && ./prog >> answer.txt",
        ],
        answer_file="answer.txt",
        limits=SandboxLimits(timeout_s=120, cpu_s=120, memory_mb=4096),
    )
    result = asyncio.run(make_sandbox(backend, toolchains=(chain,)).run(job))
    assert result.status == "ok" and result.answer == f"{go_outside_usr}\n42\n".encode(), (
        result.reason,
        result.stderr_tail,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compiler_in_a_prefix_reads_its_prefix_in_the_sandbox(tmp_path, monkeypatch, backend):
    """A conda-style gcc (`ENV/bin/gcc`, reading `ENV/etc`) is found with its prefix, which bwrap binds; a home
    folder itself is never bound (a compiler in `~/bin` brings only `~/bin`)."""
    from engine.lang.compile_check import choose

    system = shutil.which("gcc", path="/usr/local/bin:/usr/bin:/bin")
    if system is None:
        pytest.skip("gcc is not installed (Debian: gcc)")
    env = tmp_path / "conda" / "envs" / "c"
    (env / "bin").mkdir(parents=True)
    (env / "etc").mkdir()
    (env / "etc" / "flags").write_text("-DFROM_THE_PREFIX\n")
    gcc = env / "bin" / "gcc"
    gcc.write_text(f'#!/bin/sh\nexec {system} $(cat "$(dirname "$0")/../etc/flags") "$@"\n')
    gcc.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(env / "bin"), "/usr/bin", "/bin"]))
    chain = find_toolchain(language_of("a.c"))
    assert chain is not None and chain.kind == "local" and chain.binds == (str(env),)
    monkeypatch.setenv("LD_LIBRARY_PATH", os.pathsep.join([str(env / "lib"), "/elsewhere/lib"]))
    assert dict(find_toolchain(language_of("a.c")).env) == {"LD_LIBRARY_PATH": str(env / "lib")}  # its own only
    check, _ = choose(language_of("a.c"), "on", backend, toolchains=(chain,))
    program = "#ifndef FROM_THE_PREFIX\n#error not the prefix's gcc\n#endif\nint main(void) { return 0; }\n"
    assert check is not None and check.problem({"a.c": program}, "a.c") is None
    monkeypatch.setenv("HOME", str(env))  # the folder above bin is a home: only bin is bound
    assert find_toolchain(language_of("a.c")).binds == (str(env / "bin"),)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_linked_rustup_toolchain_is_bound_at_its_link(fake_rustup, tmp_path, backend):
    """`rustup toolchain link fake DIR`: the toolchain lives outside RUSTUP_HOME; the link is bound by name."""
    from engine.lang.compile_check import choose

    home, _ = fake_rustup
    link = home / ".rustup" / "toolchains" / "fake"
    custom = tmp_path / "custom-rust"
    link.rename(custom)
    link.symlink_to(custom)
    chain = find_toolchain(language_of("a.rs"))
    assert chain is not None and str(link) in chain.binds and ("RUSTUP_TOOLCHAIN", "fake") in chain.env
    check, _ = choose(language_of("a.rs"), "on", backend, toolchains=(chain,))
    assert check is not None and check.problem({"a.rs": MARK + "fn main() {}\n"}, "a.rs") is None
