"""Search policies: pure code that turns the tree's numbers into the next decision.

Every policy is available by name (`POLICIES`, `make_policy`); each module's
docstring cites its source, its formula and its defaults:
- `hgm` (search.hgm), `dgm` (search.dgm), both staged by default through
  `make_policy` (DEFAULT_STAGES), `shinka`, `shinka_power_law`, `shinka_beam` (search.shinka),
  `openevolve` (search.openevolve), `adas` (search.adas), `uct` (search.uct),
  `greedy`, `random`, `best_of_n` (search.baselines).
- Staged evaluation for any policy: search.cascade (`make_policy(name, stages="4:0.5")`).
- Final rules for any policy: search.final (`make_policy(name, final="max_mean_k", final_k=8)`).

The names are registered in search.names (strings only); the classes and functions below are
imported on first use (PEP 562), so `import search` costs nothing: the command line lists the
policies in `--help` without loading numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any

from search.names import FINAL_RULES, POLICY_HOMES, POLICY_NAMES

if TYPE_CHECKING:
    from search.adas import ADASPolicy
    from search.baselines import BestOfNPolicy, GreedyPolicy, RandomPolicy
    from search.cascade import Stage, Staged, parse_stages, with_stages
    from search.decisions import Decision, Evaluate, Expand, FinalChoice, Policy
    from search.dgm import DGMPolicy
    from search.final import WithFinal, final_rule
    from search.hgm import HGMPolicy
    from search.openevolve import OpenEvolvePolicy
    from search.shinka import ShinkaBeamPolicy, ShinkaPowerLawPolicy, ShinkaWeightedPolicy
    from search.tree import TreeStats, TreeView
    from search.uct import UCTPolicy

    POLICIES: dict[str, Callable[..., Policy]]
    DEFAULT_STAGES: dict[str, tuple[Stage, ...]]

# public name -> the module that defines it; resolved by __getattr__ below
_EXPORTS: dict[str, str] = {
    "ADASPolicy": "search.adas",
    "BestOfNPolicy": "search.baselines",
    "GreedyPolicy": "search.baselines",
    "RandomPolicy": "search.baselines",
    "Stage": "search.cascade",
    "Staged": "search.cascade",
    "parse_stages": "search.cascade",
    "with_stages": "search.cascade",
    "Decision": "search.decisions",
    "Evaluate": "search.decisions",
    "Expand": "search.decisions",
    "FinalChoice": "search.decisions",
    "Policy": "search.decisions",
    "DGMPolicy": "search.dgm",
    "WithFinal": "search.final",
    "final_rule": "search.final",
    "HGMPolicy": "search.hgm",
    "OpenEvolvePolicy": "search.openevolve",
    "ShinkaBeamPolicy": "search.shinka",
    "ShinkaPowerLawPolicy": "search.shinka",
    "ShinkaWeightedPolicy": "search.shinka",
    "TreeStats": "search.tree",
    "TreeView": "search.tree",
    "UCTPolicy": "search.uct",
}


def _policy_class(name: str) -> Callable[..., Policy]:
    module, _, attribute = POLICY_HOMES[name].partition(":")
    return getattr(import_module(module), attribute)


def _policies() -> dict[str, Callable[..., Policy]]:
    """POLICIES, built on first use and kept: a policy registered into it (a test's probe) is made by name too."""
    built = globals().get("POLICIES")
    if built is None:
        built = globals()["POLICIES"] = {name: _policy_class(name) for name in POLICY_NAMES}
    return built


def _default_stages() -> dict[str, tuple[Stage, ...]]:
    # Staged evaluation a policy gets from make_policy unless `stages` says otherwise: DGM's, its source's;
    # hgm's too, a departure from HGM's paper that scripts/bench_search.py measures: with the same screening
    # as dgm, hgm's final node beats dgm's on 2 of 3 landscape families at budget 800, without it on 1 of 3
    # (docs/bench_search.md). `stages="none"` gives either policy as its paper runs it.
    from search.dgm import DGM_STAGES

    return {"dgm": DGM_STAGES, "hgm": DGM_STAGES}


def __getattr__(name: str) -> Any:
    if name == "POLICIES":  # name -> class, in the registry's order (search.names)
        return _policies()
    if name == "DEFAULT_STAGES":
        return _default_stages()
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'search' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS, "POLICIES", "DEFAULT_STAGES"])


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
    policies = _policies()
    if name not in policies:
        raise ValueError(f"unknown policy {name!r}; choose one of: {', '.join(sorted(policies))}")
    factory = policies[name]
    try:
        policy: Policy = factory(**options)
    except TypeError:
        known = sorted(f for f in getattr(factory, "__dataclass_fields__", {}) if f != "name")
        raise ValueError(
            f"bad options {sorted(options)} for policy {name!r}; it takes: {', '.join(known) or 'no option'}"
        ) from None
    from search.cascade import with_stages
    from search.final import WithFinal

    if final is not None:
        policy = WithFinal(policy, final, final_k, final_epsilon)
    chosen = _default_stages().get(name, ()) if stages is None else stages
    if chosen:
        policy = with_stages(policy, chosen)
    return policy


__all__ = [
    "DEFAULT_STAGES",
    "FINAL_RULES",
    "POLICIES",
    "POLICY_NAMES",
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
