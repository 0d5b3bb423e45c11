"""What no node of a NodePool can give a pod, and where the fix is: a resource none of its types offers (a GPU,
huge pages), or more ephemeral-storage than its node class's volume gives any node.

Karpenter's instance types carry the extended resources their hardware has (GPUs, Neuron devices, EFA,
`vpc.amazonaws.com/pod-eni`) and never huge pages: only a NodeOverlay's `capacity` (karpenter.sh/v1alpha1,
Karpenter v1.7+) gives a type some. A node's ephemeral-storage is its node class's volume, not its instance
type's (aws/karpenter-provider-aws pkg/providers/instancetype/types.go `ephemeralStorage`): the mapping marked
`rootVolume`, else the AMI family's device (`/dev/xvda`; Bottlerocket's data volume `/dev/xvdb`; Windows'
`/dev/sda1`), else its default size (20Gi; Windows 50Gi), or the local NVMe disks with `instanceStorePolicy:
RAID0`; kube-reserved (1Gi) and the `nodefs.available` eviction threshold (10%) come off it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from karpplan.catalog.allocatable import (
    GIB,
    KUBE_RESERVED_EPHEMERAL_BYTES,
    AmiFamilyFlags,
    ami_family_flags,
    eviction_threshold,
)
from karpplan.model.pools import AUTO_MODE_EPHEMERAL_GIB, KubeletConfig, NodeClass, NodePool, NodeStorage
from karpplan.model.quantity import format_resource
from karpplan.model.requirements import Requirement
from karpplan.model.resources import EPHEMERAL

HUGEPAGES_PREFIX = "hugepages-"


def offered_nowhere(requests: Iterable[str], free: Sequence[Mapping[str, int]]) -> str:
    """The hint for resources the pod asks for that no instance type the pool allows has at all ("" if none)."""
    wanted = sorted(requests)
    absent = [r for r in wanted if "/" in r and not any(f.get(r) for f in free)]
    pages = [r for r in wanted if r.startswith(HUGEPAGES_PREFIX) and not any(f.get(r) for f in free)]
    hint = ""
    if absent:
        hint += (f"; no instance type this NodePool allows offers {', '.join(absent)}: widen its "
                 "requirements (instance-category, instance-family) to types that have it")
    if pages:
        hint += (f"; no instance type this NodePool allows offers {', '.join(pages)}: Karpenter knows huge pages "
                 "only from a NodeOverlay (karpenter.sh/v1alpha1, Karpenter v1.7+) whose capacity names them for "
                 "the pool's types, and the nodes must pre-allocate as many (kubelet or node class user data)")
    return hint


def _deciding_volume(flags: AmiFamilyFlags, storage: NodeStorage) -> tuple[str, int | None]:
    """The block device whose size is the node's ephemeral-storage, and its size in bytes (None: the default)."""
    devices = storage.block_devices
    root = next((d for d in devices if d.root_volume), None)
    if root is not None and root.volume_bytes is not None:
        return root.device_name or "the rootVolume mapping", root.volume_bytes
    if devices and flags.ephemeral_device is None:
        return devices[-1].device_name or "the last mapping", devices[-1].volume_bytes
    device = flags.ephemeral_device or "/dev/xvda"
    named = next((d for d in devices if d.device_name == device), None)
    return device, named.volume_bytes if named is not None else None


def volume_needed(request: int, daemons: int, kubelet: KubeletConfig | None) -> int:
    """The smallest volume, in whole GiB, whose node leaves `request` bytes of ephemeral-storage for one pod
    beside its DaemonSets' `daemons` (kube-reserved and the nodefs eviction threshold taken off as Karpenter does)."""
    reserved = KUBE_RESERVED_EPHEMERAL_BYTES
    if kubelet is not None and kubelet.kube_reserved is not None and EPHEMERAL in kubelet.kube_reserved:
        reserved = kubelet.kube_reserved.get(EPHEMERAL)
    if kubelet is not None and kubelet.system_reserved is not None:
        reserved += kubelet.system_reserved.get(EPHEMERAL)
    size = max(math.ceil((request + daemons + reserved) / GIB), 1)
    hard = kubelet.eviction_hard if kubelet is not None else None
    while size * GIB - reserved - eviction_threshold(0, size * GIB, hard).get(EPHEMERAL) < request + daemons:
        size += 1
    return size


def ephemeral_storage_note(request: int, pool: NodePool, node_class: NodeClass | None,
                           free: Sequence[tuple[int, int]]) -> str:
    """Why no node of the pool has room for the pod's ephemeral-storage, and the node class setting to change
    ("" when some node has room). `free` holds, per launch option of the pool, (ephemeral-storage free for pods,
    its DaemonSets' ephemeral-storage)."""
    if not free or any(room >= request for room, _ in free):
        return ""
    most, daemons = max(free)
    flags = ami_family_flags(node_class.ami_family if node_class is not None else None)
    storage = node_class.storage if node_class is not None else NodeStorage()
    kubelet = node_class.kubelet.merged(pool.kubelet) if node_class and node_class.kubelet else pool.kubelet
    head = (f"; no node of this NodePool has {format_resource(EPHEMERAL, request)} of ephemeral-storage for the pod "
            f"(at most {format_resource(EPHEMERAL, most)} free)")
    if pool.auto_mode:
        return head + _auto_mode_note(request, daemons, kubelet, node_class)
    if storage.instance_store_raid0:
        return (head + ": with instanceStorePolicy: RAID0 a node's ephemeral-storage is its instance type's local "
                "NVMe disks: allow types with more of it (karpenter.k8s.aws/instance-local-nvme, in GB)")
    device, size = _deciding_volume(flags, storage)
    default_gib = flags.root_volume_gib
    if node_class is None:
        source = f"the node class is not in the input, so the {default_gib}Gi volume Karpenter gives by default is assumed"
        where = "its EC2NodeClass"
    else:
        where = f'EC2NodeClass "{node_class.name}" ({node_class.origin})'
        source = (f"a node's ephemeral-storage is the {format_resource(EPHEMERAL, size)} {device} volume of {where}"
                  if size is not None else
                  f"{where} gives {device} no volumeSize, so it is the {default_gib}Gi {flags.name} default")
    need = volume_needed(request, daemons, kubelet)
    return (f"{head}: {source}; set blockDeviceMappings {device} ebs.volumeSize to {need}Gi or more, or use "
            "instanceStorePolicy: RAID0 on types with local NVMe disks")


def _auto_mode_note(request: int, daemons: int, kubelet: KubeletConfig | None, node_class: NodeClass | None) -> str:
    """An EKS Auto Mode node's ephemeral-storage is its NodeClass's `ephemeralStorage.size` volume."""
    need = volume_needed(request, daemons, kubelet)
    if node_class is None:
        return (f": an EKS Auto Mode node's ephemeral-storage is its NodeClass's ephemeralStorage.size, "
                f"{AUTO_MODE_EPHEMERAL_GIB}Gi by default (the node class is not in the input); point the NodePool at "
                f"a NodeClass with spec.ephemeralStorage.size {need}Gi or more")
    size = node_class.storage.block_devices[0].volume_bytes if node_class.storage.block_devices else None
    return (f": a node's ephemeral-storage is the {format_resource(EPHEMERAL, size or 0)} ephemeralStorage.size of "
            f'NodeClass "{node_class.name}" ({node_class.origin}); set spec.ephemeralStorage.size to {need}Gi or more')


def os_nowhere(required: Requirement | None, offered_os: Iterable[str]) -> str:
    """The hint for a pod whose `kubernetes.io/os` requirement no node of the pool meets ("" otherwise): an
    EC2NodeClass's AMI family decides the OS of every node it launches (Bottlerocket, AL2023: Linux; the Windows
    aliases: Windows), so the pool's requirements cannot widen it (`required`: the pod's Requirement on the key)."""
    systems = sorted(set(offered_os))
    if required is None or not systems or any(required.has(os) for os in systems):
        return ""
    wanted = "Windows" if required.has("windows") else "Linux"
    alias = "windows2022@latest" if wanted == "Windows" else "al2023@latest or bottlerocket@latest"
    return (f"; this NodePool's node class launches {', '.join(systems)} nodes only (its AMI family decides the OS) "
            f"and the pod requires {wanted}: give it a NodePool whose EC2NodeClass uses a {wanted} AMI "
            f"(amiSelectorTerms alias {alias})")
