"""What a namespace's LimitRanges and ResourceQuotas refuse at admission: pods the API server never creates.

A controller's pods pass the LimitRanger admission plugin (plugin/pkg/admission/limitranger) after their
defaults are set: each `type: Container` item's `min`, `max` and `maxLimitRequestRatio` apply to every
container and init container, each `type: Pod` item's to their sum; then validation requires requests no
larger than limits, which a LimitRange's `default` limit below a container's own request breaks. A
ResourceQuota that caps `requests.cpu`, `limits.memory`... (or `cpu`, `memory`) refuses a pod with a container
that sets none of it (the quota evaluator's "must specify"), and one whose namespace would exceed its `hard`
amounts; a ReplicaSet whose pods are refused retries with `FailedCreate` events and no pod is ever pending, so
Karpenter never sees them. Messages are the API server's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.inventory import InputNotice
from karpplan.model.pods import Pod
from karpplan.model.quantity import QuantityError, format_resource, parse_quantity
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, amount_of

Amounts = Mapping[str, int]
_OVERCOMMITTABLE = (CPU, MEMORY, EPHEMERAL)


def _amounts(raw: object) -> dict[str, int]:
    """A resource list's amounts; malformed entries left out (the pod builder reports them)."""
    out: dict[str, int] = {}
    if isinstance(raw, Mapping):
        for name, value in raw.items():
            try:
                out[str(name)] = amount_of(str(name), parse_quantity(value))
            except QuantityError:
                continue
    return out


def _ratios(raw: object) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    if isinstance(raw, Mapping):
        for name, value in raw.items():
            try:
                out[str(name)] = parse_quantity(value).amount
            except QuantityError:
                continue
    return out


@dataclass(frozen=True)
class LimitItem:
    """One item of a LimitRange's `limits` list, defaulted as `SetDefaults_LimitRangeItem` does for `type: Container`."""

    type: str  # Container | Pod (others are not about pods)
    minimum: Amounts
    maximum: Amounts
    default: Amounts  # the limit a container that sets none gets
    default_request: Amounts
    ratio: Mapping[str, Fraction]


@dataclass(frozen=True)
class LimitRange:
    namespace: str
    name: str
    items: tuple[LimitItem, ...]
    origin: Origin = field(default=UNKNOWN, compare=False)


@dataclass(frozen=True)
class ResourceQuota:
    namespace: str
    name: str
    hard: Amounts  # by the quota's own names: `requests.cpu`, `cpu`, `limits.memory`, `pods`...
    scoped: bool  # scopes or a scopeSelector: which pods it counts depends on what karpplan does not model
    origin: Origin = field(default=UNKNOWN, compare=False)


def read_limit_range(namespace: str, name: str, body: Mapping[str, object], origin: Origin) -> LimitRange:
    spec = body.get("spec")
    limits = spec.get("limits") if isinstance(spec, Mapping) else None
    items: list[LimitItem] = []
    for raw in limits if isinstance(limits, list) else ():
        if not isinstance(raw, Mapping) or raw.get("type") not in ("Container", "Pod"):
            continue
        minimum, maximum = _amounts(raw.get("min")), _amounts(raw.get("max"))
        default, default_request = _amounts(raw.get("default")), _amounts(raw.get("defaultRequest"))
        if raw.get("type") == "Container":
            default = {**maximum, **default}
            default_request = {**minimum, **default, **default_request}
        items.append(LimitItem(str(raw.get("type")), minimum, maximum, default, default_request,
                               _ratios(raw.get("maxLimitRequestRatio"))))
    return LimitRange(namespace, name, tuple(items), origin)


def read_resource_quota(namespace: str, name: str, body: Mapping[str, object], origin: Origin) -> ResourceQuota:
    spec = body.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    hard: dict[str, int] = {}
    raw_hard = spec.get("hard")
    for key, value in raw_hard.items() if isinstance(raw_hard, Mapping) else ():
        resource = str(key).removeprefix("requests.").removeprefix("limits.")
        try:
            hard[str(key)] = amount_of(resource, parse_quantity(value))
        except QuantityError:
            continue
    return ResourceQuota(namespace, name, hard, bool(spec.get("scopes") or spec.get("scopeSelector")), origin)


# ------------------------------------------------------------------------------------------ one pod
@dataclass
class _Container:
    name: str
    init: bool  # a run-to-completion init container (its requests are a peak, not a sum)
    asked: dict[str, int]  # its requests
    capped: dict[str, int]  # its limits

    def amounts(self, section: str) -> dict[str, int]:
        """Its `requests` or its `limits`."""
        return self.asked if section == "requests" else self.capped


def _containers(spec: Mapping[str, object]) -> list[_Container]:
    out: list[_Container] = []
    for kind in ("initContainers", "containers"):
        listed = spec.get(kind)
        for index, raw in enumerate(listed if isinstance(listed, list) else ()):
            if not isinstance(raw, Mapping):
                continue
            resources = raw.get("resources")
            resources = resources if isinstance(resources, Mapping) else {}
            limits = _amounts(resources.get("limits"))
            requests = {**limits, **_amounts(resources.get("requests"))}  # SetDefaults_Pod: limits default requests
            name = raw.get("name")
            init = kind == "initContainers" and raw.get("restartPolicy") != "Always"
            out.append(_Container(name if isinstance(name, str) and name else f"{kind}[{index}]", init, requests, limits))
    return out


def _pod_total(containers: Sequence[_Container], which: str) -> dict[str, int]:
    """The LimitRanger's `podRequests` / `podLimits`: containers summed, init containers as a peak."""
    total: dict[str, int] = {}
    for container in containers:
        if not container.init:
            for name, amount in container.amounts(which).items():
                total[name] = total.get(name, 0) + amount
    for container in containers:
        if container.init:
            for name, amount in container.amounts(which).items():
                total[name] = max(total.get(name, 0), amount)
    return total


def _show(name: str, amount: int) -> str:
    return format_resource(name, amount)


def _item_errors(item: LimitItem, requests: Amounts, limits: Amounts) -> Iterator[str]:
    """`minConstraint`, `maxConstraint` and `limitRequestRatioConstraint` of one item, in their words."""
    of = f"per {item.type}"
    for name, least in sorted(item.minimum.items()):
        if name not in requests:
            yield f"minimum {name} usage {of} is {_show(name, least)}.  No request is specified"
        elif requests[name] < least:
            yield f"minimum {name} usage {of} is {_show(name, least)}, but request is {_show(name, requests[name])}"
        elif name in limits and limits[name] < least:
            yield f"minimum {name} usage {of} is {_show(name, least)}, but limit is {_show(name, limits[name])}"
    for name, most in sorted(item.maximum.items()):
        if name not in limits:
            yield f"maximum {name} usage {of} is {_show(name, most)}.  No limit is specified"
        elif limits[name] > most:
            yield f"maximum {name} usage {of} is {_show(name, most)}, but limit is {_show(name, limits[name])}"
        elif name in requests and requests[name] > most:
            yield f"maximum {name} usage {of} is {_show(name, most)}, but request is {_show(name, requests[name])}"
    for name, ratio in sorted(item.ratio.items()):
        request, limit = requests.get(name, 0), limits.get(name, 0)
        if not request or not limit:
            yield (f"{name} max limit to request ratio {of} is {float(ratio):g}, but no request is specified or "
                   "request is 0" if not request else
                   f"{name} max limit to request ratio {of} is {float(ratio):g}, but no limit is specified or limit is 0")
        elif Fraction(limit, request) > ratio:
            yield (f"{name} max limit to request ratio {of} is {float(ratio):g}, but provided ratio is "
                   f"{limit / request:f}")


def _defaulted(ranges: Sequence[LimitRange], spec: Mapping[str, object]) -> list[_Container]:
    """The spec's containers after the LimitRanges' defaults (`mergePodResourceRequirements`, range after range
    in name order: the first to set a limit or request wins), as validation and the quota evaluator see them."""
    containers = _containers(spec)
    for limit_range in sorted(ranges, key=lambda r: r.name):
        for item in limit_range.items:
            if item.type == "Container":
                for container in containers:
                    for name, amount in item.default.items():
                        container.capped.setdefault(name, amount)
                    for name, amount in item.default_request.items():
                        container.asked.setdefault(name, amount)
    return containers


def limit_range_refusal(ranges: Sequence[LimitRange], spec: object) -> str | None:
    """Why the API server refuses a pod with this spec in a namespace with these LimitRanges (None: it does
    not), as `kubectl` would print it after `pods "..." is forbidden: `; defaults applied first."""
    if not ranges or not isinstance(spec, Mapping):
        return None
    containers = _defaulted(ranges, spec)
    ordered = sorted(ranges, key=lambda r: r.name)
    errors: list[str] = []
    for limit_range in ordered:
        for item in limit_range.items:
            if item.type == "Container":
                for container in containers:
                    errors.extend(_item_errors(item, container.asked, container.capped))
            else:
                errors.extend(_item_errors(item, _pod_total(containers, "requests"), _pod_total(containers, "limits")))
    if errors:
        unique = list(dict.fromkeys(errors))
        return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"
    for container in containers:  # ValidateResourceRequirements, after the defaults
        for name in _OVERCOMMITTABLE:
            asked, capped = container.asked, container.capped
            if name in asked and name in capped and asked[name] > capped[name]:
                return (f"container {container.name}: requests.{name}: Invalid value: "
                        f"\"{_show(name, asked[name])}\": must be less than or equal to {name} limit of "
                        f"{_show(name, capped[name])}")
    return None


def quota_refusal(quotas: Sequence[ResourceQuota], ranges: Sequence[LimitRange], spec: object) -> str | None:
    """A ResourceQuota's "must specify": a quota on a compute resource refuses a pod with a container (or
    init container) that sets none of it, after the LimitRanges' defaults."""
    if not quotas or not isinstance(spec, Mapping):
        return None
    containers = _defaulted(ranges, spec)
    for quota in sorted((q for q in quotas if not q.scoped), key=lambda q: q.name):
        missing: list[str] = []
        for key in sorted(quota.hard):
            section, _, resource = key.partition(".") if key.startswith(("requests.", "limits.")) else ("requests", "", key)
            if resource not in (CPU, MEMORY):
                continue
            lacking = [c.name for c in containers if resource not in c.amounts(section)]
            if lacking:
                missing.append(f"{key} for: {','.join(lacking)}")
        if missing:
            return f"failed quota: {quota.name}: must specify {'; '.join(missing)}"
    return None


# ------------------------------------------------------------------------------------------ a namespace
def refusal_notice(origin: Origin, workload: str, namespace: str, refusal: str, fix: str | None = None) -> InputNotice:
    """The plan's warning for a workload whose pods are refused: what the API server says, and that they are
    not planned."""
    return InputNotice(origin, (
        f"{workload}: its pods are never created in namespace {namespace}, so not planned: the API server refuses "
        f"them ({refusal}); "
        "its controller retries with FailedCreate events and no pod is ever pending for Karpenter"),
        fix=fix or "set the containers' requests and limits within the namespace's LimitRange and ResourceQuota")


_QUOTA_USAGE = {"pods": "pods", "count/pods": "pods", "cpu": CPU, "requests.cpu": CPU, "memory": MEMORY,
                "requests.memory": MEMORY, "requests.ephemeral-storage": EPHEMERAL, "ephemeral-storage": EPHEMERAL}


class Admission:
    """The LimitRanges and ResourceQuotas of each namespace, as the admission plugins apply them."""

    def __init__(self) -> None:
        self.ranges: dict[str, list[LimitRange]] = {}
        self.quotas: dict[str, list[ResourceQuota]] = {}

    def add(self, item: LimitRange | ResourceQuota) -> None:
        if isinstance(item, LimitRange):
            self.ranges.setdefault(item.namespace, []).append(item)
        else:
            self.quotas.setdefault(item.namespace, []).append(item)

    def refusal(self, namespace: str, spec: object) -> str | None:
        """Why a pod with `spec`, created in `namespace`, is refused (None: it is admitted)."""
        ranges = self.ranges.get(namespace, ())
        return limit_range_refusal(ranges, spec) or quota_refusal(self.quotas.get(namespace, ()), ranges, spec)

    def overruns(self, pods: Sequence[Pod]) -> list[InputNotice]:
        """A warning per ResourceQuota amount the namespace's pods in the input exceed: the pods past it are
        never created (`exceeded quota`), which karpplan cannot tell apart, so it plans them all and says so."""
        notices: list[InputNotice] = []
        by_namespace: dict[str, list[Pod]] = {}
        if self.quotas:
            for pod in pods:
                if not pod.terminal and pod.namespace in self.quotas:
                    by_namespace.setdefault(pod.namespace, []).append(pod)
        for namespace, quotas in sorted(self.quotas.items()):
            mine = by_namespace.get(namespace, [])
            for quota in sorted((q for q in quotas if not q.scoped), key=lambda q: q.name):
                for key, hard in sorted(quota.hard.items()):
                    resource = _QUOTA_USAGE.get(key)
                    if resource is None:
                        continue
                    used = len(mine) if resource == "pods" else sum(p.template.requests.get(resource, 0) for p in mine)
                    if used > hard:
                        notices.append(InputNotice(quota.origin, (
                            f"ResourceQuota {namespace}/{quota.name}: hard {key} is {format_resource(resource, hard)} "
                            f"but the namespace's {len(mine)} pod(s) in the input use {format_resource(resource, used)}: "
                            "the pods past the quota are never created (exceeded quota; their controllers retry with "
                            "FailedCreate events), yet this plan places every pod"),
                            fix=f"raise the quota's {key}, or lower the replicas or requests in {namespace}"))
        return notices
