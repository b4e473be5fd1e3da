"""The Docker daemon and the sandbox image: connecting, saying why not in one line, building.

`docker_available` answers whether the docker sandbox can serve here (the
SDK, a daemon answering a ping, the image there or buildable now) without
raising; `ensure_image` builds the sandbox's own images when missing (offline,
from Debian's packages: `docker_build`; else `DEFAULT_IMAGE` from
`docker_image/Dockerfile`) and never pulls a user-given image. The SDK is imported only inside these
calls, so the module imports without it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from .docker_build import DEFAULT_IMAGE, RECIPES, build_offline, image_current, offline_buildable

log = logging.getLogger(__name__)

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
        from engine.install import install_extra

        return None, f"the docker SDK is not installed ({install_extra('docker')})"
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
    """(True, '') if the docker sandbox can serve here with `image`; else (False, one line why). Never raises.

    The SDK must import and the daemon answer a ping within a few seconds, and
    the image (default `DEFAULT_IMAGE`) be usable now: on the machine, or one of
    the sandbox's own images (`docker_build.RECIPES`) that `build` allows to be
    built now without a registry (root, debootstrap and a Debian mirror that
    answers: probed in a few seconds, nothing pulled).
    """
    image = image or DEFAULT_IMAGE
    client, why = _connect(_PING_TIMEOUT_S)
    if client is None:
        return False, why
    try:
        recipe = RECIPES.get(image)
        if recipe is None:
            if _image_present(client, image):
                return True, ""
            return False, f"image {image!r} is not on this machine (run: docker pull {image})"
        if image_current(client, recipe):
            return True, ""
        if not build:
            return False, f"image {image!r} is not built yet (--sandbox docker builds it)"
        ok, why = offline_buildable(recipe)
        if ok or _image_present(client, image):
            return True, ""  # built offline on first use, or an older build of it is there
        return False, f"image {image!r} is not built and cannot be built now: {why}"
    except Exception as exc:  # noqa: BLE001
        return False, f"the Docker daemon failed: {_one_line(exc)}"
    finally:
        client.close()


def ensure_image(client: Any, image: str = DEFAULT_IMAGE) -> None:
    """Make sure `image` is on the daemon; RuntimeError (one line, saying what to do) otherwise.

    The sandbox's own images are built from Debian's packages with no registry
    (`docker_build.build_offline`) when missing or made from another recipe;
    where that cannot run, an older build is used, else `DEFAULT_IMAGE` is built
    from its Dockerfile (which needs Docker Hub). A user-given image is never
    pulled: the error says to `docker pull` it.
    """
    import docker.errors

    recipe = RECIPES.get(image)
    try:
        if recipe is None and _image_present(client, image):
            return
        if recipe is not None and image_current(client, recipe):
            return
        present = _image_present(client, image)
    except docker.errors.DockerException as exc:
        raise RuntimeError(f"could not look up image {image!r}: {_one_line(exc)}") from None
    if recipe is None:
        raise RuntimeError(f"image {image!r} is not on this machine; run `docker pull {image}` first")
    offline, why_not = offline_buildable(recipe)
    if offline:
        build_offline(client, recipe)
        return
    if present:
        log.warning("docker sandbox: using the image %s already here (%s to rebuild it)", image, why_not)
        return
    if image != DEFAULT_IMAGE:
        raise RuntimeError(f"could not build image {image!r}: {why_not}")
    log.warning(
        "docker sandbox: building image %s (python:3.11-slim + numpy, from %s) since %s; "
        "first time only, it needs Docker Hub and takes a minute or two",
        image,
        IMAGE_DIR / "Dockerfile",
        why_not,
    )
    try:
        client.images.build(path=str(IMAGE_DIR), tag=image, rm=True, forcerm=True, timeout=_BUILD_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - BuildError, APIError, a dropped connection: one line
        raise RuntimeError(
            f"could not build image {image!r}: no offline build ({why_not}), and Docker Hub failed: {_one_line(exc)}"
        ) from None
    log.warning("docker sandbox: image %s built", image)


def _one_line(exc: BaseException | None) -> str:
    """A daemon error in one line: the daemon's explanation when there is one."""
    text = str(getattr(exc, "explanation", None) or exc or type(exc).__name__)
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."
