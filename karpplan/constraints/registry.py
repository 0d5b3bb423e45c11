"""Every constraint kind, in the order the CP-SAT model adds their rows.

`REGISTRY` is the order of `OptimalModel.build` (resources: demand, existing then new capacity; pool
limits; topology spread; inter-pod affinity); kinds without rows (taints, node affinity, host ports)
sit where their static filter runs relative to the others. `STATIC_FILTERS` is kube-scheduler's filter
order as `scheduling/filters.py` reports it (the same kinds). Adding a kind is adding its module and
listing it in both.
"""

from __future__ import annotations

from karpplan.constraints.base import ConstraintKind
from karpplan.constraints.host_ports import HOST_PORTS
from karpplan.constraints.inter_pod_affinity import INTER_POD_AFFINITY
from karpplan.constraints.node_affinity import NODE_AFFINITY
from karpplan.constraints.pool_limits import POOL_LIMITS
from karpplan.constraints.resources import RESOURCES
from karpplan.constraints.taints import TAINTS
from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD

REGISTRY: tuple[ConstraintKind, ...] = (
    TAINTS,
    NODE_AFFINITY,
    HOST_PORTS,
    RESOURCES,
    POOL_LIMITS,
    TOPOLOGY_SPREAD,
    INTER_POD_AFFINITY,
)

STATIC_FILTERS: tuple[ConstraintKind, ...] = (
    TAINTS,
    NODE_AFFINITY,
    HOST_PORTS,
    TOPOLOGY_SPREAD,
    RESOURCES,
    POOL_LIMITS,
    INTER_POD_AFFINITY,
)

__all__ = ["REGISTRY", "STATIC_FILTERS"]
