"""The `Balanced` consolidation policy (Karpenter v1.14, disruption/balanced.go).

A move is approved when its share of the NodePool's cost saved, over its share of the NodePool's
disruption cost, reaches 1/k (k = 2): score = (savings / pool cost) / (disruption / pool disruption).
Single nodes whose whole price could not pass are not even simulated (`CanPassThreshold`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from karpplan.consolidate.budgets import BALANCED
from karpplan.consolidate.candidates import Candidate
from karpplan.consolidate.decide import Command

BALANCED_K = 2
REFUSAL_PREFIX = "Consolidation rejected by Balanced policy of NodePool"


@dataclass(frozen=True)
class Totals:
    cost: float  # the NodePool's nodes' prices
    disruption: float  # their RescheduleDisruptionCost


@dataclass(frozen=True)
class Score:
    savings: float  # fraction of the pool's cost
    disruption: float  # fraction of the pool's disruption cost

    @property
    def value(self) -> float:
        if self.savings <= 0:
            return 0.0
        if self.disruption == 0:
            return float("inf")
        return self.savings / self.disruption

    @property
    def approved(self) -> bool:
        return self.value >= 1.0 / BALANCED_K

    def __str__(self) -> str:
        sign = ">=" if self.approved else "<"
        return (f"score {self.value:.2f} {sign} threshold {1.0 / BALANCED_K:.2f} (k: {BALANCED_K}, "
                f"savings {self.savings * 100:.1f}%, disruption {self.disruption * 100:.1f}%)")


def score(savings: float, disruption: float, totals: Totals) -> Score | None:
    if totals.cost <= 0 or totals.disruption <= 0:
        return None
    return Score(savings / totals.cost, disruption / totals.disruption)


class Evaluator:
    """Per pass: each Balanced NodePool's totals; approves commands and pre-screens single candidates."""

    def __init__(self, totals: dict[str, Totals]) -> None:
        self.totals = totals

    def can_pass(self, c: Candidate) -> Score | None:
        """None when the candidate may be simulated, else its best possible (failing) score."""
        if c.disruption.policy != BALANCED or c.pool.name not in self.totals:
            return None
        s = score(c.price, c.cost, self.totals[c.pool.name])
        return s if s is not None and not s.approved else None

    def refusal(self, cmd: Command) -> str | None:
        """Why a Balanced NodePool rejects the command, else None."""
        by_pool: dict[str, list[Candidate]] = {}
        for c in cmd.candidates:
            by_pool.setdefault(c.pool.name, []).append(c)
        total = cmd.source_cost
        for name, members in by_pool.items():
            if members[0].disruption.policy != BALANCED:
                continue
            share = sum(c.price for c in members)
            savings = cmd.savings * (share / total) if total > 0 and len(by_pool) > 1 else cmd.savings
            s = score(savings, sum(c.cost for c in members), self.totals.get(name, Totals(0, 0)))
            if s is not None and not s.approved:
                return refusal_text(name, s)
        return None


def refusal_text(pool: str, s: Score) -> str:
    """Why a Balanced NodePool rejects a move (its score against the threshold)."""
    return f"{REFUSAL_PREFIX} {pool!r}: {s}"


def is_refusal(reason: str) -> bool:
    """The reason is a Balanced refusal: it holds only while the pool's totals do."""
    return reason.startswith(REFUSAL_PREFIX)


def pool_totals(candidates: Sequence[Candidate], others: dict[str, float], costs: dict[str, float]) -> dict[str, Totals]:
    """Totals of every pool with a candidate: `costs` its nodes' prices, `others` the disruption cost of
    its nodes that are not candidates."""
    out: dict[str, Totals] = {}
    for c in candidates:
        t = out.get(c.pool.name, Totals(costs.get(c.pool.name, 0.0), others.get(c.pool.name, 0.0)))
        out[c.pool.name] = Totals(t.cost, t.disruption + c.cost)
    return out
