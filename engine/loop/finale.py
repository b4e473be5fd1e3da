"""The end of a search: choose the final node, then measure it on holdout.

Holdout instances are run only here, on the chosen node, the seed (against
which every score is measured) and the task's reference agents; they never
reach the search's statistics or a prompt. These runs come on top of the
budget and are reported apart.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from archive import ReferenceEvaluation
from engine.loop.evaluation import Outcome, RunHandles
from engine.loop.state import RunState
from engine.loop.utility import scored
from search.decisions import FinalChoice
from search.remeasure import remeasured_final
from tasks.base import Instance


async def _run_all(
    state: RunState,
    handles: RunHandles,
    workers: int,
    jobs: Sequence[tuple[Mapping[str, str], Instance, int | str]],
    progress: Any = None,
) -> list[Outcome]:
    """Each job: (files, instance, the node id, or a reference agent's name)."""
    gate = asyncio.Semaphore(workers)

    async def one(files: Mapping[str, str], instance: Instance, who: int | str) -> Outcome:
        async with gate:
            outcome = await handles.run_agent(
                state.task,
                files,
                instance,
                node_id=who if isinstance(who, int) else None,
                label=None if isinstance(who, int) else f"reference {who} instance {instance.id}",
            )
        if progress:
            progress.advance_extra()
        return outcome

    tasks = [asyncio.ensure_future(one(f, i, w)) for f, i, w in jobs]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _score(state: RunState, instance: Instance, outcome: Outcome, is_seed: bool) -> float:
    if outcome.status != "ok":
        return 0.0
    reference = outcome.metrics if is_seed else state.seed_metrics.get(instance.id)
    return state.task.score(instance, outcome.metrics, reference)


def _done(state: RunState, node: int, split: str) -> set[str]:
    return state.archive.evaluated_instances(node, split)


def holdout_plan(state: RunState, nodes: Iterable[int]) -> list[tuple[int, Instance]]:
    """(node, instance) of every holdout run still to make for these nodes, the seed's first."""
    order = [0] + [n for n in nodes if n != 0]
    plan = []
    for node in order:
        seen = _done(state, node, "holdout")
        plan += [(node, inst) for inst in state.holdout if inst.id not in seen]
    return plan


def reference_plan(state: RunState) -> list[tuple[str, Instance]]:
    """(reference agent, instance) of every reference run still to make, once per run."""
    seen = {(r.agent, r.instance_id) for r in state.archive.references()}
    return [
        (name, inst)
        for name in state.task.reference_agents()
        for inst in state.dev + state.holdout
        if (name, inst.id) not in seen
    ]


async def measure_holdout(
    state: RunState, handles: RunHandles, workers: int, nodes: Iterable[int], progress: Any = None
) -> None:
    """Run each node on the holdout instances it has not run yet: the seed first, since the others are
    scored against its results. The progress bar's total is set by the caller, from the plans."""
    plan = holdout_plan(state, nodes)
    where = "holdout/docker" if handles.sandbox.name == "docker" else "holdout"  # as the scheduler's slots say
    for group in ([k for k in plan if k[0] == 0], [k for k in plan if k[0] != 0]):
        jobs = [(state.files(node), inst, node) for node, inst in group]
        outcomes = await _run_all(state, handles, workers, jobs, progress)
        for (node, inst), outcome in zip(group, outcomes):
            if outcome.stop:  # the run's LLM budget, not the agent: measured by a resumed run with more
                continue
            score, metrics = scored(state.utility, _score(state, inst, outcome, node == 0), outcome)
            state.archive.add_evaluation(
                outcome.record(node, inst.id, "holdout", score, metrics=metrics, worker=where),
                steps=outcome.trajectory,
            )
            if node == 0 and outcome.status == "ok":
                state.seed_metrics[inst.id] = outcome.metrics


async def measure_references(state: RunState, handles: RunHandles, workers: int, progress: Any = None) -> None:
    """Run the task's reference agents (e.g. best fit) on every instance, once per run."""
    plan = reference_plan(state)
    agents = state.task.reference_agents()
    jobs = [(agents[name], inst, name) for name, inst in plan]
    outcomes = await _run_all(state, handles, workers, jobs, progress)
    for (name, inst), outcome in zip(plan, outcomes):
        if outcome.stop:
            continue
        state.archive.add_reference(
            ReferenceEvaluation(
                agent=name,
                instance_id=inst.id,
                split=inst.split,
                score=_score(state, inst, outcome, False),
                metrics=outcome.metrics,
                status=outcome.status,
                runtime_s=outcome.runtime_s,
                feedback=outcome.feedback,
            )
        )


def choose_final(state: RunState, policy, rng: np.random.Generator, budget: int) -> FinalChoice | None:
    """The policy's final rule; on a noisy one-instance task, the node whose repeated runs say it is best
    (search.remeasure), whatever the policy: one lucky run must not be the answer."""
    if state.noisy():
        choice = remeasured_final(state.runs, state.noise_var or 0.0)
    else:
        choice = policy.select_final(state.tree.view(budget=budget, evidence=state.evidence()), rng)
    if choice is not None:
        state.archive.add_event("select_final", choice.node_id, {"rule": choice.rule, **choice.detail})
    return choice
