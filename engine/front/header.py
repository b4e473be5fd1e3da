"""The lines a search prints before it starts: which run, what runs, how the children are made and checked."""

from __future__ import annotations

from typing import Any

from engine.config import RunConfig
from engine.words import plural


def policy_label(policy: Any, n_dev: int) -> str:
    """'hgm (staged: 3 of 16 dev instances first, the rest at a mean of 0.4 or more)': what runs."""
    stages, final, inner = [], None, policy
    while hasattr(inner, "inner"):
        if hasattr(inner, "threshold"):
            if inner.stage.size(n_dev) < n_dev:  # a batch of every dev instance (one-instance tasks) stages nothing
                stages.append(
                    f"{inner.stage.size(n_dev)} of {n_dev} dev instances first, more at a mean of "
                    f"{inner.threshold:g} or more"
                )
        elif hasattr(inner, "rule"):
            final = inner.rule
        inner = inner.inner
    said = [f"staged: {'; then '.join(stages)}"] if stages else []
    said += [f"final rule {final}"] if final else []
    return policy.name + (f" ({', '.join(said)})" if said else "")


def header_lines(run: Any, state: Any, policy: Any, workers: int) -> list[str]:
    """What a search says before it starts (`run`: the opened run, engine/front/session.py), in order, as rich
    markup: only the run's id is bold; every other bracket is the text's own (`pip install 'clade-search[docker]'`)."""
    from rich.markup import escape

    from engine.front.agent_llm import describe
    from engine.front.endings import exposed_note

    config, task, box, said = run.config, run.task, run.box, run.checks[1]
    search = config.search
    resumed = f" (resumed at {state.dev_spent})" if run.resumed else ""
    lines = [
        f"Task {task.name}, policy {policy_label(policy, len(state.dev))}, budget "
        f"{plural(search.budget, 'dev evaluation')}, {plural(workers, 'worker')}, {box.said}, "
        f"seed {search.seed}{resumed}",
        mutator_line(config, task),
        said[:1].upper() + said[1:] + "." if said else "",
        task.setup_note(),
        describe(config, task),
        state.utility.describe() if state.utility else "",
        f"Overseer: {config.improvement.overseer} reads each running agent's recent calls and may stop it"
        if config.improvement.overseer
        else "",
        _seed_note(state, search.budget),
        _one_instance_note(state),
        exposed_note(task, box.name),
    ]
    first = f"Run [bold]{escape(run.archive.run_id)}[/bold] -> {escape(str(run.archive.path))}"
    return [first, *(escape(line) for line in lines if line)]


def mutator_line(config: RunConfig, task: Any) -> str:
    """How the run's children are made: the offline mutator, the agent on its own code, or the LLM mutator."""
    llm = config.llm
    replayed = f"; every answer replayed from {llm.replay}" if llm.replay else ""
    if config.improvement.mutator == "human":
        return (
            "Human mutator: each expansion shows the mutation prompt here and waits for your answer (SEARCH/REPLACE "
            "blocks or the whole file, ended by a line with only '.'), or one from the live page; one at a time, "
            f"booked as model 'human' at no cost{replayed}."
        )
    if not llm.model:
        return (
            "No LLM configured: the built-in offline mutator edits the agent's syntax tree (no model calls, no cost)."
        )
    if config.improvement.mutator == "self":
        return (
            f"Self-improvement: each expansion runs the parent agent on a copy of its own code (calling "
            f"{llm.model} through the gateway); a child must compile, keep {task.entry_function}() and "
            "solve a smoke instance" + replayed
        )
    limits = ", ".join(
        x
        for x in (
            f"max ${llm.max_cost:g}" if llm.max_cost else "",
            f"max {llm.max_tokens} tokens" if llm.max_tokens else "",
        )
        if x
    )
    return (
        f"LLM mutator: {llm.model} ({llm.model_choice}), {llm.llm_concurrency} calls at once"
        + (f", {limits}" if limits else "")
        + (f", near-duplicates by {llm.embedding_model} embeddings" if llm.embedding_model else "")
        + replayed
    )


def _one_instance_note(state: Any) -> str:
    """A task of one dev instance: what the noise probe does (search/evidence.py), or found on a resume."""
    if state.tree.n_instances != 1:
        return ""
    if state.noise_var is None:
        return (
            "One dev instance: the seed runs on it twice (a noise probe, counted in the budget); the two "
            "scores set how much one evaluation counts in the policy (search/evidence.py). If they differ, "
            "the last twentieth of the budget re-measures the best candidates for the final choice "
            "(search/remeasure.py)."
        )
    noisy = (
        " (noisy: the end of the budget re-measures the best candidates, search/remeasure.py)" if state.noisy() else ""
    )
    return f"One dev instance: one evaluation counts as w = {state.evidence():g} pass/fail trials (noise probe){noisy}."


def _seed_note(state: Any, budget: int) -> str:
    """A budget the seed's own evaluations use up leaves nothing to expand: say so at the start."""
    n_dev = state.tree.n_instances
    left = n_dev - int(state.tree.n_evals[0])
    if left and state.dev_spent + left >= budget:
        return f"Note: the seed alone uses {n_dev} of {plural(budget, 'dev evaluation')}: no expansion will run."
    return ""
