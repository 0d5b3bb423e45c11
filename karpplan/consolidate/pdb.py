"""PodDisruptionBudgets as Karpenter reads them (`pkg/utils/pdb/pdb.go`); `Budget` and `allowed` live in
`model/disruption_budgets.py` (lint and diff count with them too).

Karpenter reads `status.disruptionsAllowed`; a snapshot without a status gets it computed from the spec
and the pods the PDB selects (healthy = bound and not terminating, as the disruption controller counts
them). A pod under two or more PDBs cannot be evicted at all (the eviction API refuses it).
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.model.disruption_budgets import Budget, allowed
from karpplan.model.pods import Pod
from karpplan.model.taints import Taint, Toleration

DISRUPTED_TAINT_KEY = "karpenter.sh/disrupted"
_DISRUPTED = Taint(DISRUPTED_TAINT_KEY, "", "NoSchedule")


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


__all__ = ["DISRUPTED_TAINT_KEY", "Budget", "Limits", "allowed", "tolerates_disrupted"]
