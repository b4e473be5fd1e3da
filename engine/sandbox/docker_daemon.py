"""The Docker daemon and the sandbox image: connecting, saying why not in one line, building.

`docker_available` answers whether the docker sandbox can run here (the SDK,
a daemon answering a ping, the image) without raising; `ensure_image` builds
`DEFAULT_IMAGE` from `docker_image/Dockerfile` the first time it is missing
and never pulls a user-given image. The SDK is imported only inside these
calls, so the module imports without it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_IMAGE = "clade-sandbox:py3.11"
IMAGE_DIR = Path(__file__).with_name("docker_image")  # holds the Dockerfile of DEFAULT_IMAGE

_PING_TIMEOUT_S = 3
_API_TIMEOUT_S = 60  # create / start / kill / remove; waiting for the job has no timeout
_BUILD_TIMEOUT_S = 1800
_MAX_POOL = 128  # connections to the daemon: three long-lived ones per job in flight


def _connect(timeout: float) -> tuple[Any, str]:
    """(a client whose daemon answered ping, '') or (None, one line saying why). Never raises."""
    try:
        import docker
    except ImportError:
        return None, "the docker SDK is not installed (pip install docker)"
    try:
        client = docker.from_env(timeout=timeout, max_pool_size=_MAX_POOL)
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable", said in one line
        return None, _daemon_down(exc)
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001
        client.close()
        return None, _daemon_down(exc)
    return client, ""


def _daemon_down(exc: BaseException) -> str:
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    text = str(exc)
    if "FileNotFoundError" in text or "No such file" in text:
        why = "no socket there (is the daemon running?)"
    elif "PermissionError" in text or "Permission denied" in text:
        why = "permission denied (is your user in the 'docker' group?)"
    elif "Connection refused" in text or "ConnectionRefused" in text:
        why = "connection refused (is the daemon running?)"
    elif "timed out" in text.lower():
        why = "no answer within the time limit"
    else:
        why = _one_line(exc)
    return f"no Docker daemon answers at {where}: {why}"


def _image_present(client: Any, image: str) -> bool:
    import docker.errors

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return False
    return True


def docker_available(image: str | None = None, *, build: bool = True) -> tuple[bool, str]:
    """(True, '') if the docker sandbox can run here with `image`; else (False, one line why). Never raises.

    The SDK must import and the daemon answer a ping within a few seconds. With
    an image, it must exist locally, or be `DEFAULT_IMAGE` and `build` be True
    (it is then built on first use).
    """
    client, why = _connect(_PING_TIMEOUT_S)
    if client is None:
        return False, why
    try:
        if image is not None and not _image_present(client, image):
            if image != DEFAULT_IMAGE:
                return False, f"image {image!r} is not on this machine (run: docker pull {image})"
            if not build:
                return False, f"image {image!r} is not built yet (--sandbox docker builds it)"
        return True, ""
    except Exception as exc:  # noqa: BLE001
        return False, f"the Docker daemon failed: {_one_line(exc)}"
    finally:
        client.close()


def ensure_image(client: Any, image: str = DEFAULT_IMAGE) -> None:
    """Make sure `image` is on the daemon: build `DEFAULT_IMAGE` when missing; RuntimeError otherwise.

    A user-given image is never pulled: the error says to `docker pull` it.
    """
    import docker.errors

    try:
        if _image_present(client, image):
            return
    except docker.errors.DockerException as exc:
        raise RuntimeError(f"could not look up image {image!r}: {_one_line(exc)}") from None
    if image != DEFAULT_IMAGE:
        raise RuntimeError(f"image {image!r} is not on this machine; run `docker pull {image}` first")
    log.warning(
        "docker sandbox: building image %s (python:3.11-slim + numpy, from %s); "
        "first time only, it needs network access and takes a minute or two",
        image,
        IMAGE_DIR / "Dockerfile",
    )
    try:
        client.images.build(path=str(IMAGE_DIR), tag=image, rm=True, forcerm=True, timeout=_BUILD_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - BuildError, APIError, a dropped connection: one line
        raise RuntimeError(f"could not build image {image!r}: {_one_line(exc)}") from None
    log.warning("docker sandbox: image %s built", image)


def _one_line(exc: BaseException | None) -> str:
    """A daemon error in one line: the daemon's explanation when there is one."""
    text = str(getattr(exc, "explanation", None) or exc or type(exc).__name__)
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."
