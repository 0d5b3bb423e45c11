"""PodDisruptionBudgets as the disruption controller counts them: what a budget selects and how many
disruptions it allows (`status.disruptionsAllowed`, else the spec's arithmetic over the pods it selects; Kubernetes'
`pkg/controller/disruption`, read by Karpenter's `pkg/utils/pdb/pdb.go`). The one home of that arithmetic:
`consolidate` (Karpenter's disruption simulation), `diff` (what a change does to evictions) and `lint` (a budget
that allows none) ask it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.inputs.loader import Document
from karpplan.model.build_fields import Field
from karpplan.model.build_pods import parse_label_selector
from karpplan.model.pods import Pod
from karpplan.model.selectors import LabelSelector, selector_matches


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


def written_budget(doc: Document) -> Budget:
    """A PodDisruptionBudget as its spec writes it (no status: what it allows is counted from the pods)."""
    spec = Field.root(doc.body, doc.origin, [])["spec"]
    min_av = spec["minAvailable"].value if spec["minAvailable"].present else None
    max_un = spec["maxUnavailable"].value if spec["maxUnavailable"].present else None
    return Budget(doc.namespace, doc.name, parse_label_selector(spec["selector"]), None,
                  None if min_av is None else str(min_av), None if max_un is None else str(max_un), doc.origin)
