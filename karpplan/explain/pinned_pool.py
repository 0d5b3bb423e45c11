"""A pod required onto the one NodePool that cannot launch for it: the pin may be Karpenter's, not the pod's.

Karpenter v1 logs one clause per NodePool. When every other pool is refused on `karpenter.sh/nodepool In [X]`
and pool X's own clause is that no instance type fits, the pod may select X itself (nodeSelector / affinity),
or the requirement is Karpenter's own: a topologySpreadConstraint whose domains include one that only X
offers (a spread over karpenter.sh/nodepool, or a zone only X's requirements name) counts that domain at 0
pods, so Karpenter keeps sending the pod there, though X launches nothing (kubernetes-sigs/karpenter#3272,
"Impossible topology domains are included in topology spreads").
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.explain.structure import PoolReasons, Reason

_POOL_KEYS = ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name")


def pinned_unlaunchable_pool(item_reasons: Sequence[Reason], pools: Sequence[PoolReasons]) -> str | None:
    """The sentence for a pod pinned to the one pool that fits no instance type for it (None: not that case), from
    the item's own clauses and its pools'."""
    reasons = [*item_reasons, *(r for pool in pools for r in pool.reasons)]
    pinned = {r.pod_side for r in reasons if r.kind == "requirement-conflict" and r.key in _POOL_KEYS and r.pod_side}
    if len(pinned) != 1:
        return None
    (side,) = pinned
    for r in reasons:
        if r.kind != "no-instance-type":
            continue
        own = [q for q in r.requirements if str(q) == side]
        if not own:
            continue
        pool = side.split("[", 1)[1].rstrip("]")
        zones = [str(q) for q in r.requirements if q.key == "topology.kubernetes.io/zone"]
        zone_note = (f" Its clause narrows the pod to {zones[0]}: if that zone is not one your subnets have, the "
                     "NodePool's requirements name a zone that does not exist, and remove it there.") if zones else ""
        return (f"Every other NodePool is refused only because the pod is required onto NodePool {pool}, which fits "
                "no instance type for it. If the pod does not select that pool itself (nodeSelector or node affinity "
                "on the pool's name), the requirement is Karpenter's: a topologySpreadConstraint counts a domain only "
                f"{pool} offers (a spread over karpenter.sh/nodepool, or a zone only {pool}'s requirements allow) at 0 "
                "pods and keeps sending the pod there, though the pool can launch nothing "
                "(kubernetes-sigs/karpenter#3272). Fix the pool so it can launch (or delete it), or keep its domain "
                "out of the spread (nodeAffinityPolicy: Honor with a node affinity that excludes it)." + zone_note)
    return None


__all__ = ["pinned_unlaunchable_pool"]
