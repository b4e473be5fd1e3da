"""The optional compile check: a child that parses is also given to the language's compiler before a sandbox.

tree-sitter (engine/lang/syntax.py) accepts any program its grammar can
parse; a compiler also sees undeclared names and wrong types, which would
otherwise cost a whole evaluation to find. Where the compiler is on the
engine's PATH (the user's: rustup's `~/.cargo/bin` too, engine/lang/toolchain.py),
`--compile-check auto` (the default) runs it on every child that
passed the syntax check, and a failure makes the child `invalid` with the
compiler's first error line:

| language | command |
| --- | --- |
| C | `gcc -fsyntax-only` |
| C++ | `g++ -fsyntax-only` |
| Rust | `rustc --emit=metadata` |
| Go | `go vet` |
| Fortran | `gfortran -fsyntax-only` |

Julia has no separate compile step; its runs use the syntax check alone.

The compiler reads untrusted source (an `#include "/etc/..."` or Rust's
`include_str!` reads host files at compile time), so it runs inside the run's
own sandbox backend: under bwrap it sees only the system's directories, the
toolchain's own (bound read-only) and the child's files, with no network; under the process backend it is as
contained as the evaluation itself; under docker it runs in a fresh
container of the run's image (`compile_docker`: the compilers' image unless
`--image` names another, which is probed once for the compiler). On Ray,
whose workers do the compiling, the engine's machine would be the only place
it could run, outside the sandbox, so the check is off there and the header
says so.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.lang.registry import Language
from engine.lang.toolchain import Toolchain, find_toolchain

if TYPE_CHECKING:
    from engine.lang.compile_docker import DockerCompiler
    from engine.sandbox.process import ProcessSandbox

TIMEOUT_S = 30.0
SETTINGS = ("auto", "on", "off")

# language -> (compiler, its arguments before the file, shown as)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "c": ("gcc", ("-fsyntax-only",)),
    "cpp": ("g++", ("-fsyntax-only", "-std=c++17")),
    "rust": ("rustc", ("--emit=metadata", "--crate-type=bin", "--edition=2021", "-o", "check.rmeta")),
    "go": ("go", ("vet",)),
    "fortran": ("gfortran", ("-fsyntax-only",)),
}
GO_CACHE_IN_BWRAP = "/tmp/go-build"
GO_ENV = {"GO111MODULE": "off", "GOFLAGS": "-mod=mod", "GOPROXY": "off", "CGO_ENABLED": "0"}


@dataclass
class CompileCheck:
    """Runs one language's compiler on a child's files in `sandbox_name` ("bwrap", "process" or "docker": then
    in a container of `image`).

    Go's build cache is kept for the run (a fresh one costs ~2 s per check, a warm one ~0.2 s): it holds
    what the compiler derived from sources, keyed by their hashes, and vet runs none of the child's code.
    """

    language: Language
    compiler: str
    args: tuple[str, ...]
    sandbox_name: str
    toolchains: tuple[Toolchain, ...] = ()  # what the sandbox binds and passes (engine/lang/toolchain.py)
    image: str | None = None  # docker's image (the compiler is on its PATH)
    _cache: tempfile.TemporaryDirectory | None = field(default=None, repr=False)
    _docker: DockerCompiler | None = field(default=None, repr=False)
    _sandbox: ProcessSandbox | None = field(
        default=None, repr=False
    )  # built once: its checks need not repeat per child

    @property
    def said(self) -> str:
        return f"{os.path.basename(self.compiler)} {self.args[0]} (in {self.sandbox_name})"

    def problem(self, files: Mapping[str, str], entry_file: str) -> str | None:
        """The compiler's first error on the child (one line), or None when it compiles."""
        from engine.sandbox.base import SandboxJob

        if self.sandbox_name == "docker":
            return self._in_docker(files, entry_file)
        if self._sandbox is None:
            from engine.sandbox import make_sandbox
            from engine.sandbox.process import ProcessSandbox

            made = make_sandbox(self.sandbox_name, toolchains=self.toolchains)
            assert isinstance(made, ProcessSandbox)  # "bwrap" or "process" (compile_check refuses the others)
            self._sandbox = made
        sandbox = self._sandbox
        with tempfile.TemporaryDirectory(prefix="clade-compile-check-") as workdir:
            for path, text in files.items():
                target = os.path.join(workdir, path)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "w", encoding="utf-8") as fh:
                    fh.write(text)
            job = SandboxJob(files={}, command=[self.compiler, *self.args, entry_file], answer_file="check.out")
            argv, env = sandbox.wrapped_command(job, workdir)
            if self.language.name == "go":
                argv, env = self._go_cache(argv, env)
            try:
                done = subprocess.run(
                    argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, errors="replace"
                )
            except subprocess.TimeoutExpired:
                return f"{self.said}: took more than {TIMEOUT_S:g} s"
        if done.returncode == 0:
            return None
        return f"{self.said}: {first_error(done.stderr + done.stdout, entry_file)}"

    def _in_docker(self, files: Mapping[str, str], entry_file: str) -> str | None:
        if self._docker is None:
            from engine.lang.compile_docker import DockerCompiler

            assert self.image is not None
            self._docker = DockerCompiler(self.image)
        command = [self.compiler, *self.args, entry_file]
        if self.language.name == "go":  # a fresh build cache in the container's /tmp (a tmpfs)
            command = ["env", *(f"{k}={v}" for k, v in GO_ENV.items()), f"GOCACHE={GO_CACHE_IN_BWRAP}", *command]
        try:
            result = self._docker.run({path: text.encode() for path, text in files.items()}, command)
        except RuntimeError as exc:
            return f"{self.said}: {exc}"
        if result.ok:
            return None
        if result.status == "timeout":
            return f"{self.said}: took more than {TIMEOUT_S:g} s"
        output = result.stderr_tail + result.stdout_tail
        return f"{self.said}: {first_error(output, entry_file) if output.strip() else result.reason}"

    def _go_cache(self, argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        if self._cache is None:
            self._cache = tempfile.TemporaryDirectory(prefix="clade-go-cache-")
        if self.sandbox_name == "bwrap":  # the cache bound in beside the job's folder
            at = argv.index("--")
            return argv[:at] + ["--bind", self._cache.name, GO_CACHE_IN_BWRAP] + argv[at:], {
                **env,
                **GO_ENV,
                "GOCACHE": GO_CACHE_IN_BWRAP,
            }
        return argv, {**env, **GO_ENV, "GOCACHE": self._cache.name}


def first_error(output: str, entry_file: str = "") -> str:
    """The compiler's first line that names a place in the file (`a.go:2:15: undefined: y`) or says error,
    else its first line that is not a heading (`# command-line-arguments`), at most 300 characters."""
    lines = [line.strip() for line in output.splitlines() if line.strip() and not line.startswith("#")]
    placed = [line for line in lines if entry_file and f"{entry_file}:" in line]
    said = [line for line in lines if "error" in line.lower()]
    chosen = (said or placed or lines or ["failed, saying nothing"])[0]
    if placed and entry_file not in chosen:  # rustc says the error, then where (`--> a.rs:1:26`)
        chosen += f" ({placed[0].lstrip('-> ')})"
    return chosen[:300]


def choose(
    language: Language | None,
    setting: str,
    sandbox_name: str,
    executor: str = "local",
    toolchains: Sequence[Toolchain] | None = None,
    image: str | None = None,
) -> tuple[CompileCheck | None, str]:
    """The run's compile check (or None) and the header's words for the checks a child goes through and for the
    compiler the language uses.

    `setting`: auto (the compiler where it is installed), on (a missing compiler is an error: ValueError),
    off. `toolchains`: the compilers found on the engine's PATH at run start (engine/lang/toolchain.py), the
    ones the sandbox was given; None: looked up now. `image`: docker's (default: the compilers' image). Python
    tasks get (None, "").
    """
    if language is None:
        return None, ""
    syntax = f"children checked by the tree-sitter {language.name} grammar"
    found = [t for t in (toolchains if toolchains is not None else find_toolchains(language)) if t]
    chain = next((t for t in found if t.language == language.name), None)
    host = f"; {chain.said}" if chain is not None and sandbox_name != "docker" else ""
    if setting == "off":
        return None, syntax + " (compile check off)" + host
    if language.name not in COMMANDS:
        return None, syntax + f" ({language.name} has no separate compile check)" + host
    if sandbox_name == "docker" and executor == "local":
        return _choose_in_docker(language, setting, image, syntax)
    if executor != "local" or sandbox_name not in ("bwrap", "process"):
        where = {"ray": "on Ray", "slurm": "on Slurm"}.get(executor, f"under {sandbox_name}")
        why = f"no compile check {where}: it would run outside the sandbox"
        if setting == "on":
            raise ValueError(f"--compile-check on: {why}")
        return None, f"{syntax} ({why})" + host
    name, args = COMMANDS[language.name]
    if chain is None:
        why = f"{name} not found on PATH"
        if setting == "on":
            raise ValueError(f"--compile-check on: {why}")
        return None, f"{syntax} (no compile check: {why})"
    # the compiler by the path it was found at (a rustup proxy stays a proxy), in a sandbox that binds what it needs
    check = CompileCheck(language, chain.path, args, sandbox_name, tuple(found))
    return check, f"{syntax}, then compiled by {check.said}{host}"


def find_toolchains(language: Language) -> tuple[Toolchain, ...]:
    """The language's compiler on the engine's PATH, as a tuple of one (empty when there is none)."""
    chain = find_toolchain(language)
    return (chain,) if chain is not None else ()


def _choose_in_docker(
    language: Language, setting: str, image: str | None, syntax: str
) -> tuple[CompileCheck | None, str]:
    """The check in containers of `image`: the compilers' image has every compiler; another is probed once."""
    from engine.sandbox.docker_build import COMPILERS_IMAGE

    name, args = COMMANDS[language.name]
    image = image or COMPILERS_IMAGE
    if image != COMPILERS_IMAGE:
        from engine.lang.compile_docker import image_has

        ok, why = image_has(image, name)
        if not ok:
            if setting == "on":
                raise ValueError(f"--compile-check on: {why}")
            return None, f"{syntax} (no compile check: {why})"
    check = CompileCheck(language, name, args, "docker", image=image)
    return check, f"{syntax}, then compiled by {check.said}"
