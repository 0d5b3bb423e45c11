"""Pod specs to `PodTemplate`s: effective requests, node affinity, tolerations, spread, pod (anti-)affinity.

Rules follow kube-scheduler (`shared/reference/kube-scheduler.md`): requests per §7 (containers, init
containers, restartable sidecars, limits defaulting requests, pod-level resources, RuntimeClass overhead,
plus `pods: 1`), node affinity per §3 (a required term that cannot be parsed matches nothing; it is not an
error), API validation per §9 with its exact messages for what the planner relies on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from karpplan.errors import Origin
from karpplan.model.build_fields import Field, is_qualified_name, label_value_errors
from karpplan.model.cluster import Namespace, RuntimeClass
from karpplan.model.fargate import fargate_traits
from karpplan.model.labels import normalize_key
from karpplan.model.mesh_sidecars import injected_sidecar
from karpplan.model.pods import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    SCHEDULE_ANYWAY,
    HostPort,
    PodAffinity,
    PodAffinityTerm,
    PodTemplate,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from karpplan.model.quantity import Quantity, format_resource
from karpplan.model.requirements import Requirement, Requirements, parse_int
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, PODS, Resources, amount_of
from karpplan.model.runtime_class_admission import with_runtime_class
from karpplan.model.security_group_policies import SecurityGroupPolicies
from karpplan.model.selectors import LabelSelector, NodeAffinity, NodeSelectorTerm, PreferredTerm
from karpplan.model.taints import EFFECTS, NO_EXECUTE, NO_SCHEDULE, Toleration

SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
WHEN_UNSATISFIABLE = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
POLICIES = (HONOR, IGNORE)
PROTOCOLS = ("TCP", "UDP", "SCTP")

_OVERCOMMITTABLE = frozenset({CPU, MEMORY, EPHEMERAL})
# Standard resource names that are not container resources (`must be a standard resource for containers`).
_STANDARD_NOT_FOR_CONTAINERS = frozenset({PODS, "storage", "services", "persistentvolumeclaims"})
_POD_LEVEL = frozenset({CPU, MEMORY})


@dataclass(frozen=True)
class PodContext:
    """Cluster objects a pod spec refers to by name."""

    runtime_classes: Mapping[str, RuntimeClass] = field(default_factory=dict)
    priority_classes: Mapping[str, int] = field(default_factory=dict)
    default_priority: int = 0
    # namespace -> the requests its LimitRanges give a container that sets neither request nor limit
    container_defaults: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # `--default-requests`: what a container that sets no request (nor limit) of a resource gets, below LimitRanges
    default_requests: Mapping[str, int] = field(default_factory=dict)
    namespaces: Mapping[str, Namespace] = field(default_factory=dict)  # the Namespace objects read, by name
    security_groups: SecurityGroupPolicies = SecurityGroupPolicies()  # what adds pod-eni to pods at admission

    def defaults_for(self, namespace: str, admitted: bool) -> dict[str, int] | None:
        """A container's defaults: the namespace's LimitRange ones (not yet admitted pods only) over
        `--default-requests`; None when there are none."""
        limit_range = {} if admitted else dict(self.container_defaults.get(namespace) or {})
        merged = {**self.default_requests, **limit_range}
        return merged or None


# ------------------------------------------------------------------------------------------ resources
def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _is_extended(name: str) -> bool:
    return "/" in name and not name.startswith(("kubernetes.io/", "requests."))


def _check_names(items: Mapping[str, tuple[Quantity, Field]]) -> None:
    for name, (_, item) in items.items():
        if "/" in name or name in _OVERCOMMITTABLE or _is_hugepages(name):
            continue
        if name in _STANDARD_NOT_FOR_CONTAINERS:
            item.invalid("must be a standard resource for containers", value=name)
        else:
            item.invalid("must be a standard resource type or fully qualified", value=name)


def container_requests(container: Field, defaults: Mapping[str, int] | None = None) -> dict[str, int]:
    """One container's requests after `SetDefaults_Pod` (limits default missing requests), validated,
    then the LimitRanger admission's `defaultRequest` for resources the container leaves unset."""
    resources = container["resources"]
    if not resources.is_mapping():
        return dict(defaults or {})
    requests_field, limits_field = resources["requests"], resources["limits"]
    requests = requests_field.resource_quantities()
    limits = limits_field.resource_quantities()
    _check_names(requests)
    _check_names({k: v for k, v in limits.items() if k not in requests})
    for name, (request, item) in requests.items():
        limit = limits.get(name)
        if name in _OVERCOMMITTABLE:
            if limit is not None and request.amount > limit[0].amount:
                requests_field.invalid(f"must be less than or equal to {name} limit of {limit[0].text}", request.text)
        elif _is_extended(name) or _is_hugepages(name):
            if limit is None:
                limits_field.required("Limit must be set for non overcommitable resources")
            elif request.amount != limit[0].amount:
                item.invalid(f"must be equal to {name} limit of {limit[0].text}", request.text)
        if _is_extended(name) and request.amount.denominator != 1:
            item.invalid("must be an integer", request.text)
    merged = {name: q for name, (q, _) in limits.items()}
    merged.update({name: q for name, (q, _) in requests.items()})
    own = {name: amount_of(name, q) for name, q in merged.items()}
    return {**(defaults or {}), **own}


def unrequested_containers(spec: object, limit_range: Mapping[str, int] | None) -> tuple[str, ...]:
    """The app and sidecar containers that set no CPU and no memory request (nor a limit, which would default
    it) and get none from a LimitRange: kube-scheduler counts them as zero."""
    if not isinstance(spec, Mapping) or any(k in (limit_range or {}) for k in (CPU, MEMORY)):
        return ()
    out: list[str] = []
    for kind in ("initContainers", "containers"):
        listed = spec.get(kind)
        for index, container in enumerate(listed if isinstance(listed, list) else ()):  # else: reported by the view
            if not isinstance(container, Mapping):
                continue
            if kind == "initContainers" and container.get("restartPolicy") != "Always":
                continue  # a run-to-completion init container only raises the peak
            resources = container.get("resources")
            resources = resources if isinstance(resources, Mapping) else {}
            sections = [resources.get(k) for k in ("requests", "limits")]
            if not any(isinstance(s, Mapping) and (CPU in s or MEMORY in s) for s in sections):
                name = container.get("name")
                out.append(name if isinstance(name, str) and name else f"{kind}[{index}]")
    return tuple(out)


def _add(into: dict[str, int], extra: Mapping[str, int]) -> None:
    for key, value in extra.items():
        into[key] = into.get(key, 0) + value


def _max_into(into: dict[str, int], other: Mapping[str, int]) -> None:
    for key, value in other.items():
        into[key] = max(into.get(key, 0), value)


def effective_requests(spec: Field, context: PodContext, defaults: Mapping[str, int] | None = None) -> Resources:
    """kube-scheduler's `PodRequests` (§7.1) plus `pods: 1`; `defaults` are the namespace's LimitRange
    container defaults, for pods not yet admitted."""
    apps: dict[str, int] = {}
    for container in spec["containers"].mappings():
        _add(apps, container_requests(container, defaults))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec["initContainers"].mappings():
        own = container_requests(container, defaults)
        if container["restartPolicy"].string() == "Always":
            _add(sidecars, own)
            use = dict(sidecars)
        else:
            use = dict(own)
            _add(use, sidecars)  # sidecars declared before this init container keep running
        _max_into(init_peak, use)
    total = dict(apps)
    _add(total, sidecars)
    _max_into(total, init_peak)
    _apply_pod_level(spec["resources"], total)
    _add(total, _overhead(spec, context))
    total[PODS] = total.get(PODS, 0) + 1
    return Resources(total)


def _apply_pod_level(resources: Field, total: dict[str, int]) -> None:
    """Pod-level `spec.resources` replaces the aggregate for cpu, memory and hugepages.

    A pod-level limit without a pod-level request defaults the request as `defaultPodRequests` does
    (pkg/apis/core/v1/defaults.go): to the containers' aggregate request when any container requests that
    resource (cpu, memory), else to the limit; hugepages (not overcommittable) always to the limit.
    """
    if not resources.is_mapping():
        return
    requests = resources["requests"].resource_quantities()
    limits = resources["limits"].resource_quantities()
    merged = {k: v for k, v in limits.items()
              if _is_hugepages(k) or (k in _POD_LEVEL and k not in total)}
    merged.update(requests)
    for name, (quantity, item) in merged.items():
        if name not in _POD_LEVEL and not _is_hugepages(name):
            item.unsupported(sorted(_POD_LEVEL) + ["hugepages-<size>"], value=name)
            continue
        amount = amount_of(name, quantity)
        aggregate = total.get(name, 0)
        if name in requests and amount < aggregate:
            item.invalid(
                f"must be greater than or equal to aggregate container requests of {format_resource(name, aggregate)}",
                quantity.text,
            )
        total[name] = amount


def _overhead(spec: Field, context: PodContext) -> Resources:
    """`spec.overhead` when set (admission already copied it), else the RuntimeClass's `podFixed`."""
    if spec["overhead"].present:
        return Resources({name: amount_of(name, q) for name, (q, _) in spec["overhead"].resource_quantities().items()})
    runtime_class = spec["runtimeClassName"].optional_string()
    if runtime_class and runtime_class in context.runtime_classes:
        return context.runtime_classes[runtime_class].overhead
    return Resources()


# ------------------------------------------------------------------------------------------ label selectors
def parse_label_selector(f: Field) -> LabelSelector | None:
    """A `metav1.LabelSelector`: None when null/absent (matches nothing), `{}` matches everything."""
    if not f.present:
        return None
    if not f.is_mapping():
        return LabelSelector(valid=False)
    requirements = [Requirement(k, frozenset([v])) for k, v in f["matchLabels"].string_map().items()]
    valid = True
    for expression in f["matchExpressions"].mappings():
        key = expression["key"].string()
        operator = expression["operator"].string()
        values = expression["values"].string_list()
        if operator not in SELECTOR_OPERATORS:
            expression["operator"].invalid("not a valid selector operator")
            valid = False
            continue
        if operator in ("In", "NotIn") and not values:
            expression["values"].required("must be specified when `operator` is 'In' or 'NotIn'")
            valid = False
        if operator in ("Exists", "DoesNotExist") and values:
            expression["values"].forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            valid = False
        requirements.append(Requirement.of(key, operator, values))
    return LabelSelector(Requirements(requirements), valid)


def _selector_keys(f: Field) -> set[str]:
    keys: set[str] = set()
    if isinstance(f.value, dict):
        labels = f.value.get("matchLabels")
        if isinstance(labels, dict):
            keys.update(labels)
        expressions = f.value.get("matchExpressions")
        if isinstance(expressions, list):
            keys.update(e["key"] for e in expressions if isinstance(e, dict) and isinstance(e.get("key"), str))
    return keys


# ------------------------------------------------------------------------------------------ node affinity
def _node_requirement(key: str, operator: str, values: list[str]) -> Requirement | None:
    """A pod-side node selector requirement, or None where `labels.NewRequirement` would fail (§3)."""
    if not is_qualified_name(key) or operator not in NODE_SELECTOR_OPERATORS:
        return None
    if operator in ("In", "NotIn") and not values:
        return None
    if operator in ("Exists", "DoesNotExist") and values:
        return None
    if operator in ("Gt", "Lt") and (len(values) != 1 or parse_int(values[0]) is None):
        return None
    if any(label_value_errors(v) for v in values):
        return None
    return Requirement.of(normalize_key(key), operator, values)


def node_selector_term(term: Field) -> NodeSelectorTerm:
    """One nodeSelectorTerm. Empty terms and terms that fail to parse match nothing."""
    origin = term.origin
    if not term.is_mapping():
        return NodeSelectorTerm(empty=True, origin=origin)
    expressions = term["matchExpressions"].mappings()
    fields = term["matchFields"].mappings()
    if not expressions and not fields:
        return NodeSelectorTerm(empty=True, origin=origin)
    valid = True
    requirements: list[Requirement] = []
    for expression in expressions:
        parsed = _node_requirement(
            expression["key"].string(), expression["operator"].string(), expression["values"].string_list()
        )
        if parsed is None:
            valid = False
        else:
            requirements.append(parsed)
    names: list[tuple[str, str]] = []
    for match in fields:
        key, operator = match["key"].string(), match["operator"].string()
        values = match["values"].string_list()
        if key != "metadata.name" or operator not in ("In", "NotIn") or len(values) != 1:
            valid = False
        else:
            names.append((operator, values[0]))
    return NodeSelectorTerm(Requirements(requirements), tuple(names), valid=valid, origin=origin)


def _check_weight(weight: Field) -> int:
    """A preference weight, 1-100 (absent reads as Go's zero value, which is out of range)."""
    value = weight.optional_integer()
    if value is None and weight.present:
        return 0  # not an integer: already reported
    value = value or 0
    if not 1 <= value <= 100:
        weight.invalid("must be in the range 1-100", value)
    return value


def node_affinity(spec: Field) -> NodeAffinity:
    selector = spec["nodeSelector"].string_map()
    node_selector = Requirements(Requirement(normalize_key(k), frozenset([v])) for k, v in selector.items())
    affinity = spec["affinity"]["nodeAffinity"]
    if not affinity.is_mapping():
        return NodeAffinity(node_selector=node_selector)
    required: tuple[NodeSelectorTerm, ...] | None = None
    hard = affinity["requiredDuringSchedulingIgnoredDuringExecution"]
    if hard.is_mapping():
        terms = hard["nodeSelectorTerms"]
        parsed = tuple(node_selector_term(t) for t in terms.elements())
        if not parsed:
            terms.required("must have at least one node selector term")
        required = parsed
    preferred: list[PreferredTerm] = []
    for item in affinity["preferredDuringSchedulingIgnoredDuringExecution"].mappings():
        weight = _check_weight(item["weight"])
        preference = item["preference"]
        term = node_selector_term(preference) if preference.present else NodeSelectorTerm(empty=True)
        preferred.append(PreferredTerm(weight, term))
    return NodeAffinity(node_selector=node_selector, required=required, preferred=tuple(preferred))


# ------------------------------------------------------------------------------------------ tolerations
def is_extended_resource(name: str) -> bool:
    """`IsExtendedResourceName`: a qualified name with a domain outside kubernetes.io (`nvidia.com/gpu`,
    `aws.amazon.com/neuron`, `vpc.amazonaws.com/efa`), not a quota's `requests.` name."""
    domain, slash, _ = name.partition("/")
    return (bool(slash) and not domain.endswith("kubernetes.io") and not name.startswith("requests.")
            and is_qualified_name(name))


def with_extended_resource_tolerations(written: tuple[Toleration, ...], requests: Resources) -> tuple[Toleration, ...]:
    """The tolerations a pod is created with on EKS: its own, and for each extended resource it requests
    `{key: <resource>, operator: Exists, effect: NoSchedule}`, which the ExtendedResourceToleration admission
    plugin adds (EKS enables it since 1.19), so a pod asking for `nvidia.com/gpu` runs on nodes tainted
    `nvidia.com/gpu:NoSchedule` without writing the toleration (Karpenter sees the pod as admitted)."""
    added = [Toleration(key=name, operator="Exists", effect=NO_SCHEDULE) for name in sorted(requests)
             if is_extended_resource(name)]
    return (*written, *(t for t in added if t not in written)) if added else written


def tolerations(spec: Field) -> tuple[Toleration, ...]:
    out = []
    for item in spec["tolerations"].mappings():
        key = item["key"].string()
        operator = item["operator"].string()
        value = item["value"].string()
        effect = item["effect"].string()
        seconds = item["tolerationSeconds"].optional_integer()
        if key and not is_qualified_name(key):
            item["key"].invalid("name part must consist of alphanumeric characters, '-', '_' or '.'")
        if not key and operator != "Exists":
            item["operator"].invalid(
                'operator must be Exists when `key` is empty, which means "match all values and all keys"'
            )
        if seconds is not None and effect != NO_EXECUTE:
            item["effect"].invalid("effect must be 'NoExecute' when `tolerationSeconds` is set")
        if operator in ("", "Equal"):
            errors = label_value_errors(value)
            if errors:
                item["operator"].invalid("; ".join(errors), value)
        elif operator == "Exists":
            if value:
                item["operator"].invalid("value must be empty when `operator` is 'Exists'", value)
        elif operator not in ("Lt", "Gt"):  # Lt/Gt: alpha TaintTolerationComparisonOperators
            item["operator"].unsupported(("Equal", "Exists"))
        if effect and effect not in EFFECTS:
            item["effect"].unsupported(EFFECTS)
        out.append(Toleration(key=key, operator=operator or "Equal", value=value, effect=effect))
    return tuple(out)


# ------------------------------------------------------------------------------------------ spread
def spread_constraints(spec: Field) -> tuple[TopologySpreadConstraint, ...]:
    """topologySpreadConstraints validated in §9.1's order, with its messages."""
    items = spec["topologySpreadConstraints"].mappings()
    pairs = [(c["topologyKey"].value, c["whenUnsatisfiable"].value) for c in items]
    return tuple(_spread_constraint(c, pairs[index] in pairs[index + 1 :]) for index, c in enumerate(items))


def _spread_constraint(c: Field, duplicated: bool) -> TopologySpreadConstraint:
    """One constraint, its fields validated in §9.1's order (`duplicated`: a later one has the same
    topologyKey and whenUnsatisfiable)."""
    max_skew_field = c["maxSkew"]
    parsed_skew = max_skew_field.optional_integer()
    max_skew = parsed_skew or 0
    if max_skew <= 0 and (parsed_skew is not None or not max_skew_field.present):
        max_skew_field.invalid("must be greater than zero", max_skew)
    topology_key = c["topologyKey"].string()
    if not topology_key:
        c["topologyKey"].required("can not be empty")
    when = c["whenUnsatisfiable"].string()
    if when not in WHEN_UNSATISFIABLE:
        c["whenUnsatisfiable"].unsupported(WHEN_UNSATISFIABLE, when)
    if duplicated and topology_key and when:
        c.error(
            f'Duplicate value: "{{{topology_key}, {when}}}"',
            path=f"{c.path}.{{topologyKey, whenUnsatisfiable}}",
        )
    min_domains_field = c["minDomains"]
    min_domains = min_domains_field.optional_integer()
    if min_domains is not None:
        if min_domains <= 0:
            min_domains_field.invalid("must be greater than zero")
        if when != DO_NOT_SCHEDULE:
            min_domains_field.invalid(
                f"can only use minDomains if whenUnsatisfiable={DO_NOT_SCHEDULE}, not {when}"
            )
    policies = []
    for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        policy = c[name].optional_string()
        if policy is not None and policy not in POLICIES:
            c[name].unsupported(POLICIES)
        policies.append(policy)
    selector = parse_label_selector(c["labelSelector"])
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=when,
        label_selector=selector,
        min_domains=min_domains,
        node_affinity_policy=policies[0],
        node_taints_policy=policies[1],
        match_label_keys=_match_label_keys(c, selector is not None),
        origin=c.origin,
    )


def _match_label_keys(c: Field, has_selector: bool) -> tuple[str, ...]:
    """matchLabelKeys: only beside a labelSelector, and none of its keys in that selector."""
    match_label_keys = c["matchLabelKeys"].string_list()
    if match_label_keys and not has_selector:
        c["matchLabelKeys"].forbidden("must not be specified when labelSelector is not set")
    elif match_label_keys:
        in_selector = _selector_keys(c["labelSelector"])
        for position, key in enumerate(match_label_keys):
            if key in in_selector:
                c["matchLabelKeys"].renamed(f"{c.path}.matchLabelKeys[{position}]").invalid(
                    "exists in both matchLabelKeys and labelSelector", key
                )
    return tuple(match_label_keys)


# ------------------------------------------------------------------------------------------ pod affinity
def _pod_affinity_term(term: Field) -> PodAffinityTerm:
    selector_field = term["labelSelector"]
    selector = parse_label_selector(selector_field)
    namespace_selector = parse_label_selector(term["namespaceSelector"])
    topology_key = term["topologyKey"].string()
    if not topology_key:
        term["topologyKey"].required("can not be empty")
    match_keys = term["matchLabelKeys"].string_list()
    mismatch_keys = term["mismatchLabelKeys"].string_list()
    for name, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
        if keys and selector is None:
            term[name].forbidden("must not be specified when labelSelector is not set")
    for position, key in enumerate(mismatch_keys):
        if key in match_keys:
            term["mismatchLabelKeys"].renamed(f"{term.path}.mismatchLabelKeys[{position}]").invalid(
                "exists in both matchLabelKeys and mismatchLabelKeys", key
            )
    return PodAffinityTerm(
        topology_key=topology_key,
        label_selector=selector,
        namespaces=frozenset(term["namespaces"].string_list()),
        namespace_selector=namespace_selector,
        match_label_keys=tuple(match_keys),
        mismatch_label_keys=tuple(mismatch_keys),
        origin=term.origin,
    )


def pod_affinity(f: Field) -> PodAffinity:
    if not f.is_mapping():
        return PodAffinity()
    required = tuple(_pod_affinity_term(t) for t in f["requiredDuringSchedulingIgnoredDuringExecution"].mappings())
    preferred = []
    for item in f["preferredDuringSchedulingIgnoredDuringExecution"].mappings():
        weight = _check_weight(item["weight"])
        term_field = item["podAffinityTerm"]
        if not term_field.present:
            term_field.required("podAffinityTerm is required")
            continue
        if term_field.is_mapping():
            preferred.append(WeightedPodAffinityTerm(weight, _pod_affinity_term(term_field)))
    return PodAffinity(required=required, preferred=tuple(preferred))


# ------------------------------------------------------------------------------------------ ports, priority
def host_ports(spec: Field) -> tuple[HostPort, ...]:
    """Host ports of app containers and sidecars; `hostNetwork` makes every containerPort a host port."""
    host_network = spec["hostNetwork"].boolean()
    containers = spec["containers"].mappings() + [
        c for c in spec["initContainers"].mappings() if c["restartPolicy"].value == "Always"
    ]
    out: list[HostPort] = []
    for container in containers:
        for port in container["ports"].mappings():
            number = port["hostPort"].optional_integer()
            container_port = port["containerPort"].optional_integer()
            if number is None and host_network:
                number = container_port
            if number is None or number == 0:
                continue
            if not 1 <= number <= 65535:
                port["hostPort"].invalid("must be between 1 and 65535, inclusive")
                continue
            protocol = port["protocol"].string("TCP")
            if protocol not in PROTOCOLS:
                port["protocol"].unsupported(PROTOCOLS)
            host_ip = port["hostIP"].string("0.0.0.0") or "0.0.0.0"
            out.append(HostPort(number, protocol, host_ip))
    return tuple(out)


def priority(spec: Field, context: PodContext) -> int:
    explicit = spec["priority"].optional_integer()
    if explicit is not None:
        return explicit
    class_name = spec["priorityClassName"].optional_string()
    if class_name:
        return context.priority_classes.get(class_name, 0)
    return context.default_priority


# ------------------------------------------------------------------------------------------ template
def build_pod_template(
    spec: Field,
    *,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    origin: Origin,
    context: PodContext,
    admitted: bool = False,
) -> PodTemplate:
    """A PodTemplate from a pod spec field (problems are recorded in the field's sink).

    A pod not yet `admitted` (any template, a Pod manifest that was never created) gets its namespace's
    LimitRange defaults, as the LimitRanger admission plugin would give it; an admitted one (bound to a
    node, or with a status) already carries whatever it was given.
    """
    if not spec.present:
        spec.required("a pod spec is required")
    if not spec.is_mapping():
        return PodTemplate(namespace=namespace, labels=dict(labels), requests=Resources({PODS: 1}), origin=origin)
    if not spec["containers"].present:
        spec["containers"].required("at least one container is required")
    affinity = spec["affinity"]
    affinity.is_mapping()
    requests = effective_requests(spec, context, context.defaults_for(namespace, admitted))
    own_namespace = context.namespaces.get(namespace) or Namespace(namespace)
    injected = None if admitted else injected_sidecar(spec.value, namespace, own_namespace.labels,
                                                       own_namespace.annotations, labels, annotations)
    fargate = fargate_traits(spec.value, spec.path)
    if injected is not None:
        requests = requests + injected.requests
        fargate = replace(fargate, refusals=(*fargate.refusals, (f"{spec.path}.initContainers",
                                                                  injected.fargate_refusal())))
    written, affinity_read, eni = tolerations(spec), node_affinity(spec), {}
    if not admitted:  # RuntimeClass scheduling and a SecurityGroupPolicy's pod-eni (an admitted pod carries them)
        runtime_class = context.runtime_classes.get(spec["runtimeClassName"].optional_string() or "")
        affinity_read, written = with_runtime_class(affinity_read, written, runtime_class)
        written, eni = with_extended_resource_tolerations(written, requests), context.security_groups.webhook_requests(
            spec.value, namespace, labels)
    return PodTemplate(
        namespace=namespace,
        labels=dict(labels),
        requests=requests + eni if eni else requests,
        vpc_injected=tuple(eni),
        unrequested=unrequested_containers(
            spec.value, None if admitted else context.container_defaults.get(namespace)),
        affinity=affinity_read,
        tolerations=written,
        spread=spread_constraints(spec),
        pod_affinity=pod_affinity(affinity["podAffinity"]),
        pod_anti_affinity=pod_affinity(affinity["podAntiAffinity"]),
        host_ports=host_ports(spec),
        annotations=dict(annotations),
        runtime_class=spec["runtimeClassName"].optional_string(),
        priority=priority(spec, context),
        fargate=fargate,
        origin=origin,
        injected=injected,
    )
