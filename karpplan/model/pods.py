"""Pods, their templates, and the constraints they carry.

A workload's replicas share one `PodTemplate` (the scheduling-relevant part of a pod spec with effective
requests already computed); a `Pod` is a named instance. Pending replicas of one template form a
`PodGroup`, which the engines treat as one integer count rather than one variable per pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.mesh_sidecars import InjectedSidecar
from karpplan.model.requirements import Requirement
from karpplan.model.resources import Resources
from karpplan.model.selectors import LabelSelector, NodeAffinity, selector_matches
from karpplan.model.taints import Toleration
from karpplan.model.volume_zones import VolumeZones

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str = DO_NOT_SCHEDULE
    label_selector: LabelSelector | None = None  # None = null selector: matches nothing
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()
    origin: Origin = field(default=UNKNOWN, compare=False)

    @property
    def hard(self) -> bool:
        return self.when_unsatisfiable == DO_NOT_SCHEDULE

    @property
    def effective_min_domains(self) -> int:
        return self.min_domains if self.min_domains is not None else 1

    @property
    def honors_affinity(self) -> bool:
        return (self.node_affinity_policy or HONOR) == HONOR

    @property
    def honors_taints(self) -> bool:
        return (self.node_taints_policy or IGNORE) == HONOR

    def selector_for(self, pod_labels: Mapping[str, str]) -> LabelSelector | None:
        """The selector with matchLabelKeys merged from the pod's own labels (missing keys ignored)."""
        if self.label_selector is None:
            return None
        selector = self.label_selector
        for key in self.match_label_keys:
            if key in pod_labels:
                selector = selector.with_requirement(Requirement(key, frozenset([pod_labels[key]])))
        return selector


@dataclass(frozen=True)
class PodAffinityTerm:
    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: frozenset[str] = frozenset()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()
    origin: Origin = field(default=UNKNOWN, compare=False)

    def selector_for(self, owner_labels: Mapping[str, str]) -> LabelSelector | None:
        """matchLabelKeys / mismatchLabelKeys merged as `In`/`NotIn` on the owner's values (api-server merge)."""
        if self.label_selector is None:
            return None
        selector = self.label_selector
        for key in self.match_label_keys:
            if key in owner_labels:
                selector = selector.with_requirement(Requirement(key, frozenset([owner_labels[key]])))
        for key in self.mismatch_label_keys:
            if key in owner_labels:
                selector = selector.with_requirement(Requirement.of(key, "NotIn", [owner_labels[key]]))
        return selector

    def namespace_in_scope(
        self, owner_namespace: str, namespace: str, namespace_labels: Mapping[str, Mapping[str, str]]
    ) -> bool:
        """Empty namespaces + null namespaceSelector = the owner's namespace only."""
        if not self.namespaces and self.namespace_selector is None:
            return namespace == owner_namespace
        if namespace in self.namespaces:
            return True
        labels = dict(namespace_labels.get(namespace, {}))
        labels.setdefault("kubernetes.io/metadata.name", namespace)
        return selector_matches(self.namespace_selector, labels)


@dataclass(frozen=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True)
class PodAffinity:
    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True)
class HostPort:
    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"

    def conflicts(self, other: HostPort) -> bool:
        if self.port != other.port or self.protocol != other.protocol:
            return False
        wildcard = ("0.0.0.0", "", "::")
        return self.host_ip in wildcard or other.host_ip in wildcard or self.host_ip == other.host_ip


@dataclass(frozen=True)
class FargateTraits:
    """What Fargate looks at besides requests: features it refuses, as (field path, reason) pairs."""

    refusals: tuple[tuple[str, str], ...] = ()
    # True when some container's limit is above its request (Fargate sizes from requests; worth a warning).
    limit_exceeds_requests: bool = False


@dataclass(frozen=True)
class PodTemplate:
    """Everything about a pod that affects where it can run."""

    namespace: str
    labels: Mapping[str, str]
    requests: Resources  # effective requests, `pods: 1` included
    affinity: NodeAffinity = NodeAffinity()
    tolerations: tuple[Toleration, ...] = ()
    spread: tuple[TopologySpreadConstraint, ...] = ()
    pod_affinity: PodAffinity = PodAffinity()
    pod_anti_affinity: PodAffinity = PodAffinity()
    host_ports: tuple[HostPort, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    runtime_class: str | None = None
    priority: int = 0
    fargate: FargateTraits = FargateTraits()
    origin: Origin = field(default=UNKNOWN, compare=False)
    volumes: VolumeZones = VolumeZones()  # the zones its volumes allow (model/volume_zones.py)
    unrequested: tuple[str, ...] = ()  # containers with no CPU and no memory request (counted as zero)
    # a service mesh's proxy its webhook injects at admission (model/mesh_sidecars.py), in `requests` already
    injected: InjectedSidecar | None = field(default=None, compare=False)
    # what the VPC resource controller's webhook adds (pod-eni, PrivateIPv4Address), in `requests` already
    vpc_injected: tuple[str, ...] = field(default=(), compare=False)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    @property
    def hard_spread(self) -> tuple[TopologySpreadConstraint, ...]:
        return tuple(c for c in self.spread if c.hard)


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str
    workload: str  # "<Kind>/<name>", "Pod/<name>" for bare pods
    template: PodTemplate
    node_name: str | None = None  # bound when set
    gated: bool = False
    terminating: bool = False
    terminal: bool = False  # phase Succeeded/Failed
    owner: str | None = None  # controlling owner "<Kind>/<name>" from ownerReferences (e.g. "DaemonSet/x")
    origin: Origin = field(default=UNKNOWN, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def labels(self) -> Mapping[str, str]:
        return self.template.labels

    @property
    def requests(self) -> Resources:
        return self.template.requests

    @property
    def bound(self) -> bool:
        return self.node_name is not None

    @property
    def counts_for_topology(self) -> bool:
        """Bound, not terminating, not finished: counted by spread and affinity."""
        return self.bound and not self.terminating and not self.terminal

    @property
    def occupies_resources(self) -> bool:
        """Bound and not finished (terminating pods still hold their requests)."""
        return self.bound and not self.terminal


@dataclass(frozen=True)
class PodGroup:
    """Pending replicas sharing one template, in replica order."""

    workload: str
    template: PodTemplate
    pods: tuple[Pod, ...]

    @property
    def size(self) -> int:
        return len(self.pods)


def group_pods(pods: Iterable[Pod]) -> list[PodGroup]:
    """Pods grouped by shared template (replicas of one workload), groups and pods in input order."""
    groups: dict[int, list[Pod]] = {}
    for pod in pods:
        groups.setdefault(id(pod.template), []).append(pod)
    return [PodGroup(members[0].workload, members[0].template, tuple(members)) for members in groups.values()]


@dataclass(frozen=True)
class DaemonSet:
    name: str
    namespace: str
    template: PodTemplate
    origin: Origin = field(default=UNKNOWN, compare=False)
