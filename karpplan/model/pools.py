"""Karpenter NodePools (v1, v1beta1), v1alpha5 Provisioners, EKS Auto Mode pools, and node classes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.requirements import Requirements
from karpplan.model.resources import Resources
from karpplan.model.taints import Taint


@dataclass(frozen=True)
class KubeletConfig:
    """The kubelet settings that change a node's pod capacity and allocatable."""

    max_pods: int | None = None
    pods_per_core: int | None = None
    kube_reserved: Resources | None = None
    system_reserved: Resources | None = None
    # evictionHard signal -> raw value ("100Mi" or "10%"), e.g. {"memory.available": "5%"}
    eviction_hard: Mapping[str, str] | None = None

    def merged(self, other: KubeletConfig | None) -> KubeletConfig:
        """Fields set on `other` win."""
        if other is None:
            return self
        return KubeletConfig(
            max_pods=other.max_pods if other.max_pods is not None else self.max_pods,
            pods_per_core=other.pods_per_core if other.pods_per_core is not None else self.pods_per_core,
            kube_reserved=other.kube_reserved if other.kube_reserved is not None else self.kube_reserved,
            system_reserved=other.system_reserved if other.system_reserved is not None else self.system_reserved,
            eviction_hard=other.eviction_hard if other.eviction_hard is not None else self.eviction_hard,
        )


@dataclass(frozen=True)
class NodeClassRef:
    group: str
    kind: str
    name: str


@dataclass(frozen=True)
class BlockDevice:
    """One `blockDeviceMappings` entry: what Karpenter reads of it to size a node's ephemeral-storage."""

    device_name: str | None
    volume_bytes: int | None  # ebs.volumeSize; None when not given
    root_volume: bool = False


@dataclass(frozen=True)
class NodeStorage:
    """The NodeClass fields that decide a node's ephemeral-storage capacity."""

    block_devices: tuple[BlockDevice, ...] = ()
    instance_store_raid0: bool = False  # instanceStorePolicy: RAID0 (local NVMe disks hold pod storage)


AUTO_MODE_EPHEMERAL_GIB = 80  # an EKS Auto Mode NodeClass's default ephemeralStorage.size


def auto_mode_storage(size_bytes: int | None = None) -> NodeStorage:
    """An EKS Auto Mode node's storage: one volume of `ephemeralStorage.size` (default 80Gi) holds pod storage."""
    return NodeStorage((BlockDevice(None, size_bytes or AUTO_MODE_EPHEMERAL_GIB * 2**30, root_volume=True),))


@dataclass(frozen=True)
class NodeClass:
    """EC2NodeClass, v1alpha1 AWSNodeTemplate, or EKS Auto Mode NodeClass."""

    name: str
    kind: str
    ami_family: str | None = None
    kubelet: KubeletConfig | None = None
    storage: NodeStorage = NodeStorage()
    origin: Origin = field(default=UNKNOWN, compare=False)
    zones: tuple[str, ...] = ()  # status.subnets[].zone: the zones its subnets are in, when the input says


@dataclass(frozen=True)
class NodePool:
    """A pool of launchable nodes, normalised across API versions.

    `requirements` already include the template labels (as `In [value]`) and, for Provisioners, the
    v0.27 webhook defaults. `limits` are in karpplan's integer units; `node_limit` is `limits.nodes`.
    """

    name: str
    kind: str  # "NodePool" | "Provisioner"
    api_version: str
    requirements: Requirements
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    limits: Resources | None = None
    node_limit: int | None = None
    weight: int = 0
    node_class_ref: NodeClassRef | None = None
    kubelet: KubeletConfig | None = None  # v1beta1 template kubelet / v1alpha5 kubeletConfiguration
    auto_mode: bool = False
    replicas: int | None = None  # a static NodePool (spec.replicas): Karpenter never provisions it for pods
    origin: Origin = field(default=UNKNOWN, compare=False)
    # Why Karpenter launches nothing from it ("" when it does): being deleted, or its status Ready condition not
    # True (`provisioner.go` NewScheduler lists only ready NodePools without a deletionTimestamp).
    not_ready: str = ""

    @property
    def static(self) -> bool:
        return self.replicas is not None

    @property
    def pool_label_key(self) -> str:
        return "karpenter.sh/provisioner-name" if self.kind == "Provisioner" else "karpenter.sh/nodepool"


def order_by_weight(pools: list[NodePool]) -> list[NodePool]:
    """Karpenter's OrderByWeight: weight descending, ties by name descending."""
    return sorted(pools, key=lambda p: (p.weight, p.name), reverse=True)


def api_mix_note(pools: list[NodePool]) -> tuple[Origin, str] | None:
    """Provisioners (karpenter.sh/v1alpha5) beside NodePools: no Karpenter version serves both (v0.33 dropped
    v1alpha5, and v1alpha5 releases know no NodePool), yet both are planned as pools, their limits side by side.
    The note names both and the names they share (a migration repo holding old and new of one pool)."""
    old = [p for p in pools if p.kind == "Provisioner"]
    new = [p for p in pools if p.kind == "NodePool" and not p.auto_mode]
    if not old or not new:
        return None
    shared = sorted({p.name for p in old} & {p.name for p in new})
    both = f"; {', '.join(shared)} {'is' if len(shared) == 1 else 'are'} defined both ways" if shared else ""
    return old[0].origin, (
        f"the input holds karpenter.sh/v1alpha5 Provisioners ({', '.join(p.name for p in old)}) and karpenter.sh "
        f"NodePools ({', '.join(p.name for p in new)}){both}: no Karpenter version serves both (v0.33 dropped "
        "v1alpha5), but both are planned here as pools, each with its own limits; plan the ones the cluster will run "
        "(the old or the new directory)")
