"""Can this run reach its models? Checked before the search spends anything (engine/llm/preflight.py).

Two checks, both skipped for a replay (no model is called) and for the
offline answers tests hand to litellm (`llm_mock`, no network, no key):
- before the run starts: every model (the meta-agent's and the agents') has a
  provider litellm knows and, without `--api-base`, its key variable set;
  otherwise one line naming the variable, exit 2, nothing created;
- once the run's archive is open, with `--api-base`: one probe call per model
  must answer (booked in `llm_calls`, purpose `probe`) before any evaluation.
"""

from __future__ import annotations

from engine.config import RunConfig
from engine.errors import UserError
from engine.front.agent_llm import run_models


def checks_apply(config: RunConfig, llm_mock) -> bool:
    return llm_mock is None and not config.llm.replay


def check_model_access(config: RunConfig, task, llm_mock) -> None:
    """UserError (one line) when a model cannot be called from here: unknown provider, no key."""
    models = run_models(config, task)
    if not models or not checks_apply(config, llm_mock):
        return
    from engine.llm.preflight import check_models

    why = check_models(models, config.llm.api_base)
    if not why and config.llm.embedding_model:  # its provider's key too (none with --api-base)
        why = check_models([config.llm.embedding_model], config.llm.api_base)
        why = why and why.replace("--model ", "--embedding-model ", 1)
    if why:
        raise UserError(why)


async def probe_models(config: RunConfig, task, client, llm_mock, archive) -> str | None:
    """With --api-base: why the server did not answer a probe (one line), or None when every model did."""
    if client is None or not config.llm.api_base or not checks_apply(config, llm_mock):
        return None
    from engine.llm import LLMError
    from engine.llm.preflight import probe

    number = archive.llm_call_count("probe")
    for k, model in enumerate(run_models(config, task)):
        try:
            await probe(client, model, number + k)
        except LLMError as exc:
            return f"the probe call to {model} at {config.llm.api_base} failed: {exc}"
    return None
