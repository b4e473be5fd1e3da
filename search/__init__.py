"""Search policies: pure code that turns the tree's numbers into the next decision."""
from __future__ import annotations

from search.baselines import GreedyPolicy, RandomPolicy
from search.decisions import Decision, Evaluate, Expand, FinalChoice, Policy
from search.hgm import HGMPolicy
from search.tree import TreeStats, TreeView

POLICIES = {"hgm": HGMPolicy, "greedy": GreedyPolicy, "random": RandomPolicy}


def make_policy(name: str) -> Policy:
    """A policy by name; ValueError lists the known names."""
    try:
        return POLICIES[name]()
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose one of: {', '.join(sorted(POLICIES))}") from None


__all__ = [
    "Decision", "Evaluate", "Expand", "FinalChoice", "GreedyPolicy", "HGMPolicy", "POLICIES", "Policy",
    "RandomPolicy", "TreeStats", "TreeView", "make_policy",
]
