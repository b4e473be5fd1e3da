"""`runs serve` beyond loopback lets no one in without its token, and nothing in at all to write.

The real server (`python -m engine.runs serve`, a subprocess on 0.0.0.0 and a free port) over a finished
run: every route of the app's own route table, without the token, with it in the URL, then with the cookie
alone, then with a Bearer header; other methods; the archive's bytes before and after. Loopback as before,
`--token` there too, and HTTPS with a certificate made here."""

from __future__ import annotations

import datetime
import hashlib
import os
import re
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("starlette", reason="the live extra is not installed (pip install -e '.[live]')")
httpx = pytest.importorskip("httpx", reason="the test's HTTP client (httpx) is not installed")

PARAMS = {"name": None, "node": "1", "file": "live.js"}  # a value for each path parameter (name: the run's)
WRITING = ("POST", "PUT", "DELETE", "PATCH")


class Served:
    def __init__(self, process: subprocess.Popen, line: str) -> None:
        self.process = process
        self.line = line
        found = re.search(r"(https?)://(\S+):(\d+)/(?:\?token=(\S+))?", line)
        assert found, line
        self.scheme, self.shown_host, self.port, self.token = found.groups()
        self.base = f"{self.scheme}://127.0.0.1:{self.port}"  # bound to 0.0.0.0: reached here on loopback
        self.stderr = ""


@contextmanager
def serving(run: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    process = subprocess.Popen(
        [sys.executable, "-m", "engine.runs", "serve", str(run), "--port", "0", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )
    try:
        served = Served(process, process.stdout.readline())
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            _, served.stderr = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


@contextmanager
def client(served: Served, **kwargs) -> Iterator[httpx.Client]:
    """A client, once the server answers (it binds before it prints, serves a moment later)."""
    with httpx.Client(base_url=served.base, trust_env=False, timeout=30, **kwargs) as c:
        deadline = time.monotonic() + 30
        while True:
            try:
                c.head("/favicon.ico")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.1)
        yield c


def every_route(run: Path) -> list[str]:
    """A URL for each route of the app's table, its path parameters filled in."""
    from starlette.routing import Route

    from engine.live.app import build_app
    from engine.live.sources import Sources

    urls = []
    for route in build_app(Sources([run.parent])).routes:
        assert isinstance(route, Route), route  # a mount or websocket route would need a case here
        values = {key: run.name if key == "name" else PARAMS[key] for key in route.param_convertors}
        urls.append(route.url_path_for(route.name, **values))
    assert len(urls) >= 7 and any("/node/" in u for u in urls) and any(u.startswith("/static/") for u in urls)
    return urls


def archive_state(run: Path) -> tuple[str, list[str], list[int]]:
    """The archive's bytes (a hash), the run folder's files, and its tables' row counts."""
    import duckdb

    digest = hashlib.sha256((run / "archive.duckdb").read_bytes()).hexdigest()
    con = duckdb.connect(str(run / "archive.duckdb"), read_only=True)
    try:
        counts = [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("nodes", "evaluations", "events")]
    finally:
        con.close()
    return digest, sorted(p.name for p in run.iterdir()), counts


def refused(answer: httpx.Response, run: Path) -> None:
    from engine.live.auth import UNAUTHORIZED

    assert answer.status_code == 401, (answer.request.url, answer.status_code)
    assert answer.content in (UNAUTHORIZED, b"") and run.name not in answer.text and "diff" not in answer.text
    assert "set-cookie" not in answer.headers


@pytest.mark.slow
def test_beyond_loopback_every_route_needs_the_token_and_nothing_writes(run):
    urls = every_route(run)
    before = archive_state(run)
    with serving(run, "--host", "0.0.0.0") as served:
        assert served.token and len(served.token) >= 40 and served.shown_host != "0.0.0.0"
        wrong = "x" * len(served.token)
        cookie_name = f"clade-live-token-{served.port}"
        with client(served) as c:
            wrongs = [  # a wrong token of the right length each way, and the right one under another port's name
                {"params": {"token": wrong}},
                {"headers": {"Authorization": f"Bearer {wrong}"}},
                {"headers": {"Cookie": f"{cookie_name}={wrong}"}},
                {"headers": {"Cookie": f"clade-live-token-1={served.token}"}},
            ]
            for k, url in enumerate([*urls, "/no/such/route", "/api/run/no-such-run"]):
                refused(c.get(url), run)
                refused(c.head(url), run)
                refused(c.get(url, **wrongs[k % len(wrongs)]), run)  # each way on some routes (cheaper than all)
                refused(c.request(WRITING[k % len(WRITING)], url, content=b"{}"), run)
            statuses = {}
            for url in urls:
                first = c.get(url, params={"token": served.token})
                assert first.status_code in (200, 204), (url, first.status_code)
                statuses[url] = first.status_code
                cookie = first.headers["set-cookie"]
                assert cookie.startswith(f"{cookie_name}={served.token};")
                assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= {p.strip() for p in cookie.split(";")}
                assert "Secure" not in cookie  # plain HTTP: a Secure cookie would never come back
        with httpx.Client(base_url=served.base, trust_env=False, timeout=30) as bare:
            for url in urls:
                by_cookie = bare.get(url, headers={"Cookie": f"{cookie_name}={served.token}"})
                by_bearer = bare.get(url, headers={"Authorization": f"Bearer {served.token}"})
                assert by_cookie.status_code == by_bearer.status_code == statuses[url], url
                assert "set-cookie" not in by_cookie.headers  # set once, from the URL's token
            for k, url in enumerate(urls):
                for method in (WRITING[k % len(WRITING)], WRITING[(k + 1) % len(WRITING)]):
                    answer = bare.request(
                        method, url, headers={"Authorization": f"Bearer {served.token}"}, content=b'{"x": 1}'
                    )
                    if method == "POST" and url.endswith("/human"):  # the one write: without its header, refused
                        assert answer.status_code == 403, answer.text
                        continue
                    assert answer.status_code == 405 and answer.headers["allow"] == "GET, HEAD", (method, url)
                    assert run.name not in answer.text
            data = bare.get("/api/runs", headers={"Authorization": f"Bearer {served.token}"}).json()
            assert [row["name"] for row in data["rows"]] == [run.name]
            node = bare.get(f"/api/run/{run.name}/node/1", headers={"Cookie": f"{cookie_name}={served.token}"})
            assert node.json()["node"]["diff"].startswith("--- a/agent.py")
    assert served.process.returncode == 0, served.stderr
    (warning,) = served.stderr.strip().splitlines()
    assert "in the clear" in warning and "--certfile" in warning
    assert archive_state(run) == before


def test_on_loopback_it_is_open_as_before_unless_a_token_is_given(run):
    with serving(run) as served, client(served) as c:
        assert served.token is None and served.shown_host == "127.0.0.1"
        assert c.get("/api/runs").json()["rows"][0]["name"] == run.name
        assert "set-cookie" not in c.get("/").headers
        assert c.post("/api/runs").status_code == 405
    assert served.stderr.strip() == ""  # no clear-text note on loopback
    with serving(run, "--token", "given-token.1") as served, client(served) as c:
        assert served.token == "given-token.1"
        refused(c.get("/api/runs"), run)
        refused(c.get("/api/runs", params={"token": "given-token.2"}), run)
        assert c.get("/api/runs", params={"token": "given-token.1"}).json()["rows"][0]["name"] == run.name


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (cryptography, else openssl)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if subprocess.run(["which", "openssl"], capture_output=True).returncode != 0:
            pytest.skip("neither the cryptography package nor openssl is here to make a certificate")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
            + ["-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"]
            + ["-addext", "subjectAltName=IP:127.0.0.1"],
            check=True,
            capture_output=True,
        )
        return cert, key
    import ipaddress

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert, key


def test_https_with_a_certificate_and_the_token_from_the_environment(run, tmp_path):
    cert, key = self_signed(tmp_path)
    trust = ssl.create_default_context(cafile=str(cert))
    token = "from-the-environment"
    with (
        serving(
            run, "--host", "0.0.0.0", "--certfile", str(cert), "--keyfile", str(key), env={"CLADE_LIVE_TOKEN": token}
        ) as served,
        client(served, verify=trust) as c,
    ):
        assert served.scheme == "https" and served.token == token
        refused(c.get("/api/runs"), run)
        first = c.get("/", params={"token": token})
        assert first.status_code == 200 and "/static/live.js" in first.text
        assert "Secure" in first.headers["set-cookie"].split("; ")
        assert c.get("/api/runs").json()["rows"][0]["name"] == run.name  # the client sends the cookie back
        with pytest.raises(httpx.TransportError):  # plain HTTP to the TLS port: no page
            httpx.get(f"http://127.0.0.1:{served.port}/api/runs", params={"token": token}, trust_env=False)
    assert served.stderr.strip() == ""  # HTTPS: no clear-text note
    assert token not in " ".join(served.process.args)  # out of `ps`


def test_what_cannot_serve_is_one_line_before_anything_is_served(tmp_path):
    from engine.live.access import AccessError, access_for

    cert, key = self_signed(tmp_path)
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    cases = [
        (("0.0.0.0", None, None, str(tmp_path / "nope.pem"), None), "--certfile"),
        (("0.0.0.0", None, None, str(cert), str(tmp_path / "nope.pem")), "--keyfile"),
        (("0.0.0.0", None, None, str(tmp_path / "junk.pem"), str(key)), "cannot serve HTTPS"),
        (("0.0.0.0", None, None, str(cert), None), "cannot serve HTTPS"),  # the key is not in the certificate
        (("0.0.0.0", None, None, None, str(key)), "needs --certfile"),
        (("127.0.0.1", "a b", None, None, None), "--token"),
        (("127.0.0.1", None, "", None, None), "CLADE_LIVE_TOKEN"),
    ]
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        pass  # only the cases above
    else:
        private = serialization.load_pem_private_key(key.read_bytes(), None)
        locked = private.private_bytes(  # type: ignore[union-attr]
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"passphrase"),
        )
        (tmp_path / "locked.pem").write_bytes(locked)
        cases.append((("0.0.0.0", None, None, str(cert), str(tmp_path / "locked.pem")), "the key is encrypted"))
    for given, said in cases:
        with pytest.raises(AccessError, match=re.escape(said)) as error:
            access_for(*given)
        assert "\n" not in str(error.value)
    assert access_for("127.0.0.1", None, None, None, None).token is None
    assert access_for("::1", None, None, None, None).token is None
    assert access_for("localhost", None, None, str(cert), str(key)).scheme == "https"
    made = {access_for(host, None, None, None, None).token for host in ("0.0.0.0", "::", "10.1.2.3", "head-node")}
    assert None not in made and len(made) == 4  # a new token each time, beyond loopback
    out = subprocess.run(
        [sys.executable, "-m", "engine.runs", "serve", "--host", "0.0.0.0", "--certfile", str(tmp_path / "nope.pem")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 2 and out.stdout == "" and out.stderr.startswith("error: --certfile")
    assert len(out.stderr.strip().splitlines()) == 1
