"""The names of the policies and final rules, and where each policy is defined: the registry, light.

Only strings: the command line lists these names in `--help` and offers them
for a misspelt one before any policy module (and numpy) is imported.
`search.POLICIES` and `search.make_policy` resolve a name from here.
"""

from __future__ import annotations

POLICY_HOMES: dict[str, str] = {  # name -> "module:class"
    "hgm": "search.hgm:HGMPolicy",
    "dgm": "search.dgm:DGMPolicy",
    "shinka": "search.shinka:ShinkaWeightedPolicy",
    "shinka_power_law": "search.shinka:ShinkaPowerLawPolicy",
    "shinka_beam": "search.shinka:ShinkaBeamPolicy",
    "openevolve": "search.openevolve:OpenEvolvePolicy",
    "adas": "search.adas:ADASPolicy",
    "greedy": "search.baselines:GreedyPolicy",
    "uct": "search.uct:UCTPolicy",
    "best_of_n": "search.baselines:BestOfNPolicy",
    "random": "search.baselines:RandomPolicy",
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICY_HOMES)

FINAL_RULES: dict[str, str] = {  # name -> what it does, for --help
    "epsilon_quantile": "HGM's: the highest epsilon-quantile (0.1) of the node's Beta(1 + s, 1 + f) (default)",
    "max_mean": "the highest mean dev score",
    "max_mean_k": "the highest mean dev score among nodes with at least k evaluations (default: every dev instance)",
}
