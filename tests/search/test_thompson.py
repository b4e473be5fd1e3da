"""The pruned Thompson draw has exactly the plain draw's law; its bounds stay valid as the tree changes.

Reference win probabilities come from numerical integration,
P(i wins) = integral of f_i(x) prod_{j != i} F_j(x) dx, not from another sampler.
Seeds are fixed, so the chi-square and Kolmogorov-Smirnov checks are deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st
from scipy.special import betainc, betaincc, betaln

from search import HGMPolicy, bounds
from search.decisions import Evaluate, Expand, evaluable
from search.thompson import (
    PruneStats,
    beta_upper_bound,
    pruned_argmax,
    thompson_argmax,
    thompson_argmax_pruned,
)
from search.tree import TreeStats

P_MIN = 1e-4  # reject at this p-value; with fixed seeds a pass is a pass every time


def exact_win_probabilities(alpha, beta) -> np.ndarray:
    alpha, beta = np.asarray(alpha, dtype=float), np.asarray(beta, dtype=float)
    x = np.linspace(0.0, 1.0, 20_001)[1:-1, None]
    logpdf = (alpha - 1) * np.log(x) + (beta - 1) * np.log1p(-x) - betaln(alpha, beta)
    with np.errstate(divide="ignore"):
        logcdf = np.log(betainc(alpha, beta, x))
    zero = np.isneginf(logcdf)  # F_i(x) underflows to 0: log of the others' product by exclusion
    finite = np.where(zero, 0.0, logcdf)
    others_zero = zero.sum(axis=1, keepdims=True) - zero > 0
    log_others = finite.sum(axis=1, keepdims=True) - finite
    integrand = np.where(others_zero, 0.0, np.exp(logpdf + np.where(others_zero, 0.0, log_others)))
    p = np.trapezoid(integrand, x[:, 0], axis=0)
    assert abs(p.sum() - 1.0) < 1e-3
    return p / p.sum()


def max_cdf(alpha, beta):
    return lambda x: np.prod(st.beta.cdf(np.asarray(x)[..., None], alpha, beta), axis=-1)


def check_frequencies(winners, alpha, beta) -> None:
    expected = exact_win_probabilities(alpha, beta) * len(winners)
    observed = np.bincount(winners, minlength=len(alpha))
    keep = expected >= 5  # pool the rare categories into one
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
        exp = exp * obs.sum() / exp.sum()
    result = st.chisquare(obs, exp)
    assert result.pvalue > P_MIN, (observed, expected)


# A mixed bag: wide, concentrated, equal means.
MIXED = (np.array([2, 5, 1, 30, 3, 10, 1, 50, 12.5]), np.array([2, 3, 1, 20, 7, 10, 4, 45, 12.5]))
# One concentrated node near 0.5 and 30 weak, wide ones: with delta = 0.2 every weak bound is
# below 0.5, so a weak node can only win through the exceedance (tail) path, about 40% of the time.
WEAK_A = np.linspace(1.5, 2.5, 30)
ENGINEERED = (np.append(400.0, WEAK_A), np.append(400.0, 10.0 - WEAK_A))


def test_plain_sampler_unchanged():
    alpha, beta = MIXED
    best, theta = thompson_argmax(alpha, beta, np.random.default_rng(3))
    draws = np.random.default_rng(3).beta(alpha, beta)
    assert best == int(np.argmax(draws)) and theta == pytest.approx(draws.max())
    with pytest.raises(ValueError):
        thompson_argmax(np.array([]), np.array([]), np.random.default_rng(0))


def test_upper_bound_tail_mass_is_at_most_delta():
    a = np.array([1.0, 2.0, 17.0, 1e3, 5e5, 1.0])
    b = np.array([1.0, 9.0, 1.0, 1e3, 4e5, 1e6])
    for delta in (0.3, 1e-3, 1e-6):
        u = beta_upper_bound(a, b, delta)
        assert (betaincc(a, b, u) <= delta).all()
        assert (betaincc(a, b, u) > 0.99 * delta).all()  # and not much less: bounds are tight


@pytest.mark.parametrize(
    "case, delta, target, block",
    [
        ("mixed", 0.05, None, 128),  # one band, one block: everyone drawn, then the tail picks
        ("mixed", 0.3, 2, 1),  # several bands, blocks of 1, 2, 4, ...: stops inside a band
        ("engineered", 0.2, 1, 128),  # the strong node alone, then every weak node pruned
        ("engineered", 0.2, None, 2),
    ],
)
@pytest.mark.slow
def test_pruned_argmax_has_the_exact_law(case, delta, target, block, monkeypatch):
    import search.thompson

    monkeypatch.setattr(search.thompson, "FIRST_BLOCK", block)
    alpha, beta = MIXED if case == "mixed" else ENGINEERED
    upper = beta_upper_bound(alpha, beta, delta)
    rng = np.random.default_rng(11)
    n = 12_000
    winners, thetas, tail_wins = np.empty(n, dtype=np.int64), np.empty(n), 0
    stats = PruneStats()
    for i in range(n):
        winners[i], thetas[i] = thompson_argmax_pruned(alpha, beta, upper, delta, rng, target=target, stats=stats)
        tail_wins += stats.tail_won
    check_frequencies(winners, alpha, beta)
    assert st.kstest(thetas, max_cdf(alpha, beta)).pvalue > P_MIN  # the winning draw's law too
    if case == "engineered":
        assert (upper[1:] < 0.45).all()  # every weak node's bound is below the strong one's draw
        assert 0.2 * n < tail_wins <= (winners > 0).sum()  # so weak nodes often win through the tail
    if target == 1:
        assert tail_wins == (winners > 0).sum()  # only through the tail: none was drawn in full


def test_pruned_argmax_with_a_lead():
    alpha, beta = ENGINEERED
    upper = beta_upper_bound(alpha, beta, 0.2)
    rng = np.random.default_rng(5)
    winners = [
        pruned_argmax(len(alpha), upper, lambda p: (alpha[p], beta[p]), 0.2, rng, lead=7)[0] for _ in range(8000)
    ]
    check_frequencies(np.array(winners), alpha, beta)


def test_pruning_draws_few_of_many():
    rng = np.random.default_rng(0)
    m = 50_000
    q = rng.uniform(0.2, 0.7, m)
    n = rng.integers(16, 200, m)
    alpha, beta = 1 + q * n, 1 + (1 - q) * n
    upper = beta_upper_bound(alpha, beta, 1e-3)
    stats = PruneStats()
    best, theta = thompson_argmax_pruned(alpha, beta, upper, 1e-3, rng, target=1000, stats=stats)
    assert stats.drawn < m // 10 and stats.picked < 150
    assert 0 <= best < m and 0.0 < theta < 1.0


def test_same_seed_same_draws():
    alpha, beta = ENGINEERED
    upper = beta_upper_bound(alpha, beta, 0.2)

    def run(seed):
        rng = np.random.default_rng(seed)
        return [thompson_argmax_pruned(alpha, beta, upper, 0.2, rng, target=4) for _ in range(200)]

    assert run(1) == run(1)
    assert run(1) != run(2)


# ----- bounds kept with the tree ---------------------------------------------------
def random_tree(seed: int, n: int = 60, n_instances: int = 16) -> TreeStats:
    rng = np.random.default_rng(seed)
    tree = TreeStats(n_instances, capacity=4)
    tree.add_node(None, True)
    for i in range(n_instances):
        tree.finish_evaluation(0, i, float(rng.uniform()), started=False)
    for _ in range(n - 1):
        tree.add_node(int(rng.integers(tree.n)), bool(rng.random() < 0.9))
    return tree


def evaluate_randomly(tree: TreeStats, rng: np.random.Generator, count: int) -> None:
    for _ in range(count):
        if not tree.open_nodes:
            return
        node = sorted(tree.open_nodes)[int(rng.integers(len(tree.open_nodes)))]
        untried = tree.untried(node)
        tree.finish_evaluation(
            node,
            untried[int(rng.integers(len(untried)))],
            float(rng.beta(2, 2)) if rng.random() < 0.9 else 1.0,
            started=False,
        )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bounds_stay_valid_as_the_tree_changes(seed):
    tree = random_tree(seed)
    rng = np.random.default_rng(seed)
    evaluate_randomly(tree, rng, 40)
    cache = bounds.PosteriorBounds(tree, delta=1e-3)
    for step in range(60):
        evaluate_randomly(tree, rng, int(rng.integers(0, 6)))
        if rng.random() < 0.3:
            tree.add_node(int(rng.integers(tree.n)), True)
        for clade, tau in ((False, 1.0), (True, 1.0), (True, 2.5)):
            family = cache.family(clade, tau)
            n = tree.n
            s, f = (tree.S[:n], tree.F[:n]) if clade else (tree.s[:n], tree.f[:n])
            tail = betaincc(1 + tau * s, 1 + tau * f, family.upper[:n])
            assert (tail <= 1e-3).all(), (step, clade, tau)
    assert cache.families[(True, 1.0)].recomputed < 60 * tree.n  # not rebuilt at every step


# ----- the policy with pruning on --------------------------------------------------
@pytest.fixture
def pruning_everywhere(monkeypatch):
    monkeypatch.setattr(bounds, "MIN_PRUNED", 1)
    monkeypatch.setattr(bounds, "MIN_TARGET", 2)
    monkeypatch.setattr(bounds, "DELTA", 0.2)  # large: the tail path is taken often


def hgm_tree() -> TreeStats:
    tree = random_tree(7, n=25)
    evaluate_randomly(tree, np.random.default_rng(7), 120)
    return tree


def test_hgm_expansion_law_with_pruning(pruning_everywhere):
    tree = hgm_tree()
    view = tree.view(pending_expansions=-tree.n)  # widening holds: every decision is an expansion
    candidates = evaluable(view)
    rng = np.random.default_rng(21)
    picks = []
    for _ in range(6000):
        decision = HGMPolicy().decide(view, rng)
        assert isinstance(decision, Expand)
        picks.append(int(np.searchsorted(candidates, decision.node_id)))
    assert (True, 1.0) in bounds.posterior_bounds(view).families  # the pruned path was used
    check_frequencies(np.array(picks), 1 + tree.S[candidates], 1 + tree.F[candidates])


def test_hgm_evaluation_law_with_pruning(pruning_everywhere):
    tree = hgm_tree()
    view = tree.view(pending_expansions=10 * tree.n)  # widening shut: every decision is an evaluation
    nodes = np.asarray(view.open_nodes)
    rng = np.random.default_rng(22)
    picks = []
    for _ in range(6000):
        decision = HGMPolicy().decide(view, rng)
        assert isinstance(decision, Evaluate)
        picks.append(int(np.searchsorted(nodes, decision.node_id)))
    assert (False, 1.0) in bounds.posterior_bounds(view).families
    check_frequencies(np.array(picks), 1 + tree.s[nodes], 1 + tree.f[nodes])


def test_hgm_with_pruning_is_deterministic_for_a_seed(pruning_everywhere):
    from tests.search.test_hgm import decision_trace

    def run(seed):
        return decision_trace(HGMPolicy(), hgm_tree(), seed, 80)

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_tail_picks_are_inverted_only_when_they_may_win(monkeypatch):
    """Skipping the Beta inverse for tail picks that cannot beat the best draw changes no result: the same
    seeds give the same (winner, theta) as inverting every pick, with many tail picks and many tail wins."""
    from search import thompson

    world = np.random.default_rng(11)
    alpha, beta = 1.0 + world.integers(0, 30, 3000), 1.0 + world.integers(0, 30, 3000)
    delta = 0.05  # many tail picks (about 150 a draw), so the tail often wins
    upper = beta_upper_bound(alpha, beta, delta)

    def draws() -> list[tuple[int, float, bool]]:
        out = []
        for seed in range(200):
            stats = PruneStats()
            winner, theta = thompson_argmax_pruned(
                alpha, beta, upper, delta, np.random.default_rng(seed), target=64, stats=stats
            )
            out.append((winner, theta, stats.tail_won))
        return out

    skipping = draws()
    monkeypatch.setattr(thompson, "TAIL_FLOOR", np.inf)  # every pick inverted, as before
    assert skipping == draws()
    assert sum(won for *_, won in skipping) >= 10
