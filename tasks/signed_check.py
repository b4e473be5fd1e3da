"""A check job whose verdict is signed: the tasks that grade by running tests in a sandbox (humaneval, repofix).

The job gets the task's check script, the problem as JSON, and `key`, a fresh secret of its own. The script
runs the agent's code under test, keeping the key from it (each task's check.py says how), and signs its
verdict with the key (HMAC-SHA256), so a verdict the candidate forges carries no valid signature and is
ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path

from engine.sandbox.base import SandboxJob, SandboxLimits
from tasks.base import CheckRun

VERDICT_FILE = "verdict.json"


def signed_check_job(
    script: Path, problem: Mapping, limits: SandboxLimits, python: str | None, hidden: tuple[str, ...]
) -> SandboxJob:
    """`script` run isolated (-I) by `python` (None: the engine's) on `problem`, with a fresh key to sign by."""
    files = {
        "check.py": script.read_bytes(),
        "problem.json": json.dumps(problem).encode(),
        "key": secrets.token_hex(32).encode(),
    }
    return SandboxJob(
        files=files,
        command=[python or sys.executable, "-I", "check.py"],
        answer_file=VERDICT_FILE,
        limits=limits,
        hidden=hidden,
    )


def signed_by_the_job(check: CheckRun, message: str, mac: str) -> bool:
    """Whether `mac` is the job's own signature of `message` (what the check script signs)."""
    key = bytes(check.job.files["key"]).strip()
    expected = hmac.new(key, message.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, mac)
