"""Which mutator a run's expansions use: the offline one, the LLM mutator, or the agent improving itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.config import RunConfig

if TYPE_CHECKING:
    from engine.loop.evaluation import RunHandles
    from engine.loop.state import RunState
    from engine.mutators import Mutator
    from engine.mutators.llm import LLMMutator
    from engine.mutators.novelty import ArchiveEmbeddings
    from tasks.base import Task


def llm_mutator(config: RunConfig, client: Any, state: RunState, say: Callable[..., None] | None = None) -> LLMMutator:
    """The LLM mutator over `state` (a run's state, or an arena population's view), as --model and its flags say."""
    from engine.mutators.llm import AskSettings, LLMMutator, PromptSettings
    from engine.mutators.model_choice import make_chooser

    llm = config.llm
    if not llm.model:
        raise ValueError("the LLM mutator needs --model")
    return LLMMutator(
        client,
        make_chooser(llm.model, llm.model_choice),
        state,
        asking=AskSettings(answer_format=llm.answer_format, diagnose=llm.meta_steps.startswith("diagnose")),
        say=say,
        prompts=PromptSettings(
            recommendations_every=llm.meta_recommendations,
            recommendations_max=llm.meta_recommendations_max,
            evolve_prompts_every=llm.prompt_evolve_interval if llm.evolve_prompts else 0,
        ),
    )


def make_mutator(
    config: RunConfig, state: RunState, client: Any, say: Callable[..., None] | None, handles: RunHandles
) -> Mutator:
    """The offline mutator, the agent improving itself (it calls --model through the gateway), or the LLM
    mutator; `client`: the run's LLM client (for a replay, with the recorded answers)."""
    llm = config.llm
    if config.improvement.mutator == "human":
        return human_mutator(config, state, client, say)
    if not llm.model:
        from engine.mutators import OfflineMutator

        return OfflineMutator()
    if config.improvement.mutator == "self":
        from engine.loop.self_improve import SelfMutator
        from engine.mutators.model_choice import parse_models

        model = parse_models(llm.model)[0][0]
        return SelfMutator(client, model, state, handles, diagnose=llm.meta_steps.startswith("diagnose"))
    return llm_mutator(config, client, state, say)


def human_mutator(config: RunConfig, state: RunState, client: Any, say: Callable[..., None] | None) -> Mutator:
    """A person answers the mutation prompts (engine/mutators/human.py): at this terminal, or on the live page
    through the run folder; a replay asks no one (its client answers from the recorded calls)."""
    from engine.mutators.human import HumanMutator, human_desk

    def show(text: str) -> None:  # the prompt as it is: brackets in code are no markup
        if say is None:
            print(text, flush=True)
        else:
            say(text, markup=False, highlight=False)

    desk = None if config.llm.replay else human_desk(state.archive.path.parent, show)
    llm = config.llm
    return HumanMutator(
        client, state, desk, answer_format=llm.answer_format, diagnose=llm.meta_steps.startswith("diagnose"), say=say
    )


def embedding_novelty(config: RunConfig, client: Any, archive: Any, task: Task) -> ArchiveEmbeddings | None:
    """--embedding-model: near-duplicates by embeddings, asked in the LLM mutator's conversation."""
    llm = config.llm
    if not (llm.embedding_model and llm.model and config.improvement.mutator != "self"):
        return None
    from engine.mutators.novelty import ArchiveEmbeddings, EmbeddingNovelty

    novelty = EmbeddingNovelty(client, llm.embedding_model, entry_file=task.entry_file)
    return ArchiveEmbeddings(novelty, archive, archive.node_files)
