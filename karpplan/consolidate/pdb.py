"""PodDisruptionBudgets as Karpenter reads them (`pkg/utils/pdb/pdb.go`).

Karpenter reads `status.disruptionsAllowed`; a snapshot without a status gets it computed from the spec
and the pods the PDB selects (healthy = bound and not terminating, as the disruption controller counts
them). A pod under two or more PDBs cannot be evicted at all (the eviction API refuses it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.pods import Pod
from karpplan.model.selectors import LabelSelector, selector_matches
from karpplan.model.taints import Taint, Toleration

DISRUPTED_TAINT_KEY = "karpenter.sh/disrupted"
_DISRUPTED = Taint(DISRUPTED_TAINT_KEY, "", "NoSchedule")


@dataclass(frozen=True)
class Budget:
    """One PodDisruptionBudget: its selector and what it allows."""

    namespace: str
    name: str
    selector: LabelSelector | None
    disruptions_allowed: int | None  # status.disruptionsAllowed, None when the snapshot has no status
    min_available: str | None = None
    max_unavailable: str | None = None
    origin: Origin = field(default=UNKNOWN, compare=False)
    # `unhealthyPodEvictionPolicy: AlwaysAllow`: the pods it selects that are not Ready (`Ready=False`), which it
    # lets be evicted whatever it allows (pdb.go `canAlwaysEvictUnhealthyPods`)
    always_allow_unhealthy: bool = False
    unhealthy: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def fully_blocking(self) -> bool:
        """`isFullyBlocking`: maxUnavailable 0 or "0%", or minAvailable "100%": no eviction ever."""
        return self.max_unavailable in ("0", "0%") or self.min_available == "100%"

    def selects(self, pod: Pod) -> bool:
        return pod.namespace == self.namespace and selector_matches(self.selector, pod.labels)


def _scaled(value: str, total: int, round_up: bool) -> int:
    if value.endswith("%"):
        try:
            share = float(value[:-1]) * total / 100
        except ValueError:
            return 0
        return math.ceil(share) if round_up else math.floor(share)
    try:
        return int(value)
    except ValueError:
        return 0


def allowed(budget: Budget, pods: Sequence[Pod]) -> int:
    """Disruptions the budget allows now: its status, else the disruption controller's arithmetic."""
    if budget.disruptions_allowed is not None:
        return budget.disruptions_allowed
    selected = [p for p in pods if budget.selects(p) and not p.terminal]
    healthy = sum(1 for p in selected if p.bound and not p.terminating)
    expected = len(selected)
    if budget.max_unavailable is not None:
        desired = expected - _scaled(budget.max_unavailable, expected, True)
    elif budget.min_available is not None:
        desired = _scaled(budget.min_available, expected, True)
    else:
        desired = 0  # neither set: the disruption controller expects nothing (every healthy pod may go)
    return max(healthy - desired, 0)


def tolerates_disrupted(tolerations: Sequence[Toleration]) -> bool:
    """Tolerates `karpenter.sh/disrupted:NoSchedule` (such pods are not evicted: `IsEvictable`)."""
    return any(t.tolerates(_DISRUPTED) for t in tolerations)


class Limits:
    """Every PDB with the disruptions it allows (`pdb.Limits`)."""

    def __init__(self, budgets: Sequence[Budget], pods: Sequence[Pod]) -> None:
        self.budgets = list(budgets)
        self.allowed = {b.key: allowed(b, pods) for b in self.budgets}

    def blocking(self, pod: Pod) -> tuple[str, ...]:
        """The PDB keys that stop the pod's eviction (two or more: any two block), else ()."""
        matching = [b for b in self.budgets if b.selects(pod)]
        if len(matching) > 1:
            return tuple(b.key for b in matching)
        if matching and pod.key in matching[0].unhealthy:
            return ()
        return tuple(b.key for b in matching if self.allowed[b.key] <= 0)

    def fully_blocked(self, pod: Pod) -> bool:
        """`isFullyBlocked`: a PDB that never allows its eviction (or two PDBs) holds the pod where it is."""
        matching = [b for b in self.budgets if b.selects(pod)]
        if len(matching) > 1:
            return True
        if matching and pod.key in matching[0].unhealthy:
            return False
        return any(b.fully_blocking for b in matching)
