"""A change that opens a NodePool to a workload, and a heavier NodePool that still takes its pods.

Karpenter tries NodePools by `weight`, heaviest first, and launches from the first that can take a pod
(`provisioning/scheduling`: `nodePools` sorted by weight; "NodePools with higher weight are selected
first"). A workload that now tolerates and selects a spot NodePool, or a NodePool that now allows spot, saves
nothing while a heavier NodePool still admits the pods: the reviewer who expects a saving sees $0.00. Said in
the row of what changed:
- a changed workload: the NodePools HEAD newly admits it to, which launch none of its pods, and the heavier
  NodePool HEAD's plan puts them on;
- a changed NodePool that launches nothing on either side: the heavier NodePool that takes the pods it admits.
A pool admits a pod as Karpenter's `Compatible` reads it: its taints tolerated (NoSchedule, NoExecute), one of
the pod's required node-affinity alternatives compatible with the pool's requirements; a static pool never.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from karpplan.costs.showback import workload_key
from karpplan.model import labels as L
from karpplan.model.inventory import Inventory
from karpplan.model.pods import PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.taints import NO_EXECUTE, NO_SCHEDULE, untolerated
from karpplan.plan import Plan


def admits(pool: NodePool, template: PodTemplate) -> bool:
    """Could Karpenter launch a node of `pool` for a pod of `template` (taints, requirements)?"""
    if pool.static or untolerated(template.tolerations, pool.taints, (NO_SCHEDULE, NO_EXECUTE)):
        return False
    return any(alt.compatible(pool.requirements, L.WELL_KNOWN) for alt in template.affinity.strict_alternatives())


def _templates(inventory: Inventory) -> dict[str, PodTemplate]:
    """Workload key -> the template of its first pending pod."""
    out: dict[str, PodTemplate] = {}
    for pod in inventory.pods:
        if pod.node_name is None:
            out.setdefault(workload_key(pod.workload, pod.namespace), pod.template)
    return out


def on_new_nodes(plan: Plan) -> dict[str, set[str]]:
    """Pool -> the workloads with pods on its new nodes (the one reading of where a plan's pods landed)."""
    pools = {n.name: n.node_pool for n in plan.nodes if n.new and n.node_pool}
    out: dict[str, set[str]] = {}
    for pod in plan.pods:
        pool = pools.get(pod.node or "")
        if pool is not None:
            out.setdefault(pool, set()).add(workload_key(pod.workload, pod.namespace))
    return out


def _landed(plan: Plan) -> dict[str, set[str]]:
    """Workload key -> the NodePools of the new nodes the plan puts its pods on."""
    out: dict[str, set[str]] = {}
    for pool, workloads in on_new_nodes(plan).items():
        for workload in workloads:
            out.setdefault(workload, set()).add(pool)
    return out


def _heavier(pools: Mapping[str, NodePool], landed: set[str], than: NodePool) -> NodePool | None:
    heavier = [pools[p] for p in landed if p in pools and pools[p].weight > than.weight]
    return max(heavier, key=lambda p: p.weight, default=None)


def _taken(pool: NodePool, by: NodePool) -> str:
    return (f"NodePool {by.name} (weight {by.weight}) is tried first and takes the pods (Karpenter launches from "
            f"the heaviest NodePool that can; {pool.name}'s weight is {pool.weight})")


def workload_notes(base: Inventory, head: Inventory, head_plan: Plan, changed: Sequence[str]) -> dict[str, str]:
    """Changed workload -> why the NodePool HEAD newly admits it to launches none of its pods."""
    before, after = _templates(base), _templates(head)
    pools = {p.name: p for p in head.nodepools}
    base_pools = {p.name: p for p in base.nodepools}
    landed = _landed(head_plan)
    out: dict[str, str] = {}
    for key in changed:
        template, old = after.get(key), before.get(key)
        if template is None or old is None:
            continue
        for pool in sorted(pools.values(), key=lambda p: (-p.weight, p.name)):
            was = base_pools.get(pool.name)
            if pool.name in landed.get(key, set()) or not admits(pool, template) or \
                    (was is not None and admits(was, old)):
                continue
            by = _heavier(pools, landed.get(key, set()), pool)
            if by is not None:
                out[key] = f"its pods may now launch on NodePool {pool.name}, but {_taken(pool, by)}"
                break
    return out


def pool_notes(head: Inventory, head_plan: Plan, idle: Sequence[str]) -> dict[str, str]:
    """Changed NodePool that launches nothing on either side (`idle`) -> the heavier NodePool taking the pods
    it admits, with the workloads."""
    pools = {p.name: p for p in head.nodepools}
    templates = _templates(head)
    landed = _landed(head_plan)
    out: dict[str, str] = {}
    for name in idle:
        pool = pools.get(name)
        if pool is None:
            continue
        takers: dict[str, list[str]] = {}
        for key, template in templates.items():
            by = _heavier(pools, landed.get(key, set()), pool) if admits(pool, template) else None
            if by is not None:
                takers.setdefault(by.name, []).append(key)
        if takers:
            by_name, keys = max(takers.items(), key=lambda kv: (pools[kv[0]].weight, len(kv[1])))
            shown = ", ".join(sorted(keys)[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
            out[name] = (f"launches nothing on either side: it admits {shown}, but "
                         f"{_taken(pool, pools[by_name])}")
    return out
