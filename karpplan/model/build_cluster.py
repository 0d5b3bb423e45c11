"""Cluster objects: existing Nodes, Namespaces, RuntimeClasses, PriorityClasses, eksctl ClusterConfig."""

from __future__ import annotations

from karpplan.inputs.loader import Document
from karpplan.model.auto_mode_pools import BUILT_IN
from karpplan.model.build_fields import Field
from karpplan.model.build_pods import tolerations
from karpplan.model.build_pools import resource_list, taints
from karpplan.model.cluster import ClusterConfig, FargateProfile, FargateSelector, Namespace, RuntimeClass
from karpplan.model.eksctl import node_capacity_type, node_groups, subnet_zones
from karpplan.model.nodes import ExistingNode
from karpplan.model.resources import PODS, Resources
from karpplan.model.security_group_policies import PRIVATE_IPV4


def build_node(doc: Document, root: Field) -> ExistingNode:
    """A Node: labels, taints, cordon, allocatable; capacity defaults to allocatable."""
    metadata, spec, status = root["metadata"], root["spec"], root["status"]
    spec.is_mapping()
    status.is_mapping()
    allocatable = resource_list(status["allocatable"])
    capacity = resource_list(status["capacity"])
    if allocatable is None:
        allocatable = capacity if capacity is not None else Resources()
    labels = metadata["labels"].string_map()
    if labels.get("kubernetes.io/os") == "windows" and PRIVATE_IPV4 not in allocatable:
        # A Windows node that reports no IPAM addresses: no limit known, so one per pod slot (never the binding one)
        allocatable = allocatable + {PRIVATE_IPV4: allocatable.get(PODS)}
    return ExistingNode(
        name=doc.name,
        labels=labels,
        taints=taints(spec["taints"]),
        unschedulable=spec["unschedulable"].boolean(),
        allocatable=allocatable,
        capacity=capacity if capacity is not None else allocatable,
        origin=doc.origin,
        capacity_type=node_capacity_type(labels),
    )


def build_namespace(doc: Document, root: Field) -> Namespace:
    metadata = root["metadata"]
    return Namespace(name=doc.name, labels=metadata["labels"].string_map(),
                     annotations=metadata["annotations"].string_map())


def build_runtime_class(doc: Document, root: Field) -> RuntimeClass:
    """node.k8s.io/v1 RuntimeClass: `handler`, `overhead.podFixed` and `scheduling` (nodeSelector, tolerations)."""
    overhead = root["overhead"]
    overhead.is_mapping()
    scheduling = root["scheduling"]
    scheduling.is_mapping()
    return RuntimeClass(
        name=doc.name,
        handler=root["handler"].string(),
        overhead=resource_list(overhead["podFixed"]) or Resources(),
        node_selector=scheduling["nodeSelector"].string_map(),
        tolerations=tolerations(scheduling),
        origin=doc.origin,
    )


def build_priority_class(root: Field) -> tuple[int, bool]:
    """scheduling.k8s.io/v1 PriorityClass: (value, globalDefault)."""
    value = root["value"]
    if not value.present:
        value.required("value is required")
    return value.integer(0), root["globalDefault"].boolean()


def build_cluster_config(doc: Document, root: Field) -> ClusterConfig:
    """eksctl.io/v1alpha5 ClusterConfig: name, region, zones, node groups (`model/eksctl.py`) and Fargate profiles."""
    metadata = root["metadata"]
    profiles = []
    for item in root["fargateProfiles"].mappings():
        name = item["name"].string()
        if not name:
            item["name"].required("a Fargate profile needs a name")
        selectors = []
        for selector in item["selectors"].mappings():
            namespace = selector["namespace"].string()
            if not namespace:
                selector["namespace"].required("a Fargate profile selector needs a namespace")
            selectors.append(FargateSelector(namespace, selector["labels"].string_map()))
        if not selectors:
            item["selectors"].required("a Fargate profile needs at least one selector")
        profiles.append(FargateProfile(name=name, selectors=tuple(selectors), origin=item.origin))
    return ClusterConfig(
        name=doc.name,
        region=metadata["region"].optional_string(),
        availability_zones=tuple(root["availabilityZones"].string_list()),
        fargate_profiles=tuple(profiles),
        origin=doc.origin,
        region_origin=metadata["region"].origin,
        node_groups=node_groups(root, doc.name),
        zones_origin=root["availabilityZones"].origin,
        subnet_zones=subnet_zones(root),
        subnets_origin=root["vpc"]["subnets"].origin,
        auto_mode_pools=auto_mode_pools(root["autoModeConfig"]),
        auto_mode_origin=root["autoModeConfig"].origin,
    )


def auto_mode_pools(config: Field) -> tuple[str, ...]:
    """The built-in NodePools an `autoModeConfig` enables: both when `nodePools` is unset (eksctl's default),
    those it names otherwise, none when Auto Mode is off."""
    if not config["enabled"].boolean():
        return ()
    if not config["nodePools"].present:
        return BUILT_IN
    names = tuple(config["nodePools"].string_list())
    for name in names:
        if name not in BUILT_IN:
            config["nodePools"].invalid(f"unknown Auto Mode node pool {name!r}; known ones: {', '.join(BUILT_IN)}")
    return names


def build_limit_range(root: Field) -> dict[str, int]:
    """The requests a LimitRange gives a container that sets neither request nor limit for a resource.

    `SetDefaults_LimitRangeItem` first: for `type: Container` items an unset `default` (limit) takes `max`,
    an unset `defaultRequest` takes `default`, then `min`. The LimitRanger admission plugin then copies
    `defaultRequest` into the containers' missing requests; a later item of the same LimitRange wins.
    """
    requests: dict[str, int] = {}
    for item in root["spec"]["limits"].mappings():
        if item["type"].string() != "Container":
            continue
        maximum = resource_list(item["max"]) or Resources()
        minimum = resource_list(item["min"]) or Resources()
        default = {**maximum, **(resource_list(item["default"]) or Resources())}
        default_request = {**minimum, **default, **(resource_list(item["defaultRequest"]) or Resources())}
        requests.update(default_request)
    return requests
