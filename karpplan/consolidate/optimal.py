"""The cluster's cost after an optimal re-pack of every pod that may move, by the optimal engine (planner).

Nodes Karpenter may not disrupt at all (not a NodePool's, `do-not-disrupt`, a PDB that allows no eviction,
consolidation disabled, no price) stay as they are, pods and all, and are existing capacity; the
reschedulable pods of every other node are planned afresh from the NodePools, within a time limit. The
plan's bound is the lower bound. Karpenter's steady state is itself such a re-pack, so the optimum reported
is never above it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from karpplan.consolidate.candidates import Candidate, is_reschedulable, new_candidate
from karpplan.consolidate.state import ClusterState
from karpplan.engines.effort import TimeBudget
from karpplan.planner import PlanOptions, make_plan


@dataclass(frozen=True)
class Repack:
    cost: float
    lower_bound: float
    status: str  # the optimal engine's status, or "karpenter" when its steady state is as good
    note: str | None = None

    @property
    def gap(self) -> float:
        return 0.0 if self.cost <= 0 else max(self.cost - self.lower_bound, 0.0) / self.cost


def movable(state: ClusterState) -> list[Candidate]:
    """Nodes whose pods may be re-packed: candidates of a NodePool that consolidates, with a price."""
    limits = state.pdb_limits()
    out = []
    for node in state.nodes:
        c = new_candidate(node, state.pods_on.get(node.name, []), dict(state.pools), dict(state.disruption), limits)
        if isinstance(c, Candidate) and c.disruption.enabled and node.price is not None and not c.pool.static:
            out.append(c)
    return out


def optimal_repack(state: ClusterState, karpenter_cost: float, time_limit: float) -> Repack:

    moving = movable(state)
    names = {c.name for c in moving}
    fixed = [n for n in state.nodes if n.name not in names]
    fixed_cost = sum(n.cost for n in fixed)
    pods = [p for n in fixed for p in state.pods_on.get(n.name, [])]
    pending = [replace(p, node_name=None) for c in moving for p in c.pods if is_reschedulable(p)]
    if not pending:
        return Repack(min(fixed_cost, karpenter_cost), min(fixed_cost, karpenter_cost), "optimal")
    inventory = replace(state.inventory, nodes=tuple(n.node for n in fixed), pods=tuple(pods + pending))
    plan = make_plan(inventory, state.catalog, PlanOptions(time_limit=time_limit), TimeBudget(time_limit))
    summary = plan.summary
    if plan.unschedulable:
        note = (f"the optimal re-pack leaves {len(plan.unschedulable)} pod(s) without a node (they fit nowhere but where they run, "
                "or their NodePools no longer offer it): Karpenter's steady state is quoted instead")
        return Repack(karpenter_cost, min(karpenter_cost, fixed_cost), "karpenter", note)
    cost = fixed_cost + summary.hourly_cost
    bound = fixed_cost + (summary.lower_bound if summary.lower_bound is not None else 0.0)
    if cost > karpenter_cost + 1e-9:
        return Repack(karpenter_cost, min(bound, karpenter_cost), "karpenter",
                      "the optimal engine found nothing cheaper than Karpenter's steady state within the time limit")
    return Repack(cost, min(bound, cost), summary.status)
