"""EKS Fargate: what a pod spec asks for that Fargate refuses, pod sizing, prices, profile matching.

Facts and rules come from `shared/data/fargate.md` (EKS User Guide plus the `fargate-scheduler`'s own
rejection messages seen in public issues). Everything here is pure: raw pod specs in, plain values out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from karpplan.model.cluster import FargateProfile, FargateSelector
from karpplan.model.fargate_prices import FargatePrice, fargate_rate
from karpplan.model.labels import ARCH, COMPUTE_TYPE, FARGATE_PROFILE, HOSTNAME, OS, REGION, ZONE
from karpplan.model.pods import FargateTraits
from karpplan.model.quantity import QuantityError, format_bytes, parse_quantity
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, Resources, amount_of
from karpplan.model.taints import NO_SCHEDULE, Taint

# --------------------------------------------------------------------------------------------- traits
# Fargate runs Linux on x86 only (doc comparison table: no Arm, no Windows).
FARGATE_ARCH = "amd64"
FARGATE_OS = "linux"
_ARCH_KEYS = (ARCH, "beta.kubernetes.io/arch")
_OS_KEYS = (OS, "beta.kubernetes.io/os")

# Accelerators get a reason that says what they are; any other extended resource is refused generically
# because Fargate nodes run no device plugins.
_ACCELERATOR_PREFIXES: tuple[tuple[str, str], ...] = (
    ("nvidia.com/", "GPUs aren't available on Fargate"),
    ("amd.com/", "GPUs aren't available on Fargate"),
    ("gpu.intel.com/", "GPUs aren't available on Fargate"),
    ("aws.amazon.com/neuron", "Inferentia and Trainium (Neuron) devices aren't available on Fargate"),
    ("habana.ai/", "Gaudi accelerators aren't available on Fargate"),
)
_STANDARD_CONTAINER_RESOURCES = frozenset({CPU, MEMORY, EPHEMERAL})

# Volume sources the fargate-scheduler refuses. hostPath and inline CSI are in observed rejection
# messages; EBS can't be mounted and nothing is provisioned dynamically (doc), which rules out inline
# awsElasticBlockStore and generic ephemeral volumes; flexVolume needs a driver binary on the host.
_UNSUPPORTED_VOLUME_SOURCES = ("hostPath", "csi", "ephemeral", "awsElasticBlockStore", "flexVolume")

# The one capability a Fargate pod may add (SYS_PTRACE, as AWS documents for Fargate tasks); fargate-scheduler
# refuses others ("invalid SecurityContext fields: Capabilities added: CAP_CHOWN", "... NET_ADMIN", public threads).
_FARGATE_CAPABILITIES = frozenset({"SYS_PTRACE"})
_HOST_NAMESPACE_FIELDS = (("hostNetwork", "HostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC"))


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _quantity_amount(name: str, raw: object) -> int | None:
    """The integer amount of a quantity, or None when it is malformed (the builder reports those)."""
    try:
        return amount_of(name, parse_quantity(raw))
    except QuantityError:
        return None


def _containers(pod_spec: Mapping[str, Any], spec_path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for kind in ("initContainers", "containers"):
        for index, container in enumerate(_list(pod_spec.get(kind))):
            if isinstance(container, Mapping):
                yield f"{spec_path}.{kind}[{index}]", container


def _resource_refusal(name: str) -> str | None:
    if name in _STANDARD_CONTAINER_RESOURCES:
        return None
    for prefix, reason in _ACCELERATOR_PREFIXES:
        if name.startswith(prefix):
            return f"{reason}: {name}"
    if name.startswith("hugepages-"):
        return f"Fargate nodes offer no huge pages: {name}"
    return f"Fargate nodes offer no extended resources: {name}"


def _container_refusals(path: str, container: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    security = _mapping(container.get("securityContext"))
    if security.get("privileged") is True:
        yield f"{path}.securityContext.privileged", "invalid SecurityContext fields: Privileged"
    added = [c for c in _list(_mapping(security.get("capabilities")).get("add")) if isinstance(c, str)
             and c.upper().removeprefix("CAP_") not in _FARGATE_CAPABILITIES]
    if added:
        yield (f"{path}.securityContext.capabilities.add",
               f"invalid SecurityContext fields: Capabilities added: {', '.join(added)}")
    for port_index, port in enumerate(_list(container.get("ports"))):
        port = _mapping(port)
        for field_name in ("hostPort", "hostIP"):
            if port.get(field_name) not in (None, 0, ""):
                yield f"{path}.ports[{port_index}].{field_name}", "port contains HostIP or HostPort"
    resources = _mapping(container.get("resources"))
    seen: set[str] = set()
    for section in ("requests", "limits"):
        for name, raw in _mapping(resources.get(section)).items():
            if not isinstance(name, str) or name in seen:
                continue
            reason = _resource_refusal(name)
            amount = _quantity_amount(name, raw)
            if reason is not None and amount is not None and amount > 0:
                seen.add(name)
                yield f"{path}.resources.{section}[{name}]", reason


def _limit_exceeds_request(container: Mapping[str, Any]) -> bool:
    resources = _mapping(container.get("resources"))
    requests, limits = _mapping(resources.get("requests")), _mapping(resources.get("limits"))
    for name in (CPU, MEMORY):
        if name not in limits:
            continue
        limit = _quantity_amount(name, limits[name])
        # A missing request defaults to the limit (API defaulting), so only an explicit lower one counts.
        request = _quantity_amount(name, requests[name]) if name in requests else limit
        if limit is not None and request is not None and limit > request:
            return True
    return False


def _admits_fargate_node(expression: Mapping[str, Any]) -> bool:
    """Whether one nodeSelectorRequirement on an arch/os key admits a linux/amd64 Fargate node."""
    key = expression.get("key")
    value = FARGATE_ARCH if key in _ARCH_KEYS else FARGATE_OS
    operator = expression.get("operator")
    values = [v for v in _list(expression.get("values")) if isinstance(v, str)]
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    # DoesNotExist fails (Fargate nodes carry the label); Gt/Lt can't parse "amd64"/"linux" as integers.
    return operator == "Exists"


def _term_excludes_fargate(term: Mapping[str, Any]) -> str | None:
    """The arch/os key a required nodeSelectorTerm rules Fargate out on, if any (other keys aren't judged)."""
    for expression in _list(term.get("matchExpressions")):
        expression = _mapping(expression)
        key = expression.get("key")
        if key in _ARCH_KEYS + _OS_KEYS and not _admits_fargate_node(expression):
            return str(key)
    return None


def _placement_refusals(pod_spec: Mapping[str, Any], spec_path: str) -> Iterator[tuple[str, str]]:
    node_selector = _mapping(pod_spec.get("nodeSelector"))
    for key in _ARCH_KEYS:
        value = node_selector.get(key)
        if isinstance(value, str) and value != FARGATE_ARCH:
            yield (
                f"{spec_path}.nodeSelector[{key}]",
                f"EKS Fargate runs only {FARGATE_ARCH} (x86) pods, not {value}",
            )
    for key in _OS_KEYS:
        value = node_selector.get(key)
        if isinstance(value, str) and value != FARGATE_OS:
            yield f"{spec_path}.nodeSelector[{key}]", f"EKS Fargate runs only Linux pods, not {value}"
    pod_os = _mapping(pod_spec.get("os")).get("name")
    if isinstance(pod_os, str) and pod_os != FARGATE_OS:
        yield f"{spec_path}.os.name", f"EKS Fargate runs only Linux pods, not {pod_os}"

    required = _mapping(
        _mapping(_mapping(pod_spec.get("affinity")).get("nodeAffinity")).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    )
    terms = [_mapping(t) for t in _list(required.get("nodeSelectorTerms"))]
    if not terms:
        return
    # Terms are ORed: Fargate is ruled out only when every term excludes linux/amd64.
    excluded_on = [_term_excludes_fargate(term) for term in terms]
    if all(key is not None for key in excluded_on):
        keys = sorted({key for key in excluded_on if key is not None})
        yield (
            f"{spec_path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
            f"EKS Fargate runs only linux/{FARGATE_ARCH} pods; required node affinity on {', '.join(keys)} "
            "admits no such node",
        )


def _volume_refusals(pod_spec: Mapping[str, Any], spec_path: str) -> Iterator[tuple[str, str]]:
    for index, volume in enumerate(_list(pod_spec.get("volumes"))):
        volume = _mapping(volume)
        name = volume.get("name") if isinstance(volume.get("name"), str) else f"#{index}"
        for source in _UNSUPPORTED_VOLUME_SOURCES:
            if volume.get(source) is not None:
                yield (
                    f"{spec_path}.volumes[{index}].{source}",
                    f"volumes not supported: {name} is of an unsupported volume Type ({source})",
                )


def fargate_traits(pod_spec: Mapping[str, Any], spec_path: str) -> FargateTraits:
    """What in a raw pod spec keeps the pod off Fargate, as (field path, reason) pairs.

    `spec_path` prefixes every field path ("spec" for a Pod, "spec.template.spec" for a Deployment).
    Odd shapes are skipped, not reported: the manifest builder validates shapes. DaemonSets and unbound
    PVCs are refused by Fargate too, but neither is visible in a pod spec alone.
    """
    if not isinstance(pod_spec, Mapping):
        return FargateTraits()
    refusals: list[tuple[str, str]] = []
    for field_name, go_name in _HOST_NAMESPACE_FIELDS:
        if pod_spec.get(field_name) is True:
            refusals.append((f"{spec_path}.{field_name}", f"fields not supported: {go_name}"))
    limit_exceeds = False
    for path, container in _containers(pod_spec, spec_path):
        refusals.extend(_container_refusals(path, container))
        limit_exceeds = limit_exceeds or _limit_exceeds_request(container)
    refusals.extend(_placement_refusals(pod_spec, spec_path))
    refusals.extend(_volume_refusals(pod_spec, spec_path))
    return FargateTraits(refusals=tuple(refusals), limit_exceeds_requests=limit_exceeds)


# --------------------------------------------------------------------------------------------- sizing
MIB = 2**20
# Memory Fargate adds for the kubelet, kube-proxy and containerd before rounding (doc: "256 MB", read as MiB).
KUBE_COMPONENTS_MEMORY_BYTES = 256 * MIB


def _combinations() -> tuple[tuple[int, int], ...]:
    """The 74 (CPU millicores, memory MiB) pairs of the doc's table, vCPU ascending then memory ascending."""
    gib = 1024
    rows: list[tuple[int, tuple[int, ...]]] = [
        (250, (512, 1 * gib, 2 * gib)),
        (500, tuple(g * gib for g in range(1, 5))),
        (1000, tuple(g * gib for g in range(2, 9))),
        (2000, tuple(g * gib for g in range(4, 17))),
        (4000, tuple(g * gib for g in range(8, 31))),
        (8000, tuple(g * gib for g in range(16, 61, 4))),
        (16000, tuple(g * gib for g in range(32, 121, 8))),
    ]
    return tuple((cpu, memory) for cpu, memories in rows for memory in memories)


FARGATE_COMBINATIONS: tuple[tuple[int, int], ...] = _combinations()


def _decimal_text(numerator: int, denominator: int) -> str:
    """A ratio as a plain decimal with no trailing zeros ("0.25", "0.5", "2"); exact for the table's values."""
    text = f"{Decimal(numerator) / Decimal(denominator):f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass(frozen=True, order=True)
class FargateSize:
    """One row of Fargate's vCPU/memory table: what a pod is provisioned (and billed) as."""

    cpu_millis: int
    memory_mib: int

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB

    @property
    def cpu_text(self) -> str:
        """vCPUs as a plain number ("0.25", "0.5", "2")."""
        return _decimal_text(self.cpu_millis, 1000)

    @property
    def memory_gb_text(self) -> str:
        """Fargate "GB" (GiB) as a plain number ("0.5", "1", "9")."""
        return _decimal_text(self.memory_mib, 1024)

    @property
    def memory_text(self) -> str:
        """Memory as a Kubernetes quantity ("512Mi", "1Gi")."""
        return format_bytes(self.memory_bytes)

    @property
    def capacity_provisioned(self) -> str:
        """The `CapacityProvisioned` annotation Fargate writes on the pod ("0.5vCPU 1GB")."""
        return f"{self.cpu_text}vCPU {self.memory_gb_text}GB"

    @property
    def resources(self) -> Resources:
        return Resources({CPU: self.cpu_millis, MEMORY: self.memory_bytes})

    def rounding_waste(self, cpu_millis: int, memory_bytes: int) -> Resources:
        """What rounding up to this row adds beyond the request (memory net of the 256 MiB Fargate adds)."""
        return Resources(
            {
                CPU: self.cpu_millis - max(cpu_millis, 0),
                MEMORY: self.memory_bytes - max(memory_bytes, 0) - KUBE_COMPONENTS_MEMORY_BYTES,
            }
        )


FARGATE_SIZES: tuple[FargateSize, ...] = tuple(FargateSize(c, m) for c, m in FARGATE_COMBINATIONS)


def size_pod(cpu_millis: int, memory_bytes: int) -> FargateSize | None:
    """The size Fargate provisions for a pod's effective CPU/memory requests; None when nothing fits.

    Adds 256 MiB, then takes the first row (vCPU ascending, memory ascending) with enough of both, which is
    also the cheapest row that fits. No requests at all gives the smallest row, 0.25 vCPU / 0.5 GB.
    """
    needed_cpu = max(cpu_millis, 0)
    needed_memory = max(memory_bytes, 0) + KUBE_COMPONENTS_MEMORY_BYTES
    for size in FARGATE_SIZES:
        if size.cpu_millis >= needed_cpu and size.memory_bytes >= needed_memory:
            return size
    return None


# --------------------------------------------------------------------------------------------- prices
def fargate_hourly_price(size: FargateSize, region: str, rate: FargatePrice | None = None) -> float | None:
    """USD per hour for a pod of this size (vCPU × rate + GB × rate) at `rate`, else the region's known rate
    (model/fargate_prices.py); None when neither is known."""
    price = fargate_rate(region, rate)
    if price is None:
        return None
    vcpus = Decimal(size.cpu_millis) / 1000
    gigabytes = Decimal(size.memory_mib) / 1024
    return float(vcpus * price.per_vcpu_hour + gigabytes * price.per_gb_hour)


# ------------------------------------------------------------------------------------------- profiles
@functools.lru_cache(maxsize=1024)
def _wildcard(pattern: str) -> re.Pattern[str]:
    """Fargate selector wildcards: `*` is any run of characters, `?` exactly one; nothing else is special."""
    body = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return re.compile(body, re.DOTALL)


def wildcard_matches(pattern: str, text: str) -> bool:
    return _wildcard(pattern).fullmatch(text) is not None


def selector_matches_pod(selector: FargateSelector, namespace: str, labels: Mapping[str, str]) -> bool:
    """Namespace matches and every selector label matches some pod label (keys and values may be wildcards)."""
    if not wildcard_matches(selector.namespace, namespace):
        return False
    return all(
        any(
            wildcard_matches(key, pod_key) and wildcard_matches(value, pod_value)
            for pod_key, pod_value in labels.items()
        )
        for key, value in selector.labels.items()
    )


def profile_matches_pod(profile: FargateProfile, namespace: str, labels: Mapping[str, str]) -> bool:
    return any(selector_matches_pod(s, namespace, labels) for s in profile.selectors)


# A pod annotated `eks.amazonaws.com/compute-type: ec2` is left alone by EKS's Fargate admission webhook, whatever
# profile selects it: older EKS versions gave CoreDNS this annotation, and AWS's Fargate guide has it removed to
# run CoreDNS on Fargate ("Update CoreDNS", docs.aws.amazon.com/eks/latest/userguide/fargate-getting-started.html).
EC2_ONLY = "ec2"


def kept_off_fargate(annotations: Mapping[str, str]) -> bool:
    """Whether the pod's annotations keep it off Fargate whatever profile selects it."""
    return annotations.get(COMPUTE_TYPE) == EC2_ONLY


def profile_for(
    profiles: Sequence[FargateProfile], namespace: str, labels: Mapping[str, str],
    annotations: Mapping[str, str] | None = None,
) -> FargateProfile | None:
    """The profile Fargate would run a pod under, or None when the pod stays off Fargate.

    Several matches: the name that sorts first wins. A pod labelled `eks.amazonaws.com/fargate-profile`
    names its profile, and then only that profile counts (it must still match one of its selectors). A pod
    annotated `eks.amazonaws.com/compute-type: ec2` stays off Fargate (`kept_off_fargate`).
    """
    if annotations is not None and kept_off_fargate(annotations):
        return None
    named = labels.get(FARGATE_PROFILE)
    candidates = [p for p in profiles if named is None or p.name == named]
    matching = [p for p in candidates if profile_matches_pod(p, namespace, labels)]
    return min(matching, key=lambda p: p.name) if matching else None


def parse_profile_flag(text: str, index: int) -> FargateProfile:
    """A `--fargate-profile 'namespace=study-*[,label=value...]'` flag as a one-selector profile `cli-<index>`.

    Raises ValueError with a message fit for the user on a malformed flag.
    """
    namespace: str | None = None
    labels: dict[str, str] = {}
    items = [item.strip() for item in text.split(",")]
    if not text.strip():
        raise ValueError("--fargate-profile is empty; expected 'namespace=<pattern>[,<label>=<value>...]'")
    for item in items:
        if not item:
            raise ValueError(f"--fargate-profile {text!r}: empty item between commas")
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise ValueError(f"--fargate-profile {text!r}: {item!r} is not of the form key=value")
        if not key:
            raise ValueError(f"--fargate-profile {text!r}: {item!r} has an empty key")
        if not value:
            raise ValueError(f"--fargate-profile {text!r}: {key} has an empty value")
        if key == "namespace":
            if namespace is not None:
                raise ValueError(f"--fargate-profile {text!r}: namespace is given twice")
            namespace = value
        elif key in labels:
            raise ValueError(f"--fargate-profile {text!r}: label {key} is given twice")
        else:
            labels[key] = value
    if namespace is None:
        raise ValueError(f"--fargate-profile {text!r}: a selector needs namespace=<pattern>")
    return FargateProfile(name=f"cli-{index}", selectors=(FargateSelector(namespace, labels),))


# ---------------------------------------------------------------------------------------------- nodes
FARGATE_NODE_TAINT = Taint(COMPUTE_TYPE, "fargate", NO_SCHEDULE)


def fargate_node_labels(zone: str, region: str, node_name: str, profile: str) -> dict[str, str]:
    """The labels a Fargate node carries (one node per pod)."""
    return {
        COMPUTE_TYPE: "fargate",
        FARGATE_PROFILE: profile,
        HOSTNAME: node_name,
        ZONE: zone,
        REGION: region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "failure-domain.beta.kubernetes.io/region": region,
        ARCH: FARGATE_ARCH,
        OS: FARGATE_OS,
        "beta.kubernetes.io/arch": FARGATE_ARCH,
        "beta.kubernetes.io/os": FARGATE_OS,
    }
