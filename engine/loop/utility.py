"""SICA's utility (`--utility score=0.5,cost=0.25,time=0.25 --cost-cap USD --time-cap S`): the score policies see.

SICA (Robeyns et al. 2025, "A Self-Improving Coding Agent", arXiv 2504.15228,
section 3) scores an agent on a problem by a weighted sum of its benchmark
score, its cost and its wall time, each cost term saturating at a cap:

    U = w_score * score + w_cost * (1 - min(1, cost / cost_cap)) + w_time * (1 - min(1, time / time_cap))

with w = 0.5, 0.25, 0.25, caps of $10 and 300 s, and a timeout penalty: an
agent that runs out of time has its utility scaled by (1 - 0.5). Here `score`
is the task's own score of the evaluation (0 for a failed run), `cost` the
dollars of the agent's model calls through the gateway in that evaluation
(recorded prices for answers served from the archive, so a replay scores
the same) and `time` the evaluation's wall time. The raw figures and U are
kept in the evaluation's `metrics` (`task_score`, `cost_usd`, `time_s`,
`timed_out`, `utility`); `evaluations.score` is U.
"""

from __future__ import annotations

from dataclasses import dataclass

SICA_COST_CAP_USD = 10.0
SICA_TIME_CAP_S = 300.0
SICA_TIMEOUT_PENALTY = 0.5
TERMS = ("score", "cost", "time")


@dataclass(frozen=True)
class Utility:
    w_score: float = 0.5
    w_cost: float = 0.25
    w_time: float = 0.25
    cost_cap: float = SICA_COST_CAP_USD
    time_cap: float = SICA_TIME_CAP_S
    timeout_penalty: float = SICA_TIMEOUT_PENALTY

    @classmethod
    def parse(cls, spec: str, cost_cap: float | None = None, time_cap: float | None = None) -> Utility:
        """'score=0.5,cost=0.25,time=0.25' (terms left out weigh 0); ValueError in one line when malformed."""
        weights = dict.fromkeys(TERMS, 0.0)
        for part in (p.strip() for p in spec.split(",") if p.strip()):
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in TERMS:
                raise ValueError(
                    f"--utility {spec!r}: expected terms like score=0.5,cost=0.25,time=0.25 (terms: {', '.join(TERMS)})"
                )
            try:
                weights[name] = float(value)
            except ValueError:
                raise ValueError(f"--utility {spec!r}: {value.strip()!r} is not a number") from None
            if not 0 <= weights[name] <= 1:
                raise ValueError(f"--utility {spec!r}: each weight is between 0 and 1, not {weights[name]:g}")
        if abs(sum(weights.values()) - 1.0) > 1e-9:
            raise ValueError(
                f"--utility {spec!r}: the weights must sum to 1 (they sum to {sum(weights.values()):g}), "
                "so that the utility stays in [0, 1]"
            )
        for flag, cap in (("--cost-cap", cost_cap), ("--time-cap", time_cap)):
            if cap is not None and not cap > 0:
                raise ValueError(f"{flag} must be a positive number, not {cap:g}")
        return cls(
            weights["score"],
            weights["cost"],
            weights["time"],
            SICA_COST_CAP_USD if cost_cap is None else cost_cap,
            SICA_TIME_CAP_S if time_cap is None else time_cap,
        )

    def value(self, score: float, cost_usd: float, time_s: float, timed_out: bool) -> float:
        cost_term = 1.0 - min(1.0, max(cost_usd, 0.0) / self.cost_cap)
        time_term = 1.0 - min(1.0, max(time_s, 0.0) / self.time_cap)
        u = self.w_score * score + self.w_cost * cost_term + self.w_time * time_term
        return u * (1.0 - self.timeout_penalty) if timed_out else u

    def figures(self, score: float, outcome) -> dict:
        """The raw figures and U for one evaluation's outcome (engine.loop.evaluation.Outcome)."""
        timed_out = outcome.status == "timeout"
        u = self.value(score, outcome.llm_cost_usd, outcome.runtime_s, timed_out)
        return {
            "task_score": score,
            "cost_usd": outcome.llm_cost_usd,
            "time_s": round(outcome.runtime_s, 3),
            "timed_out": timed_out,
            "utility": u,
        }

    def describe(self) -> str:
        return (
            f"SICA utility: {self.w_score:g} x score + {self.w_cost:g} x (1 - cost/${self.cost_cap:g}) + "
            f"{self.w_time:g} x (1 - time/{self.time_cap:g} s), x {1 - self.timeout_penalty:g} on a timeout"
        )


def scored(utility: Utility | None, score: float, outcome) -> tuple[float, dict]:
    """(what the search sees, the metrics to store): the task's score and metrics, or U and the figures beside them."""
    if utility is None:
        return score, dict(outcome.metrics)
    figures = utility.figures(score, outcome)
    return figures["utility"], {**outcome.metrics, **figures}
