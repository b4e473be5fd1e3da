"""How `runs serve` is reached: whether a token is needed (and which), HTTPS or not, the URL to print.

On loopback (127.0.0.1, ::1, localhost) the page is open as before, unless a token is given; beyond it a
token is always required: the one given (`--token`, or CLADE_LIVE_TOKEN, which stays out of `ps`), else a
new one (secrets.token_urlsafe). `--certfile/--keyfile` serve HTTPS; the pair is loaded here first, so a
missing, unreadable or mismatched file is one line before anything is served, not a uvicorn traceback.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from engine.live.auth import token_problem

TOKEN_ENV = "CLADE_LIVE_TOKEN"
WILDCARDS = ("", "0.0.0.0", "::")


class AccessError(ValueError):
    """What the user gave cannot serve: one line, exit code 2."""


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Access:
    token: str | None  # None: anyone who reaches the port (loopback only)
    certfile: str | None
    keyfile: str | None

    @property
    def scheme(self) -> str:
        return "https" if self.certfile else "http"

    def url(self, host: str, port: int) -> str:
        """The URL to open: the host as given (this machine's name for a wildcard), the token in it."""
        shown = socket.gethostname() if host in WILDCARDS else host
        where = f"[{shown}]" if ":" in shown else shown
        return f"{self.scheme}://{where}:{port}/" + (f"?token={self.token}" if self.token else "")

    def clear_text_note(self, host: str) -> str | None:
        if self.certfile or is_loopback(host):
            return None
        return (
            "warning: serving beyond loopback over plain HTTP: the pages and the token cross the network in the "
            "clear (--certfile/--keyfile serve HTTPS)"
        )


def _check_tls(certfile: str | None, keyfile: str | None) -> None:
    import ssl

    if keyfile and not certfile:
        raise AccessError("--keyfile needs --certfile (the certificate the key goes with)")
    if not certfile:
        return
    for flag, path in (("--certfile", certfile), ("--keyfile", keyfile)):
        if path is not None and not Path(path).is_file():
            raise AccessError(f"{flag} {path}: no such file")

    def no_password() -> bytes:
        raise AccessError(f"{keyfile or certfile}: the key is encrypted (give a key without a passphrase)")

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(certfile, keyfile, no_password)
    except OSError as exc:  # ssl.SSLError is an OSError: not PEM, or the key does not match the certificate
        what = f"{certfile} and {keyfile}" if keyfile else certfile
        reason = exc.strerror or getattr(exc, "reason", None) or str(exc)
        raise AccessError(f"cannot serve HTTPS with {what}: {reason}") from None


def access_for(
    host: str, token: str | None, env_token: str | None, certfile: str | None, keyfile: str | None
) -> Access:
    """The access `runs serve` gives (AccessError in one line for what cannot be used)."""
    given = token if token is not None else env_token
    if given is not None:
        problem = token_problem(given)
        if problem:
            source = "--token" if token is not None else TOKEN_ENV
            raise AccessError(f"{source}: {problem}")
    elif not is_loopback(host):
        given = secrets.token_urlsafe(32)
    _check_tls(certfile, keyfile)
    return Access(given, certfile, keyfile)
