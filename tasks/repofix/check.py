"""Runs inside a fresh sandbox job: an instance's hidden tests on the agent's repository, with an unforgeable verdict.

Standalone (standard library only), started as `python -I check.py`. The
repository was edited by a model and is not trusted, so its code never runs
in this process:

1. this process (the checker) makes itself non-dumpable (nothing can read its
   memory through /proc or ptrace) and forks the candidate's processes first
   (one, plus SPARES to replace one that hangs), before any secret is read,
   so their memory never holds the key or the expectations;
2. it reads the problem (instance id, the candidate repository's files, the
   hidden cases) and a one-time key, deletes both files, writes the
   repository into cand/ and tells a candidate process to start (in cand/,
   its own session, its output to /dev/null);
3. for each case it sends only the case's code; the candidate process runs it
   in a fresh namespace (the repository's modules re-imported for every case,
   so cases do not leak state into each other) and sends back `result` as
   tagged JSON (never pickle, never eval) or the exception's class name; the
   checker alone knows the expectation and compares plain values: tuples as
   lists, sets as sorted lists, dict keys as JSON would write them, numbers
   with math.isclose;
4. a case gets CASE_SECONDS, all cases TOTAL_SECONDS. A case that runs out of
   time fails and its process is killed; the next case runs in a spare
   process; when no spare is left (or the total time is spent) the remaining
   cases fail;
5. it kills every candidate process and writes verdict.json: cases passed,
   cases in all, a line per case, and an HMAC of (instance id, passed, total)
   under the key. The engine checks the HMAC; a repository that writes its
   own verdict, prints "passed", kills a process or loops forever only fails.
"""

import ctypes
import hashlib
import hmac
import json
import math
import os
import select
import signal
import sys
import time

CASE_SECONDS = 3.0
TOTAL_SECONDS = 15.0
SPARES = 2  # candidate processes kept ready to replace one that timed out or died
MAX_LINE = 8 * 2**20  # one answer from the candidate
MAX_DEPTH = 100


# ----- tagged JSON: the only thing that crosses the pipe ---------------------------------------------
def encode(value, depth=0):
    """A plain-data image of `value` (TypeError for anything that is not plain data)."""
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
    if isinstance(value, (set, frozenset)):
        return {"$s": [encode(v, depth + 1) for v in value]}
    if isinstance(value, (bytes, bytearray)):
        return {"$b": bytes(value).hex()}
    raise TypeError(f"a value of type {type(value).__name__} is not plain data")


def decode(value, depth=0):
    """The value `encode` described, rebuilt from builtin types only (ValueError if malformed)."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [decode(v, depth + 1) for v in value]
    if isinstance(value, dict) and len(value) == 1:
        ((tag, inner),) = value.items()
        if tag == "$t" and isinstance(inner, list):
            return tuple(decode(v, depth + 1) for v in inner)
        if tag == "$d" and isinstance(inner, list):
            return {_key(decode(k, depth + 1)): decode(v, depth + 1) for k, v in inner}  # keys as JSON writes them
        if tag == "$s" and isinstance(inner, list):
            return frozenset(decode(v, depth + 1) for v in inner)
        if tag == "$b" and isinstance(inner, str):
            return bytes.fromhex(inner)
        if tag == "$f" and inner in ("inf", "-inf", "nan"):
            return float(inner)
        if tag == "$i" and isinstance(inner, str):
            return int(inner)
    raise ValueError("malformed value")


# ----- comparison: as plain JSON-like values -------------------------------------------------------
def _key(k):
    """A dict key as json.dumps would write it."""
    if isinstance(k, str):
        return k
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, float):
        return repr(k) if math.isfinite(k) else {"inf": "Infinity", "-inf": "-Infinity"}.get(repr(k), "NaN")
    if isinstance(k, (int, float)):
        return str(k)
    return json.dumps(normalise(k), sort_keys=True)


def _order(v):
    return (type(v).__name__, json.dumps(v, sort_keys=True, default=str))


def normalise(value, depth=0):
    """Tuples -> lists, sets -> sorted lists, dict pairs -> dict with JSON keys, bytes -> hex."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    if isinstance(value, (list, tuple)):
        return [normalise(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {
            _key(normalise(k, depth + 1)) if not isinstance(k, str) else k: normalise(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, (set, frozenset)):
        return sorted((normalise(v, depth + 1) for v in value), key=_order)
    if isinstance(value, bytes):
        return value.hex()
    return value


def same(got, want):
    """Plain-value equality; bools only equal bools, numbers compare with isclose."""
    if isinstance(got, bool) or isinstance(want, bool):
        return isinstance(got, bool) and isinstance(want, bool) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        if isinstance(got, int) and isinstance(want, int):
            return got == want
        if math.isnan(got) or math.isnan(want):
            return math.isnan(got) and math.isnan(want)
        return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(same(a, b) for a, b in zip(got, want))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(same(got[k], want[k]) for k in got)
    return type(got) is type(want) and got == want


def _brief(value):
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


# ----- the candidate processes -------------------------------------------------------------------------
def _fresh_modules(root):
    """Forget every module loaded from the repository, so each case imports it anew."""
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) or ""
        if isinstance(where, str) and where.startswith(root):
            del sys.modules[name]


def serve(inp, out):
    """Run each case's code in a fresh namespace and send back its `result` or its exception."""
    root = os.getcwd()
    sys.path.insert(0, root)
    sys.dont_write_bytecode = True

    def send(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    for line in inp:
        try:
            code = json.loads(line)["code"]
        except Exception as exc:  # noqa: BLE001
            send({"unsendable": f"bad request: {exc}"})
            continue
        _fresh_modules(root)
        namespace = {"__name__": "__case__"}
        try:
            exec(compile(code, "<case>", "exec"), namespace)  # noqa: S102 - in the child, in the sandbox
        except BaseException as exc:  # noqa: BLE001 - reported to the checker as the case's exception
            send({"raise": [type(exc).__name__, str(exc)[:300]]})
            continue
        try:
            send({"ok": encode(namespace.get("result"))})
        except BaseException as exc:  # noqa: BLE001 - a result that is not plain data fails the case
            send({"unsendable": f"{type(exc).__name__}: {exc}"[:300]})


def _candidate_process(fd_in, fd_out):
    """A forked child: forked before any secret was read; serves cases once told to start."""
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        inp = os.fdopen(fd_in, "r", encoding="utf-8")
        go = json.loads(inp.readline() or "null")
        if isinstance(go, dict) and go.get("start"):
            os.chdir("cand")
            serve(inp, os.fdopen(fd_out, "w", encoding="utf-8"))
    finally:
        os._exit(0)


class CandidateError(Exception):
    pass


class Candidate:
    """One forked candidate process and the two pipes to it."""

    def __init__(self):
        to_r, self.fd_to = os.pipe()
        self.fd_from, from_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.fd_to)
            os.close(self.fd_from)
            _candidate_process(to_r, from_w)
        os.close(to_r)
        os.close(from_w)
        self.buffer = b""

    def send(self, obj, deadline):
        view = memoryview((json.dumps(obj) + "\n").encode())
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            _, ready, _ = select.select([], [self.fd_to], [], left)
            if ready:
                try:
                    view = view[os.write(self.fd_to, view) :]
                except OSError:
                    raise CandidateError("the candidate's process ended") from None

    def receive(self, deadline):
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
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
            answer = json.loads(line)
        except ValueError:
            raise CandidateError("the candidate's process wrote something unreadable") from None
        if not isinstance(answer, dict):
            raise CandidateError("the candidate's process wrote something unreadable")
        return answer

    def kill(self):
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            try:
                target()
            except OSError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        for fd in (self.fd_to, self.fd_from):
            try:
                os.close(fd)
            except OSError:
                pass


# ----- the checker ------------------------------------------------------------------------------------
def _non_dumpable():
    """PR_SET_DUMPABLE 0: /proc/<this>/mem, environ, fd and ptrace are closed to the same user's processes."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _safe(path):
    parts = path.replace("\\", "/").split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def write_repo(files):
    os.makedirs("cand", exist_ok=True)
    for path, text in files.items():
        if not (isinstance(path, str) and isinstance(text, str) and _safe(path)):
            continue
        target = os.path.join("cand", path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)


def judge(case, answer):
    """(passed, one line) for one case given the candidate's answer."""
    if "unsendable" in answer:
        return False, f"result is not plain data: {answer['unsendable']}"[:300]
    if "raise" in answer:
        name, message = (list(answer.get("raise") or []) + ["?", ""])[:2]
        if "raises" in case:
            if str(name) == case["raises"]:
                return True, f"raised {name}"
            return False, f"raised {name}, expected {case['raises']}"
        return False, f"raised {name}: {str(message).splitlines()[0] if str(message).strip() else ''}"[:300]
    if "raises" in case:
        return False, f"expected {case['raises']}, got no exception"
    try:
        got = normalise(decode(answer.get("ok")))
    except (ValueError, TypeError, KeyError, RecursionError):
        return False, "the candidate sent something unreadable"
    want = normalise(case.get("expect"))
    if same(got, want):
        return True, "ok"
    return False, f"expected {_brief(want)}, got {_brief(got)}"


def run_cases(cases, candidates):
    """[(name, passed, detail)] for every case, in order, using the candidate processes one after another."""
    results = []
    end = time.monotonic() + TOTAL_SECONDS
    current = None
    for case in cases:
        name = str(case.get("name", "?"))
        if current is None:
            if not candidates or time.monotonic() >= end:
                results.append((name, False, "not run: no candidate process or time left"))
                continue
            current = candidates.pop(0)
            try:
                current.send({"start": True}, end)
            except (TimeoutError, CandidateError):
                current.kill()
                current = None
                results.append((name, False, "the candidate's process did not start"))
                continue
        deadline = min(end, time.monotonic() + CASE_SECONDS)
        try:
            current.send({"code": case["code"]}, deadline)
            answer = current.receive(deadline)
        except TimeoutError:
            current.kill()
            current = None
            results.append((name, False, f"took more than {CASE_SECONDS:g} s"))
            continue
        except CandidateError as exc:
            current.kill()
            current = None
            results.append((name, False, str(exc)))
            continue
        passed, detail = judge(case, answer)
        results.append((name, passed, detail))
    if current is not None:
        current.kill()
    return results


def check():
    _non_dumpable()
    candidates = [Candidate() for _ in range(1 + SPARES)]  # before the key and the cases are read
    with open("key", encoding="ascii") as fh:
        key = fh.read().strip().encode()
    with open("problem.json", encoding="utf-8") as fh:
        problem = json.load(fh)
    for name in ("key", "problem.json"):
        os.unlink(name)
    write_repo(problem.get("files") or {})
    cases = list(problem.get("cases") or [])
    try:
        results = run_cases(cases, candidates)
    finally:
        for candidate in candidates:
            candidate.kill()
    passed, total = sum(1 for _, ok, _ in results if ok), len(cases)
    mac = hmac.new(key, f"{problem['instance_id']}|{passed}|{total}".encode(), hashlib.sha256).hexdigest()
    if os.path.lexists("verdict.json"):
        os.unlink("verdict.json")
    fd = os.open("verdict.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"passed": passed, "total": total, "results": [list(r) for r in results], "mac": mac}, fh)


if __name__ == "__main__":
    check()
