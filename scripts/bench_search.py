"""Every search policy on simulated self-improvement landscapes: final quality, regret, rank correlation, decision time.

    python scripts/bench_search.py                 # the full run (issue 5): 50 seeds, budgets 100 200 800 8000
    python scripts/bench_search.py --quick         # 8 seeds, budgets 100 200 800, decision time at 10k nodes
    python scripts/bench_search.py --seeds 20 --budgets 800 --policies hgm greedy dgm best_of_n --jobs 2

No sandbox and no model: each node is an agent with a hidden quality q in
[0, 1]; an evaluation of node i on dev instance j scores 1 with probability
q_i (Bernoulli), else 0. Every policy in `search.POLICIES` at run time is
driven through its public protocol alone (`decide(view, rng)`,
`select_final(view, rng)`), thousands of searches in minutes.

Landscape. A node's quality is q = cap * sigmoid(z) with a latent z; a child
gets its parent's z plus a step (so a step of +0.5 lifts q = 0.3 to 0.41 but
q = 0.8 only to 0.87: later gains are harder, and q never leaves [0, cap]).
A step is, with probability p_help, +Lomax(scale, shape) (heavy tailed: a few
edits help a lot), else -Exponential(hurt mean) (most edits hurt a little);
with probability p_break the child is broken (`add_node(parent, valid=False)`:
never evaluated, never expanded). Everything is drawn from a hash of (seed,
family, the node's path from the root: which child of which child...), so a
seed fixes one infinite tree of possible agents, the same for every policy
(common random numbers: policies are compared on the same landscapes, and a
per-seed paired difference is meaningful), and an evaluation's outcome is
fixed by (seed, node path, instance), whatever the order of decisions.
Families (root q; then per kind of lineage: cap, p_break, p_help, Lomax
scale / shape, Exponential hurt mean; steps in z; the mean step in brackets).
The parameters were set by looking at hgm, greedy and random on a few seeds
so that a search of 800 evaluations can make visible progress and policies
still differ at 8,000; none was tuned per policy.
- `smooth`: root q 0.30; one kind: cap 1, p_break 0.15, p_help 0.35, Lomax
  0.40 / 4 (mean +0.13), hurt 0.15 [-0.05]: two thirds of the edits lose a
  little, the best of a few children gains, the best of many gains a lot.
- `deceptive`: root q 0.30; each child of the root starts a lineage, kept by
  all its descendants: `trap` (probability 0.6) starts at q 0.40 but is
  capped at 0.5 (cap 0.5, p_break 0.15, p_help 0.30, Lomax 0.30 / 4, hurt
  0.20 [-0.11]: it plateaus under 0.5); `deep` (0.4) starts at q 0.25, below
  the root, and improves slowly without a cap (cap 1, p_break 0.15, p_help
  0.60, Lomax 0.45 / 4, hurt 0.10 [+0.05]): a handful of good generations
  take it past the trap's ceiling. A lineage's first node is the kind's
  start plus the kind's step; a climber sees the trap's children as better.
- `needle`: root q 0.20; one kind: cap 1, p_break 0.30, p_help 0.08, Lomax
  1.0 / 3 (mean +0.5, a very heavy tail), hurt 0.40 [-0.33]: almost every
  edit hurts, a rare one jumps.

Search loop, as engine/loop/scheduler.py runs it (W workers, default 2): the
root is evaluated on every dev instance first (16 by default); then, while
fewer than W evaluations are in flight and fewer than B started, the policy
gets `tree.view(pending_expansions=0, budget=B, can_expand=True)`; an Expand
adds its child at once (an instantaneous mutator), an Evaluate starts; then
one in-flight evaluation finishes (a random one, or the oldest with
`--finish start`; `simulate(duration=...)`, which scripts/bench_workers.py
uses, finishes the first to end on a virtual clock instead). The budget B counts dev evaluations (HGM's convention,
the root's included): a search stops after exactly B, or earlier when the
policy returns None with nothing in flight (counted as an early stop). Then
`select_final(tree.view(budget=B), rng)` gives the final node (none: the root).
A decision's `detail` (e.g. ADAS's context 'archive') is ignored: a child is
always its parent's z plus a step. Expansions cost nothing here, only
evaluations count: a policy that screens children on a few instances (DGM's
staged evaluation) gets more children from the same budget. `add_node` gets
`feature=` the agent's "code size" when it takes one: a random walk (root
2000, a child its parent's plus uniform in [-80, 120]) independent of q.
Variants (`--variants hgm+stages=17%:0.4 dgm+stages=none hgm+alpha=0.8`)
add rows built by `make_policy(name, **options)`; a full run adds
`hgm+stages=none` and `dgm+stages=none`, the two policies without the
staged evaluation `make_policy` gives them by default (their papers' loops).

Reported per policy, family and budget, over the seeds: the hidden q of the
final node (mean and 95% interval, mean +- 1.96 sd / sqrt(n), normal
approximation); its regret, max q over valid nodes in the tree - final q;
max q over the nodes it evaluated; and rho, Spearman's rank correlation
between the policy's node score and the node's true clade-metaproductivity
(mean hidden q of its valid descendants), over valid evaluated nodes with at
least one valid descendant, per search (>= 3 such nodes, not constant),
averaged over the searches where it is defined. The node score is the
policy's own if it exposes one (a method `scores`, `probabilities`,
`weights`, ... of the view, see `policy_scores`; OpenEvolve: its parent
probabilities averaged over the islands); for HGM the clade posterior mean
S / (S + F); else the node's own mean dev score.
Verdict at budget 800: hgm's mean final q against dgm, greedy and best_of_n
(those present), with the paired per-seed difference and its interval.

Decision time: for every policy, on synthetic trees of 10k and 100k nodes
(parents uniformly at random, q a random walk, 15% invalid) in two shapes,
`full` (every valid node evaluated on every instance: nothing open, a policy
must expand) and `mixed` (1 to 16 evaluations per valid node: most nodes
open), the wall time of `tree.view()` + `decide` per decision, median over 50
decisions, each applied untimed (an expansion adds a child, evaluated on
every instance in `full`; an evaluation finishes) after 2 untimed warm-up
decisions. Goal: under 5 ms at 100k nodes (the worse shape).

Results go to stdout and, for a full run (or with --markdown PATH), to
docs/bench_search.md with the command that produced them.
"""

from __future__ import annotations

import argparse
import copy
import math
import multiprocessing
import os
import platform
import shlex
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from search import POLICIES, HGMPolicy, make_policy
from search.decisions import Evaluate, Expand
from search.tree import TreeStats, recompute_clade_sums

N_INSTANCES = 16
BUDGETS = (100, 200, 800, 8000)
QUICK_BUDGETS = (100, 200, 800)
SEEDS = 50
QUICK_SEEDS = 8
SIZES = (10_000, 100_000)
QUICK_SIZES = (10_000,)
VERDICT_BUDGET = 800
RIVALS = ("dgm", "greedy", "best_of_n")
GOAL_MS = 5.0
STALL = 100_000  # decisions in a row without starting an evaluation: the search ends as an error
SCORE_METHODS = (
    "scores",
    "node_scores",
    "expansion_scores",
    "probabilities",
    "parent_probabilities",
    "weights",
    "parent_weights",
)


# ----- the landscape ---------------------------------------------------------------
MASK = (1 << 64) - 1


def mix(x: int) -> int:
    """splitmix64's finalizer: a 64-bit integer hash (cheap in Python, good enough to draw from)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def unit(key: int, salt: int) -> float:
    """A uniform number in [0, 1) fixed by (key, salt)."""
    return (mix(key ^ mix(salt)) >> 11) * 2.0**-53


SALT_BREAK, SALT_KIND, SALT_SIZE, SALT_LINEAGE, SALT_FEATURE = 1, 2, 3, 4, 5
SALT_EVAL = 1 << 32
ROOT_SIZE = 2000.0
SIZE_STEP = (-80.0, 120.0)


@dataclass(frozen=True)
class Kind:
    """One kind of lineage: how its children's quality moves (steps in z, q = cap * sigmoid(z))."""

    name: str
    cap: float
    p_break: float
    p_help: float
    help_scale: float  # Lomax scale: the step is scale * ((1 - u)^(-1/shape) - 1)
    help_shape: float
    hurt_mean: float  # the step is -Exponential(hurt_mean)
    weight: float = 1.0  # probability that a child of the root starts this kind (several kinds)
    start_q: float | None = None  # a root's child of this kind starts here (plus a step); None: the root's z

    def step(self, key: int) -> float:
        u = unit(key, SALT_SIZE)
        if unit(key, SALT_KIND) < self.p_help:
            return self.help_scale * ((1.0 - u) ** (-1.0 / self.help_shape) - 1.0)
        return self.hurt_mean * math.log1p(-u)

    def z_of(self, q: float) -> float:
        p = q / self.cap
        return math.log(p / (1.0 - p))

    def q_of(self, z: float) -> float:
        return self.cap / (1.0 + math.exp(-z)) if z > -700 else 0.0


@dataclass(frozen=True)
class Family:
    name: str
    root_q: float
    kinds: tuple[Kind, ...]
    summary: str

    def describe(self) -> str:
        kinds = "; ".join(
            f"{k.name}{f' (p {k.weight:g}, starts at q {k.start_q:g})' if k.start_q is not None else ''}: "
            f"cap {k.cap:g}, p_break {k.p_break:g}, p_help {k.p_help:g}, Lomax {k.help_scale:g}/{k.help_shape:g}, "
            f"hurt {k.hurt_mean:g}"
            for k in self.kinds
        )
        return f"{self.name}: root q {self.root_q:g}; {kinds}. {self.summary}"


FAMILIES = {
    "smooth": Family(
        "smooth",
        0.30,
        (Kind("edits", cap=1.0, p_break=0.15, p_help=0.35, help_scale=0.40, help_shape=4.0, hurt_mean=0.15),),
        "Most edits hurt a little, a few help a lot.",
    ),
    "deceptive": Family(
        "deceptive",
        0.30,
        (
            Kind(
                "trap",
                cap=0.5,
                p_break=0.15,
                p_help=0.30,
                help_scale=0.30,
                help_shape=4.0,
                hurt_mean=0.20,
                weight=0.6,
                start_q=0.40,
            ),
            Kind(
                "deep",
                cap=1.0,
                p_break=0.15,
                p_help=0.60,
                help_scale=0.45,
                help_shape=4.0,
                hurt_mean=0.10,
                weight=0.4,
                start_q=0.25,
            ),
        ),
        "The best lineage starts worse.",
    ),
    "needle": Family(
        "needle",
        0.20,
        (Kind("edits", cap=1.0, p_break=0.30, p_help=0.08, help_scale=1.0, help_shape=3.0, hurt_mean=0.40),),
        "Almost every edit hurts; rare big jumps.",
    ),
}


class World:
    """One seed's landscape, grown as the search asks for children: hidden q per node, in node-id order."""

    def __init__(self, family: Family, seed: int) -> None:
        self.family = family
        family_index = list(FAMILIES).index(family.name) if family.name in FAMILIES else 99
        root_kind = 0 if len(family.kinds) == 1 else -1
        self.keys = [mix(mix(seed) ^ mix(1000 + family_index))]
        self.kind = [root_kind]  # index into family.kinds; -1: the root of a multi-kind family (cap 1)
        self.z = [
            math.log(family.root_q / (1.0 - family.root_q)) if root_kind < 0 else family.kinds[0].z_of(family.root_q)
        ]
        self.q = [family.root_q]
        self.valid = [True]
        self.children = [0]
        self.size = [ROOT_SIZE]

    def __len__(self) -> int:
        return len(self.q)

    def child(self, parent: int) -> tuple[int, bool]:
        """The parent's next child: (its index here, valid)."""
        key = mix(self.keys[parent] ^ mix(0x5EED + self.children[parent]))
        self.children[parent] += 1
        kinds = self.family.kinds
        kind_index = self.kind[parent]
        if kind_index < 0:  # a child of the root starts a lineage
            u, kind_index = unit(key, SALT_LINEAGE), len(kinds) - 1
            total = sum(k.weight for k in kinds)
            for i, k in enumerate(kinds):
                u -= k.weight / total
                if u < 0:
                    kind_index = i
                    break
            kind = kinds[kind_index]
            base = kind.z_of(kind.start_q) if kind.start_q is not None else self.z[parent]
        else:
            kind = kinds[kind_index]
            base = self.z[parent]
        z = base + kind.step(key)
        valid = unit(key, SALT_BREAK) >= kind.p_break
        self.keys.append(key)
        self.kind.append(kind_index)
        self.z.append(z)
        self.q.append(kind.q_of(z))
        self.valid.append(valid)
        self.children.append(0)
        self.size.append(self.size[parent] + SIZE_STEP[0] + (SIZE_STEP[1] - SIZE_STEP[0]) * unit(key, SALT_FEATURE))
        return len(self.q) - 1, valid

    def feature(self, node: int) -> float:
        """The agent's code size in bytes (`add_node(feature=...)`, as the engine passes it): a random walk,
        independent of quality (root ROOT_SIZE, a child its parent's plus uniform in SIZE_STEP)."""
        return self.size[node]

    def score(self, node: int, instance: int) -> float:
        """One dev evaluation: 1 with probability q, fixed by (seed, node path, instance)."""
        return 1.0 if unit(self.keys[node], SALT_EVAL + instance) < self.q[node] else 0.0


# ----- one search ------------------------------------------------------------------------
@dataclass
class Outcome:
    policy: str
    family: str
    budget: int
    seed: int
    final_q: float = float("nan")
    regret: float = float("nan")
    best_tree: float = float("nan")
    best_evaluated: float = float("nan")
    rho: float = float("nan")
    nodes: int = 0
    valid_nodes: int = 0
    evaluations: int = 0
    early_stop: bool = False
    no_final: bool = False
    score_source: str = ""
    seconds: float = 0.0
    error: str = ""
    clock: float = 0.0  # virtual seconds the search took (simulate's `duration`; 0 without one)
    busy: float = 0.0  # virtual seconds of evaluation finished, over all workers


def _adds_feature() -> bool:
    import inspect

    try:
        return "feature" in inspect.signature(TreeStats.add_node).parameters
    except (TypeError, ValueError):
        return False


ADD_FEATURE = _adds_feature()


def add_child(tree: TreeStats, world: World, parent: int) -> int:
    node, valid = world.child(parent)
    if ADD_FEATURE:
        tree_node = tree.add_node(parent, valid, feature=world.feature(node))
    else:
        tree_node = tree.add_node(parent, valid)
    assert tree_node == node, "tree and world out of step"
    return node


def innermost(policy):
    """The policy inside wrappers (staged evaluation, another final rule) that keep it as `inner`."""
    while getattr(type(policy), "__dataclass_fields__", {}).get("inner") is not None:
        policy = policy.inner
    return policy


def policy_scores(policy, view) -> tuple[np.ndarray | None, str]:
    """The policy's own score per node if it exposes one, else HGM's clade mean, else the own mean (None).

    OpenEvolve-like policies (`island_probabilities` and `num_islands`): the mean over islands of each
    island's parent probabilities. Otherwise the first method named in SCORE_METHODS, called with the
    view, returning an array over every node, an array over the valid evaluated nodes, a pair (nodes,
    scores), or a mapping node -> score. Returns (scores over every node or None, source)."""
    islands = getattr(innermost(policy), "num_islands", None)
    if callable(getattr(policy, "island_probabilities", None)) and islands:
        return (
            np.mean([policy.island_probabilities(view, k) for k in range(islands)], axis=0),
            f"mean of island_probabilities over {islands} islands",
        )
    for name in SCORE_METHODS:
        method = getattr(policy, name, None)
        if not callable(method):
            continue
        try:
            out = method(view)
        except TypeError:
            continue
        if isinstance(out, dict):
            scores = np.full(view.n, np.nan)
            for node, value in out.items():
                scores[int(node)] = float(value)
            return scores, name
        if isinstance(out, tuple) and len(out) == 2:  # (nodes, scores)
            scores = np.full(view.n, np.nan)
            scores[np.asarray(out[0], dtype=np.int64)] = np.asarray(out[1], dtype=np.float64)
            return scores, name
        out = np.asarray(out, dtype=np.float64)
        if out.shape == (view.n,):
            return out, name
        evaluated = np.flatnonzero(view.valid & (view.n_evals > 0))
        if out.shape == (len(evaluated),):
            scores = np.full(view.n, np.nan)
            scores[evaluated] = out
            return scores, name
    if isinstance(innermost(policy), HGMPolicy):
        with np.errstate(invalid="ignore", divide="ignore"):
            return view.S / (view.S + view.F), "clade mean S/(S+F)"
    return None, "own mean"


def rank_correlation(policy, tree: TreeStats, world: World) -> tuple[float, str]:
    from scipy.stats import spearmanr

    view = tree.view()
    n = view.n
    q = np.asarray(world.q[:n])
    valid = np.asarray(view.valid, dtype=bool)
    parent = np.asarray(view.parent)
    sub_sum = np.where(valid, q, 0.0)
    sub_count = valid.astype(np.float64)
    for node in range(n - 1, 0, -1):  # children have larger ids than their parents
        p = parent[node]
        sub_sum[p] += sub_sum[node]
        sub_count[p] += sub_count[node]
    desc_count = sub_count - valid
    with np.errstate(invalid="ignore", divide="ignore"):
        cmp = (sub_sum - np.where(valid, q, 0.0)) / desc_count
    scores, source = policy_scores(policy, view)
    if scores is None:
        scores = view.mean()
    nodes = np.flatnonzero(valid & (view.n_evals > 0) & (desc_count > 0) & np.isfinite(scores))
    if len(nodes) < 3:
        return float("nan"), source
    x, y = scores[nodes], cmp[nodes]
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), source
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = spearmanr(x, y).statistic
    return float(rho), source


# hgm and dgm without the staged evaluation make_policy gives both by default: the papers' own loops.
PAPER_VARIANTS = ("hgm+stages=none", "dgm+stages=none")


def build_policy(spec: str):
    """A policy from a name in search.POLICIES or a variant `name+key=value+...` (make_policy's keywords:
    `stages=3:0.4`, `final=max_mean_k`, `final_k=8`, or the policy's own options, e.g. `hgm+alpha=0.8`)."""
    name, *parts = spec.split("+")
    options: dict[str, object] = {}
    for part in parts:
        key, sep, text = part.partition("=")
        if not sep:
            raise ValueError(f"bad variant {spec!r}: expected name+key=value[+key=value...]")
        value: object = text
        if key not in ("stages", "final"):
            for kind in (int, float):
                try:
                    value = kind(text)
                    break
                except ValueError:
                    pass
            if text in ("None", "none"):
                value = None
        options[key] = value
    return make_policy(name, **options)


def next_decision(policy, tree: TreeStats, budget: int, rng: np.random.Generator):
    """The engine's `_next_decision`: the root on every dev instance first, then the policy."""
    if tree.n_instances and tree.valid[0] and tree.n_evals[0] != tree.n_instances:
        if tree.open_mask[0]:
            return Evaluate(0, tree.untried(0)[0], {"rule": "seed first"})
        if tree.in_flight:
            return None
    return policy.decide(tree.view(pending_expansions=0, budget=budget, can_expand=True), rng)


Duration = Callable[[World, int, int], float]  # seconds one evaluation of (node, instance) takes


class InFlight:
    """Evaluations in flight and which one finishes next: a random one (`finish="random"`, drawn from
    `order`), the oldest (`"start"`), or, given `duration(node, instance)`, the first to end on a virtual
    clock that starts at 0 and jumps to each finish (decisions and expansions take no virtual time), so
    that with many workers the short evaluations come back first. `busy` sums the durations finished."""

    def __init__(
        self, finish: str, order: np.random.Generator, duration: Callable[[int, int], float] | None = None
    ) -> None:
        self.finish_rule, self.order, self.duration = finish, order, duration
        self.now = 0.0
        self.busy = 0.0
        self._running: list[tuple[float, int, int, int, float]] = []  # (ends at, start number, node, instance, s)
        self._started = 0

    def __len__(self) -> int:
        return len(self._running)

    def start(self, node: int, instance: int) -> None:
        seconds = self.duration(node, instance) if self.duration is not None else 0.0
        self._running.append((self.now + seconds, self._started, node, instance, seconds))
        self._started += 1

    def finish(self) -> tuple[int, int]:
        """The (node, instance) that finishes next, taken out of flight."""
        if self.duration is not None:
            k = min(range(len(self._running)), key=self._running.__getitem__)  # the earliest end; ties: started first
        elif self.finish_rule == "random":
            k = int(self.order.integers(len(self._running)))
        else:
            k = 0
        ends, _, node, instance, seconds = self._running.pop(k)
        if self.duration is not None:
            self.busy += seconds
            self.now = ends
        return node, instance


def simulate(
    policy_name: str,
    family_name: str,
    budget: int,
    seed: int,
    workers: int = 2,
    finish: str = "random",
    n_instances: int = N_INSTANCES,
    duration: Duration | None = None,
) -> tuple[Outcome, TreeStats, World]:
    """One search on one seed's landscape (see the module docstring); returns the outcome, tree and world.
    With `duration` (seconds of one evaluation, from the world, node and instance) the evaluation that
    finishes next is the first to end on a virtual clock (`InFlight`), and `finish` is not used."""
    t0 = time.perf_counter()
    out = Outcome(policy_name, family_name, budget, seed)
    family = FAMILIES[family_name]
    world = World(family, seed)
    tree = TreeStats(n_instances)
    tree.add_node(None, True)
    policy = build_policy(policy_name)
    family_index = list(FAMILIES).index(family_name)
    rng = np.random.default_rng([seed, family_index, budget, 7])
    order = np.random.default_rng([seed, family_index, budget, 11])
    in_flight = InFlight(finish, order, None if duration is None else lambda node, i: duration(world, node, i))
    started = 0
    idle = 0
    while True:
        while len(in_flight) < workers and started < budget:
            decision = next_decision(policy, tree, budget, rng)
            if decision is None:
                break
            idle += 1
            if idle > STALL:
                raise RuntimeError(f"{STALL} decisions in a row without an evaluation")
            if isinstance(decision, Expand):
                add_child(tree, world, decision.node_id)
                continue
            tree.start_evaluation(decision.node_id, decision.instance)
            in_flight.start(decision.node_id, decision.instance)
            started += 1
            idle = 0
        if not in_flight:
            out.early_stop = started < budget
            break
        node, instance = in_flight.finish()
        tree.finish_evaluation(node, instance, world.score(node, instance))
    choice = policy.select_final(tree.view(budget=budget), rng)
    final = 0 if choice is None else choice.node_id
    out.no_final = choice is None
    q = np.asarray(world.q)
    valid = np.asarray(world.valid)
    evaluated = tree.n_evals[: tree.n] > 0
    out.final_q = float(q[final])
    out.best_tree = float(q[valid].max())
    out.best_evaluated = float(q[evaluated].max()) if evaluated.any() else float("nan")
    out.regret = out.best_tree - out.final_q
    out.rho, out.score_source = rank_correlation(policy, tree, world)
    out.nodes, out.valid_nodes, out.evaluations = tree.n, tree.n_valid, tree.evaluations_done
    out.seconds = time.perf_counter() - t0
    out.clock, out.busy = in_flight.now, in_flight.busy
    return out, tree, world


def run_task(task: tuple) -> Outcome:
    policy_name, family_name, budget, seed, workers, finish = task
    try:
        return simulate(policy_name, family_name, budget, seed, workers, finish)[0]
    except Exception as error:  # noqa: BLE001 - a policy's bug is reported in its row, not a dead benchmark
        return Outcome(policy_name, family_name, budget, seed, error=f"{type(error).__name__}: {error}"[:300])


# ----- statistics and tables --------------------------------------------------------------
def mean_ci(values) -> tuple[float, float]:
    """Mean and the 95% half-width, 1.96 sd / sqrt(n) (normal approximation)."""
    x = np.asarray([v for v in values if np.isfinite(v)], dtype=np.float64)
    if len(x) == 0:
        return float("nan"), float("nan")
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else float("nan")
    return float(x.mean()), float(half)


@dataclass
class Cell:
    outcomes: list[Outcome] = field(default_factory=list)

    def ok(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.error]

    def stat(self, name: str) -> tuple[float, float]:
        return mean_ci([getattr(o, name) for o in self.ok()])

    def rho(self) -> tuple[float, int]:
        values = [o.rho for o in self.ok() if np.isfinite(o.rho)]
        return (float(np.mean(values)) if values else float("nan")), len(values)

    def text(self) -> str:
        if not self.outcomes:
            return "-"
        if not self.ok():
            return "error"
        m, h = self.stat("final_q")
        regret = self.stat("regret")[0]
        rho = self.rho()[0]
        rho_text = f"{rho:+.2f}" if np.isfinite(rho) else "  n/a"
        errors = len(self.outcomes) - len(self.ok())
        return f"{m:.3f} [{m - h:.3f},{m + h:.3f}] {regret:.3f}, {rho_text}" + (f" ({errors} err)" if errors else "")

    def extra(self) -> str:
        if not self.ok():
            return "-"
        tree, evaluated = self.stat("best_tree")[0], self.stat("best_evaluated")[0]
        nodes = np.mean([o.nodes for o in self.ok()])
        early = sum(o.early_stop for o in self.ok())
        return f"{tree:.3f} {evaluated:.3f} {nodes:.0f}" + (f" {early}" if early else " 0")


def paired(results: dict, family: str, a: str, b: str, budget: int) -> tuple[float, float, int] | None:
    """Mean difference a - b of the final q on the same seeds, its 95% half-width, and the seed count."""
    cells = results.get((family, a, budget)), results.get((family, b, budget))
    if not all(cells):
        return None
    qa = {o.seed: o.final_q for o in cells[0].ok()}
    qb = {o.seed: o.final_q for o in cells[1].ok()}
    seeds = sorted(set(qa) & set(qb))
    if not seeds:
        return None
    m, h = mean_ci([qa[s] - qb[s] for s in seeds])
    return m, h, len(seeds)


def table(headers: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        return lines + ["| " + " | ".join(row) + " |" for row in rows]
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def fmt(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    return [fmt(headers), "-" * len(fmt(headers)), *(fmt(r) for r in rows)]


def quality_report(
    results: dict, families: list[str], policies: list[str], budgets: list[int], markdown: bool
) -> tuple[list[str], int, int]:
    """Per family: the issue's table, the extra table, the verdict. Returns (lines, families won, judged)."""
    lines: list[str] = []
    won = judged = 0
    for family in families:
        lines.append(f"{'### ' if markdown else ''}Family {FAMILIES[family].describe()}")
        lines.append("")
        lines.append(
            "Cells: mean hidden q of the final node [95% interval], mean regret (best valid q in "
            "the tree - final q), mean Spearman rho (policy's node score vs true CMP)."
        )
        lines.append("")
        headers = ["policy"] + [f"B={b}" for b in budgets]
        rows = [[p] + [results.get((family, p, b), Cell()).text() for b in budgets] for p in policies]
        lines += table(headers, rows, markdown)
        lines.append("")
        lines.append(
            "Cells: mean best q in the tree, mean best q the policy evaluated, mean nodes (valid or "
            "not), searches that stopped early."
        )
        lines.append("")
        rows = [[p] + [results.get((family, p, b), Cell()).extra() for b in budgets] for p in policies]
        lines += table(headers, rows, markdown)
        lines.append("")
        verdict, ok = family_verdict(results, family, policies, budgets)
        lines.append(verdict)
        lines.append("")
        if ok is not None:
            judged += 1
            won += ok
    return lines, won, judged


def family_verdict(results: dict, family: str, policies: list[str], budgets: list[int]) -> tuple[str, bool | None]:
    if "hgm" not in policies or VERDICT_BUDGET not in budgets:
        return f"verdict {family}: not judged (needs hgm and budget {VERDICT_BUDGET})", None
    rivals = [r for r in RIVALS if r in policies]
    missing = [r for r in RIVALS if r not in policies]
    if not rivals:
        return f"verdict {family}: not judged (none of {', '.join(RIVALS)} present)", None
    hgm = results[(family, "hgm", VERDICT_BUDGET)].stat("final_q")[0]
    parts, beats = [], True
    for rival in rivals:
        other = results[(family, rival, VERDICT_BUDGET)].stat("final_q")[0]
        diff = paired(results, family, "hgm", rival, VERDICT_BUDGET)
        win = bool(hgm > other)
        beats &= win
        d = f"{diff[0]:+.3f} [{diff[0] - diff[1]:+.3f},{diff[0] + diff[1]:+.3f}]" if diff else "n/a"
        parts.append(
            f"{'beats' if win else 'does NOT beat'} {rival} ({hgm:.3f} vs {other:.3f}; paired hgm - {rival} {d})"
        )
    note = f"; absent: {', '.join(missing)}" if missing else ""
    return (
        f"verdict {family} at B={VERDICT_BUDGET}: hgm "
        + "; ".join(parts)
        + note
        + f" -> {'hgm best' if beats else 'hgm not best'}"
    ), beats


# ----- decision time ------------------------------------------------------------------------
def grow(n: int, shape: str, seed: int) -> tuple[TreeStats, np.ndarray]:
    """A synthetic tree of n nodes: parents uniformly at random among earlier valid nodes, q a random walk
    (root 0.4, steps N(-0.01, 0.06), within [0.02, 0.98]), 15% invalid; `full`: every valid node evaluated on
    every instance; `mixed`: 1 to 16 evaluations each. Numbers written into the arrays directly."""
    rng = np.random.default_rng(seed)
    valid = rng.random(n) >= 0.15
    valid[0] = True
    usable = np.flatnonzero(valid)
    parent = np.full(n, -1, dtype=np.int64)
    q = np.empty(n)
    q[0] = 0.4
    count = np.cumsum(valid)  # valid nodes among 0..i
    picks = rng.random(n)
    steps = rng.normal(-0.01, 0.06, n)
    for node in range(1, n):
        p = int(usable[int(picks[node] * count[node - 1])])
        parent[node] = p
        q[node] = min(max(q[p] + steps[node], 0.02), 0.98)
    k = np.where(valid, N_INSTANCES if shape == "full" else rng.integers(1, N_INSTANCES + 1, size=n), 0)
    s = rng.binomial(k, q).astype(np.float64)
    f = k - s
    tree = TreeStats(N_INSTANCES, capacity=n + 1024)
    for node in range(n):
        tree.add_node(None if node == 0 else int(parent[node]), bool(valid[node]))
    tree.s[:n], tree.f[:n], tree.n_evals[:n] = s, f, k
    tree.S[:n], tree.F[:n] = recompute_clade_sums(parent, s, f)
    counts = k.astype(np.int64).copy()
    for node in range(n - 1, 0, -1):
        counts[parent[node]] += counts[node]
    tree.n_clade_evals[:n] = counts
    tree.tried = [(1 << int(c)) - 1 for c in k]
    tree.evaluations_done = int(k.sum())
    tree.open_mask[:n] = valid & (k < N_INSTANCES)
    return tree, q


def time_decisions(
    policy_name: str, tree: TreeStats, q: np.ndarray, shape: str, decisions: int, seed: int
) -> tuple[list[float], dict]:
    """Wall time of view + decide per decision, each decision applied untimed (module docstring)."""
    policy = build_policy(policy_name)
    rng, world = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    q = list(q)
    budget = 2 * tree.evaluations_done + 1000
    times: list[float] = []
    kinds = {"expand": 0, "evaluate": 0, "none": 0}
    for i in range(decisions + 2):
        t0 = time.perf_counter()
        decision = policy.decide(tree.view(pending_expansions=0, budget=budget, can_expand=True), rng)
        elapsed = time.perf_counter() - t0
        if i >= 2:
            times.append(elapsed)
        if isinstance(decision, Expand):
            kinds["expand"] += i >= 2
            valid = bool(world.random() >= 0.15)
            node = tree.add_node(decision.node_id, valid)
            q.append(min(max(q[decision.node_id] + world.normal(-0.01, 0.06), 0.02), 0.98))
            if valid and shape == "full":
                for instance in range(tree.n_instances):
                    tree.finish_evaluation(node, instance, float(world.random() < q[node]), started=False)
        elif isinstance(decision, Evaluate):
            kinds["evaluate"] += i >= 2
            tree.start_evaluation(decision.node_id, decision.instance)
            tree.finish_evaluation(decision.node_id, decision.instance, float(world.random() < q[decision.node_id]))
        else:
            kinds["none"] += i >= 2
    return times, kinds


@dataclass
class DecisionTimes:
    sizes: list[int]
    decisions: int
    medians: dict = field(default_factory=dict)  # (policy, n, shape) -> ms
    kinds: dict = field(default_factory=dict)  # (policy, n, shape) -> decisions taken by kind
    errors: dict = field(default_factory=dict)  # (policy, n, shape) -> message

    def worst(self, policy: str) -> float:
        return max(self.medians.get((policy, max(self.sizes), shape), float("inf")) for shape in SHAPES)

    def missed(self, policies: list[str]) -> list[str]:
        return [p for p in policies if not self.worst(p) < GOAL_MS]


SHAPES = ("full", "mixed")


def measure_decisions(policies: list[str], sizes: list[int], decisions: int, seed: int, log) -> DecisionTimes:
    """Time per decision for every policy, size and shape (see the module docstring)."""
    out = DecisionTimes(list(sizes), decisions)
    for n in sizes:
        for shape in SHAPES:
            t0 = time.perf_counter()
            tree, q = grow(n, shape, seed)
            log(
                f"  [{n} nodes, {shape}] {tree.n_valid} valid, {tree.evaluations_done} evaluations, "
                f"{int(tree.open_mask[:n].sum())} open nodes (built in {time.perf_counter() - t0:.1f} s)"
            )
            for policy in policies:
                key = (policy, n, shape)
                try:
                    times, out.kinds[key] = time_decisions(policy, copy.deepcopy(tree), q, shape, decisions, seed + 2)
                    out.medians[key] = float(np.median(times)) * 1e3
                except Exception as error:  # noqa: BLE001 - reported in the table
                    out.errors[key] = f"{type(error).__name__}: {error}"[:200]
                    log(f"    {policy}: error {out.errors[key]}")
    return out


def decision_table(times: DecisionTimes, policies: list[str], markdown: bool) -> list[str]:
    largest = max(times.sizes)
    headers = (
        ["policy"]
        + [f"{n // 1000}k {shape}" for n in times.sizes for shape in SHAPES]
        + [f"goal < {GOAL_MS:g} ms at {largest // 1000}k"]
    )
    rows = []
    for policy in policies:
        row = [policy]
        for n in times.sizes:
            for shape in SHAPES:
                key = (policy, n, shape)
                if key in times.errors:
                    row.append("error")
                    continue
                k = times.kinds[key]
                taken = " ".join(
                    f"{k[name]} {short}"
                    for name, short in (("expand", "exp"), ("evaluate", "eval"), ("none", "none"))
                    if k[name]
                )
                row.append(f"{times.medians[key]:.2f} ({taken})")
        worst = times.worst(policy)
        row.append(f"{'met' if worst < GOAL_MS else 'NOT met'} ({worst:.2f} ms)")
        rows.append(row)
    lines = [
        (
            f"Decision time, ms: median over {times.decisions} decisions of tree.view() + decide (in brackets "
            "the decisions taken: exp = expand, eval = evaluate, none = None)"
        ),
        "",
    ]
    return lines + table(headers, rows, markdown)


# ----- main ----------------------------------------------------------------------------------
def machine() -> str:
    import scipy

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
        f"load {load}; python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}"
    )


def ordered_policies(names: list[str]) -> list[str]:
    first = [p for p in ("hgm", *RIVALS) if p in names]
    return first + sorted(p for p in names if p not in first)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_SEEDS} seeds, budgets {' '.join(map(str, QUICK_BUDGETS))}, decision time at 10k",
    )
    parser.add_argument("--seeds", type=int, help=f"seeds per (policy, family, budget) (default {SEEDS})")
    parser.add_argument("--budgets", type=int, nargs="+", help="dev evaluations per search (default 100 200 800 8000)")
    parser.add_argument("--policies", nargs="+", help="default: every name in search.POLICIES")
    parser.add_argument(
        "--variants",
        nargs="*",
        help="extra rows: name+key=value..., e.g. hgm+stages=3:0.4 hgm+alpha=0.8 dgm+stages=none "
        "hgm+final=max_mean_k (make_policy's keywords); default for a full run: "
        f"{' '.join(PAPER_VARIANTS)} (hgm and dgm as their papers run them)",
    )
    parser.add_argument("--families", nargs="+", choices=list(FAMILIES), default=list(FAMILIES))
    parser.add_argument("--workers", type=int, default=2, help="evaluations in flight (default 2)")
    parser.add_argument(
        "--finish",
        choices=("random", "start"),
        default="random",
        help="which in-flight evaluation finishes next (default: a random one)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: cpu count)")
    parser.add_argument("--sizes", type=int, nargs="*", help="tree sizes for decision time (default 10000 100000)")
    parser.add_argument("--decisions", type=int, default=50, help="timed decisions per policy and tree")
    parser.add_argument(
        "--markdown",
        type=Path,
        help="write the tables here (default for a full run: docs/bench_search.md; none with --quick)",
    )
    parser.add_argument("--no-markdown", action="store_true", help="write no markdown file")
    args = parser.parse_args(argv)
    seeds = args.seeds or (QUICK_SEEDS if args.quick else SEEDS)
    budgets = args.budgets or list(QUICK_BUDGETS if args.quick else BUDGETS)
    sizes = list(args.sizes if args.sizes is not None else (QUICK_SIZES if args.quick else SIZES))
    names = args.policies or list(POLICIES)
    unknown = [p for p in names if p not in POLICIES]
    if unknown:
        parser.error(f"unknown policies {', '.join(unknown)}; known: {', '.join(sorted(POLICIES))}")
    if args.variants is None:
        args.variants = [] if args.quick or args.policies else list(PAPER_VARIANTS)
    for variant in args.variants:
        try:
            build_policy(variant)
        except ValueError as error:
            parser.error(str(error))
    policies = ordered_policies(names) + [v for v in args.variants if v not in names]
    markdown_path = (
        None if args.no_markdown else (args.markdown or (None if args.quick else REPO / "docs" / "bench_search.md"))
    )
    command = "python3 scripts/bench_search.py" + "".join(" " + shlex.quote(a) for a in argv)
    start = time.perf_counter()
    started_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    settings = (
        f"policies {' '.join(policies)}; families {' '.join(args.families)}; budgets "
        f"{' '.join(map(str, budgets))}; {seeds} seeds; {N_INSTANCES} dev instances; {args.workers} "
        f"workers, finish order {args.finish}; {args.jobs} processes; decision time at "
        f"{' '.join(map(str, sizes)) or 'no'} nodes"
    )
    print(f"Clade search benchmark on simulated landscapes ({started_at})")
    print(f"  command: {command}")
    print(f"  settings: {settings}")
    print(f"  machine: {machine()}")
    for family in args.families:
        print(f"  family {FAMILIES[family].describe()}")
    print(flush=True)

    tasks = [
        (p, fam, b, s, args.workers, args.finish)
        for b in sorted(budgets, reverse=True)
        for p in policies
        for fam in args.families
        for s in range(seeds)
    ]
    results: dict[tuple[str, str, int], Cell] = {}
    done, last = 0, time.perf_counter()
    seconds: dict[str, float] = {}
    errors: dict[str, str] = {}
    pool = multiprocessing.Pool(args.jobs) if args.jobs > 1 else None
    try:
        outcomes = pool.imap_unordered(run_task, tasks) if pool else map(run_task, tasks)
        for outcome in outcomes:
            results.setdefault((outcome.family, outcome.policy, outcome.budget), Cell()).outcomes.append(outcome)
            seconds[outcome.policy] = seconds.get(outcome.policy, 0.0) + outcome.seconds
            if outcome.error:
                errors.setdefault(outcome.policy, outcome.error)
            done += 1
            if time.perf_counter() - last > 30:
                last = time.perf_counter()
                print(f"  ... {done}/{len(tasks)} searches, {last - start:.0f} s", flush=True)
        if pool:
            pool.close()
    finally:
        if pool:
            pool.terminate()  # at once on Ctrl-C; after close() above, the workers are already done
            pool.join()
    search_s = time.perf_counter() - start
    notes = [
        f"{len(tasks)} searches in {search_s:.0f} s ({args.jobs} processes); seconds per policy, summed over "
        "its searches: " + ", ".join(f"{p} {seconds.get(p, 0):.0f}" for p in policies)
    ]
    notes += [f"errors in {policy} (the first): {error}" for policy, error in errors.items()]
    sources = {}
    for cell in results.values():
        for o in cell.ok():
            sources.setdefault(o.policy, o.score_source)
    notes.append("node score used for rho: " + ", ".join(f"{p} {sources.get(p, '?')}" for p in policies))
    print("\n".join(notes))
    print()
    text_lines, won, judged = quality_report(results, args.families, policies, budgets, markdown=False)
    print("\n".join(text_lines))
    summary = (
        f"summary: hgm selects a higher mean hidden quality than {', '.join(r for r in RIVALS if r in policies)}"
        f" at B={VERDICT_BUDGET} on {won} of {judged} families"
        + (f" ({'majority: met' if won * 2 > judged else 'majority: NOT met'})" if judged else "")
    )
    print(summary)
    print(flush=True)

    times = None
    if sizes:
        print(f"Decision time: trees of {' and '.join(map(str, sizes))} nodes", flush=True)
        times = measure_decisions(policies, sizes, args.decisions, 0, print)
        print("\n".join(decision_table(times, policies, markdown=False)))
        print(decision_verdict(times, policies))
        print()
    wall = time.perf_counter() - start
    print(f"wall time {wall:.0f} s ({wall / 60:.1f} min); {settings}")
    if markdown_path is not None:
        write_markdown(
            markdown_path,
            command,
            started_at,
            settings,
            wall,
            results,
            args.families,
            policies,
            budgets,
            summary,
            times,
            notes,
        )
        print(f"tables written to {markdown_path}")
    return 0


def decision_verdict(times: DecisionTimes, policies: list[str]) -> str:
    missed = times.missed(policies)
    return f"decision time at {max(times.sizes)} nodes: " + (
        f"every policy under {GOAL_MS:g} ms" if not missed else f"over {GOAL_MS:g} ms: {', '.join(missed)}"
    )


def write_markdown(
    path: Path,
    command: str,
    started_at: str,
    settings: str,
    wall: float,
    results: dict,
    families: list[str],
    policies: list[str],
    budgets: list[int],
    summary: str,
    times: DecisionTimes | None,
    notes: list[str],
) -> None:
    lines = [
        "# Search policies on simulated landscapes",
        "",
        (
            "Produced by `scripts/bench_search.py` (its docstring describes the landscapes, the search loop and "
            "every figure); regenerate with:"
        ),
        "",
        "```",
        command,
        "```",
        "",
        f"Run {started_at} on {machine()}; wall time {wall / 60:.1f} min.",
        "",
        f"Settings: {settings}.",
        "",
        (
            "Intervals: mean +- 1.96 sd / sqrt(n) over the seeds (normal approximation); every policy meets the "
            "same landscapes seed by seed, so the verdict's paired differences are per seed."
        ),
        "",
    ]
    lines += [line for note in notes for line in (note + ".", "")]
    body, _, _ = quality_report(results, families, policies, budgets, markdown=True)
    lines += body + [summary, ""]
    if times is not None:
        lines += (
            ["## Decision time", ""]
            + decision_table(times, policies, markdown=True)
            + ["", decision_verdict(times, policies) + ".", ""]
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
