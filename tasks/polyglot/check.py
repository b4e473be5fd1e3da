"""Runs inside a sandbox job: one Polyglot exercise's own tests on a candidate solution.

Standalone (standard library only). Two uses:

- grading, `python -I check.py` in a fresh job: the checker reads a one-time
  key and the problem (the exercise's files with the candidate's solution
  files in place, the language, the runner's paths) and deletes both files,
  makes itself non-dumpable (the tests run the candidate's code, which must
  not read the key from this process's memory), writes the exercise into
  a folder named after it (CMake names the project after its folder), runs
  the language's test commands there and writes verdict.json: the
  tests that passed, the tests in all, whether the run passed, the output's
  tail and an HMAC of (exercise, passed, total, passed-all) under the key;
- the agent's own test runs, `python tests.py --workspace` from its
  workspace (no key, nothing signed; tests.json beside it says the language
  and where the toolchains' parts are): the same commands on the workspace,
  their output printed, so what the agent sees is what grading runs.

The tests run as each track's own test runner runs them, with every test
enabled (Aider's benchmark does the same: Rust's ignored tests included,
Java's `@Disabled` and JavaScript's `xtest` lifted, C++ built with
EXERCISM_RUN_ALL_TESTS). An exercise passes when the runner exits 0 and
its own summary counts no failure and at least one pass.
"""

import ctypes
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import subprocess
import sys

TEST_SECONDS = 180  # each command of an exercise's build and test run (Aider's harness allows 3 minutes)
TAIL_BYTES = 6000  # of the runner's output kept in the verdict


# ----- each language's test run ----------------------------------------------------------------------
def _enable_all(language, root):
    """Lift what keeps a track's tests from running by default (as every Polyglot harness does)."""
    patterns = {
        "java": [(re.compile(r"^\s*@Disabled(\(.*?\))?\s*$", re.M), "")],
        "javascript": [(re.compile(r"\bxtest\("), "test("), (re.compile(r"\bxit\("), "it(")],
    }.get(language, [])
    suffix = {"java": ".java", "javascript": ".spec.js"}.get(language)
    if not patterns:
        return
    for folder, _, names in os.walk(root):
        for name in names:
            if not name.endswith(suffix) or (language == "java" and "test" not in folder.split(os.sep)):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for pattern, replacement in patterns:
                text = pattern.sub(replacement, text)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)


def _java_sources(root, part):
    found = []
    for folder, _, names in os.walk(os.path.join(root, "src", part)):
        found += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".java")]
    return found


DATA_DIR = "/clade-data"  # where a docker job finds the host's files it reads (engine/sandbox/docker_options.py)


def _located(path):
    """`path` as this job sees it: itself, or under DATA_DIR (docker), else None; `dir/*` (a classpath
    wildcard) by its folder."""
    for seen in (path, DATA_DIR + path if path.startswith("/") else None):
        if seen and os.path.exists(seen[:-2] if seen.endswith("/*") else seen):
            return seen
    return None


def pick(runner, key):
    """The first of the runner's candidates for `key` (a path, a path list, or a bare command name) that is
    there, each path as the job sees it (the engine's own under bwrap and process, under DATA_DIR in docker)."""
    for candidate in runner.get(key) or []:
        if os.path.sep not in candidate:
            return candidate
        parts = [_located(p) for p in candidate.split(os.pathsep) if p]
        if parts and all(parts):
            return os.pathsep.join(parts)
    return ""


def _catch_wrapper(root, catch_main):
    """The folder CMake configures: the exercise itself, or, given Catch's main already compiled (the same
    catch.hpp in every C++ exercise: 7 s of g++ each time), a project around it that links that object through
    the track's own EXERCISM_COMMON_CATCH switch (`catchlib`, the track maintainers' shared Catch)."""
    if not catch_main:
        return root
    wrapper = os.path.join(os.path.dirname(os.path.abspath(root)), ".cmake")
    os.makedirs(wrapper, exist_ok=True)
    with open(os.path.join(wrapper, "CMakeLists.txt"), "w", encoding="utf-8") as fh:
        fh.write(
            "cmake_minimum_required(VERSION 3.9)\nproject(polyglot CXX)\n"
            "add_library(catchlib OBJECT IMPORTED)\n"
            f"set_target_properties(catchlib PROPERTIES IMPORTED_OBJECTS {json.dumps(catch_main)})\n"
            "set(EXERCISM_COMMON_CATCH ON)\n"
            f"add_subdirectory({json.dumps(os.path.abspath(root))} exercise)\n"
        )
    return wrapper


def _go_env(work, runner):
    """Go's variables: its build cache a copy of the shared one (Go writes to its cache), no network."""
    cache = os.path.join(work, ".gocache")
    shared = pick(runner, "go_cache")
    if shared and not os.path.exists(cache):
        shutil.copytree(shared, cache)
    env = {"GOCACHE": cache, "GOPATH": os.path.join(work, ".gopath"), "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    env.update(GO111MODULE="on", GOTOOLCHAIN="local", CGO_ENABLED="0", GOTELEMETRY="off")
    return env


def _cargo_env(work, runner):
    """Cargo's variables: a home of its own (it locks files there), crates from a local directory registry."""
    home = os.path.join(work, ".cargo-home")
    os.makedirs(home, exist_ok=True)
    registry = pick(runner, "cargo_registry")
    if registry:
        with open(os.path.join(home, "config.toml"), "w", encoding="utf-8") as fh:
            fh.write(
                '[source.crates-io]\nreplace-with = "local"\n\n'
                f"[source.local]\ndirectory = {json.dumps(registry)}\n\n[net]\noffline = true\n"
            )
    return {"CARGO_HOME": home, "CARGO_TARGET_DIR": os.path.join(work, ".target"), "CARGO_NET_OFFLINE": "true"}


def commands(language, root, runner):
    """[(argv, extra env)] to run in `root` (the exercise), in order; `runner`: where the toolchains' parts are."""
    work = os.path.dirname(os.path.abspath(root))
    if language == "python":
        tests = sorted(n for n in os.listdir(root) if n.endswith("_test.py"))
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *tests]
        return [(argv, {"PYTHONDONTWRITEBYTECODE": "1"})]
    if language == "go":
        return [([pick(runner, "go") or "go", "test", "-count=1", "-v", "./..."], _go_env(work, runner))]
    if language == "rust":
        return [(["cargo", "test", "--offline", "--", "--include-ignored"], _cargo_env(work, runner))]
    if language == "cpp":
        build = os.path.join(work, ".build")
        source = _catch_wrapper(root, pick(runner, "catch_main"))
        configure = ["cmake", "-S", source, "-B", build, "-DEXERCISM_RUN_ALL_TESTS=ON"]
        return [(configure, {}), (["cmake", "--build", build, "--", "-j2"], {})]
    if language == "java":
        jars = pick(runner, "java_classpath")
        out = os.path.join(work, ".classes")
        sources = _java_sources(root, "main") + _java_sources(root, "test")
        javac = ["javac", "-nowarn", "-encoding", "UTF-8", "-d", out, "-cp", jars, *sources]
        run = ["java", "-jar", pick(runner, "junit_launcher"), "--disable-banner", "--details=summary"]
        run += ["--disable-ansi-colors", "-cp", os.pathsep.join([out, jars]), "--scan-classpath", out]
        return [(javac, {}), (run, {})]
    if language == "javascript":
        modules = pick(runner, "node_modules")
        link = os.path.join(root, "node_modules")
        if modules and not os.path.lexists(link):
            os.symlink(modules, link)  # babel resolves the exercise's preset from the exercise's folder up
        jest = os.path.join(modules, "jest", "bin", "jest.js")
        argv = ["node", jest, "--ci", "--colors=false", "--cache=false", "--rootDir", root, "--roots", root]
        return [(argv, {"NODE_PATH": modules})]
    raise ValueError(f"unknown language {language!r}")


# ----- reading the runners' summaries ----------------------------------------------------------------------
def _sum(pattern, text):
    return sum(int(m) for m in re.findall(pattern, text))


def counts(language, output):
    """(passed, failed) as the language's test runner reports them in `output`."""
    if language == "python":
        summary = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
        last = summary[-1] if summary else ""
        failed = _sum(r"(\d+) failed", last) + _sum(r"(\d+) errors?\b", last)
        return _sum(r"(\d+) passed", last), failed
    if language == "go":
        passed = len(re.findall(r"^\s*--- PASS: ", output, re.M))
        return passed, len(re.findall(r"^\s*--- FAIL: ", output, re.M))
    if language == "rust":
        found = re.findall(r"^test result: \w+\. (\d+) passed; (\d+) failed", output, re.M)
        return sum(int(p) for p, _ in found), sum(int(f) for _, f in found)
    if language == "cpp":
        match = re.search(r"All tests passed \(\d+ assertions? in (\d+) test cases?\)", output)
        if match:
            return int(match.group(1)), 0
        match = re.search(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed", output)
        if match:
            return int(match.group(2)), int(match.group(3))
        match = re.search(r"test cases:\s*(\d+)\s*\|\s*(\d+) failed", output)
        return (0, int(match.group(2))) if match else (0, 0)
    if language == "java":
        return _sum(r"\[\s*(\d+) tests successful\s*\]", output), _sum(r"\[\s*(\d+) tests failed\s*\]", output)
    if language == "javascript":
        line = next((ln for ln in output.splitlines() if ln.startswith("Tests:")), "")
        return _sum(r"(\d+) passed", line), _sum(r"(\d+) failed", line)
    raise ValueError(f"unknown language {language!r}")


def run_tests(language, root, runner, timeout=TEST_SECONDS, suite=None):
    """(passed, failed, passed_all, output): the exercise's tests in `root`, every test enabled.

    `suite`: for an exercise whose solution is a test suite (Go's counter): {"variable": name, "right": [...],
    "wrong": [...]}; the suite runs once per value of the variable (an implementation each) and must pass on
    the right ones and fail on the wrong ones; each implementation judged as it should be counts as a pass."""
    if suite:
        return _judge_suite(language, root, runner, timeout, suite)
    _enable_all(language, root)
    return _run(language, root, runner, timeout, {})


def _judge_suite(language, root, runner, timeout, suite):
    passed, failed, output = 0, 0, ""
    for value in [*suite["right"], *suite["wrong"]]:
        ran, _, ok, said = _run(language, root, runner, timeout, {suite["variable"]: value})
        correct = value in suite["right"]
        # a faulty implementation is caught by a failing test, not by a suite that does not build
        right = ok and ran > 0 if correct else not ok and re.search(r"^\s*--- FAIL: ", said, re.M) is not None
        passed, failed = passed + int(right), failed + int(not right)
        kind = "correct" if correct else "faulty"
        output += f"--- {suite['variable']}={value} ({kind}): {'judged right' if right else 'judged wrong'}\n"
        output += said[-800:] + "\n"
    return passed, failed, failed == 0 and passed > 0, output


def _execute(argv, root, env, timeout):
    """(exit code, output) of one command in its own process group, the whole group killed when it runs over
    `timeout` (a test that hangs in a grandchild of cmake or cargo must not hold the pipe open)."""
    try:
        process = subprocess.Popen(
            argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        return -1, f"\n[could not run {argv[0]}: {exc}]\n"
    try:
        out, _ = process.communicate(timeout=timeout)
        return process.returncode, out.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        out, _ = process.communicate()
        return -1, out.decode("utf-8", "replace") + f"\n[the tests took over {timeout} s]\n"


def _run(language, root, runner, timeout, variables):
    output, code = "", 0
    for argv, extra in commands(language, root, runner):
        code, said = _execute(argv, root, dict(os.environ, **extra, **variables), timeout)
        output += said
        if code != 0:
            break
    passed, failed = counts(language, output)
    return passed, failed, code == 0 and failed == 0 and passed > 0, output


# ----- grading -----------------------------------------------------------------------------------------
def _non_dumpable():
    """PR_SET_DUMPABLE 0: /proc/<this>/mem and ptrace are closed to the tests' processes (same user)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _safe(path):
    parts = path.replace("\\", "/").split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def write_exercise(files, root):
    for path, text in files.items():
        if not (isinstance(path, str) and isinstance(text, str) and _safe(path)):
            continue
        target = os.path.join(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)


def signed_line(key, instance_id, passed, total, passed_all):
    message = f"{instance_id}|{passed}|{total}|{int(passed_all)}"
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def grade():
    with open("key", encoding="ascii") as fh:
        key = fh.read().strip().encode()
    with open("problem.json", encoding="utf-8") as fh:
        problem = json.load(fh)
    for name in ("key", "problem.json"):
        os.unlink(name)
    _non_dumpable()
    os.environ.update({str(k): str(v) for k, v in (problem.get("env") or {}).items()})
    root = os.path.abspath(problem["name"])
    write_exercise(problem.get("files") or {}, root)
    language = problem["language"]
    runner = problem.get("runner") or {}
    timeout = problem.get("timeout", TEST_SECONDS)
    passed, failed, passed_all, output = run_tests(language, root, runner, timeout, problem.get("suite"))
    total = passed + failed
    mac = signed_line(key, problem["instance_id"], passed, total, passed_all)
    if os.path.lexists("verdict.json"):
        os.unlink("verdict.json")
    fd = os.open("verdict.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        record = {"passed": passed, "total": total, "passed_all": passed_all, "mac": mac}
        json.dump({**record, "output": output[-TAIL_BYTES:]}, fh)


def agent_run():
    """The agent's test run: the workspace's tests as grading runs them, the output printed; exit 1 on failure."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests.json"), encoding="utf-8") as fh:
        setup = json.load(fh)
    os.environ.update({str(k): str(v) for k, v in (setup.get("env") or {}).items()})
    root = os.getcwd()
    passed, failed, passed_all, output = run_tests(
        setup["language"], root, setup.get("runner") or {}, suite=setup.get("suite")
    )
    print(output[-TAIL_BYTES:])
    print(f"{passed} passed, {failed} failed")
    return 0 if passed_all else 1


if __name__ == "__main__":
    sys.exit(agent_run() if len(sys.argv) > 1 and sys.argv[1] == "--workspace" else grade())
