"""A NodePool's disruption settings and budgets (`NodePool.spec.disruption`, `GetAllowedDisruptionsByReason`).

Budgets count nodes as a number or a percentage of the pool's nodes (rounded up, as
`intstr.GetScaledValueFromIntOrPercent(..., true)`), for every reason or for the listed ones; the
smallest budget that applies wins. A budget with a `schedule` is read and assumed active now (karpplan has
no clock to compare a cron schedule with): the report says so. No budgets: Karpenter's default, 10%.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin

WHEN_EMPTY = "WhenEmpty"
WHEN_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
BALANCED = "Balanced"
POLICIES = (WHEN_EMPTY, WHEN_UNDERUTILIZED, BALANCED)
EMPTY = "Empty"  # the disruption reasons budgets name
UNDERUTILIZED = "Underutilized"
DRIFTED = "Drifted"
DEFAULT_BUDGET = "10%"
BUDGET_PREFIX = "No allowed disruptions"
UNLIMITED = 2**31 - 1  # math.MaxInt32: no budget applies


@dataclass(frozen=True)
class NodeBudget:
    nodes: str  # "3" or "20%"
    reasons: tuple[str, ...] | None = None  # None: every reason
    schedule: str | None = None
    duration: str | None = None
    origin: Origin = field(default=UNKNOWN, compare=False)

    def allowed(self, total: int) -> int:
        """Nodes this budget lets go out of `total` (a bad value allows none, as Karpenter's error path)."""
        text = self.nodes.strip()
        try:
            if text.endswith("%"):
                return math.ceil(float(text[:-1]) * total / 100)
            return int(text)
        except ValueError:
            return 0


@dataclass(frozen=True)
class Disruption:
    """`spec.disruption` of one NodePool."""

    pool: str
    policy: str = WHEN_UNDERUTILIZED
    consolidate_after: str | None = "0s"  # None: `Never`
    budgets: tuple[NodeBudget, ...] = (NodeBudget(DEFAULT_BUDGET),)
    origin: Origin = field(default=UNKNOWN, compare=False)
    # The template's requirements' `minValues` (label key, least distinct values), read with the rest: what a
    # replacement's price filter must leave (`RemoveInstanceTypeOptionsByPriceAndMinValues`, policy Strict).
    min_values: tuple[tuple[str, int], ...] = ()

    @property
    def enabled(self) -> bool:
        return self.consolidate_after is not None

    @property
    def scheduled(self) -> tuple[NodeBudget, ...]:
        """Budgets with a schedule (assumed active now)."""
        return tuple(b for b in self.budgets if b.schedule)

    def allowed(self, total: int, reason: str) -> int:
        """Disruptions allowed for `reason` among `total` nodes (`MustGetAllowedDisruptions`)."""
        allowed = UNLIMITED
        for budget in self.budgets:
            if budget.reasons is None or reason in budget.reasons:
                allowed = min(allowed, budget.allowed(total))
        return max(allowed, 0)


def blocking_budget_message(reason: str) -> str:
    """The NodePool event Karpenter publishes (disruption/events/events.go)."""
    return f"{BUDGET_PREFIX} for disruption reason {reason} due to blocking budget"
