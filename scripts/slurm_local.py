"""A single-node Slurm on this machine, for the tests of `--executor slurm` and for trying it.

    python scripts/slurm_local.py start DIR   # prints `export SLURM_CONF=DIR/slurm.conf`
    python scripts/slurm_local.py stop DIR

`start` writes a minimal configuration into DIR (slurm.conf, cgroup.conf, a munge key; all state, logs,
sockets and pid files under DIR too, nothing in /etc), starts munged, slurmctld and slurmd as root, and
waits until `srun hostname` answers. The node is declared with this machine's real CPUs and memory
(`slurmd -C`); munged runs as root too, so only root's processes use this cluster. The settings are
the ones that work in a container without systemd or a writable cgroup tree:
ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, CgroupPlugin=cgroup/v1 (not loaded by those
plugins, but slurmd reads cgroup.conf at start), SelectType=select/cons_tres with CR_Core (CPUs are
allocated, memory is not), the builtin scheduler with no batch delay (a job starts as soon as it is
submitted). No accounting database: `sacct` does not answer here, `squeue` and `scontrol` do.

`stop` ends the three daemons by the pids recorded in DIR. Needs root and Debian's `slurm-wlm` and `munge`
(`apt-get install -y slurm-wlm munge`). Exit 0 when the cluster answers, 1 with the reason on one line when
it cannot start (and whatever it did start is stopped again).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAEMONS = ("slurmd", "slurmctld", "munged")  # stopped in this order
START_TIMEOUT_S = 30.0
PARTITION = "debug"


def start(folder: Path) -> None:
    """Start the cluster whose files live in `folder`; RuntimeError (one line) when it cannot."""
    for tool in ("munged", "slurmctld", "slurmd", "srun"):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            raise RuntimeError(f"{tool} not found (apt-get install -y slurm-wlm munge)")
    if os.geteuid() != 0:
        raise RuntimeError("a local Slurm is started as root (slurmd runs jobs as their users)")
    folder = folder.resolve()
    for sub in ("state", "spool", "log", "munge"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(folder / "munge", 0o700)
    env = {**os.environ, "SLURM_CONF": str(folder / "slurm.conf")}
    try:
        _start_munge(folder)
        _write_config(folder)
        _spawn(folder, "slurmctld", ["slurmctld", "-D", "-i", "-f", str(folder / "slurm.conf")], env)
        _spawn(folder, "slurmd", ["slurmd", "-D", "-f", str(folder / "slurm.conf")], env)
        _wait_for_srun(folder, env)
    except BaseException:
        stop(folder)
        raise


def stop(folder: Path) -> None:
    """End the daemons started for `folder`, by the pids recorded there; waits until they are gone."""
    pids = {}
    for name in DAEMONS:
        pid_file = folder / f"{name}.pid"
        try:
            pids[name] = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            continue
        _signal(pids[name], signal.SIGTERM)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    for name, pid in pids.items():
        if _alive(pid):
            _signal(pid, signal.SIGKILL)
        (folder / f"{name}.pid").unlink(missing_ok=True)


def _start_munge(folder: Path) -> None:
    key = folder / "munge" / "munge.key"
    if not key.exists():
        key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    sock = folder / "munge" / "munge.socket"
    command = [
        "munged", "--foreground", "--force", f"--key-file={key}", f"--socket={sock}",
        f"--pid-file={folder / 'munge' / 'munged.pid'}", f"--log-file={folder / 'log' / 'munged.log'}",
        f"--seed-file={folder / 'munge' / 'munged.seed'}",
    ]  # fmt: skip
    # as root (--force): the folder may sit where the munge user cannot go (pytest's 0700 temporary folders);
    # the cluster's only users are root's processes
    _spawn(folder, "munged", command, dict(os.environ))
    _wait(lambda: sock.exists(), "munged did not open its socket", folder / "log" / "munged.log")


def _write_config(folder: Path) -> None:
    node = _node_line()
    ctld_port, slurmd_port = _free_port(), _free_port()
    host = socket.gethostname()
    conf = f"""\
ClusterName=clade-local
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={folder / "munge" / "munge.socket"}
StateSaveLocation={folder / "state"}
SlurmdSpoolDir={folder / "spool"}
SlurmctldPidFile={folder / "slurmctld.pid.own"}
SlurmdPidFile={folder / "slurmd.pid.own"}
SlurmctldLogFile={folder / "log" / "slurmctld.log"}
SlurmdLogFile={folder / "log" / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
{node} State=UNKNOWN
PartitionName={PARTITION} Nodes={node.split()[0].split("=")[1]} Default=YES MaxTime=INFINITE State=UP
"""
    (folder / "slurm.conf").write_text(conf)
    (folder / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\nIgnoreSystemd=yes\n")


def _node_line() -> str:
    """'NodeName=host CPUs=.. ... RealMemory=..' as slurmd sees this machine (less 1 GiB of memory for the OS)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    line = out.splitlines()[0].strip()
    memory = re.search(r"RealMemory=(\d+)", line)
    if memory:
        usable = max(512, int(memory.group(1)) - 1024)
        line = line.replace(memory.group(0), f"RealMemory={usable}")
    return line


def _spawn(folder: Path, name: str, command: list[str], env: dict[str, str]) -> None:
    log = open(folder / "log" / f"{name}.out", "ab")  # noqa: SIM115 - the daemon keeps it
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True)
    log.close()
    (folder / f"{name}.pid").write_text(f"{proc.pid}\n")
    time.sleep(0.2)
    if proc.poll() is not None:
        raise RuntimeError(f"{name} exited at start ({proc.returncode}): {_tail(folder / 'log' / f'{name}.out')}")


def _wait_for_srun(folder: Path, env: dict[str, str]) -> None:
    def answers() -> bool:
        try:
            done = subprocess.run(["srun", "-N1", "-t", "1", "hostname"], env=env, capture_output=True, timeout=10)
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0

    _wait(answers, "srun hostname did not answer", folder / "log" / "slurmd.log")


def _wait(ready, what: str, log: Path) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.3)
    raise RuntimeError(f"{what} within {START_TIMEOUT_S:g} s: {_tail(log)}")


def _tail(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][:300] if lines else "(empty log)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _signal(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: slurm_local.py start|stop DIR", file=sys.stderr)
        return 2
    folder = Path(argv[1])
    if argv[0] == "stop":
        stop(folder)
        return 0
    try:
        start(folder)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        print(f"slurm_local: cannot start: {exc}", file=sys.stderr)
        return 1
    print(f"export SLURM_CONF={folder.resolve() / 'slurm.conf'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
