"""The arena's rounds: testers propose tests, an oracle confirms them, code agents are scored on the grown set.

The four-level loops' arena (level 4): a fixed benchmark gives false
confidence, so test writers co-evolve against code agents. Two modes:
- single: one code lineage against one tester lineage. A round: the tester
  champion and (from round 2) one child of it propose tests; the oracle's
  confirmed ones join the dev set; the code champion is measured on them;
  the child replaces the tester champion when it broke at least as much in
  this round. Then K children of the code champion are measured on the
  whole set and the best replaces it when strictly better.
- tournament: a population of P of each. A round: every tester proposes;
  every code agent is measured on what was confirmed; every K rounds the
  worst of each population (lowest evolved / tester mean) is replaced by a
  child of its best.
A tester's score in a round is the share of the round's code agents (the
champion, or the population) that its confirmed tests break (score below 1).

Everything is read back from the archive at the start of a round (ledger),
so a run killed at any point resumes exactly: the grown instance set is the
`instances` table, children already made in an unfinished round are reused,
a tester that already ran in it is not run again, and measuring only ever
adds missing (node, instance) pairs. `--budget` counts code agents' dev
evaluations plus testers' runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from archive import Archive, NodeRecord
from archive.store import files_hash
from engine.arena import ledger
from engine.arena.testers import TesterTask, vet
from engine.arena.views import role_view
from engine.errors import StopRun
from engine.loop.breaker import CircuitBreaker
from engine.loop.evaluation import Outcome, RunHandles
from engine.loop.expansion import mutation_context, store_child
from engine.loop.state import RunState
from engine.mutators import AsyncMutator, ExpansionFailed, Mutator, Proposal, SyncMutator
from tasks.base import ArenaTask, Instance

TIME_LIMIT = "time limit reached"
BUDGET_SPENT = "budget spent"
SHOWN_REFUSALS = 3
FILL_TRIES = 3  # children tried per place of a tournament's first population
FINAL_RULE = "arena: the best evolved-set mean among the last round's code agents"


@dataclass(frozen=True)
class ArenaSettings:
    mode: str  # 'single' or 'tournament'
    every: int  # K: single, code children per round; tournament, rounds between replacements
    population: int  # tournament: code agents and testers, each
    proposals: int  # proposals asked of a tester per run
    budget: int = 0  # code agents' dev evaluations plus testers' runs
    workers: int = 1  # evaluations at once
    seed: int = 0  # the run's seed: testers' rounds and children's random states derive from it
    deadline: float | None = None  # the `time.monotonic()` at which the run stops (--time-limit); None: none


class Arena:
    def __init__(
        self,
        archive: Archive,
        task: ArenaTask,
        settings: ArenaSettings,
        handles: RunHandles,
        *,
        make_mutator: Callable[[RunState], Mutator],
        say: Callable[[str], object] = print,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        """`make_mutator(view)`: the run's mutator for a population's view (engine.arena.views); `breaker`:
        children that keep failing stop the run, as in a search."""
        self.archive = archive
        self.task = task
        self.testers = TesterTask(task)
        self.settings = settings
        self.handles = handles
        self.workers = settings.workers
        self.budget = settings.budget
        self.seed = settings.seed
        self.make_mutator = make_mutator
        self.say = say
        self.deadline = settings.deadline
        self.breaker = breaker
        self.fatal: str | None = None  # a stop the user must act on (the breaker: a model that keeps failing)
        self._unrecorded = 0  # tester runs made and not yet written (they count in the budget)

    # ----- the loop ---------------------------------------------------------
    async def run(self) -> str:
        """Rounds until the budget is spent or time is up; returns why it stopped."""
        self._plant_tester_root()
        try:
            return await self._rounds()
        except StopRun as exc:
            return str(exc)

    async def _rounds(self) -> str:
        while True:
            if self.deadline is not None and time.monotonic() >= self.deadline:
                return TIME_LIMIT
            if ledger.spent(self.archive) >= self.budget:
                return BUDGET_SPENT
            done = ledger.rounds(self.archive)
            number = len(done) + 1
            agents = list(done[-1]["agents"]) if done else [0]
            testers = list(done[-1]["testers"]) if done else [self._tester_root()]
            play = self._single if self.settings.mode == "single" else self._tournament
            stop = await play(number, agents, testers)
            if stop:
                return stop

    def _plant_tester_root(self) -> None:
        """The testers' own root, the task's seed tester (once per run)."""
        if self.archive.tester_root() is not None:
            return
        files = self.testers.seed_files()
        node = self.archive.next_node_id()
        record = NodeRecord.root(node, files_hash(files), f"the {self.task.name} seed tester", role="tester")
        self.archive.add_node(record, files, event=("arena_start", node, {"mode": self.settings.mode}))

    async def _single(self, number: int, agents: list[int], testers: list[int]) -> str | None:
        champion, tester = agents[0], testers[0]
        if not await self._measure([champion], self._dev()):
            return BUDGET_SPENT
        challengers: list[int] = []
        if number > 1:
            challengers, stop = await self._children("tester", tester, number, 1)
            if stop:
                return stop
        stop = await self._tester_turn(number, [tester, *challengers], [champion])
        if stop:
            return stop
        for challenger in challengers:  # judged on the same round, against the same code agent
            if self._valid(challenger) and self._round_score(challenger, number) >= self._round_score(tester, number):
                tester = challenger
        children, stop = await self._children("agent", champion, number, self.settings.every)
        if stop:
            return stop
        children = [c for c in children if self._valid(c)]
        if not await self._measure(children, self._dev()):
            return BUDGET_SPENT
        best = champion
        for child in children:  # keep if strictly better on the evolved set (AutoResearch's greedy loop)
            if (ledger.dev_mean(self.archive, child) or 0.0) > (ledger.dev_mean(self.archive, best) or 0.0):
                best = child
        self._close_round(number, [best], [tester], {"challengers": children})
        return None

    def _round_score(self, tester: int, number: int) -> float:
        score = self.archive.evaluation_score(tester, "arena", f"round-{number}")
        return 0.0 if score is None else score

    async def _tournament(self, number: int, agents: list[int], testers: list[int]) -> str | None:
        size = self.settings.population
        for role, members in (("agent", agents), ("tester", testers)):
            if number == 1:  # the root's children fill the population, FILL_TRIES tries per place at most
                stop = await self._fill(role, members, number, size)
                if stop:
                    return stop
        if not await self._measure(agents, self._dev()):
            return BUDGET_SPENT
        stop = await self._tester_turn(number, testers, agents)
        if stop:
            return stop
        replaced = {}
        if number % self.settings.every == 0:
            for role, members, mean in (
                ("agent", agents, lambda n: ledger.dev_mean(self.archive, n)),
                ("tester", testers, lambda n: self.archive.mean_score(n, "arena")),
            ):
                ranked = sorted(members, key=lambda n: (-(mean(n) or 0.0), n))
                best, worst = ranked[0], ranked[-1]
                if best == worst:
                    continue
                made, stop = await self._children(role, best, number, 1, "replace")
                if stop:
                    return stop
                if made and self._valid(made[0]):
                    members[members.index(worst)] = made[0]
                    replaced[role] = {"out": worst, "in": made[0], "parent": best}
            if not await self._measure(agents, self._dev()):
                return BUDGET_SPENT
        self._close_round(number, agents, testers, {"replaced": replaced} if replaced else {})
        return None

    async def _fill(self, role: str, members: list[int], number: int, size: int) -> str | None:
        root, tries = members[0], 0
        while len(members) < size and tries < FILL_TRIES * (size - 1):
            tries += 1
            made, stop = await self._children(role, root, number, tries, "fill")
            if stop:
                return stop
            members[1:] = [c for c in made if self._valid(c)][: size - 1]
        return None

    def _close_round(self, number: int, agents: list[int], testers: list[int], extra: dict) -> None:
        champion = max(agents, key=lambda n: (ledger.dev_mean(self.archive, n) or 0.0, -n))
        counts = ledger.instance_counts(self.archive)
        added = self.archive.arena_round_instances(number, self._round_testers(number))
        detail = {
            "round": number,
            "agents": agents,
            "testers": testers,
            "champion": champion,
            "added": sorted(added.values()),
            "dev_instances": counts["task"] + counts["arena"],
            "original": ledger.dev_mean(self.archive, champion, up_to_round=0),
            "evolved": ledger.dev_mean(self.archive, champion),
            **extra,
        }
        self.archive.add_event("arena_round", champion, detail)
        said = (
            f"Round {number}: {len(added)} tester(s) added tests, dev set {detail['dev_instances']} instances; "
            f"champion node {champion}: evolved {_pct(detail['evolved'])}, original {_pct(detail['original'])}"
        )
        self.say(said)

    def _round_testers(self, number: int) -> list[int]:
        return self.archive.arena_round_testers(number)

    # ----- testers ------------------------------------------------------------
    async def _tester_turn(self, number: int, testers: list[int], agents: list[int]) -> str | None:
        """Run each tester not yet run in this round, vet its proposals, measure `agents` on what was confirmed,
        and write each tester's score for the round (from what could be measured when the budget ran out)."""
        scored = self.archive.nodes_evaluated_on("arena", f"round-{number}")
        pending = [t for t in testers if t not in scored and self._valid(t)]
        ran = set(self._round_testers(number))  # before a crash: their proposals are in the archive
        to_score, short, outcomes = [], False, {}
        for tester in pending:
            if tester not in ran:
                if ledger.spent(self.archive) + self._unrecorded >= self.budget:
                    short = True
                    break
                outcome = await self._run_tester(tester, number)
                if outcome.stop:
                    return outcome.stop
                if outcome.status != "ok":
                    continue  # written as it failed
                outcomes[tester] = outcome
            self._unrecorded += 1
            to_score.append(tester)
        made = self.archive.arena_round_instances(number, to_score)
        measured = await self._measure(agents, [i for i in self._dev() if i.id in set(made.values())])
        for tester in to_score:
            self._score_tester(tester, number, made.get(tester), agents, not measured, outcomes.get(tester))
        return BUDGET_SPENT if short or not measured else None

    async def _run_tester(self, tester: int, number: int) -> Outcome:
        """One tester run; its proposals vetted and stored (a failed run is written at once, score 0)."""
        instance = Instance(
            f"round-{number}",
            "arena",
            {"n": self.settings.proposals, "seed": self.seed * 1_000_003 + number * 1009 + tester},
        )
        outcome = await self.handles.run_agent(self.testers, self.archive.node_files(tester), instance, node_id=tester)
        if outcome.stop:
            return outcome
        if outcome.status != "ok":
            self._write_tester(tester, number, 0.0, {"proposed": 0, "confirmed": 0}, outcome, outcome.feedback)
            return outcome
        known = {key for inst in self._all_instances() for key in self.task.instance_keys(inst)}
        verdicts = vet(self.task, outcome.metrics["proposals"], known)
        confirmed = [v.proposal for v in verdicts if v.accepted]
        instance_row = (f"arena-r{number}-t{tester}", self.task.arena_data(confirmed)) if confirmed else None
        self.archive.add_arena_proposals(
            tester,
            number,
            [(v.item, v.proposal, v.reason) for v in verdicts],
            instance_row,
            event=(
                "arena_tests",
                tester,
                {
                    "arena_round": number,
                    "proposed": len(verdicts),
                    "confirmed": len(confirmed),
                    "instance": instance_row[0] if instance_row else None,
                },
            ),
        )
        return outcome

    def _score_tester(
        self, tester: int, number: int, instance: str | None, agents: list[int], partial: bool, outcome: Outcome | None
    ) -> None:
        """A tester's score for the round: the share of `agents` whose score on its confirmed tests is below 1."""
        proposals = self.archive.arena_proposals_of(tester, number)
        scores = self.archive.scores_on_instance(instance, agents) if instance and agents else {}
        broken = [a for a in agents if scores.get(a, 1.0) < 1.0]
        refused = [(p, r) for p, ok, r in proposals if not ok]
        metrics = {
            "proposed": len(proposals),
            "confirmed": len(proposals) - len(refused),
            "instance": instance,
            "against": agents,
            "broken": broken,
        }
        if partial:
            metrics["measured_against"] = sorted(scores)  # the budget ran out before every agent was measured
        feedback = (
            f"{metrics['confirmed']} of {len(proposals)} proposals confirmed; broke {len(broken)} of {len(agents)}"
        )
        if refused:
            feedback += "; refused: " + "; ".join(f"{_short(p)} ({r})" for p, r in refused[:SHOWN_REFUSALS])
        self._unrecorded -= 1
        self._write_tester(tester, number, len(broken) / len(agents) if agents else 0.0, metrics, outcome, feedback)

    def _write_tester(
        self, tester: int, number: int, score: float, metrics: dict, outcome: Outcome | None, feedback: str
    ) -> None:
        o = replace(outcome or Outcome("ok"), feedback=feedback)
        record = o.record(tester, f"round-{number}", "arena", score, metrics=metrics, worker="w0")
        record = replace(record, runtime_s=o.runtime_s or None)  # a tester run before a crash: its time unknown
        self.archive.add_evaluation(
            record,
            event=(
                "evaluate",
                tester,
                {"rule": "arena tester", "arena_round": number, "score": score, "status": o.status},
            ),
        )

    # ----- code agents ---------------------------------------------------------
    async def _measure(
        self, nodes: list[int], instances: list[Instance], split: str = "dev", capped: bool = True
    ) -> bool:
        """Evaluate every missing (node, instance) pair, `workers` at a time; False when the budget stopped it."""
        have = self.archive.measured_pairs()
        todo = [(n, i) for n in nodes for i in instances if (n, i.id) not in have]
        if not todo:
            return True
        room = self.budget - ledger.spent(self.archive) - self._unrecorded if capped else len(todo)
        launch = todo[: max(room, 0)]
        queue: asyncio.Queue[tuple[int, Instance]] = asyncio.Queue()
        for pair in launch:
            queue.put_nowait(pair)

        async def worker(slot: int) -> None:
            while not queue.empty():
                node, instance = queue.get_nowait()
                outcome = await self.handles.run_agent(self.task, self.archive.node_files(node), instance, node_id=node)
                stopped = outcome.stopped()
                if stopped is not None:  # the run's LLM budget or key, not the agent's doing: not recorded
                    raise stopped
                self._store(node, instance, split, outcome, slot, "arena" if capped else "arena finale")

        try:
            async with asyncio.TaskGroup() as group:  # one stop cancels the other workers' jobs
                for slot in range(min(self.workers, len(launch))):
                    group.create_task(worker(slot))
        except* StopRun as stopped:
            raise stopped.exceptions[0] from None
        return len(launch) == len(todo)

    def _store(self, node: int, instance: Instance, split: str, outcome: Outcome, slot: int, rule: str) -> None:
        score = self.task.score(instance, outcome.metrics, None) if outcome.status == "ok" else 0.0
        record = outcome.record(node, instance.id, split, score, worker=f"w{slot}")
        self.archive.add_evaluation(
            record,
            event=("evaluate", node, {"rule": rule, "instance": instance.id, "score": score, "status": outcome.status}),
        )

    async def finale(self) -> None:
        """Every valid code agent on the whole evolved dev set and on holdout (outside the budget)."""
        agents = [n.node for n in ledger.node_scores(self.archive) if n.role == "agent" and n.status == "valid"]
        have = self.archive.measured_pairs()
        todo = sum((n, i.id) not in have for n in agents for i in self._all_instances())
        self.say(
            f"Measuring {len(agents)} code agents on the whole evolved dev set and on holdout: {todo} "
            f"evaluations (outside the budget) ..."
        )
        await self._measure(agents, self._dev(), capped=False)
        await self._measure(agents, [i for i in self._all_instances() if i.split == "holdout"], "holdout", capped=False)
        played = ledger.rounds(self.archive)
        if played:  # the final agent: the best of the last population on the whole evolved set
            final = max(played[-1]["agents"], key=lambda n: (ledger.dev_mean(self.archive, n) or 0.0, -n))
            self.archive.add_event(
                "select_final", final, {"rule": FINAL_RULE, "evolved": ledger.dev_mean(self.archive, final)}
            )

    # ----- children --------------------------------------------------------------
    async def _children(
        self, role: str, parent: int, number: int, count: int, why: str = "offspring"
    ) -> tuple[list[int], str | None]:
        """`count` children of `parent` for this round and purpose (`why`): those a crashed session made first,
        then new ones."""
        made = ledger.made_in_round(self.archive, role, number, parent, why)
        while len(made) < count:
            if self.deadline is not None and time.monotonic() >= self.deadline:
                return made, TIME_LIMIT  # model calls can be slow: the limit is looked at before each child
            view = role_view(self.archive, self.task if role == "agent" else self.testers, role)
            mutator = self.make_mutator(view)
            rng = np.random.default_rng([self.seed, number, view.tree.n])
            detail = {"rule": "arena", "arena_round": number, "role": role, "why": why}
            try:
                outcome = await _propose(mutator, view, parent, detail, rng)
            except StopRun as stop:  # a spent budget, a bad key: the run ends, no child stored
                return made, str(stop)
            result = store_child(view, mutator, parent, outcome, detail)
            made.append(result.node_id)
            if self.breaker is not None:
                self.breaker.expansion(result.status, result.reason)
                tripped = self.breaker.tripped()
                if tripped:
                    self.fatal = f"stopped: {tripped}"
                    return made, self.fatal
        return made, None

    # ----- reads ----------------------------------------------------------------------
    def _all_instances(self) -> list[Instance]:
        return [Instance(i, s, d) for i, s, d in self.archive.instances()]

    def _dev(self) -> list[Instance]:
        return [i for i in self._all_instances() if i.split == "dev"]

    def _valid(self, node: int) -> bool:
        record = self.archive.node(node)
        return record is not None and record.status == "valid"

    def _tester_root(self) -> int:
        root = self.archive.tester_root()
        assert root is not None  # planted when the run started (_plant_tester_root), before any round
        return root


async def _propose(
    mutator: Mutator, view: RunState, parent: int, detail: dict, rng: np.random.Generator
) -> Proposal | ExpansionFailed:
    """One child of `parent` by a mutator of either form; a mutator's error is a failed child, a `StopRun` goes
    to the caller."""
    if not isinstance(mutator, (AsyncMutator, SyncMutator)):
        raise TypeError(f"{type(mutator).__name__} is neither a SyncMutator nor an AsyncMutator")
    context = mutation_context(view, parent, detail)
    try:
        if isinstance(mutator, AsyncMutator):
            return await mutator.propose_async(view.files(parent), context, rng)
        return mutator.propose(view.files(parent), context, rng)
    except StopRun:
        raise
    except Exception as exc:  # noqa: BLE001 - a mutator's error is a failed child
        return ExpansionFailed.of(exc)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _short(proposal: object, width: int = 60) -> str:
    text = repr(proposal.get("address") if isinstance(proposal, dict) and "address" in proposal else proposal)
    return text if len(text) <= width else text[: width - 3] + "..."
