"""Cluster-level inputs: eksctl ClusterConfig (region, zones, node groups, Fargate profiles), RuntimeClasses, namespaces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.resources import Resources
from karpplan.model.taints import Taint, Toleration


@dataclass(frozen=True)
class FargateSelector:
    namespace: str  # may contain * and ? wildcards
    labels: Mapping[str, str] = field(default_factory=dict)  # keys and values may contain wildcards


@dataclass(frozen=True)
class FargateProfile:
    name: str
    selectors: tuple[FargateSelector, ...]
    origin: Origin = field(default=UNKNOWN, compare=False)


@dataclass(frozen=True)
class NodeGroup:
    """An eksctl `nodeGroups` / `managedNodeGroups` entry as the nodes it keeps (`model/eksctl.py`)."""

    name: str
    managed: bool
    instance_type: str
    desired: int  # desiredCapacity, or eksctl's default
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    availability_zones: tuple[str, ...] = ()
    spot: int = 0  # how many of the `desired` nodes are spot (managed `spot: true`, instancesDistribution)
    origin: Origin = field(default=UNKNOWN, compare=False)
    type_origin: Origin = field(default=UNKNOWN, compare=False)  # where the instance type is written
    zones_origin: Origin = field(default=UNKNOWN, compare=False)
    unresolved: str = ""  # why the instance type cannot be known offline (a launch template, instanceSelector)
    listed: tuple[str, ...] = ()  # every type the group lists (`instanceTypes`), `instance_type` first
    max_size: int | None = None  # maxSize: what cluster-autoscaler may grow the group to (not simulated)
    ami_family: str = ""  # eksctl's amiFamily as written (AmazonLinux2023, Bottlerocket, WindowsServer2022CoreContainer...)


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    region: str | None
    availability_zones: tuple[str, ...] = ()
    fargate_profiles: tuple[FargateProfile, ...] = ()
    origin: Origin = field(default=UNKNOWN, compare=False)
    region_origin: Origin = field(default=UNKNOWN, compare=False)  # where metadata.region is written
    node_groups: tuple[NodeGroup, ...] = ()
    zones_origin: Origin = field(default=UNKNOWN, compare=False)  # where availabilityZones is written
    # The zones of `vpc.subnets.private` / `public` (an existing VPC's subnets, keyed by zone or with `az`)
    subnet_zones: tuple[str, ...] = ()
    subnets_origin: Origin = field(default=UNKNOWN, compare=False)
    # EKS Auto Mode's built-in NodePools `autoModeConfig` enables (`model/auto_mode_pools.py`), and where
    auto_mode_pools: tuple[str, ...] = ()
    auto_mode_origin: Origin = field(default=UNKNOWN, compare=False)


@dataclass(frozen=True)
class RuntimeClass:
    name: str
    handler: str = ""
    overhead: Resources = Resources()
    # `scheduling`: merged into the pods that name the class at admission (model/runtime_class_admission.py)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    origin: Origin = field(default=UNKNOWN, compare=False)


@dataclass(frozen=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict, compare=False)  # a mesh's injection (Linkerd)
