"""The ConsolidationReport: what Karpenter would do, node by node, and what it costs (versioned document).

    {"apiVersion": "karpplan.io/v1alpha1", "kind": "ConsolidationReport",
     "actions": [{"method", "decision", "nodes", "replacements": [{"name", "instanceType", "zone",
                  "capacityType", "hourlyCost", "instanceTypeOptions"}], "savingsPerHour", "evictedPods"}],
     "nodes": [{"name", "consolidatable", "reason", ...}],
     "summary": {"currentHourlyCost", "karpenterHourlyCost", "optimalHourlyCost", "lowerBound", ...},
     "warnings": [...]}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from karpplan.consolidate.loop import Action
from karpplan.consolidate.snapshot import SimNode
from karpplan.plan import EXIT_CUT

API_VERSION = "karpplan.io/v1alpha1"
KIND = "ConsolidationReport"
METHOD_WORDS = {"emptiness": "emptiness", "drift": "drift", "multi": "multi-node consolidation",
                "single": "single-node consolidation"}


@dataclass(frozen=True)
class NodeVerdict:
    node: SimNode
    consolidatable: bool
    reason: str
    removed_by: int | None = None  # 1-based action number


@dataclass(frozen=True)
class Summary:
    current: float
    karpenter: float
    optimal: float
    lower_bound: float
    optimal_status: str
    region: str
    passes: int
    spot_to_spot: bool
    optimal_note: str | None = None
    time_limit: float | None = None  # the seconds the simulation kept (`--time-limit`), None: not said
    time_limit_auto: bool = False  # `auto` fitted them to the snapshot
    complete: bool = True  # False: the time limit cut consolidation before its steady state
    karpenter_note: str | None = None  # what `karpenter` is when consolidation was cut
    simulated_at: str | None = None  # the time budgets' schedules were evaluated at, and where it came from
    spot_prices: str = ""  # where spot prices came from (`catalog/spot_prices.py`), as plan's `spotPrices`

    @property
    def gap(self) -> float:
        return 0.0 if self.optimal <= 0 else max(self.optimal - self.lower_bound, 0.0) / self.optimal


@dataclass
class Report:
    actions: list[Action]
    nodes: list[NodeVerdict]
    summary: Summary
    warnings: list[str] = field(default_factory=list)
    estimated: frozenset[str] = frozenset()  # the nodes (and replacements) priced by an estimate

    @property
    def exit_code(self) -> int:
        """0: consolidated as it is; 1: Karpenter would act (savings to be had); 3: the time limit cut the
        simulation before its steady state (as `plan` exits when the limit cut it), whatever else."""
        if not self.summary.complete:
            return EXIT_CUT
        return 1 if self.actions else 0

    def to_document(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "actions": [_action(a, self.estimated) for a in self.actions],
            "nodes": [_node(v, self.estimated) for v in self.nodes],
            "summary": {
                "currentHourlyCost": round(self.summary.current, 6),
                "karpenterHourlyCost": round(self.summary.karpenter, 6),
                "optimalHourlyCost": round(self.summary.optimal, 6),
                "lowerBound": round(self.summary.lower_bound, 6),
                "gap": round(self.summary.gap, 6),
                "optimalStatus": self.summary.optimal_status,
                **({"optimalNote": self.summary.optimal_note} if self.summary.optimal_note else {}),
                "passes": self.summary.passes,
                "spotToSpotConsolidation": self.summary.spot_to_spot,
                "region": self.summary.region,
                "timeLimit": self.summary.time_limit,
                "timeLimitAuto": self.summary.time_limit_auto,
                "steadyStateComplete": self.summary.complete,
                **({"karpenterNote": self.summary.karpenter_note} if self.summary.karpenter_note else {}),
                **({"simulatedAt": self.summary.simulated_at} if self.summary.simulated_at else {}),
                **({"spotPrices": self.summary.spot_prices} if self.summary.spot_prices else {}),
            },
            "warnings": list(self.warnings),
        }


def _money(value: float) -> float:
    return round(value, 6)


def _action(a: Action, estimated: frozenset[str]) -> dict[str, Any]:
    replacements = []
    if a.replacement is not None:
        r = a.replacement
        replacements.append({"name": r.name, "instanceType": r.instance_type, "zone": r.zone,
                             "capacityType": r.capacity_type, "hourlyCost": _money(r.cost),
                             **({"priceEstimated": True} if r.name in estimated else {}),
                             "instanceTypeOptions": a.options})
    return {"method": a.method, "decision": a.decision, "nodes": [n.name for n in a.nodes],
            "replacements": replacements, "savingsPerHour": _money(a.savings),
            "evictedPods": [p.key for p in a.evicted]}


def _node(v: NodeVerdict, estimated: frozenset[str]) -> dict[str, Any]:
    n = v.node
    return {"name": n.name, "nodePool": n.pool, "instanceType": n.instance_type, "zone": n.zone,
            "capacityType": n.capacity_type,
            "hourlyCost": None if n.price is None else _money(n.cost),  # unpriced: never a silent $0 (the warnings say why)
            **({"priceEstimated": True} if n.name in estimated else {}), "replacement": n.replacement,
            "consolidatable": v.consolidatable, "reason": v.reason,
            **({"removedByAction": v.removed_by} if v.removed_by is not None else {})}


def removal_reason(a: Action, number: int) -> str:
    """Why a removed node goes, in a sentence."""
    how = METHOD_WORDS.get(a.method, a.method)
    money = f"saves ${a.savings:.4f}/h" if a.savings >= 0 else f"costs ${-a.savings:.4f}/h more"
    if a.replacement is not None:
        return f"Replaced by {a.replacement.instance_type} {a.replacement.name} through {how} (action {number}, {money})"
    return f"Deleted through {how} (action {number}, {money})"
