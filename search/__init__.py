"""Search policies: pure code that turns the tree's numbers into the next decision.

Every policy is available by name (`POLICIES`, `make_policy`); each module's
docstring cites its source, its formula and its defaults:
- `hgm` (search.hgm), `dgm` (search.dgm), both staged by default through
  `make_policy` (DEFAULT_STAGES), `shinka`, `shinka_power_law`, `shinka_beam` (search.shinka),
  `openevolve` (search.openevolve), `adas` (search.adas), `uct` (search.uct),
  `greedy`, `random`, `best_of_n` (search.baselines).
- Staged evaluation for any policy: search.cascade (`make_policy(name, stages="4:0.5")`).
- Final rules for any policy: search.final (`make_policy(name, final="max_mean_k", final_k=8)`).
"""

from __future__ import annotations

from search.adas import ADASPolicy
from search.baselines import BestOfNPolicy, GreedyPolicy, RandomPolicy
from search.cascade import Stage, Staged, parse_stages, with_stages
from search.decisions import Decision, Evaluate, Expand, FinalChoice, Policy
from search.dgm import DGM_STAGES, DGMPolicy
from search.final import FINAL_RULES, WithFinal, final_rule
from search.hgm import HGMPolicy
from search.openevolve import OpenEvolvePolicy
from search.shinka import ShinkaBeamPolicy, ShinkaPowerLawPolicy, ShinkaWeightedPolicy
from search.tree import TreeStats, TreeView
from search.uct import UCTPolicy

POLICIES = {
    "hgm": HGMPolicy,
    "dgm": DGMPolicy,
    "shinka": ShinkaWeightedPolicy,
    "shinka_power_law": ShinkaPowerLawPolicy,
    "shinka_beam": ShinkaBeamPolicy,
    "openevolve": OpenEvolvePolicy,
    "adas": ADASPolicy,
    "greedy": GreedyPolicy,
    "uct": UCTPolicy,
    "best_of_n": BestOfNPolicy,
    "random": RandomPolicy,
}

# Staged evaluation a policy gets from make_policy unless `stages` says otherwise: DGM's, its source's;
# hgm's too, a departure from HGM's paper that scripts/bench_search.py measures: with the same screening
# as dgm, hgm's final node beats dgm's on 2 of 3 landscape families at budget 800, without it on 1 of 3
# (docs/bench_search.md). `stages="none"` gives either policy as its paper runs it.
DEFAULT_STAGES: dict[str, tuple[Stage, ...]] = {"dgm": DGM_STAGES, "hgm": DGM_STAGES}


def make_policy(
    name: str,
    *,
    stages: str | tuple[Stage, ...] | None = None,
    final: str | None = None,
    final_k: int | None = None,
    final_epsilon: float = 0.1,
    **options: object,
) -> Policy:
    """A policy by name, as its source runs it.

    options: the policy's own parameters (e.g. `tau=2.0` for hgm, `archive_size=20` for shinka).
    stages: staged evaluation, e.g. "4:0.5" or "25%:0.4,50%:0.6" (search.cascade); None: the
    policy's default (DGM's stages for dgm and hgm, none otherwise); "none": no stage.
    final: a final rule of search.final.FINAL_RULES (None: the policy's own), with final_k for
    max_mean_k and final_epsilon for epsilon_quantile.
    ValueError, one line, for an unknown name, option, stage spec or final rule.
    """
    try:
        factory = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose one of: {', '.join(sorted(POLICIES))}") from None
    try:
        policy: Policy = factory(**options)
    except TypeError:
        known = sorted(f for f in getattr(factory, "__dataclass_fields__", {}) if f != "name")
        raise ValueError(
            f"bad options {sorted(options)} for policy {name!r}; it takes: {', '.join(known) or 'no option'}"
        ) from None
    if final is not None:
        policy = WithFinal(policy, final, final_k, final_epsilon)
    chosen = DEFAULT_STAGES.get(name, ()) if stages is None else stages
    if chosen:
        policy = with_stages(policy, chosen)
    return policy


__all__ = [
    "DEFAULT_STAGES",
    "FINAL_RULES",
    "POLICIES",
    "ADASPolicy",
    "BestOfNPolicy",
    "DGMPolicy",
    "Decision",
    "Evaluate",
    "Expand",
    "FinalChoice",
    "GreedyPolicy",
    "HGMPolicy",
    "OpenEvolvePolicy",
    "Policy",
    "RandomPolicy",
    "ShinkaBeamPolicy",
    "ShinkaPowerLawPolicy",
    "ShinkaWeightedPolicy",
    "Stage",
    "Staged",
    "TreeStats",
    "TreeView",
    "UCTPolicy",
    "WithFinal",
    "final_rule",
    "make_policy",
    "parse_stages",
    "with_stages",
]
