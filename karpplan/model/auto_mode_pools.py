"""EKS Auto Mode's built-in NodePools (`general-purpose`, `system`), which an eksctl ClusterConfig's
`autoModeConfig` enables, as EKS defines them.

An Auto Mode cluster comes with them: `autoModeConfig.enabled: true` and `nodePools` unset gives both (eksctl
`SetClusterConfigDefaults`), `nodePools: []` neither. EKS defines them (docs: "Enable or Disable Built-in
NodePools"): both use the default EKS NodeClass, on-demand capacity only, the C, M and R instance categories,
generation 5 or newer; `general-purpose` is amd64 only; `system` takes amd64 and arm64 and carries a
`CriticalAddonsOnly` NoSchedule taint. Linux only, as every Auto Mode node.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from karpplan.errors import Origin
from karpplan.model.labels import ARCH, AUTO_PREFIX, CAPACITY_TYPE, NODEPOOL, OS
from karpplan.model.pools import NodeClassRef, NodePool
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.taints import NO_SCHEDULE, Taint

GENERAL_PURPOSE = "general-purpose"
SYSTEM = "system"
BUILT_IN = (GENERAL_PURPOSE, SYSTEM)
_ARCHES = {GENERAL_PURPOSE: ("amd64",), SYSTEM: ("amd64", "arm64")}


def built_in_pool(name: str, origin: Origin) -> NodePool:
    """The built-in NodePool `name` (`general-purpose` or `system`); `origin`: where the ClusterConfig enables it."""
    requirements = Requirements([
        Requirement.of(CAPACITY_TYPE, "In", ["on-demand"]),
        Requirement.of(AUTO_PREFIX + "instance-category", "In", ["c", "m", "r"]),
        Requirement.of(AUTO_PREFIX + "instance-generation", "Gt", ["4"]),
        Requirement.of(ARCH, "In", _ARCHES[name]),
        Requirement.of(OS, "In", ["linux"]),
        Requirement(NODEPOOL, frozenset([name])),
    ])
    return NodePool(
        name=name, kind="NodePool", api_version="karpenter.sh/v1", requirements=requirements,
        taints=(Taint("CriticalAddonsOnly", "", NO_SCHEDULE),) if name == SYSTEM else (),
        node_class_ref=NodeClassRef("eks.amazonaws.com", "NodeClass", "default"), auto_mode=True, origin=origin)


def built_in_pools(names: Sequence[str], origin: Origin, defined: Collection[str]) -> list[NodePool]:
    """The built-in pools `names` the cluster enables, but for those the input defines itself (a dump of the
    cluster's NodePools holds them as EKS wrote them)."""
    return [built_in_pool(name, origin) for name in dict.fromkeys(names) if name in BUILT_IN and name not in defined]


__all__ = ["BUILT_IN", "GENERAL_PURPOSE", "SYSTEM", "built_in_pool", "built_in_pools"]
