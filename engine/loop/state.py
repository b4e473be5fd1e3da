"""The engine's in-memory picture of a run, rebuilt from the archive alone.

Nothing here is authoritative: the archive is. A resumed run replays the
archive's nodes and evaluations into `TreeStats` and goes on (Optuna's rule:
storage is the single source of truth).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from archive import Archive
from engine.loop.credit import OperatorCredit
from engine.loop.utility import Utility
from search.evidence import evidence_weight
from search.remeasure import PROBE_RUNS, pooled_variance, remeasure_reserve
from search.tree import TreeStats
from tasks.base import Instance, Task

if TYPE_CHECKING:
    from engine.lang.compile_check import CompileCheck
    from engine.mutators.novelty import ArchiveEmbeddings, NoveltyIndex


@dataclass
class RunState:
    """The run's data and the rules it is scored and checked by; live handles (the sandbox, the gateway) are not
    state: they are `engine.loop.evaluation.RunHandles`."""

    archive: Archive
    task: Task
    dev: list[Instance]
    holdout: list[Instance]
    tree: TreeStats
    code_hashes: dict[str, int] = field(default_factory=dict)  # code hash -> first node with it
    seed_metrics: dict[str, dict] = field(default_factory=dict)  # instance id -> the root's raw metrics
    _files: dict[int, dict[str, str]] = field(default_factory=dict)
    credit: OperatorCredit = field(default_factory=OperatorCredit)  # what the offline operators achieved
    novelty: NoveltyIndex | None = None  # of the valid nodes' code, built on first use
    # --embedding-model: asked by the LLM mutator instead of `novelty`
    embedding_novelty: ArchiveEmbeddings | None = None
    noise_var: float | None = None  # one evaluation's noise, from the noise probe (search.evidence)
    runs: dict[int, list[float]] = field(default_factory=dict)  # one dev instance: node -> its scores, repeats too
    repeats_done: int = 0  # dev evaluations with `repeat` > 0 (noise probe, re-measures): in the budget
    utility: Utility | None = None  # --utility: the score policies see
    role: str = "agent"  # the population whose children this state's expansions make (the arena: 'tester')
    compile_check: CompileCheck | None = None  # --compile-check: a compiled language's children

    @property
    def dev_index(self) -> dict[str, int]:
        return {inst.id: i for i, inst in enumerate(self.dev)}

    def files(self, node: int) -> dict[str, str]:
        if node not in self._files:
            self._files[node] = self.archive.node_files(node)
        return self._files[node]

    def remember_files(self, node: int, files: Mapping[str, str]) -> None:
        self._files[node] = dict(files)

    def record_dev_score(self, node: int, instance: int, score: float, started: bool = True, ok: bool = True) -> None:
        """A finished dev evaluation into the tree's sums and the operators' credit (`ok`: its status was ok; any
        other status, an evaluator-caught failure included, is a miss for the operators that made the node)."""
        to_beat = self.credit.before_evaluation(self.tree, node)
        self.tree.finish_evaluation(node, instance, score, started=started)
        self.credit.evaluated(node, score, to_beat, ok=ok)
        if self.tree.n_instances == 1:
            self.runs.setdefault(node, []).insert(0, score)  # the first run, whenever its repeats returned

    def repeat_measured(self, node: int, score: float) -> None:
        """A repeat (`repeat` > 0) of a node on the one dev instance: its runs and the noise estimate."""
        self.runs.setdefault(node, []).append(score)
        self.repeats_done += 1
        self.noise_var = pooled_variance(self.runs)

    @property
    def dev_spent(self) -> int:
        """Dev evaluations finished, the noise probe and re-measures included: what the budget counts."""
        return self.tree.evaluations_done + self.repeats_done

    def near_duplicate(self, files: Mapping[str, str]) -> str | None:
        """Why a child is too close to a valid node's code to be worth an evaluation, else None."""
        return self._novelty().check(files)

    def admitted(self, node: int, files: Mapping[str, str]) -> None:
        """A new valid node: later children are compared with it."""
        if self.embedding_novelty is not None:
            self.embedding_novelty.admitted(node)  # embedded before the next check (an async call)
            return
        self._novelty().add(node, files)

    def _novelty(self) -> NoveltyIndex:
        if self.novelty is None:
            from engine.mutators.novelty import NoveltyIndex

            self.novelty = NoveltyIndex(entry_file=self.task.entry_file)
            for node, files in self.archive.valid_node_files():
                self.novelty.add(node, files)
        return self.novelty

    def wants_noise_probe(self) -> bool:
        """One dev instance and the seed measured ok on it, run fewer than PROBE_RUNS times: re-run it
        (search.evidence)."""
        tree = self.tree
        return (
            tree.n_instances == 1
            and bool(tree.valid[0])
            and tree.n_evals[0] == 1
            and tree.s[0] > 0.0
            and bool(self.seed_metrics)
            and len(self.runs.get(0, ())) < PROBE_RUNS
        )

    def noisy(self) -> bool:
        """A one-instance task whose repeated runs differ: the end of the run re-measures candidates."""
        return self.tree.n_instances == 1 and bool(self.noise_var)

    def remeasure_due(self, budget: int, in_flight: int) -> bool:
        """Noisy, and the budget left (in flight counted as spent) is within the re-measure reserve."""
        return self.noisy() and self.dev_spent + in_flight >= budget - remeasure_reserve(budget)

    def evidence(self) -> float:
        """What one dev evaluation is worth in Bernoulli trials, for the policy's posteriors."""
        if self.tree.n_instances != 1 or not self.tree.n_evals[0]:
            return 1.0
        return evidence_weight(float(self.tree.s[0]), self.noise_var)

    @classmethod
    def rebuild(
        cls,
        archive: Archive,
        task: Task,
        *,
        utility: Utility | None = None,
        compile_check: CompileCheck | None = None,
        embedding_novelty: ArchiveEmbeddings | None = None,
    ) -> RunState:
        """The run's state from its archive, under the run's rules (--utility, --compile-check,
        --embedding-model)."""
        instances = [Instance(i, s, d) for i, s, d in archive.instances()]
        dev = [x for x in instances if x.split == "dev"]
        holdout = [x for x in instances if x.split == "holdout"]
        state = cls(
            archive,
            task,
            dev,
            holdout,
            TreeStats(len(dev)),
            embedding_novelty=embedding_novelty,
            utility=utility,
            compile_check=compile_check,
        )
        sizes = archive.code_sizes()
        for node in archive.nodes():
            state.tree.add_node(node.parent_id, node.status == "valid", feature=float(sizes.get(node.id, 0)))
            state.credit.child_stored(node.id, node.parent_id, node.description, node.status == "valid")
            state.code_hashes.setdefault(node.code_hash, node.id)
        index = state.dev_index
        repeats: list[tuple[int, float]] = []
        for ev in archive.evaluations():
            if ev.split == "dev" and ev.repeat:
                repeats.append((ev.node_id, ev.score))
            elif ev.split == "dev":
                state.record_dev_score(ev.node_id, index[ev.instance_id], ev.score, started=False, ok=ev.status == "ok")
            if ev.node_id == 0 and ev.status == "ok":
                state.seed_metrics[ev.instance_id] = ev.metrics
        for node_id, score in repeats:
            state.repeat_measured(node_id, score)
        return state
