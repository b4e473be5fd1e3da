"""The engine's in-memory picture of a run, rebuilt from the archive alone.

Nothing here is authoritative: the archive is. A resumed run replays the
archive's nodes and evaluations into `TreeStats` and goes on (Optuna's rule:
storage is the single source of truth).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from archive import Archive
from search.tree import TreeStats
from tasks.base import Instance


@dataclass
class RunState:
    archive: Archive
    task: object
    dev: list[Instance]
    holdout: list[Instance]
    tree: TreeStats
    code_hashes: dict[str, int] = field(default_factory=dict)  # code hash -> first node with it
    seed_metrics: dict[str, dict] = field(default_factory=dict)  # instance id -> the root's raw metrics
    _files: dict[int, dict[str, str]] = field(default_factory=dict)
    gateway: object | None = None  # a live handle, not state: the run's LLM gateway, while the search runs

    @property
    def dev_index(self) -> dict[str, int]:
        return {inst.id: i for i, inst in enumerate(self.dev)}

    def files(self, node: int) -> dict[str, str]:
        if node not in self._files:
            self._files[node] = self.archive.node_files(node)
        return self._files[node]

    def remember_files(self, node: int, files: Mapping[str, str]) -> None:
        self._files[node] = dict(files)

    @classmethod
    def rebuild(cls, archive: Archive, task: object) -> "RunState":
        instances = [Instance(i, s, d) for i, s, d in archive.instances()]
        dev = [x for x in instances if x.split == "dev"]
        holdout = [x for x in instances if x.split == "holdout"]
        state = cls(archive, task, dev, holdout, TreeStats(len(dev)))
        sizes = archive.code_sizes()
        for node in archive.nodes():
            state.tree.add_node(node.parent_id, node.status == "valid", feature=float(sizes.get(node.id, 0)))
            state.code_hashes.setdefault(node.code_hash, node.id)
        index = state.dev_index
        for ev in archive.evaluations():
            if ev.split == "dev":
                state.tree.finish_evaluation(ev.node_id, index[ev.instance_id], ev.score, started=False)
            if ev.node_id == 0 and ev.status == "ok":
                state.seed_metrics[ev.instance_id] = ev.metrics
        return state
