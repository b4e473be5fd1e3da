"""The LLM gateway: an OpenAI-compatible endpoint per run, booked per node and instance, capped per evaluation.

Answers come from litellm's own offline path (`mock_response`, 10 tokens in and
20 out per call), through the run's LLMClient; nothing reaches a network.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from archive import Archive
from engine.gateway import Gateway, GatewaySettings
from engine.llm import LLMClient, LLMSettings
from engine.loop.evaluation import run_agent
from engine.sandbox import ProcessSandbox, SandboxJob
from engine.sandbox.base import JOB_LLM_SOCKET, LLMEndpoint, SandboxLimits
from engine.sandbox.bwrap import bwrap_available
from tasks.base import AgentJob, Grade, Instance

REPO = Path(__file__).resolve().parents[2]
CLIENT = (REPO / "agents_seed" / "clade_llm.py").read_bytes()
MODEL = "openai/gpt-4o-mini"
BWRAP_OK, BWRAP_WHY = bwrap_available()


def make_client(tmp_path, answer="fine", **settings) -> tuple[Archive, LLMClient]:
    archive = Archive.create(tmp_path / "archive.duckdb", "run", {}, 0)
    return archive, LLMClient(archive, LLMSettings(**settings), mock=lambda model, messages, attempt: answer)


async def http(socket_path: str, method: str, path: str, body: dict | None = None, token: str = "") -> tuple[int, dict]:
    """One request, the way any HTTP client would send it over the socket."""
    reader, writer = await asyncio.open_unix_connection(socket_path)
    data = b"" if body is None else json.dumps(body).encode()
    writer.write(
        f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
        + data
    )
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload)


def chat(text="hi", **extra) -> dict:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], **extra}


def test_a_call_is_answered_and_booked_against_its_node_and_instance(tmp_path):
    archive, client = make_client(tmp_path, answer="a fine answer")

    async def main():
        async with Gateway(client, GatewaySettings((MODEL, "openai/gpt-4o"), None)) as gw:
            session = gw.open_session(7, "HumanEval/2")
            assert oct(os.stat(gw.directory).st_mode & 0o777) == "0o700"
            status, models = await http(gw.socket_path, "GET", "/v1/models", token=session.token)
            assert status == 200 and [m["id"] for m in models["data"]] == [MODEL, "openai/gpt-4o"]
            status, answer = await http(
                gw.socket_path,
                "POST",
                "/v1/chat/completions",
                {"messages": [{"role": "user", "content": "hi"}], "temperature": 0},
                session.token,
            )
            assert status == 200, answer
            assert answer["object"] == "chat.completion" and answer["model"] == MODEL  # the first is the default
            assert answer["choices"][0]["message"] == {"role": "assistant", "content": "a fine answer"}
            assert answer["usage"] == {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
            assert session.tokens_used == 30
            gw.close_session(session)
            status, refused = await http(gw.socket_path, "POST", "/v1/chat/completions", chat(), session.token)
            assert status == 401 and "evaluation has ended" in refused["error"]["message"]
            directory = gw.directory
        assert not os.path.exists(directory)  # the socket's directory goes with the gateway

    asyncio.run(main())
    rows = archive.query(
        "SELECT node_id, instance_id, purpose, model, tokens_in, tokens_out, request->>'key', "
        "request->'params'->>'temperature' FROM llm_calls"
    )
    assert rows == [(7, "HumanEval/2", "agent", MODEL, 10, 20, "agent node 7 instance HumanEval/2 call 0", "0")]


@pytest.mark.parametrize(
    "body, status, words",
    [
        (chat(model="openai/gpt-5"), 404, "not available to agents"),
        (chat(stream=True), 400, "streaming"),
        (chat(tools=[{"type": "function"}]), 400, "unsupported parameter(s): tools"),
        (chat(n=3), 400, "n=1"),
        ({"model": MODEL, "messages": "hi"}, 400, "messages must be"),
    ],
)
def test_what_the_gateway_refuses_is_said_in_openais_error_shape(tmp_path, body, status, words):
    archive, client = make_client(tmp_path)

    async def main():
        async with Gateway(client, GatewaySettings((MODEL,), None)) as gw:
            session = gw.open_session(1, "i")
            assert await http(gw.socket_path, "POST", "/v1/chat/completions", chat(), "not-a-token") == (
                401,
                {
                    "error": {
                        "message": "unknown token: use this evaluation's CLADE_LLM_TOKEN",
                        "type": "authentication_error",
                        "code": "invalid_api_key",
                        "param": None,
                    }
                },
            )
            got, answer = await http(gw.socket_path, "POST", "/v1/chat/completions", body, session.token)
            assert got == status and words in answer["error"]["message"]
            got, answer = await http(gw.socket_path, "POST", "/v1/embeddings", {}, session.token)
            assert got == 404

    asyncio.run(main())
    assert archive.query("SELECT count(*) FROM llm_calls")[0][0] == 0  # nothing refused reached a model


def test_the_openai_sdk_talks_to_the_gateway_over_its_socket(tmp_path):
    httpx = pytest.importorskip("httpx")
    openai = pytest.importorskip("openai")
    archive, client = make_client(tmp_path, answer="from the sdk")

    async def main():
        async with Gateway(client, GatewaySettings((MODEL,), None)) as gw:
            session = gw.open_session(3, "x")
            sdk = openai.AsyncOpenAI(
                api_key=session.token,
                base_url="http://clade/v1",
                max_retries=0,
                http_client=httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=gw.socket_path)),
            )
            reply = await sdk.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
            assert reply.choices[0].message.content == "from the sdk" and reply.usage.total_tokens == 30
            with pytest.raises(openai.NotFoundError, match="not available to agents"):
                await sdk.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}])
            await sdk.close()

    asyncio.run(main())
    assert archive.query("SELECT node_id, instance_id FROM llm_calls") == [(3, "x")]


# ----- through run_agent: a job in a sandbox calls the gateway ------------------------------------


class ToyTask(AgentJob):
    """A task whose runner runs the agent's `main()`; the answer is whatever it returns."""

    name = "toy"
    answer_file = "answer.json"
    limits = SandboxLimits(timeout_s=30.0, cpu_s=30)

    def __init__(self, ships_client: bool = True) -> None:
        self.ships_client = ships_client

    def sandbox_files(self, instance):
        runner = "import json, agent\njson.dump(agent.main(), open('answer.json', 'w'))\n"
        return {"runner.py": runner.encode(), **({"clade_llm.py": CLIENT} if self.ships_client else {})}

    def command(self):
        return [sys.executable, "runner.py"]

    def grade(self, instance, answer):
        return Grade(True, {"answer": json.loads(answer)}, "")


def agent(body: str) -> dict[str, str]:
    return {"agent.py": "import clade_llm, json, os\n\ndef main():\n" + textwrap.indent(textwrap.dedent(body), "    ")}


def evaluate(tmp_path, files, sandbox, *, cap=None, answer="fine", task=None, **settings):
    archive, client = make_client(tmp_path, answer=answer, **settings)

    async def main():
        async with Gateway(client, GatewaySettings((MODEL,), cap)) as gw:
            return await run_agent(
                task or ToyTask(), sandbox, files, Instance("inst-9", "dev", {}), gateway=gw, node_id=5
            )

    try:
        return asyncio.run(main()), archive
    finally:
        sandbox.close()


def test_an_agent_looping_on_calls_ends_at_its_token_cap(tmp_path):
    looping = agent("""
        while True:
            try:
                clade_llm.chat("again")
            except clade_llm.LLMError:
                pass
    """)
    outcome, archive = evaluate(tmp_path, looping, ProcessSandbox(), cap=100)
    assert outcome.status == "error" and not outcome.stop
    assert outcome.feedback.startswith("agent token cap of 100 exceeded (120 tokens used")
    assert outcome.runtime_s < 20  # ended by the cap, not by the 30 s wall limit
    rows = archive.query("SELECT node_id, instance_id, purpose, error FROM llm_calls")
    assert rows == [(5, "inst-9", "agent", None)] * 4  # the call that crossed the cap was the last one answered


def test_the_runs_budget_reached_under_an_agent_stops_the_run_without_a_result(tmp_path):
    spender = agent("""
        return [clade_llm.chat(f"call {k}") for k in range(10)]
    """)
    outcome, archive = evaluate(tmp_path, spender, ProcessSandbox(), max_tokens_total=45)
    assert outcome.stop.startswith("LLM budget reached") and not outcome.fatal and outcome.status == "error"
    assert archive.query("SELECT count(*) FROM llm_calls")[0][0] == 2  # 30 tokens each: the second crosses 45


def test_an_agent_without_a_gateway_is_told_so_in_one_line(tmp_path):
    lonely = agent("""
        try:
            clade_llm.chat("hello?")
        except clade_llm.LLMError as exc:
            return [clade_llm.available(), str(exc)]
    """)
    task, sandbox = ToyTask(), ProcessSandbox()
    try:
        outcome = asyncio.run(run_agent(task, sandbox, lonely, Instance("i", "dev", {})))
    finally:
        sandbox.close()
    assert outcome.status == "ok"
    assert outcome.metrics["answer"][0] is False and "no LLM gateway" in outcome.metrics["answer"][1]


ENV_REPORT = """
    found = {"env": dict(os.environ), "proc": open("/proc/self/environ", "rb").read().decode("latin-1")}
    found["answer"] = clade_llm.chat("hello")
    return found
"""


def test_the_process_sandbox_gives_the_socket_path_and_token_but_no_key(tmp_path, monkeypatch):
    """(With a task that does not ship clade_llm.py: the engine puts it beside the agent.)"""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-process")
    outcome, _ = evaluate(tmp_path, agent(ENV_REPORT), ProcessSandbox(), task=ToyTask(ships_client=False))
    assert outcome.status == "ok", outcome
    found = outcome.metrics["answer"]
    assert found["answer"] == "fine"
    assert found["env"]["CLADE_LLM_URL"].startswith("unix:///") and found["env"]["CLADE_LLM_URL"].endswith("/llm.sock")
    assert "OPENAI_API_KEY" not in found["env"] and "sk-secret-process" not in json.dumps(found)


@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_bwrap_binds_the_socket_alone_and_keeps_the_network_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-bwrap")
    from engine.sandbox.bwrap import BwrapSandbox

    report = ENV_REPORT.replace(
        "return found",
        """
    import socket
    found["run"] = os.listdir("/run/clade")
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=2)
        found["network"] = "reachable"
    except OSError as exc:
        found["network"] = type(exc).__name__
    return found""",
    )
    outcome, archive = evaluate(tmp_path, agent(report), BwrapSandbox())
    assert outcome.status == "ok", outcome
    found = outcome.metrics["answer"]
    assert found["env"]["CLADE_LLM_URL"] == f"unix://{JOB_LLM_SOCKET}" and found["run"] == ["llm.sock"]
    assert found["answer"] == "fine" and found["network"] != "reachable"
    assert "OPENAI_API_KEY" not in found["env"] and "sk-secret-bwrap" not in json.dumps(found)
    assert archive.query("SELECT node_id, instance_id FROM llm_calls") == [(5, "inst-9")]


def test_docker_mounts_the_socket_alone_and_adds_the_two_variables(tmp_path):
    from engine.sandbox.docker import container_options

    job = SandboxJob(
        files={},
        command=["python3", "x.py"],
        answer_file="a",
        llm=LLMEndpoint(socket_path="/tmp/clade-gw-x/llm.sock", token="clade-t"),
    )
    options = container_options(job, str(tmp_path), "img", None, 1)
    assert options["network_mode"] == "none"
    assert {
        "Type": "bind",
        "Source": "/tmp/clade-gw-x/llm.sock",
        "Target": JOB_LLM_SOCKET,
        "ReadOnly": False,
    } in options["mounts"]
    env = options["environment"]
    assert env["CLADE_LLM_URL"] == f"unix://{JOB_LLM_SOCKET}" and env["CLADE_LLM_TOKEN"] == "clade-t"
    plain = container_options(SandboxJob(files={}, command=["python3"], answer_file="a"), str(tmp_path), "img", None, 1)
    assert len(plain["mounts"]) == 1 and "CLADE_LLM_URL" not in plain["environment"]


@pytest.mark.ray
@pytest.mark.slow
def test_a_local_ray_worker_reaches_the_gateway(tmp_path, monkeypatch):
    from engine.sandbox.ray_executor import RaySandbox, ray_available

    ok, why = ray_available()
    if not ok:
        pytest.skip(why)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-ray")
    outcome, archive = evaluate(tmp_path, agent(ENV_REPORT), RaySandbox("process", workers=1))
    assert outcome.status == "ok", outcome
    found = outcome.metrics["answer"]
    assert found["answer"] == "fine" and "sk-secret-ray" not in json.dumps(found)
    assert archive.query("SELECT node_id, instance_id, purpose FROM llm_calls") == [(5, "inst-9", "agent")]


def test_closing_the_gateway_under_a_call_in_flight_prints_no_traceback(tmp_path, caplog):
    """A handler cancelled by close() must end quietly: asyncio (3.11) logs a cancelled stream handler as an
    "Exception in callback" with a traceback, which a real model's slow answer once put on a user's screen."""
    archive = Archive.create(tmp_path / "archive.duckdb", "run", {}, 0)

    client = LLMClient(archive, LLMSettings(), mock=lambda model, messages, attempt: None)

    async def never(*args, **kwargs):
        await asyncio.sleep(30)

    client.complete = never  # the provider is still thinking when the run ends

    async def main():
        async with Gateway(client, GatewaySettings((MODEL,), None)) as gw:
            session = gw.open_session(0, "i")
            call = asyncio.ensure_future(http(gw.socket_path, "POST", "/v1/chat/completions", chat(), session.token))
            await asyncio.sleep(0.2)
        await asyncio.gather(call, return_exceptions=True)
        await asyncio.sleep(0.1)

    caplog.set_level("ERROR", logger="asyncio")
    asyncio.run(main())
    assert not [r for r in caplog.records if r.name == "asyncio"], [r.getMessage() for r in caplog.records]
