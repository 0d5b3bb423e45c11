"""EKS Fargate: what a pod spec asks for that Fargate refuses, pod sizing, prices, profile matching.

Facts and rules come from `shared/data/fargate.md` (EKS User Guide plus the `fargate-scheduler`'s own
rejection messages seen in public issues). Everything here is pure: raw pod specs in, plain values out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from karpplan.model.labels import ARCH, OS
from karpplan.model.pods import FargateTraits
from karpplan.model.quantity import QuantityError, parse_quantity
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, amount_of

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

_HOST_NAMESPACE_FIELDS = (("hostNetwork", "HostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC"))


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _positive_amount(name: str, raw: object) -> int | None:
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
            amount = _positive_amount(name, raw)
            if reason is not None and amount is not None and amount > 0:
                seen.add(name)
                yield f"{path}.resources.{section}[{name}]", reason


def _limit_exceeds_request(container: Mapping[str, Any]) -> bool:
    resources = _mapping(container.get("resources"))
    requests, limits = _mapping(resources.get("requests")), _mapping(resources.get("limits"))
    for name in (CPU, MEMORY):
        if name not in limits:
            continue
        limit = _positive_amount(name, limits[name])
        # A missing request defaults to the limit (API defaulting), so only an explicit lower one counts.
        request = _positive_amount(name, requests[name]) if name in requests else limit
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
