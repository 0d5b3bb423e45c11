"""eksctl node groups (`nodeGroups`, `managedNodeGroups` of a ClusterConfig) as the nodes they keep.

What eksctl does with a node group (eksctl-io/eksctl pkg/apis/eksctl.io/v1alpha5 `SetNodeGroupDefaults`,
`SetManagedNodeGroupDefaults`): the instance type defaults to `m5.large` (`DefaultNodeType`) unless the
group lists several (`instancesDistribution.instanceTypes`, managed `instanceTypes`), whose first karpplan
plans with; the Auto Scaling group keeps `desiredCapacity` nodes (absent: `minSize`, else eksctl's
`DefaultNodeCount`, 2), spread over the group's `availabilityZones` (absent: the cluster's); every node
is labelled `alpha.eksctl.io/cluster-name` and `alpha.eksctl.io/nodegroup-name`, and a managed group's
nodes also `eks.amazonaws.com/nodegroup` and `eks.amazonaws.com/capacityType` (ON_DEMAND or SPOT).
Taints come in two forms: a map `key: "value:Effect"` and a list of `{key, value, effect}`; managed
groups also accept the EKS API's `NO_SCHEDULE` spellings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from karpplan.model.build_fields import Field
from karpplan.model.build_pools import taints
from karpplan.model.cluster import ClusterConfig, NodeGroup
from karpplan.model.inventory import InputNotice
from karpplan.model.labels import CAPACITY_TYPE, OS
from karpplan.model.taints import EFFECTS, Taint

DEFAULT_NODE_TYPE = "m5.large"  # eksctl's DefaultNodeType
DEFAULT_NODE_COUNT = 2  # eksctl's DefaultNodeCount
CLUSTER_NAME_LABEL = "alpha.eksctl.io/cluster-name"
NODEGROUP_NAME_LABEL = "alpha.eksctl.io/nodegroup-name"
EKS_NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_TYPE_LABEL = "eks.amazonaws.com/capacityType"
# eks.amazonaws.com/capacityType's values as karpenter.sh/capacity-type's
KARPENTER_CAPACITY_TYPES = {"SPOT": "spot", "ON_DEMAND": "on-demand", "CAPACITY_BLOCK": "reserved"}
_EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


def node_capacity_type(labels: dict[str, str]) -> str | None:
    """A pasted Node's capacity type: Karpenter's label, else a managed node group's `ON_DEMAND`/`SPOT`."""
    return labels.get(CAPACITY_TYPE) or KARPENTER_CAPACITY_TYPES.get(labels.get(EKS_CAPACITY_TYPE_LABEL, ""))


def _effect(f: Field, text: str) -> str:
    effect = _EKS_EFFECTS.get(text, text)
    if effect not in EFFECTS:
        f.unsupported(EFFECTS, text)
    return effect


def node_group_taints(f: Field) -> tuple[Taint, ...]:
    """Both eksctl forms: `{key: "value:Effect"}` and `[{key, value, effect}]`."""
    out: list[Taint] = []
    if isinstance(f.value, dict):
        for key, item in f.entries():
            value, _, effect = item.string().rpartition(":")
            out.append(Taint(key, value, _effect(item, effect)))
        return tuple(out)
    return taints(f, _EKS_EFFECTS)


def _desired(group: Field) -> int:
    desired = group["desiredCapacity"].optional_integer()
    if desired is None:
        desired = group["minSize"].optional_integer()
    if desired is None:
        desired = DEFAULT_NODE_COUNT
        most = group["maxSize"].optional_integer()
        if most is not None:
            desired = min(desired, most)
    if desired < 0:
        group["desiredCapacity"].invalid("must be greater than or equal to 0")
        return 0
    return desired


def _spot_count(group: Field, managed: bool, desired: int) -> int:
    """How many of the group's nodes are spot: all of a managed `spot: true` group; for a self-managed
    group with `instancesDistribution`, those above the on-demand base and percentage (the Auto Scaling
    group rounds the on-demand share up)."""
    if managed:
        return desired if group["spot"].boolean() else 0
    dist = group["instancesDistribution"]
    if not dist.present:
        return 0
    base = min(desired, max(dist["onDemandBaseCapacity"].integer(0), 0))
    percent = dist["onDemandPercentageAboveBaseCapacity"].integer(100)
    on_demand = base + math.ceil((desired - base) * min(max(percent, 0), 100) / 100)
    return desired - on_demand


def build_node_group(group: Field, cluster: str, *, managed: bool) -> NodeGroup:
    name = group["name"].string()
    if not name:
        group["name"].required("a node group needs a name")
    type_field = group["instanceType"]
    instance_type = type_field.string()
    listed = group["instanceTypes"] if managed else group["instancesDistribution"]["instanceTypes"]
    types = listed.string_list()
    if (not instance_type or instance_type == "mixed") and types:
        instance_type, type_field = types[0], listed
    unresolved = ""
    if not instance_type:
        template, selector = group["launchTemplate"], group["instanceSelector"]
        if managed and template.present:
            unresolved = f"its instance type is the one launch template {template['id'].string() or template['name'].string()} sets"
        elif isinstance(selector.value, dict) and selector.value:
            unresolved = "eksctl picks its instance types by instanceSelector when it creates the group"
        instance_type = DEFAULT_NODE_TYPE
    desired = _desired(group)
    labels = {**group["labels"].string_map(), CLUSTER_NAME_LABEL: cluster, NODEGROUP_NAME_LABEL: name}
    spot = _spot_count(group, managed, desired)
    if group["amiFamily"].string().startswith("Windows"):
        labels[OS] = "windows"
    if managed:
        labels[EKS_NODEGROUP_LABEL] = name
        labels[EKS_CAPACITY_TYPE_LABEL] = "SPOT" if spot else "ON_DEMAND"
    zones = group["availabilityZones"]
    return NodeGroup(
        name=name, managed=managed, instance_type=instance_type, desired=desired, labels=labels,
        taints=node_group_taints(group["taints"]), availability_zones=tuple(zones.string_list()), spot=spot,
        origin=group.origin, type_origin=type_field.origin if type_field.present else group.origin,
        zones_origin=zones.origin, unresolved=unresolved, listed=tuple(types) if types[:1] == [instance_type] else (),
        max_size=group["maxSize"].optional_integer(), ami_family=group["amiFamily"].string(),
    )


def node_group_notices(clusters: Sequence[ClusterConfig]) -> list[InputNotice]:
    """A notice per node group that may grow past the nodes it keeps (maxSize above desiredCapacity/minSize):
    karpplan plans the nodes the group keeps, and does not simulate cluster-autoscaler growing it, so a pod that
    does not fit them is reported unschedulable although the group could grow for it."""
    out = []
    for cluster in clusters:
        for group in cluster.node_groups:
            if group.max_size is None or group.max_size <= group.desired:
                continue
            out.append(InputNotice(group.origin, (
                f"eksctl node group {group.name}: planned as the {group.desired} node(s) it keeps; "
                f"{growth_not_simulated(group)}: a pod that does not fit those {group.desired} is reported "
                f"unschedulable, though the group could add up to {group.max_size - group.desired} node(s) for it")))
    return out


def growth_not_simulated(group: NodeGroup) -> str:
    """The one wording of what karpplan leaves to cluster-autoscaler: the plan's note on a group that may grow
    and the unschedulable reason that names it both say it."""
    return f"its maxSize is {group.max_size}, and growing it (cluster-autoscaler) is not simulated"


def subnet_zones(root: Field) -> tuple[str, ...]:
    """The zones of `vpc.subnets.private` and `public`: each subnet's `az`, else its key (eksctl keys them by
    zone name; a key that is no zone name is left to the caller to recognise)."""
    subnets = root["vpc"]["subnets"]
    zones = (entry["az"].optional_string() or key
             for kind in ("private", "public") for key, entry in subnets[kind].entries())
    return tuple(dict.fromkeys(zones))


def node_groups(root: Field, cluster: str) -> tuple[NodeGroup, ...]:
    """Every `nodeGroups` and `managedNodeGroups` entry of a ClusterConfig, in that order."""
    return tuple(build_node_group(g, cluster, managed=managed)
                 for key, managed in (("nodeGroups", False), ("managedNodeGroups", True))
                 for g in root[key].mappings())
