"""Readers of a running search run at the lowest CPU priority, so the search does not slow for them.

`runs show` once a second costs ~0.6 s of CPU each time, the live page ~0.2 s a refresh: on a
machine the search keeps busy (2 cores, 2 workers) that CPU is the search's loss (~20 %,
scripts/bench_live.py). A plain `nice` does not help on Linux: with autogroup scheduling
(`/proc/sys/kernel/sched_autogroup_enabled`, on by default) the CPU is shared between
*sessions* first, and the search's sandbox jobs each run in a session of their own
(engine/sandbox/launcher.py), so a reader's session gets a full share whatever its processes'
nice values (measured: a nice-19 reader still took a third of two busy cores). What works is a
session of its own whose autogroup is set to nice 19 (sched(7), "The autogroup feature"):
it then gets ~4 % of a core while the jobs want every cycle, and all of an idle one.

A command started from a shell leads its process group and cannot call setsid(), so the work
runs in a forked child that does; the parent only waits, passes Ctrl-C (and TERM, HUP) on,
and exits with the child's code. Output goes to the same file descriptors. Not Linux, no fork,
or a stdout that is not a file (pytest's capsys): the work runs here, as before.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

AUTOGROUP = Path("/proc/self/autogroup")
LOWEST = 19
PASSED_ON = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _has_real_stdout() -> bool:
    try:
        sys.stdout.fileno()
        sys.stderr.fileno()
        return True
    except (AttributeError, OSError, ValueError):  # io.StringIO, pytest's capture
        return False


def can_yield() -> bool:
    return (
        hasattr(os, "fork")
        and hasattr(os, "setsid")
        and AUTOGROUP.exists()
        and _has_real_stdout()
        and threading.current_thread() is threading.main_thread()
    )  # signals pass on from the main thread only


def lower_this_session() -> None:
    """Lowest priority for this process and its autogroup (call in a session of its own only: the autogroup
    is the whole session's)."""
    for lower in (lambda: os.nice(LOWEST - os.nice(0)), lambda: AUTOGROUP.write_text(str(LOWEST))):
        try:
            lower()
        except OSError:  # no autogroup write access, or nice() refused: the reader competes as before
            pass


def yielding(work: Callable[[], int]) -> int:
    """`work()`'s exit code, `work` run at the lowest priority in a session of its own (see the module)."""
    if not can_yield():
        return work()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    forked: list[int] = []  # the child's pid, once there is one
    pending: list[int] = []  # signals that came before it

    def pass_on(signum, _frame):  # installed before the fork: a Ctrl-C at any moment reaches the work
        if os.getpid() != parent:
            return  # the child, in the instant before it restores its own handlers
        if not forked:
            pending.append(signum)
            return
        try:
            os.kill(forked[0], signum)
        except ProcessLookupError:
            pass

    before = {sig: signal.signal(sig, pass_on) for sig in PASSED_ON}
    try:
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child, whose end is os._exit
            _run_child(work, parent, before)
        forked.append(child)
        for signum in pending:
            os.kill(child, signum)
        _, status = os.waitpid(child, 0)  # retried after a handler runs (PEP 475)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by signal N: the shell's 128 + N


def _run_child(work: Callable[[], int], parent: int, handlers: dict) -> None:  # pragma: no cover - in the child
    code = 1
    try:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        os.setsid()
        _end_with(parent)
        lower_this_session()
        code = work()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # noqa: BLE001 - report as the process would, then leave without the parent's cleanup
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, OSError):
            pass
        os._exit(code)


def _end_with(parent: int) -> None:
    """TERM this process when the command that forked it dies, even by SIGKILL (prctl PR_SET_PDEATHSIG): a
    page must not go on serving, detached, after its command is gone."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: the child outlives a SIGKILLed parent, as any process would
        return
    if os.getppid() != parent:  # it died before the prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)
