"""The sandbox images built with no registry: Debian's packages by debootstrap, then `docker import`.

An offline lab, a proxy or a rate limit keeps Docker Hub away; the machine's
Debian mirror (the one apt uses) is usually there. A `Recipe` names an image
and the Debian packages in it; `build_offline` runs `debootstrap
--variant=minbase --include=...` into a scratch folder and imports its tar as
that image, labelled with the recipe's digest (`clade.recipe`), so that
`image_current` recognises it on the next run and nothing is built twice.
`offline_buildable` answers, in a few seconds and without building, whether
this machine can build one now (root, debootstrap, a mirror that answers).

Three recipes: `DEFAULT_IMAGE` (python3 and numpy, Debian bookworm's Python
3.11), `COMPILERS_IMAGE` (the same with g++, gfortran, golang-go and rustc,
for candidates in a compiled language) and `POLYGLOT_IMAGE` (what Polyglot's
six languages' tests run on: pytest, Go 1.23 from bookworm-backports, Rust
1.96 (Debian 12's rustc-web and cargo-web) with the crates the exercises name,
CMake and g++ with Boost.Date_Time, OpenJDK 17 with JUnit 5 and AssertJ, and
Node.js). The last two are built only when a run needs them. A recipe's
`later` packages come from suites debootstrap does not read (backports,
security): apt installs them in the new root afterwards.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

__all__ = [
    "COMPILERS_IMAGE",
    "DEFAULT_IMAGE",
    "POLYGLOT_IMAGE",
    "RECIPES",
    "Recipe",
    "build_offline",
    "debian_mirror",
    "image_current",
    "offline_buildable",
]

DEFAULT_IMAGE = "clade-sandbox:py3.11"
COMPILERS_IMAGE = "clade-sandbox-compilers:py3.11"
POLYGLOT_IMAGE = "clade-sandbox-polyglot:py3.11"
RECIPE_LABEL = "clade.recipe"
SUITE = "bookworm"  # its python3 is 3.11, the images' names say so
_DEFAULT_MIRROR = "http://deb.debian.org/debian"
_PROBE_TIMEOUT_S = 3.0
_DEBOOTSTRAP_TIMEOUT_S = 1800
_IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_CHANGES = (  # what a Dockerfile's ENV / WORKDIR would say; the labels are added per recipe
    f"ENV PATH={_IMAGE_PATH}",
    "ENV LANG=C.UTF-8",
    "ENV PYTHONDONTWRITEBYTECODE=1",
    "ENV PYTHONUNBUFFERED=1",
    "WORKDIR /job",
)


@dataclass(frozen=True)
class Recipe:
    """An image made of Debian packages: what to install, and a digest that changes with it."""

    image: str
    packages: tuple[str, ...]
    suite: str = SUITE
    later: tuple[str, ...] = ()  # installed by apt in the new root, from `extra_suites` as well
    extra_suites: tuple[str, ...] = ()  # "bookworm-backports", "bookworm-security" (its own mirror)

    @property
    def digest(self) -> str:
        text = "\n".join([self.suite, "minbase", *self.packages, *_CHANGES, *self.later, *self.extra_suites])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def changes(self) -> list[str]:
        return [*_CHANGES, "LABEL clade.image=sandbox", f"LABEL {RECIPE_LABEL}={self.digest}"]


_PYTHON_PACKAGES = ("python3", "python3-numpy")
_POLYGLOT_PACKAGES = (*_PYTHON_PACKAGES, "python3-pytest", "g++", "make", "cmake")
# apt, not debootstrap, resolves these (crates' virtual packages, Java's alternatives) and the other suites
_POLYGLOT_LATER = (
    "libboost-date-time-dev",
    "default-jdk-headless",
    "junit5",
    "libassertj-core-java",
    "nodejs",
    "librust-anyhow-dev",
    "librust-rand-dev",
    "librust-time-dev",
    "librust-thiserror-dev",
    "golang-1.23-go",
    "rustc-web",
    "cargo-web",
)
RECIPES = {
    DEFAULT_IMAGE: Recipe(DEFAULT_IMAGE, _PYTHON_PACKAGES),
    COMPILERS_IMAGE: Recipe(COMPILERS_IMAGE, (*_PYTHON_PACKAGES, "g++", "gfortran", "golang-go", "rustc")),
    POLYGLOT_IMAGE: Recipe(
        POLYGLOT_IMAGE,
        _POLYGLOT_PACKAGES,
        later=_POLYGLOT_LATER,
        extra_suites=(f"{SUITE}-backports", f"{SUITE}-security", f"{SUITE}-updates"),
    ),
}


def debian_mirror(apt_dir: str = "/etc/apt") -> str:
    """The Debian mirror apt uses here (sources.list or deb822 .sources), else deb.debian.org."""
    files = [os.path.join(apt_dir, "sources.list"), *sorted(glob.glob(os.path.join(apt_dir, "sources.list.d/*.list")))]
    files += sorted(glob.glob(os.path.join(apt_dir, "sources.list.d/*.sources")))
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            one_line = re.match(r"deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
            deb822 = re.match(r"URIs:\s*(\S+)", line)
            url = one_line.group(1) if one_line else deb822.group(1) if deb822 else None
            if url and url.startswith(("http://", "https://")) and "security" not in url:
                return url.rstrip("/")
    return _DEFAULT_MIRROR


def offline_buildable(recipe: Recipe, timeout: float = _PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """(True, '') when `build_offline(recipe)` can run now; else (False, one line why). Never raises.

    Cheap: no download beyond the suite's Release file's headers, within `timeout` seconds.
    """
    if os.geteuid() != 0:
        return False, "building the image without a registry needs root (debootstrap)"
    if shutil.which("debootstrap") is None:
        return False, "debootstrap is not installed (Debian: apt-get install debootstrap)"
    mirror = debian_mirror()
    url = f"{mirror}/dists/{recipe.suite}/Release"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout):
            pass
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        return False, f"the Debian mirror {mirror} does not answer ({reason})"
    return True, ""


def image_current(client: Any, recipe: Recipe) -> bool:
    """Whether the daemon holds `recipe.image` built from this very recipe (its digest label)."""
    import docker.errors

    try:
        image = client.images.get(recipe.image)
    except docker.errors.ImageNotFound:
        return False
    labels = (image.attrs.get("Config") or {}).get("Labels") or {}
    return labels.get(RECIPE_LABEL) == recipe.digest


def build_offline(client: Any, recipe: Recipe) -> float:
    """Build `recipe.image` from the Debian mirror (debootstrap, then import); the seconds it took.

    RuntimeError (one line) when a step fails; the scratch folder is removed either way.
    """
    mirror = debian_mirror()
    log.warning(
        "docker sandbox: building image %s from Debian %s packages (%s) at %s, no registry needed; "
        "first time only, a minute or a few",
        recipe.image,
        recipe.suite,
        " ".join(recipe.packages),
        mirror,
    )
    t0 = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="clade-image-", dir=_scratch_dir())
    try:
        root = os.path.join(scratch, "root")
        _run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(recipe.packages)}",
                recipe.suite,
                root,
                mirror,
            ],
            "debootstrap",
        )
        if recipe.later:
            _install_later(root, recipe, mirror)
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            _empty(os.path.join(root, cache))
        tar = os.path.join(scratch, "root.tar")
        _run(["tar", "-C", root, "--numeric-owner", "-cf", tar, "."], "tar")
        name, _, tag = recipe.image.rpartition(":")
        try:
            client.api.import_image_from_file(tar, repository=name, tag=tag, changes=recipe.changes)
        except Exception as exc:  # noqa: BLE001 - an APIError or a dropped connection: one line
            said = " ".join(str(exc).split())[:300]
            raise RuntimeError(f"docker import of {recipe.image!r} failed: {said}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    took = time.monotonic() - t0
    if not image_current(client, recipe):
        raise RuntimeError(f"docker import of {recipe.image!r} left no image with the recipe's label")
    log.warning("docker sandbox: image %s built in %.0f s", recipe.image, took)
    return took


def security_mirror(apt_dir: str = "/etc/apt") -> str:
    """The Debian security mirror apt uses here, else deb.debian.org's."""
    for path in [os.path.join(apt_dir, "sources.list"), *sorted(glob.glob(os.path.join(apt_dir, "sources.list.d/*")))]:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                found = re.search(r"(https?://\S*debian-security\S*)", f.read())
        except OSError:
            continue
        if found:
            return found.group(1).rstrip("/")
    return "http://deb.debian.org/debian-security"


def _install_later(root: str, recipe: Recipe, mirror: str) -> None:
    """apt-get install `recipe.later` inside the new root, with the recipe's extra suites listed."""
    lines = []
    for suite in recipe.extra_suites:
        where = security_mirror() if suite.endswith("-security") else mirror
        lines.append(f"deb {where} {suite} main")
    with open(os.path.join(root, "etc/apt/sources.list.d/clade-extra.list"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    proc = os.path.join(root, "proc")
    _run(["mount", "-t", "proc", "proc", proc], "mount /proc")
    try:
        apt = ["chroot", root, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
        _run([*apt, "update", "-qq"], "apt-get update in the image")
        install = [*apt, "install", "-y", "-qq", "--no-install-recommends", *recipe.later]
        _run(install, "apt-get install in the image")
    finally:
        subprocess.run(["umount", proc], check=False, capture_output=True)


def _scratch_dir() -> str:
    """/var/tmp when writable (a rootfs is a few hundred MB; /tmp may be a small tmpfs)."""
    return "/var/tmp" if os.access("/var/tmp", os.W_OK) else tempfile.gettempdir()


def _empty(path: str) -> None:
    for entry in glob.glob(os.path.join(path, "*")):
        if os.path.isfile(entry) and not os.path.islink(entry):
            os.remove(entry)


def _run(argv: list[str], what: str) -> None:
    try:
        proc = subprocess.run(
            argv,
            check=False,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_DEBOOTSTRAP_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"{what} could not run: {exc}") from None
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
        said = lines[-1].strip()[:300] if lines else "no output"
        raise RuntimeError(f"{what} failed (exit {proc.returncode}): {said}")
