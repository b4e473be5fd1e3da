"""Which mutator a run's expansions use: the offline one, the LLM mutator, or the agent improving itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.config import RunConfig


def llm_mutator(config: RunConfig, client: Any, state: Any, say: Callable[..., None] | None = None) -> Any:
    """The LLM mutator over `state` (a run's state, or an arena population's view), as --model and its flags say."""
    from engine.mutators.llm import LLMMutator
    from engine.mutators.model_choice import make_chooser

    llm = config.llm
    if not llm.model:
        raise ValueError("the LLM mutator needs --model")
    return LLMMutator(
        client,
        make_chooser(llm.model, llm.model_choice),
        state,
        answer_format=llm.answer_format,
        diagnose=llm.meta_steps.startswith("diagnose"),
        say=say,
    )


def make_mutator(
    config: RunConfig, state: Any, archive: Any, llm_mock: Any, say: Callable[..., None] | None = None, sandbox=None
) -> tuple[Any, Any]:
    """The offline mutator, or the LLM mutator, and the run's LLM client (for a replay, with the recorded
    answers); the client also serves the agents' gateway (engine.front.agent_llm), so it exists when either calls."""
    from engine.front.agent_llm import make_client

    client = make_client(config, archive, state.task, llm_mock)
    llm = config.llm
    if not llm.model:
        from engine.mutators import OfflineMutator

        return OfflineMutator(), client
    if config.improvement.mutator == "self":  # the agent improves itself; it calls --model through the gateway
        from engine.loop.self_improve import SelfMutator
        from engine.mutators.model_choice import parse_models

        model = parse_models(llm.model)[0][0]
        return SelfMutator(client, model, state, sandbox, diagnose=llm.meta_steps.startswith("diagnose")), client
    if llm.embedding_model:  # near-duplicates by embeddings, asked in the mutator's conversation
        from engine.mutators.novelty import ArchiveEmbeddings, EmbeddingNovelty

        state.embedding_novelty = ArchiveEmbeddings(
            EmbeddingNovelty(client, llm.embedding_model, entry_file=state.task.entry_file), archive, state.files
        )
    return llm_mutator(config, client, state, say), client
