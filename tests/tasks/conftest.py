"""Fixtures of the task tests: the Polyglot exercises in ../shared and a docker sandbox of the Polyglot image."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasks.polyglot_support import HAVE, SAMPLE, SHARED, WHY


@pytest.fixture
def polyglot_dir(monkeypatch) -> Path:
    """CLADE_POLYGLOT_DIR at the shared copy (as a user points at their own), for this test."""
    if not HAVE:
        pytest.skip(WHY)
    monkeypatch.setenv("CLADE_POLYGLOT_DIR", str(SHARED))
    return SHARED


@pytest.fixture
def docker_polyglot(polyglot_dir):
    """A docker sandbox of the Polyglot image (built from Debian's packages on first use), or a skip saying why."""
    from engine.sandbox import make_sandbox
    from engine.sandbox.docker_build import POLYGLOT_IMAGE
    from engine.sandbox.docker_daemon import docker_available

    ok, why = docker_available(POLYGLOT_IMAGE)
    if not ok:
        pytest.skip(f"docker: {why}")
    from tasks.polyglot.task import PolyglotTask

    task = PolyglotTask(instances_path=",".join(SAMPLE))
    return make_sandbox("docker", image=POLYGLOT_IMAGE, toolchains=task.toolchains())
