# ----- building and running the program: its extension picks the language ------------------------------
import os
import shutil
import subprocess
import sys
import tempfile

BUILD_S, RUN_S = 60, 10  # seconds for the build and for the run


class Failed(Exception):
    """The program did not build or run; the message says why."""


def tool(name, package):
    path = shutil.which(name)
    if path is None:
        raise Failed(f"{name} is not installed (Debian package: {package})")
    return path


def build(program, work):
    """The command that runs `program`, after compiling it into `work` for the languages that compile."""
    ext = os.path.splitext(program)[1].lower()
    binary = os.path.join(work, "program")
    env = None
    if ext == ".py":
        return [sys.executable, program]
    if ext == ".jl":
        return [tool("julia", "julia"), "--startup-file=no", program]
    if ext == ".c":
        command = [tool("gcc", "gcc"), "-O1", "-o", binary, program, "-lm"]
    elif ext == ".cpp":
        command = [tool("g++", "g++"), "-O1", "-o", binary, program]
    elif ext == ".rs":
        command = [tool("rustc", "rustc"), "--edition", "2021", "-C", "opt-level=1", "-o", binary, program]
    elif ext == ".go":
        command = [tool("go", "golang-go"), "build", "-o", binary, program]
        # GOPATH mode, caches in the build folder, no network: a build that needs nothing but the program
        env = dict(os.environ, GO111MODULE="off", GOPROXY="off", GOFLAGS="", GOTOOLCHAIN="local", CGO_ENABLED="0",
                   GOCACHE=os.path.join(work, "gocache"), GOPATH=os.path.join(work, "gopath"), GOTMPDIR=work)
    elif ext == ".f90":
        command = [tool("gfortran", "gfortran"), "-O1", "-J", work, "-o", binary, program]
    else:
        raise Failed(f"no rule to build a {ext} program")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_S, env=env)
    except subprocess.TimeoutExpired:
        raise Failed(f"the build took more than {BUILD_S} s") from None
    if done.returncode != 0:
        raise Failed("the build failed: " + done.stderr.strip()[-400:])
    return [binary]


def run_program(program, stdin=""):
    """Build `program` in a fresh temporary folder, run it with `stdin`, and return what it printed."""
    work = tempfile.mkdtemp(prefix="build-")
    try:
        command = build(os.path.abspath(program), work)
        try:
            done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=RUN_S)
        except subprocess.TimeoutExpired:
            raise Failed(f"the program ran more than {RUN_S} s") from None
        if done.returncode != 0:
            raise Failed(f"the program exited with {done.returncode}: " + done.stderr.strip()[-400:])
        return done.stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)
