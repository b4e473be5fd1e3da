"""Which models a run's agents may call, and the run's LLM client and gateway (see engine/gateway).

A task says whether its agents call a model (`agent_llm`: "required" for
humaneval, "optional" for arc, "none", the default, for binpack) and how many tokens one
evaluation may use (`agent_max_tokens`). The run's `--agent-model` (a list,
"a,b") is the allow-list; without it, the models of `--model` (the
meta-agent's) serve agents too. `--agent-max-tokens` overrides the task's cap.
One LLMClient serves the meta-agent and the agents: one budget, one
`llm_calls` table, one replay cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from engine.config import RunConfig
from engine.errors import UserError

if TYPE_CHECKING:
    from engine.gateway import Gateway
    from tasks.base import Task


def agent_llm_mode(task: Task) -> str:
    """'required', 'optional' or 'none': does the task's agent call a model?"""
    return task.agent_llm


def agent_models(config: RunConfig, task) -> tuple[str, ...]:
    """The models agents may call in this run (the first is their default); () when agents get no gateway."""
    from engine.mutators.model_choice import parse_models

    if config.llm.agent_model:
        return tuple(dict.fromkeys(name for name, _ in parse_models(config.llm.agent_model)))
    if (agent_llm_mode(task) != "none" or config.improvement.mutator == "self") and config.llm.model:
        return tuple(dict.fromkeys(name for name, _ in parse_models(config.llm.model)))
    return ()


def run_models(config: RunConfig, task) -> list[str]:
    """Every model the run may call: the meta-agent's, then the agents' (each once)."""
    from engine.mutators.model_choice import parse_models

    models = [name for name, _ in parse_models(config.llm.model)] if config.llm.model else []
    extra = [m for m in (config.improvement.overseer, config.benchmark.judge_model) if m]
    return list(dict.fromkeys([*models, *agent_models(config, task), *extra]))


def agent_cap(config: RunConfig, task) -> int | None:
    if config.llm.agent_max_tokens is not None:
        return config.llm.agent_max_tokens
    return task.agent_max_tokens


def check_agent_llm(config: RunConfig, task) -> None:
    """One-line UserErrors: a task whose agents need a model and got none; agents that cannot reach the gateway."""
    models = agent_models(config, task)
    if not models and agent_llm_mode(task) == "required":
        raise UserError(
            f"the {task.name} agent calls a model: give --agent-model (or --model), e.g. "
            "--agent-model openai/gpt-4o-mini"
        )
    if config.improvement.mutator == "self" and agent_llm_mode(task) == "none":
        raise UserError(
            f"--mutator self runs the agent on its own code, so it must be an agent that calls a model "
            f"and edits files; the {task.name} agent is a function the task calls (use --task repofix, or "
            "--task humaneval --agent agents_seed/coding_agent)"
        )
    if task.needs_judge and not config.benchmark.judge_model:
        raise UserError(
            f"the {task.name} task is graded by a model against its rubric: give --judge-model, e.g. "
            "--judge-model openai/gpt-4o-mini"
        )
    if config.benchmark.judge_model and not task.needs_judge:
        raise UserError(f"--judge-model grades rubric tasks; the {task.name} task grades its answers itself")
    if config.improvement.overseer and not models:
        raise UserError(
            "--overseer watches agents that call a model through the run's gateway; this run's agents "
            "call none (give --agent-model, or use a task whose agent calls a model)"
        )
    where = config.evaluation
    if models and where.executor == "ray" and where.ray_address and not where.gateway_listen:
        raise UserError(
            "--ray-address: these agents call a model through the run's LLM gateway, which Ray workers "
            "on other machines reach over TCP: give --gateway-listen HOST:PORT (an address of this "
            "machine they can reach, e.g. 0.0.0.0:8765; --gateway-tls CERT KEY to encrypt it)"
        )
    if models and where.executor == "slurm" and not where.gateway_listen:
        raise UserError(
            "--executor slurm: these agents call a model through the run's LLM gateway, which Slurm nodes "
            "reach over TCP: give --gateway-listen HOST:PORT (an address of this machine the nodes can reach, "
            "e.g. 0.0.0.0:8765; --gateway-tls CERT KEY to encrypt it)"
        )
    if config.evaluation.gateway_listen and not models:
        raise UserError(
            "--gateway-listen serves the agents' model calls; this run's agents call none (give "
            "--agent-model, or use a task whose agent calls a model)"
        )


def make_client(config: RunConfig, archive, task, llm_mock):
    """The run's LLM client, shared by the meta-agent and the agents; None when neither calls a model."""
    human = config.improvement.mutator == "human"  # a person's answers are booked as calls too
    if not config.llm.model and not agent_models(config, task) and not config.benchmark.judge_model and not human:
        return None
    from engine.llm import LLMClient, LLMSettings

    source = archive
    if config.llm.replay:
        from engine.loop.replay import ReplaySource

        source = ReplaySource(archive, config.llm.replay)
    llm, api_key = config.llm, None
    if llm.api_base and llm_mock is None and not llm.replay:  # a local server needs no key of the provider's
        from engine.llm.preflight import placeholder_key

        embedding = [llm.embedding_model] if llm.embedding_model else []
        api_key = placeholder_key([*run_models(config, task), *embedding], llm.api_base)
    settings = LLMSettings(
        api_base=llm.api_base,
        api_key=api_key,
        max_cost_usd=llm.max_cost,
        max_tokens_total=llm.max_tokens,
        replay_only=bool(llm.replay),
    )
    return LLMClient(source, settings, mock=llm_mock)


@contextlib.asynccontextmanager
async def serve_gateway(config: RunConfig, task, client, archive=None) -> AsyncIterator[Gateway | None]:
    """The run's gateway, started in the running event loop (None when agents call no model); with
    --overseer, SICA's overseer watches its sessions (its events go to `archive`)."""
    models = agent_models(config, task)
    if client is None or not models:
        yield None
        return
    from engine.gateway import Gateway, GatewaySettings

    overseer = None
    if config.improvement.overseer:
        from engine.gateway.overseer import Overseer

        overseer = Overseer(client, config.improvement.overseer, archive if archive is not None else client.archive)
    listen = config.evaluation.gateway_address()

    def refused(detail: dict) -> None:  # who knocked with a token that is not an open evaluation's
        if archive is not None:
            archive.add_event("gateway_refused", None, detail)

    gateway = Gateway(
        client,
        GatewaySettings(models, agent_cap(config, task)),
        overseer=overseer,
        listen=listen,
        tls=_pair(config.evaluation.gateway_tls),
        on_refused=refused,
    )
    try:
        await gateway.start()
    except (OSError, ValueError) as exc:  # a port in use, an address not of this machine, a bad certificate
        await gateway.close()
        why = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        raise UserError(f"--gateway-listen {config.evaluation.gateway_listen}: cannot serve there: {why}") from None
    try:
        yield gateway
    finally:
        await gateway.close()


def describe(config: RunConfig, task) -> str:
    """One line for the start of a run, or ''."""
    models = agent_models(config, task)
    if not models:
        return ""
    cap = agent_cap(config, task)
    tcp = ""
    if config.evaluation.gateway_listen:
        tcp = (
            f"; also on TCP at {config.evaluation.gateway_listen}"
            + (" (TLS)" if config.evaluation.gateway_tls else "")
            + " for Ray workers, who relay it to their jobs as a local socket"
        )
    return (
        f"Agents call {', '.join(models)} through the run's LLM gateway (no key in the sandbox)"
        + (f", at most {cap} tokens per evaluation" if cap else "")
        + tcp
    )


def _pair(files: list[str] | None) -> tuple[str, str] | None:
    """--gateway-tls CERT KEY as the pair the gateway takes (two files: the configuration checked it)."""
    return (files[0], files[1]) if files else None
