"""Call a model from inside a Clade sandbox, through the run's LLM gateway. Standard library only.

    import clade_llm

    text = clade_llm.chat([{"role": "user", "content": "Write a haiku about bins."}], temperature=0)
    text = clade_llm.chat("Just a question")           # a string is one user message

The engine gives each evaluation two environment variables: CLADE_LLM_URL
(unix:///run/clade/llm.sock in bwrap and docker, the host path of the socket
in the process sandbox; http://host:port works too) and CLADE_LLM_TOKEN, a
token valid for this evaluation only. No API key is needed, or present. The
gateway speaks the OpenAI chat-completions API, so any OpenAI client pointed
at it works as well.

`chat` returns the answer's text; `complete` the whole response (with
`usage`). Parameters: model (one of `models()`; default the run's agent
model), temperature, top_p, max_tokens, stop, seed, response_format, ...
A refusal or failure raises LLMError with the gateway's message, e.g.
"agent token cap of 20000 exceeded": past that cap the engine ends the
evaluation anyway.
"""
import http.client
import json
import os
import socket
from urllib.parse import urlsplit

__all__ = ["LLMError", "available", "chat", "complete", "models"]


class LLMError(RuntimeError):
    """The gateway refused or failed a call: `status` (HTTP), `kind` (e.g. 'token_cap_exceeded')."""

    def __init__(self, message, status=0, kind=""):
        super().__init__(message)
        self.status = status
        self.kind = kind


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def available():
    """True when this evaluation has a gateway (the run was given a model for its agents)."""
    return bool(os.environ.get("CLADE_LLM_URL") and os.environ.get("CLADE_LLM_TOKEN"))


def _request(method, path, payload=None, timeout=600.0):
    url = os.environ.get("CLADE_LLM_URL", "")
    token = os.environ.get("CLADE_LLM_TOKEN", "")
    if not url or not token:
        raise LLMError("no LLM gateway in this evaluation: the run has no model for agents "
                       "(start the search with --model or --agent-model)")
    parts = urlsplit(url)
    if parts.scheme == "unix":
        conn = _UnixConnection(parts.path, timeout)
        prefix = ""
    elif parts.scheme in ("http", "https"):
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.netloc, timeout=timeout)
        prefix = parts.path.rstrip("/")
        prefix = prefix.removesuffix("/v1")
    else:
        raise LLMError(f"CLADE_LLM_URL {url!r}: expected unix:///path or http://host:port")
    body = None if payload is None else json.dumps(payload).encode("utf-8")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        conn.request(method, prefix + path, body=body, headers=headers)
        response = conn.getresponse()
        raw = response.read()
    except OSError as exc:
        raise LLMError(f"cannot reach the LLM gateway at {url}: {exc}") from None
    finally:
        conn.close()
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        raise LLMError(f"the gateway answered {response.status} with something that is not JSON",
                       response.status) from None
    if response.status != 200:
        error = data.get("error") or {}
        raise LLMError(error.get("message") or f"HTTP {response.status}", response.status, error.get("type") or "")
    return data


def models():
    """The models this run lets agents use; the first is the default."""
    return [m["id"] for m in _request("GET", "/v1/models")["data"]]


def complete(messages, model=None, timeout=600.0, **params):
    """The gateway's whole `chat.completion` response (a dict)."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    payload = {"messages": list(messages), **params}
    if model:
        payload["model"] = model
    return _request("POST", "/v1/chat/completions", payload, timeout)


def chat(messages, model=None, timeout=600.0, **params):
    """The answer's text."""
    return complete(messages, model=model, timeout=timeout, **params)["choices"][0]["message"]["content"] or ""
