"""A NodePool's disruption settings and budgets (`NodePool.spec.disruption`, `GetAllowedDisruptionsByReason`).

Budgets count nodes as a number or a whole percentage of the pool's nodes (rounded up, as
`intstr.GetScaledValueFromIntOrPercent(..., true)`), for every reason or for the listed ones; the
smallest budget that applies wins. A budget with a `schedule` counts only while its window is open at the
simulation's time (`cron.py`: `--now`, else the snapshot's own time, `clock.py`); with no time known it is
assumed active, and the report says so. A budget Karpenter cannot evaluate (a `nodes` value that is not a
count or a whole percentage, a schedule robfig/cron refuses) fails closed: the pool allows no disruption for
any reason (`MustGetAllowedDisruptions`). No budgets: Karpenter's default, 10%.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from karpplan.consolidate.cron import CronError, is_active, parse_schedule
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


class BudgetError(ValueError):
    """A budget `nodes` value that is neither a count nor a whole percentage."""


@dataclass(frozen=True)
class NodeBudget:
    nodes: str  # "3" or "20%"
    reasons: tuple[str, ...] | None = None  # None: every reason
    schedule: str | None = None
    duration: str | None = None
    origin: Origin = field(default=UNKNOWN, compare=False)

    def count(self, total: int) -> int:
        """Nodes this budget lets go out of `total` while active; BudgetError for a value Karpenter refuses."""
        text = self.nodes.strip()
        if text.isdigit():
            return int(text)
        if text.endswith("%") and text[:-1].isdigit():
            return math.ceil(int(text[:-1]) * total / 100)
        raise BudgetError(f"invalid value for IntOrString: invalid value {text!r}")

    def active(self, now: datetime | None) -> bool:
        """Its window is open at `now` (no schedule: always; no time known: assumed). CronError for a schedule
        Karpenter cannot parse, whatever the time."""
        if self.schedule is None and self.duration is None:
            return True
        if now is None:
            parse_schedule(self.schedule or "")
            return True
        return is_active(self.schedule, self.duration, now)

    def allowed(self, total: int, now: datetime | None = None) -> int:
        """`Budget.GetAllowedDisruptions`: UNLIMITED while inactive; BudgetError / CronError when misconfigured."""
        return self.count(total) if self.active(now) else UNLIMITED

    def problem(self) -> str | None:
        """Why Karpenter cannot evaluate this budget (None: it can)."""
        try:
            self.count(0)
            self.active(None)
        except (BudgetError, CronError) as e:
            return str(e)
        return None



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
    # the template's `terminationGracePeriod` (None: not set): with it, drift may take nodes whose pods block
    # eviction (`NewCandidate`'s eventual disruption class)
    termination_grace_period: str | None = None

    @property
    def enabled(self) -> bool:
        return self.consolidate_after is not None

    def allowed(self, total: int, reason: str, now: datetime | None = None) -> int:
        """Disruptions allowed for `reason` among `total` nodes at `now` (`MustGetAllowedDisruptions`): the
        smallest active budget that names the reason or none; 0 for every reason when any budget is
        misconfigured (Karpenter fails closed)."""
        allowed = UNLIMITED
        for budget in self.budgets:
            try:
                value = budget.allowed(total, now)
            except (BudgetError, CronError):
                return 0
            if budget.reasons is None or reason in budget.reasons:
                allowed = min(allowed, value)
        return max(allowed, 0)


def blocking_budget_message(reason: str) -> str:
    """The NodePool event Karpenter publishes (disruption/events/events.go)."""
    return f"{BUDGET_PREFIX} for disruption reason {reason} due to blocking budget"


def blocked_reason(message: str) -> str | None:
    """The disruption reason a `blocking_budget_message` names (None: the text is no such message)."""
    head = f"{BUDGET_PREFIX} for disruption reason "
    if not message.startswith(head):
        return None
    return message[len(head):].split(" ", 1)[0].rstrip(":")


def budget_taken_message(reason: str, pool: str, allowed: int, taken: list[str]) -> str:
    """Why a node stays when its NodePool's budget allows disruptions but nodes already disrupting (deleting,
    tainted `karpenter.sh/disrupted`) or NotReady take them all (Karpenter publishes no event for it)."""
    shown = ", ".join(taken[:3]) + (f" and {len(taken) - 3} more" if len(taken) > 3 else "")
    return (f"{BUDGET_PREFIX} for disruption reason {reason}: NodePool \"{pool}\"'s budget allows {allowed} at a time "
            f"and {len(taken)} node(s) already disrupting or NotReady use it up ({shown})")
