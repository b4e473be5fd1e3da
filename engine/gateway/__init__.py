"""The LLM gateway: how an agent under evaluation calls a model without ever holding an API key.

For a run whose agents call models (a task that says so, such as `humaneval`,
or `--agent-model`), the engine serves an OpenAI-compatible endpoint for the
length of the search, in its own event loop, on a Unix socket in a private
directory (`/tmp/clade-gw-*/llm.sock`, mode 0700 directory). Each evaluation
gets a random bearer token; the job's environment holds exactly two more
variables, CLADE_LLM_URL and CLADE_LLM_TOKEN, and no key. How each backend
reaches the socket:

- `process`: the host path (unix:///tmp/clade-gw-.../llm.sock);
- `bwrap`: the socket file alone is bound at /run/clade/llm.sock; the network
  namespace stays empty;
- `docker`: the socket file is bind-mounted at /run/clade/llm.sock; network
  mode stays `none`;
- Ray: a local Ray (`--executor ray` without `--ray-address`) runs on this
  machine and reaches the same path; workers on other machines cannot reach a
  Unix socket here, so `--ray-address` with agents that call models is
  refused at start-up.

Requests go through the run's LLMClient, so retries, the replay cache, the
run's --max-cost / --max-tokens and litellm's offline answers apply as for
the meta-agent; every call is a row of `llm_calls` with purpose 'agent', the
node and the instance. A per-evaluation token cap ends a runaway agent: the
call past the cap is refused and the evaluation ends with status `error`,
"agent token cap of N exceeded". Agents call it with `agents_seed/clade_llm.py`
(stdlib only), which the tasks copy into the sandbox.
"""

from __future__ import annotations

from engine.gateway.server import Gateway, GatewaySettings
from engine.gateway.sessions import AgentSession

__all__ = ["AgentSession", "Gateway", "GatewaySettings"]
