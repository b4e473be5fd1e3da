"""Finding the pids cgroup hierarchy (v1 and v2 layouts), and the live per-job cgroup when available."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from engine.sandbox.cgroup import PidsCgroups, parse_pids_parent

HYBRID_MOUNTS = """\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
HYBRID_CGROUP = "8:pids:/engine\n4:memory:/x/y\n0::/\n"
V2_MOUNTS = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n"
V2_CGROUP = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/clade.scope\n"


def test_v1_pids_hierarchy_is_preferred() -> None:
    path, version = parse_pids_parent(HYBRID_MOUNTS, HYBRID_CGROUP, lambda p: True)
    assert (path, version) == ("/sys/fs/cgroup/pids/engine", "v1")


def test_v2_needs_pids_delegated_to_children() -> None:
    seen = []
    path, version = parse_pids_parent(V2_MOUNTS, V2_CGROUP, lambda p: seen.append(p) or True)
    assert version == "v2"
    assert path == "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/clade.scope" == seen[0]
    with pytest.raises(OSError, match="not enabled"):
        parse_pids_parent(V2_MOUNTS, V2_CGROUP, lambda p: False)


def test_no_hierarchy() -> None:
    with pytest.raises(OSError, match="no pids cgroup"):
        parse_pids_parent("proc /proc proc rw 0 0\n", "0::/\n", lambda p: True)


@pytest.mark.skipif(not PidsCgroups().available, reason="no writable pids cgroup")
def test_job_cgroup_caps_kills_and_goes_away() -> None:
    cg = PidsCgroups().create(3)
    assert cg is not None and os.path.isdir(cg.path)
    with open(os.path.join(cg.path, "pids.max")) as f:
        assert f.read().strip() == "3"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with open(cg.procs_file, "w") as f:
            f.write(str(sleeper.pid))
        assert cg.members() == [sleeper.pid]
        assert cg.kill() == 1
        assert sleeper.wait(timeout=5) == -9
    finally:
        sleeper.kill()
        sleeper.wait()
    assert cg.remove()
    assert not os.path.exists(cg.path)
