"""From EC2 facts to a node's capacity and allocatable, exactly as Karpenter predicts them.

The formulas follow Karpenter's AWS provider (`pkg/providers/instancetype/types.go`) and are documented,
with worked examples, in `shared/data/kubelet-reserved.md`:

    capacity.memory = MiB − 64 (arm64) − ceil(that × 0.075)          (VM overhead estimate)
    capacity.pods   = maxPods | ENI-limited pods | 110, then min(podsPerCore × vCPU, ·)
    allocatable     = capacity − kubeReserved − systemReserved − evictionHard

Floating-point steps are kept as Karpenter computes them (IEEE doubles, truncation by `int64(...)`,
`math.Ceil`) so the results agree bit for bit, not just "within rounding".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from karpplan.catalog.types import InstanceShape
from karpplan.model.pools import KubeletConfig, NodeStorage
from karpplan.model.quantity import QuantityError, parse_quantity
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, PODS, Resources

MIB = 2**20
GIB = 2**30
VM_MEMORY_OVERHEAD_PERCENT = 0.075  # Karpenter's --vm-memory-overhead-percent default
GRAVITON_CMA_MIB = 64  # "extra 64 MiB of cma reserved memory" on arm64
EVICTION_MEMORY_BYTES = 100 * MIB  # evictionHard memory.available default
EVICTION_NODEFS_PERCENT = 10.0  # evictionHard nodefs.available default
KUBE_RESERVED_EPHEMERAL_BYTES = 1 * GIB
DEFAULT_ROOT_VOLUME_GIB = 20  # Karpenter's DefaultEBS volume size (AL2, AL2023, Bottlerocket data volume)
WINDOWS_ROOT_VOLUME_GIB = 50
NON_ENI_MAX_PODS = 110  # kubelet default; used where the AMI family has no ENI-limited pod density

MEMORY_AVAILABLE = "memory.available"
NODEFS_AVAILABLE = "nodefs.available"

# Core resources the formula owns; every other capacity entry (GPUs, pod-eni, ...) passes through.
CORE_RESOURCES = frozenset({CPU, MEMORY, PODS, EPHEMERAL})


@dataclass(frozen=True)
class AmiFamilyFlags:
    """Karpenter's per-AMI-family FeatureFlags that change capacity and overhead."""

    name: str
    eni_limited_pod_density: bool  # SupportsENILimitedPodDensity
    eni_limited_memory_overhead: bool  # UsesENILimitedMemoryOverhead
    pods_per_core: bool  # PodsPerCoreEnabled
    root_volume_gib: int = DEFAULT_ROOT_VOLUME_GIB
    # EphemeralBlockDevice(): the device whose size is the node's ephemeral-storage (None for Custom AMIs).
    ephemeral_device: str | None = "/dev/xvda"


AL2023 = AmiFamilyFlags("AL2023", True, True, True)
_FAMILIES: dict[str, AmiFamilyFlags] = {
    "al2": AmiFamilyFlags("AL2", True, True, True),
    "al2023": AL2023,
    "custom": AmiFamilyFlags("Custom", True, True, True, ephemeral_device=None),
    "bottlerocket": AmiFamilyFlags("Bottlerocket", True, False, False, ephemeral_device="/dev/xvdb"),
    "windows2019": AmiFamilyFlags("Windows2019", False, False, True, WINDOWS_ROOT_VOLUME_GIB, "/dev/sda1"),
    "windows2022": AmiFamilyFlags("Windows2022", False, False, True, WINDOWS_ROOT_VOLUME_GIB, "/dev/sda1"),
    "windows2025": AmiFamilyFlags("Windows2025", False, False, True, WINDOWS_ROOT_VOLUME_GIB, "/dev/sda1"),
}
KNOWN_AMI_FAMILIES = tuple(f.name for f in _FAMILIES.values())


def ami_family_flags(ami_family: str | None) -> AmiFamilyFlags:
    """The flags of an AMI family name (case-insensitive); None or unknown names behave like AL2023.

    Karpenter v1 resolves `amiSelectorTerms: [{alias: al2023@latest}]` to AL2023; an unrecognised family
    is treated as AL2023 because that is what Karpenter's docs figures assume.
    """
    if not ami_family:
        return AL2023
    base = ami_family.split("@", 1)[0].strip().lower()
    return _FAMILIES.get(base, AL2023)


def is_windows(ami_family: str | None) -> bool:
    return ami_family_flags(ami_family).name.startswith("Windows")


# ------------------------------------------------------------------------------------------ pieces
def cpu_reserved_millis(cpu_millis: int) -> int:
    """kube-reserved CPU: 6% of the 1st core, 1% of the 2nd, 0.5% of cores 3–4, 0.25% above 4.

    Each tier is truncated to whole millicores separately, as `int64(r*pct)` does.
    """
    total = 0
    for start, end, percentage in (
        (0, 1000, 0.06),
        (1000, 2000, 0.01),
        (2000, 4000, 0.005),
        (4000, 1 << 31, 0.0025),
    ):
        if cpu_millis >= start:
            span = float(end - start) if cpu_millis >= end else float(cpu_millis - start)
            total += int(span * percentage)
    return total


def capacity_memory_mib(
    memory_mib: int, arch: str, vm_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT
) -> int:
    """Node memory capacity in MiB: EC2 MiB, minus 64 MiB CMA on arm64, minus the VM overhead estimate."""
    mib = memory_mib - (GRAVITON_CMA_MIB if arch == "arm64" else 0)
    overhead = math.ceil(float(mib * MIB) * vm_overhead_percent / 1024 / 1024)
    return mib - overhead


def eni_limited_pods(max_enis: int, ipv4_per_eni: int, reserved_enis: int = 0) -> int:
    """`ENIs × (IPv4 per ENI − 1) + 2` for the default network card (the eni-max-pods.txt formula)."""
    enis = max(max_enis - reserved_enis, 0)
    return max(enis * (ipv4_per_eni - 1) + 2, 0) if enis else 0


def max_pods(vcpu: int, eni_pods: int, kubelet: KubeletConfig | None, flags: AmiFamilyFlags) -> int:
    """Karpenter's `pods()`: maxPods, else ENI-limited (or 110), then the podsPerCore cap."""
    if kubelet is not None and kubelet.max_pods is not None:
        count = kubelet.max_pods
    elif flags.eni_limited_pod_density:
        count = eni_pods
    else:
        count = NON_ENI_MAX_PODS
    if kubelet is not None and kubelet.pods_per_core and kubelet.pods_per_core > 0 and flags.pods_per_core:
        count = min(kubelet.pods_per_core * vcpu, count)
    return count


def kube_reserved(cpu_millis: int, pods: int, overrides: Resources | None = None) -> Resources:
    """Default kube-reserved (CPU ladder, `11 × pods + 255` MiB, 1Gi ephemeral), overridden key by key."""
    reserved = {
        CPU: cpu_reserved_millis(cpu_millis),
        MEMORY: (11 * pods + 255) * MIB,
        EPHEMERAL: KUBE_RESERVED_EPHEMERAL_BYTES,
    }
    if overrides:
        reserved.update(overrides.as_dict())
    return Resources(reserved)


def eviction_signal(capacity: int, value: str) -> int:
    """A hard-eviction threshold in base units: a percentage of capacity (rounded up) or a quantity."""
    text = value.strip()
    if text.endswith("%"):
        percent = float(text[:-1])
        if not 0.0 <= percent <= 100.0:
            raise ValueError(f"eviction threshold {value!r} is not a percentage between 0% and 100%")
        return math.ceil(float(capacity) / 100 * percent)
    return parse_quantity(text).value()


def eviction_threshold(
    memory_bytes: int, ephemeral_bytes: int, eviction_hard: Mapping[str, str] | None
) -> Resources:
    """100Mi memory and 10% nodefs by default; `evictionHard` signals replace them one by one."""
    threshold = {
        MEMORY: EVICTION_MEMORY_BYTES,
        EPHEMERAL: math.ceil(float(ephemeral_bytes) / 100 * EVICTION_NODEFS_PERCENT),
    }
    if eviction_hard:
        if MEMORY_AVAILABLE in eviction_hard:
            threshold[MEMORY] = eviction_signal(memory_bytes, eviction_hard[MEMORY_AVAILABLE])
        if NODEFS_AVAILABLE in eviction_hard:
            threshold[EPHEMERAL] = eviction_signal(ephemeral_bytes, eviction_hard[NODEFS_AVAILABLE])
    return Resources(threshold)


def validate_kubelet(kubelet: KubeletConfig | None) -> list[str]:
    """Problems with kubelet settings this module would otherwise trip over (empty when fine)."""
    problems: list[str] = []
    if kubelet is None:
        return problems
    if kubelet.max_pods is not None and kubelet.max_pods < 0:
        problems.append(f"maxPods must not be negative, got {kubelet.max_pods}")
    if kubelet.pods_per_core is not None and kubelet.pods_per_core < 0:
        problems.append(f"podsPerCore must not be negative, got {kubelet.pods_per_core}")
    for signal, value in (kubelet.eviction_hard or {}).items():
        if signal not in (MEMORY_AVAILABLE, NODEFS_AVAILABLE):
            continue
        try:
            eviction_signal(0, value)
        except (ValueError, QuantityError) as exc:
            problems.append(f"evictionHard {signal}: {exc}")
    return problems


# ------------------------------------------------------------------------------------------ whole
@dataclass(frozen=True)
class NodeResources:
    capacity: Resources
    allocatable: Resources
    overhead: Resources  # kubeReserved + systemReserved + eviction threshold


def ephemeral_storage_bytes(shape: InstanceShape, flags: AmiFamilyFlags, storage: NodeStorage | None) -> int:
    """The node's ephemeral-storage capacity, as Karpenter's `ephemeralStorage()` computes it.

    `instanceStorePolicy: RAID0` on a type with local disks: their total size (decimal GB). Else a
    `blockDeviceMappings` entry marked `rootVolume`, else (Custom AMIs) the last mapping, else the mapping
    of the AMI family's ephemeral device (/dev/xvda, Bottlerocket's /dev/xvdb, Windows' /dev/sda1), when
    it gives a size. Otherwise the family's default volume (20Gi; Windows 50Gi).
    """
    if storage is not None:
        if storage.instance_store_raid0 and shape.local_storage_gb > 0:
            return shape.local_storage_gb * 10**9
        devices = storage.block_devices
        if devices:
            root = next((d for d in devices if d.root_volume), None)
            if root is not None and root.volume_bytes is not None:
                return root.volume_bytes
            if flags.ephemeral_device is None:
                last = devices[-1].volume_bytes
                return last if last is not None else DEFAULT_ROOT_VOLUME_GIB * GIB
            named = next((d for d in devices if d.device_name == flags.ephemeral_device), None)
            if named is not None and named.volume_bytes is not None:
                return named.volume_bytes
    # Windows AMIs default to a 50Gi root volume; the others to the 20Gi the shape records.
    root_gib = flags.root_volume_gib if flags.root_volume_gib != DEFAULT_ROOT_VOLUME_GIB else shape.ephemeral_gib
    return root_gib * GIB


def compute(
    shape: InstanceShape,
    kubelet: KubeletConfig | None = None,
    ami_family: str | None = None,
    extended: Mapping[str, int] | None = None,
    storage: NodeStorage | None = None,
) -> NodeResources:
    """Capacity and allocatable of an EC2 instance type, as Karpenter predicts them.

    `extended` resources (nvidia.com/gpu, vpc.amazonaws.com/pod-eni, ...) are added to capacity and pass
    through to allocatable untouched, as in Karpenter (`Allocatable() = Capacity − Overhead`).
    """
    flags = ami_family_flags(ami_family)
    cpu_millis = shape.vcpu * 1000
    memory_bytes = capacity_memory_mib(shape.memory_mib, shape.arch) * MIB
    ephemeral_bytes = ephemeral_storage_bytes(shape, flags, storage)
    pods = max_pods(shape.vcpu, shape.eni_pods, kubelet, flags)
    capacity = Resources(
        {CPU: cpu_millis, MEMORY: memory_bytes, EPHEMERAL: ephemeral_bytes, PODS: pods, **(extended or {})}
    )
    # AL2/AL2023/Custom size kube-reserved memory by the ENI-limited count even when maxPods is set.
    reserved_pods = shape.eni_pods if flags.eni_limited_memory_overhead else pods
    overhead = (
        kube_reserved(cpu_millis, reserved_pods, kubelet.kube_reserved if kubelet else None)
        + (kubelet.system_reserved if kubelet and kubelet.system_reserved else Resources())
        + eviction_threshold(memory_bytes, ephemeral_bytes, kubelet.eviction_hard if kubelet else None)
    )
    return NodeResources(capacity, subtract_overhead(capacity, overhead), overhead)


def derive_from_capacity(capacity: Resources, kubelet: KubeletConfig | None = None) -> NodeResources:
    """Allocatable for a node whose capacity is known but whose EC2 facts are not (user catalogs).

    The capacity is taken as the node reports it (VM overhead already gone). Without ENI figures the
    pod capacity doubles as the max-pods count for kube-reserved memory; kubelet `maxPods` and
    `podsPerCore` change the pod capacity as they would on the node.
    """
    cpu_millis = capacity.get(CPU)
    pods = capacity.get(PODS) or NON_ENI_MAX_PODS
    if kubelet is not None and kubelet.max_pods is not None:
        pods = kubelet.max_pods
    if kubelet is not None and kubelet.pods_per_core and kubelet.pods_per_core > 0 and cpu_millis:
        pods = min(kubelet.pods_per_core * math.ceil(cpu_millis / 1000), pods)
    capacity = Resources({**capacity.as_dict(), PODS: pods})
    overhead = (
        kube_reserved(cpu_millis, pods, kubelet.kube_reserved if kubelet else None)
        + (kubelet.system_reserved if kubelet and kubelet.system_reserved else Resources())
        + eviction_threshold(
            capacity.get(MEMORY), capacity.get(EPHEMERAL), kubelet.eviction_hard if kubelet else None
        )
    )
    return NodeResources(capacity, subtract_overhead(capacity, overhead), overhead)


def subtract_overhead(capacity: Resources, overhead: Resources) -> Resources:
    """capacity − overhead, never below zero, and only for resources the node has.

    Overhead on a resource the node lacks (no ephemeral-storage in a user catalog) is not a debt.
    """
    return Resources({k: max(v - overhead.get(k), 0) for k, v in capacity.items()})
