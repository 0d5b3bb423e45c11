"""eksctl node groups' nodes as the planner's existing nodes: capacity that is already running and paid for.

Each node group (`model/eksctl.py`) keeps `desired` nodes of its instance type, spread over its zones (the
group's `availabilityZones`, else the cluster's) the way an Auto Scaling group balances them, one zone
after the other. Each becomes an `ExistingNode` as a real EKS node would be: the group's labels and taints,
hostname, zone, region, instance type, arch and os, allocatable as the catalog computes it for the type,
and its hourly price (on-demand, or spot for a group's spot share). Pending pods may land on them as on any
existing node; the plan shows them as existing, priced, and leaves them out of its cost. A group whose
instance type the catalog does not hold is left out, said at the line that names the type.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

from karpplan.catalog import instance_types_for
from karpplan.catalog.types import ON_DEMAND, SPOT, Catalog, InstanceType
from karpplan.model import labels as L
from karpplan.model.cluster import NodeGroup
from karpplan.model.eksctl import NODEGROUP_NAME_LABEL, growth_not_simulated
from karpplan.model.inventory import Inventory
from karpplan.model.nodes import ExistingNode
from karpplan.model.resources import Resources

_NODE_TYPE_LABELS = (L.INSTANCE_TYPE, L.ARCH, L.OS, "beta.kubernetes.io/instance-type", "beta.kubernetes.io/arch",
                     "beta.kubernetes.io/os")


@dataclass(frozen=True)
class NodeGroupNodes:
    """The existing nodes of the input's node groups and what the plan says about them."""

    nodes: tuple[ExistingNode, ...]
    notes: tuple[str, ...]


def _price(it: InstanceType, zone: str, capacity_type: str) -> tuple[float | None, bool]:
    """The offering's price in that zone, else the type's cheapest of that capacity type anywhere; a published
    price before an estimated one, and whether the price is estimated."""
    offerings = [o for o in it.offerings if o.capacity_type == capacity_type]
    here = [o for o in offerings if o.zone == zone] or offerings
    best = min(here, key=lambda o: (o.estimated, o.price), default=None)
    return (None, False) if best is None else (best.price, best.estimated)


def _group_nodes(group: NodeGroup, it: InstanceType, zones: tuple[str, ...], region: str,
                 taken: set[str]) -> list[ExistingNode]:
    base = {k: v for k, v in it.labels.items() if k in _NODE_TYPE_LABELS}
    base.setdefault(L.INSTANCE_TYPE, it.name)
    nodes = []
    for index in range(group.desired):
        zone = zones[index % len(zones)]
        capacity_type = SPOT if index >= group.desired - group.spot else ON_DEMAND
        name = f"{group.name}-{it.name.replace('.', '-')}-{zone}-{index + 1}".lower()
        while name in taken:
            name += "-x"
        taken.add(name)
        labels = {**base, **group.labels, L.ZONE: zone, L.REGION: region, L.HOSTNAME: name}
        price, estimated = _price(it, zone, capacity_type)
        nodes.append(ExistingNode(name, labels, group.taints, allocatable=it.allocatable, capacity=it.capacity,
                                  origin=group.origin, hourly_price=price, capacity_type=capacity_type,
                                  price_estimated=estimated))
    return nodes


def _describe(group: NodeGroup, nodes: list[ExistingNode], zones: tuple[str, ...]) -> str:
    kind = "managed node group" if group.managed else "node group"
    priced = [n.hourly_price for n in nodes if n.hourly_price is not None]
    type_name = nodes[0].labels.get(L.INSTANCE_TYPE, group.instance_type) if nodes else group.instance_type
    what = f"{len(nodes)} {type_name} node(s)"
    if group.spot:
        what = (f"{len(nodes)} spot {type_name} node(s)" if group.spot >= len(nodes)
                else f"{what} ({group.spot} of them spot)")
    text = (f"{group.origin}: eksctl {kind} {group.name}: {what} in {', '.join(zones)}, running already: "
            "planned as existing nodes pending pods may use")
    if priced:
        guess = "~" if any(n.price_estimated for n in nodes) else ""  # the table's mark for an estimated price
        text += f", {guess}${sum(priced):.4f}/h together (already paid for, not in the plan's cost)"
    if len(group.listed) > 1:
        text += (f"; it lists {len(group.listed)} types and EC2 picks among them: karpplan plans the first the "
                 f"catalog holds ({type_name})")
    return text


def windows_family(eksctl_ami_family: str) -> str | None:
    """The Karpenter AMI family of an eksctl Windows amiFamily (`WindowsServer2022CoreContainer` -> `Windows2022`),
    None for a Linux one."""
    if not eksctl_ami_family.lower().startswith("windows"):
        return None
    year = next((y for y in ("2019", "2022", "2025") if y in eksctl_ami_family), "2019")
    return f"Windows{year}"


def node_group_nodes(inventory: Inventory, catalog: Catalog) -> NodeGroupNodes:
    """Every node group's nodes, named `<group>-<type>-<zone>-<n>`, after the input's own nodes."""
    types = catalog.by_name()
    taken = {n.name for n in inventory.nodes}
    windows_types: dict[str, dict[str, InstanceType]] = {}
    nodes: list[ExistingNode] = []
    notes: list[str] = []
    for cluster in inventory.clusters:
        for group in cluster.node_groups:
            # Of several listed types EC2 picks; karpplan plans with the first the catalog holds. A Windows group's
            # nodes are Windows nodes: their allocatable, the IPv4 addresses Windows pods take, the licence.
            family = windows_family(group.ami_family)
            of_group = types if family is None else windows_types.setdefault(
                family, {t.name: t for t in instance_types_for(catalog, None, family)})
            it = next((of_group[t] for t in group.listed or (group.instance_type,) if t in of_group), None)
            if group.unresolved and group.desired:
                notes.append(f"{group.origin}: node group {group.name}: {group.unresolved}, which karpplan cannot "
                             f"know offline, so its {group.desired} node(s) are left out of the plan; set "
                             "instanceType to plan them")
                continue
            if it is None:
                named = ", ".join(group.listed or (group.instance_type,))
                notes.append(f"{group.type_origin}: node group {group.name}: instance type {named} "
                             f"{'are' if len(group.listed) > 1 else 'is'} not in the catalog ({catalog.name}), so its "
                             f"{group.desired} node(s) are left out of the plan")
                continue
            if not group.desired:
                continue
            zones = tuple(z for z in catalog.zones if z in group.availability_zones) or catalog.zones
            made = _group_nodes(group, it, zones, catalog.region, taken)
            nodes.extend(made)
            notes.append(_describe(group, made, tuple(dict.fromkeys(n.labels[L.ZONE] for n in made))))
    return NodeGroupNodes(tuple(nodes), tuple(notes))


def with_node_groups(inventory: Inventory, catalog: Catalog) -> tuple[Inventory, tuple[str, ...]]:
    """The inventory with its node groups' nodes among the existing nodes, and the plan's notes on them."""
    if not any(c.node_groups for c in inventory.clusters):
        return inventory, ()
    groups = node_group_nodes(inventory, catalog)
    return replace(inventory, nodes=(*inventory.nodes, *groups.nodes)), groups.notes


def growable_groups(inventory: Inventory, requests: Resources, ruled_out: Collection[str]) -> list[NodeGroup]:
    """The node groups that could grow for a pod the plan leaves unschedulable: below their maxSize, and
    with a node that takes the pod's requests whole and is not ruled out for it by labels or taints
    (`ruled_out`: node names). A group that keeps no node cannot be judged by one, so it is counted."""
    out = []
    for cluster in inventory.clusters:
        for group in cluster.node_groups:
            if group.max_size is None or group.max_size <= group.desired:
                continue
            nodes = [n for n in inventory.nodes if n.labels.get(NODEGROUP_NAME_LABEL) == group.name]
            if not nodes or any(n.name not in ruled_out and requests.fits_in(n.allocatable) for n in nodes):
                out.append(group)
    return out


def growth_reason(groups: list[NodeGroup]) -> str:
    """Why a pod no NodePool can launch for stays unschedulable although node groups could grow for it."""
    named = "; ".join(f"eksctl node group {g.name} could add up to {(g.max_size or 0) - g.desired} node(s) for it, "
                      f"but {growth_not_simulated(g)}" for g in groups)
    return f"no nodepools found, so Karpenter launches nothing; {named}"
