"""Static NodePools (`spec.replicas`): the nodes Karpenter keeps for them, as the planner's existing nodes.

What Karpenter's AWS provider does with a static NodePool (`spec.replicas`, kubernetes-sigs/karpenter
pkg/controllers/static/provisioning): it creates min(replicas, limits.nodes) minus the pool's running
NodeClaims, whatever is pending, each from the pool's template alone (no pod requests, no instance-type
list: `NodeClaimTemplate.ToNodeClaim` leaves the choice to `CloudProvider.Create`). The provider then
filters the compatible types with available offerings, drops exotic ones (GPU, accelerators, metal) when
others remain, takes the capacity type `getCapacityType` picks (reserved, else spot, else on-demand, the
first the requirements allow and some offering has) and asks CreateFleet, on-demand `lowest-price`, spot
`price-capacity-optimized`. EC2 chooses the type and the zone among the cheapest, so the launch karpplan
plans (the cheapest offering, the first of equal ones) is an assumption, said in the plan's warnings.
The nodes are then ordinary nodes for kube-scheduler and Karpenter: pending pods may land there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from karpplan.catalog.coverage import lacking_text, lacking_types, remedy
from karpplan.catalog.types import Catalog, InstanceType
from karpplan.model import labels as L
from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import DaemonSet
from karpplan.model.pools import NodeClass, NodePool
from karpplan.model.requirements import Requirements
from karpplan.scheduling.candidates import LaunchOption, build_launch_options

EXOTIC_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore",
                    "habana.ai/gaudi")
CAPACITY_TYPE_ORDER = ("reserved", "spot", "on-demand")  # the AWS provider's `getCapacityType`


@dataclass(frozen=True)
class StaticPool:
    """The nodes Karpenter keeps for one static NodePool that the input does not hold yet."""

    pool: NodePool
    launch: LaunchOption | None  # what karpplan assumes each node is (None: nothing the catalog has fits)
    nodes: tuple[ExistingNode, ...]  # the nodes to come, as the nodes they will be
    running: int  # nodes of the pool the input already holds
    wanted: int  # min(replicas, limits.nodes): the node count Karpenter keeps
    types: int = 0  # instance types EC2 may choose from for these nodes
    zones: int = 0  # and zones
    unoffered: int = 0  # without a launch: instance types its requirements allow, offered in no zone and
    # capacity type they allow
    lacking: str = ""  # without a launch: the types its requirements allow that the region's catalog lacks, said
    remedy: str = ""  # and how to plan with them

    def describe(self) -> str:
        """The plan's warning: what is planned for the pool and what is assumed."""
        pool = self.pool
        head = f"{pool.origin}: NodePool {pool.name} is static (replicas: {pool.replicas})"
        if pool.node_limit is not None and pool.node_limit < (pool.replicas or 0):
            head += f", capped by limits.nodes {pool.node_limit}"
        head += (": Karpenter keeps its nodes whatever is pending and never launches it for pods (static NodePools "
                 "need the StaticCapacity feature gate, alpha since v1.8 and off by default)")
        if self.running:
            head += f"; {self.running} of them are in the input"
        if not self.nodes:
            if self.running >= self.wanted:
                return head + ("; karpplan plans no more" if self.running else "; that is none here")
            if self.unoffered:
                return head + (f"; the catalog offers the {self.unoffered} instance type(s) its requirements allow "
                               "in no zone and capacity type they allow, so karpplan plans none")
            if self.lacking:
                return (head + f"; its requirements allow only {self.lacking}, so its {self.wanted - self.running} "
                        f"node(s) are not planned and not in the plan's cost: {self.remedy}")
            return head + "; no instance type of the catalog meets its requirements, so karpplan plans none"
        o = self.launch
        assert o is not None
        count = f"{len(self.nodes)} more" if self.running else f"its {len(self.nodes)}"
        text = (head + f"; karpplan plans {count} ({', '.join(n.name for n in self.nodes)}), which pending pods "
                f"may use, as {o.instance_type.name} {o.capacity_type} in {o.zone} at ${o.price:.4f}/h each")
        capacity = pool.requirements.get(L.CAPACITY_TYPE)
        if o.capacity_type == "spot" and (capacity is None or capacity.has("on-demand")):
            text += (" (spot: its requirements allow it, and Karpenter's AWS provider launches spot before on-demand;"
                     " reserved capacity its EC2NodeClass selects would come first, which karpplan does not plan)")
        if self.types > 1 or self.zones > 1:
            choice = " and ".join(f"{n} {what}" for n, what in ((self.types, "instance types"), (self.zones, "zones"))
                                  if n > 1)
            fleet = "price-capacity-optimized" if o.capacity_type == "spot" else "lowest-price"
            text += (f": an assumption, the cheapest launch of the {choice} its requirements allow (EC2 picks "
                     f"when Karpenter creates the nodes, CreateFleet {fleet})")
        return text


def _exotic(it: InstanceType) -> bool:
    return "metal" in it.labels.get("karpenter.k8s.aws/instance-size", "") or any(
        it.capacity.get(r) for r in EXOTIC_RESOURCES)


def static_launch(options: Sequence[LaunchOption]) -> tuple[LaunchOption | None, list[LaunchOption]]:
    """The launch the AWS provider makes for a NodeClaim of a static pool with these options (see above),
    and the options EC2 chooses among: non-exotic types when any, of the capacity type `getCapacityType`
    picks. The launch is the cheapest of them (the first of equal prices)."""
    if not options:
        return None, []
    generic = [o for o in options if not _exotic(o.instance_type)]
    candidates = generic or list(options)
    present = {o.capacity_type for o in candidates}
    capacity_type = next((c for c in CAPACITY_TYPE_ORDER if c in present), None)
    chosen = [o for o in candidates if o.capacity_type == capacity_type] if capacity_type else candidates
    return min(chosen, key=lambda o: o.price), chosen


def static_pools(pools: Sequence[NodePool], node_classes: Sequence[NodeClass], catalog: Catalog,
                 daemonsets: Sequence[DaemonSet], nodes: Sequence[ExistingNode], instance_types_for: object,
                 node_labels: object) -> list[StaticPool]:
    """Each static pool with the nodes Karpenter will launch for it (named `<pool>-<type>-<zone>-<n>`,
    as new nodes are, after the running ones' count)."""
    out: list[StaticPool] = []
    taken = {n.name for n in nodes}
    for pool in pools:
        if not pool.static:
            continue
        options = build_launch_options([pool], node_classes, catalog, daemonsets, [], instance_types_for,
                                       node_labels, static=True)
        launch, choice = static_launch(options)
        running = sum(1 for n in nodes if n.labels.get(pool.pool_label_key) == pool.name)
        wanted = pool.replicas or 0
        if pool.node_limit is not None:
            wanted = min(wanted, pool.node_limit)
        planned: list[ExistingNode] = []
        if launch is not None:
            it = launch.instance_type
            ordinal = 0
            while len(planned) < wanted - running:
                ordinal += 1
                name = f"{pool.name}-{it.name.replace('.', '-')}-{launch.zone}-{ordinal}".lower()
                if name in taken:
                    continue
                planned.append(ExistingNode(name, {**launch.labels, L.HOSTNAME: name}, pool.taints,
                                            allocatable=it.allocatable, capacity=it.capacity, origin=pool.origin))
        unoffered = 0
        if launch is None and wanted > running:
            # Is it the types, or only their offerings (zone, capacity type)?
            loose = replace(pool, requirements=Requirements(
                r for k, r in pool.requirements.items() if k not in (L.ZONE, L.CAPACITY_TYPE)))
            unoffered = len({o.instance_type.name for o in build_launch_options(
                [loose], node_classes, catalog, daemonsets, [], instance_types_for, node_labels, static=True)})
        lacking = lacking_types(catalog.for_pool(pool.name), pool.requirements) \
            if launch is None and wanted > running and not unoffered else []
        out.append(StaticPool(pool, launch, tuple(planned), running, wanted,
                              len({o.instance_type.name for o in choice}), len({o.zone for o in choice}), unoffered,
                              lacking_text(catalog, lacking) if lacking else "", remedy(catalog) if lacking else ""))
    return out
