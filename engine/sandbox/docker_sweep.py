"""Removing sandbox containers: one job's, a closed sandbox's, and those of engines that died.

Containers are labelled with the sandbox instance, the engine's pid and the
host name (see `docker_options.container_options`), so that `close()` finds
its own and the next engine on the host removes those an engine killed with
SIGKILL left behind. Blocking calls; failures are logged, never raised.
"""

from __future__ import annotations

import logging
import socket
from typing import Any

from .cgroup import pid_alive
from .docker_daemon import _one_line
from .docker_options import LABEL

log = logging.getLogger(__name__)


def _close(client: Any, live: dict[str, Any], instance: str) -> None:
    """Remove the sandbox's containers still there (known, or found by its label), close the client."""
    for container in list(live.values()):
        if _remove_container(container):
            live.pop(container.id, None)
    try:
        left = client.containers.list(all=True, filters={"label": f"clade.instance={instance}"}, ignore_removed=True)
    except Exception:  # noqa: BLE001 - the daemon is gone: the next engine's sweep removes them
        left = []
    for container in left:
        _remove_container(container)
    try:
        client.close()
    except Exception:  # noqa: BLE001, S110 - closing a dead connection
        pass


def _remove_container(container: Any) -> bool:
    """Force-remove (kills it first if running). True when it is gone. Blocking; never raises."""
    try:
        container.remove(force=True)
    except Exception as exc:  # noqa: BLE001 - any failure is logged; a later sweep gets it
        status = getattr(exc, "status_code", None)
        if status == 404:
            return True
        if status == 409 and "in progress" in str(exc):
            return True  # someone else is removing it
        log.warning(
            "docker sandbox: could not remove container %s: %s",
            str(getattr(container, "id", "?"))[:12],
            _one_line(exc),
        )
        return False
    return True


def _remove_stale_containers(client: Any, errors: tuple[type[BaseException], ...]) -> None:
    """Remove this host's sandbox containers whose engine is no longer alive (killed with -9)."""
    host = socket.gethostname()
    try:
        found = client.containers.list(
            all=True,
            filters={"label": [f"{LABEL}=1", f"clade.host={host}"]},
            ignore_removed=True,
        )
    except errors as exc:
        log.warning("docker sandbox: could not list old containers: %s", _one_line(exc))
        return
    stale = 0
    for container in found:
        labels = container.labels or {}
        pid = labels.get("clade.engine_pid", "")
        if labels.get("clade.host") != host or not pid.isdigit() or pid_alive(int(pid)):
            continue
        if _remove_container(container):
            stale += 1
    if stale:
        log.warning("docker sandbox: removed %d container(s) left by engines that died", stale)
