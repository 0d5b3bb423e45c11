"""Which DaemonSets Karpenter counts on a node it launches: per (NodePool, instance type), never per offering.

Karpenter sizes a NodeClaim with the overhead of every DaemonSet pod compatible with the NodeClaim template and the
instance type (`scheduler.go` `buildDaemonOverheadGroups`, `isDaemonPodCompatible`): the pod tolerates the
template's taints (PreferNoSchedule aside), its strict node requirements (any one required term, as the loop relaxes
them) are compatible with the template's requirements, undefined well-known keys allowed, and intersect the instance
type's requirements, whose zone and capacity type are every value its offerings give. So a DaemonSet that asks for
one zone, or for spot, counts on every node of an instance type offered there, in any zone and capacity type; its
host ports likewise. This is what Karpenter launches by; what a node then really runs is kube-scheduler's
(`candidates.daemon_overhead` on existing nodes).
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.catalog.nodelabels import instance_requirements
from karpplan.catalog.types import InstanceType
from karpplan.model import labels as L
from karpplan.model.pods import DaemonSet
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirements
from karpplan.model.resources import Resources
from karpplan.model.taints import SCHEDULING_EFFECTS, untolerated
from karpplan.scheduling.daemon_ports import DaemonPort, daemonset_key


class PoolDaemons:
    """The DaemonSets of one NodePool's template, asked per instance type."""

    def __init__(self, pool: NodePool, daemonsets: Sequence[DaemonSet], provided: frozenset[str] = frozenset()) -> None:
        well_known = L.WELL_KNOWN | provided
        tolerating = [ds for ds in daemonsets if not untolerated(ds.template.tolerations, pool.taints,
                                                                  SCHEDULING_EFFECTS)]
        self._pool = pool
        self._always: list[DaemonSet] = []  # no node requirement: on every node of the pool
        self._terms: list[tuple[DaemonSet, list[Requirements]]] = []  # the terms the template is compatible with
        for ds in tolerating:
            terms = [t for t in ds.template.affinity.strict_alternatives() if t.compatible(pool.requirements, well_known)]
            if any(not t for t in terms):
                self._always.append(ds)
            elif terms:
                self._terms.append((ds, terms))

    def running(self, it: InstanceType) -> list[DaemonSet]:
        """The DaemonSets Karpenter counts on a node of `it` from this pool."""
        if not self._terms:
            return self._always
        type_requirements = instance_requirements(it, auto_mode=self._pool.auto_mode)
        return [*self._always, *(ds for ds, terms in self._terms if any(t.intersects(type_requirements) for t in terms))]



def total_requests(daemonsets: Sequence[DaemonSet]) -> Resources:
    """What these DaemonSets' pods request together on a node."""
    if len(daemonsets) == 1:  # (asked per instance type and pool: thousands on the aws catalog, so no sum of one)
        return daemonsets[0].template.requests
    total = Resources()
    for ds in daemonsets:
        total = total + ds.template.requests
    return total


def held_ports(daemonsets: Sequence[DaemonSet]) -> tuple[DaemonPort, ...]:
    """The host ports these DaemonSets' pods hold on a node."""
    return tuple((daemonset_key(ds), port) for ds in daemonsets for port in ds.template.host_ports)


__all__ = ["PoolDaemons", "held_ports", "total_requests"]
