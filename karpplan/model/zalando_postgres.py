"""Zalando's postgres-operator `postgresql` (acid.zalan.do/v1) read as the Spilo StatefulSet and connection
pooler Deployments the operator creates, with its default configuration (zalando/postgres-operator
pkg/cluster/k8sres.go: generateStatefulSet, generateResourceRequirements, fillResourceList, generatePodTemplate,
nodeAffinity, tolerations; pkg/cluster/connection_pooler.go; pkg/util/config/config.go; manifests/configmap.yaml).

* The StatefulSet `<name>` of `spec.numberOfInstances` pods (the CRD requires it; the operator's default
  min_instances / max_instances, -1, leave it as written). Container `postgres` requests `spec.resources.requests`;
  a CPU or memory left out (or written "", "0") gets the operator's default, 100m CPU and 100Mi memory requested.
  `spec.sidecars` are further containers (the same defaults when they write no resources); `spec.initContainers`
  are the pod's.
* Labels: `application: spilo` (cluster_labels), `cluster-name: <name>` (cluster_name_label), `team: <teamId>`.
* Placement: `spec.tolerations`, `spec.nodeAffinity` (the pod's node affinity), `spec.podPriorityClassName`,
  `spec.schedulerName` and `spec.topologySpreadConstraints` (copied as written) are the pod's. The operator's pod
  anti-affinity is off by default (enable_pod_antiaffinity: false), so none is written.
* A connection pooler when `spec.enableConnectionPooler` is true (or `spec.connectionPooler` is written and it is
  unset): the Deployment `<name>-pooler` of `spec.connectionPooler.numberOfInstances` pods (default 2), container
  `connection-pooler` requesting `spec.connectionPooler.resources` (default 500m CPU, 100Mi memory); and
  `<name>-pooler-repl` likewise when `spec.enableReplicaConnectionPooler` is true. Same tolerations and node
  affinity as the database pods.
* Storage is not modelled (the PVC of `spec.volume` adds no zone constraint here); the logical backup CronJob is
  not planned.

A StatefulSet `<name>` or pods labelled `cluster-name: <name>` already in the input (a cluster dump) stand for the
database pods instead, a Deployment `<name>-pooler` for the pooler.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.model.derived import (
    DerivedDocument,
    FieldAlias,
    as_mapping,
    controller_workload,
    expand_each,
    key_line,
)
from karpplan.model.labels import HOSTNAME
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of

GROUP = "acid.zalan.do"
KIND = "postgresql"
CLUSTER_LABEL = "cluster-name"
DEFAULT_INSTANCES = 1  # the CRD requires numberOfInstances; a document without it is planned as one pod
DEFAULT_REQUESTS = {"cpu": "100m", "memory": "100Mi"}  # default_cpu_request, default_memory_request
POOLER_REQUESTS = {"cpu": "500m", "memory": "100Mi"}  # connection_pooler_default_*_request
POOLER_INSTANCES = 2  # connection_pooler_number_of_instances
_EMPTY = ("", "0", None)  # fillResourceList's emptyResourceExamples ("null" read as None)
_COPIED = (("tolerations", "tolerations"), ("schedulerName", "schedulerName"),
           ("topologySpreadConstraints", "topologySpreadConstraints"), ("podPriorityClassName", "priorityClassName"),
           ("initContainers", "initContainers"))


def is_zalando_postgresql(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind == KIND


@dataclass(frozen=True)
class OperatorConfig:
    """The operator's settings karpplan reads (its ConfigMap `postgres-operator`, or an OperatorConfiguration
    CR, when the input holds it; else the defaults)."""

    anti_affinity: bool = False  # enable_pod_antiaffinity
    topology_key: str = HOSTNAME  # pod_antiaffinity_topology_key
    preferred: bool = False  # pod_antiaffinity_preferred_during_scheduling
    requests: tuple[tuple[str, str], ...] = tuple(DEFAULT_REQUESTS.items())  # default_cpu_request, ..._memory_...
    pooler_requests: tuple[tuple[str, str], ...] = tuple(POOLER_REQUESTS.items())
    pooler_instances: int = POOLER_INSTANCES
    source: str = ""  # where it was read ("" for the defaults)


def _settings(doc: Document) -> dict[str, object] | None:
    """The operator settings a document holds, flat (None when it is no operator configuration)."""
    if doc.kind == "ConfigMap" and doc.group == "":
        data = as_mapping(doc.body.get("data"))
        return dict(data) if doc.name == "postgres-operator" or "enable_pod_antiaffinity" in data else None
    if doc.kind == "OperatorConfiguration" and doc.group == GROUP:
        configuration = as_mapping(doc.body.get("configuration"))
        flat: dict[str, object] = dict(configuration)
        for section in ("kubernetes", "postgres_pod_resources", "connection_pooler"):
            flat.update(as_mapping(configuration.get(section)))
        return flat
    return None


def _true(value: object) -> bool:
    return value is True or str(value).strip().lower() == "true"


def operator_config(documents: Sequence[Document]) -> OperatorConfig:
    """The operator's configuration in the input (the first found), else its defaults."""
    found = next(((d, c) for d in documents if (c := _settings(d)) is not None), None)
    if found is None:
        return OperatorConfig()
    doc, settings = found

    def text(key: str, default: str) -> str:
        value = settings.get(key)
        return str(value) if value not in (None, "") else default

    pooler = settings.get("connection_pooler_number_of_instances")
    return OperatorConfig(
        anti_affinity=_true(settings.get("enable_pod_antiaffinity")),
        topology_key=text("pod_antiaffinity_topology_key", HOSTNAME),
        preferred=_true(settings.get("pod_antiaffinity_preferred_during_scheduling")),
        requests=(("cpu", text("default_cpu_request", DEFAULT_REQUESTS["cpu"])),
                  ("memory", text("default_memory_request", DEFAULT_REQUESTS["memory"]))),
        pooler_requests=(("cpu", text("connection_pooler_default_cpu_request", POOLER_REQUESTS["cpu"])),
                         ("memory", text("connection_pooler_default_memory_request", POOLER_REQUESTS["memory"]))),
        pooler_instances=int(str(pooler)) if str(pooler).isdigit() else POOLER_INSTANCES,
        source=f"{doc.kind} {doc.name} at {doc.origin}")


def _anti_affinity(config: OperatorConfig, labels: dict[str, str], pod: LineDict) -> None:
    """The operator's pod anti-affinity (`podAffinity`, k8sres.go) on `labels`, when its configuration enables it."""
    if not config.anti_affinity:
        return
    term = {"labelSelector": {"matchLabels": dict(labels)}, "topologyKey": config.topology_key}
    anti = ({"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": term}]}
            if config.preferred else {"requiredDuringSchedulingIgnoredDuringExecution": [term]})
    affinity = pod.get("affinity")
    merged = LineDict(affinity if isinstance(affinity, dict) else {}, line=pod.line)
    merged["podAntiAffinity"] = anti
    pod["affinity"] = merged
    pod.key_lines.setdefault("affinity", pod.line)


def _count(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _requests(resources: object, defaults: dict[str, str]) -> dict[str, Any]:
    """The requests the operator writes: each of CPU and memory as written, else its default (hugepages as
    written)."""
    written = as_mapping(as_mapping(resources).get("requests"))
    out: dict[str, Any] = {}
    for key in ("cpu", "memory"):
        value = written.get(key)
        if value in _EMPTY or value == "null":
            value = defaults[key]
        out[key] = value
    for key in ("hugepages-2Mi", "hugepages-1Gi"):
        if written.get(key) is not None:
            out[key] = written[key]
    return out


def _container(name: str, resources: object, defaults: dict[str, str], line: int) -> LineDict:
    requests = LineDict(_requests(resources, defaults), line=line)
    written = as_mapping(as_mapping(resources).get("requests"))
    for key in requests:
        requests.key_lines[key] = key_line(written, key, line)
    body = LineDict({"requests": requests}, line=line)
    body.key_lines["requests"] = key_line(resources, "requests", line)
    container = LineDict({"name": name, "image": name, "resources": body}, line=line)
    container.key_lines["resources"] = line
    return container


def _listed(items: list[Any], start: int) -> LineList:
    out = LineList(items, line=start)
    out.item_lines = [getattr(i, "line", 0) or start for i in items]
    return out


def _placement(spec: dict[str, Any], start: int, pod: LineDict, initial: bool) -> None:
    """The fields of `spec` the operator copies into a pod spec (`initial`: the database pods; the pooler's get
    the tolerations and node affinity only)."""
    for written, key in _COPIED:
        if spec.get(written) is not None and (initial or key == "tolerations"):
            pod[key] = spec[written]
            pod.key_lines[key] = key_line(spec, written, start)
    if spec.get("nodeAffinity") is not None:
        at = key_line(spec, "nodeAffinity", start)
        affinity = LineDict({"nodeAffinity": spec["nodeAffinity"]}, line=at)
        affinity.key_lines["nodeAffinity"] = at
        pod["affinity"] = affinity
        pod.key_lines["affinity"] = at


def _database_pod(spec: dict[str, Any], start: int, config: OperatorConfig,
                  labels: dict[str, str]) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    pod = LineDict(line=start)
    _placement(spec, start, pod, initial=True)
    resources_line = key_line(spec, "resources", start)
    requests = dict(config.requests)
    containers = [_container("postgres", spec.get("resources"), requests, resources_line)]
    aliases = [FieldAlias("spec.containers[0].resources", "spec.resources"),
               FieldAlias("spec.containers[0]", "spec.resources", same_shape=False)]
    sidecars = spec.get("sidecars")
    for index, sidecar in enumerate(sidecars if isinstance(sidecars, list) else []):
        side = as_mapping(sidecar)
        line = getattr(sidecar, "line", 0) or key_line(spec, "sidecars", start)
        written = side.get("name")
        name = written if isinstance(written, str) else f"sidecar-{index}"
        containers.append(_container(name, side.get("resources"), requests, line))
        aliases.insert(0, FieldAlias(f"spec.containers[{index + 1}]", f"spec.sidecars[{index}]"))
    pod["containers"] = _listed(containers, resources_line)
    pod.key_lines["containers"] = resources_line
    _anti_affinity(config, labels, pod)
    aliases += [FieldAlias("spec.containers", "spec.resources", same_shape=False),
                *_anti_affinity_aliases(config),
                FieldAlias("spec.affinity.nodeAffinity", "spec.nodeAffinity"),
                FieldAlias("spec.affinity", "spec.nodeAffinity", same_shape=False),
                FieldAlias("spec.priorityClassName", "spec.podPriorityClassName")]
    return pod, tuple(aliases)


def _anti_affinity_aliases(config: OperatorConfig) -> tuple[FieldAlias, ...]:
    """The operator's anti-affinity is written in its configuration, not in the postgresql: a finding on it is
    said at the postgresql's name, with the setting to change."""
    if not config.anti_affinity:
        return ()
    return (FieldAlias("spec.affinity.podAntiAffinity", "metadata.name", same_shape=False, fix=(
        f"the operator writes this anti-affinity on {config.topology_key} (enable_pod_antiaffinity, {config.source}):"
        " set pod_antiaffinity_preferred_during_scheduling: true there, or run at most as many instances as the pods "
        f"can reach {config.topology_key} domains")),)


def _pooler_pod(spec: dict[str, Any], start: int, config: OperatorConfig,
                labels: dict[str, str]) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    pooler = as_mapping(spec.get("connectionPooler"))
    line = key_line(spec, "connectionPooler", start)
    pod = LineDict(line=start)
    _placement(spec, start, pod, initial=False)
    container = _container("connection-pooler", pooler.get("resources"), dict(config.pooler_requests),
                           key_line(pooler, "resources", line))
    pod["containers"] = _listed([container], line)
    pod.key_lines["containers"] = line
    _anti_affinity(config, labels, pod)
    aliases = (FieldAlias("spec.containers[0].resources", "spec.connectionPooler.resources"),
               FieldAlias("spec.containers", "spec.connectionPooler", same_shape=False),
               *_anti_affinity_aliases(config),
               FieldAlias("spec.affinity.nodeAffinity", "spec.nodeAffinity"),
               FieldAlias("spec.affinity", "spec.nodeAffinity", same_shape=False))
    return pod, aliases


def _derive(doc: Document, kind: str, name: str, replicas: int, labels: dict[str, str],
            made_pod: tuple[LineDict, tuple[FieldAlias, ...]], replicas_at: str, replicas_line: int,
            spread_fix: str) -> DerivedDocument:
    pod, aliases = made_pod
    template = LineDict({"metadata": {"labels": {}}, "spec": pod}, line=pod.line)
    made = controller_workload(doc, kind, name, replicas, template, labels, "spec")
    body_spec = made.body["spec"]
    if isinstance(body_spec, LineDict):
        body_spec.key_lines["replicas"] = replicas_line
    return DerivedDocument(made.body, made.origin, made.source, pod_spec_at="spec", field_aliases=aliases,
                           replicas_at=replicas_at, resource=made.resource, spread_fix=spread_fix)


def _poolers(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(name suffix, role) of each connection pooler the operator runs for `spec`."""
    enabled = spec.get("enableConnectionPooler")
    out = []
    if enabled is True or (enabled is None and isinstance(spec.get("connectionPooler"), dict)):
        out.append(("-pooler", "master"))
    if spec.get("enableReplicaConnectionPooler") is True:
        out.append(("-pooler-repl", "replica"))
    return out


def _placement_said(config: OperatorConfig) -> str:
    if not config.anti_affinity:
        return "without anti-affinity (the operator's default enable_pod_antiaffinity: false)"
    kind = "preferred" if config.preferred else "required"
    return f"with the operator's {kind} anti-affinity on {config.topology_key} ({config.source})"


def _spread_fix(config: OperatorConfig, selector: str) -> str:
    head = (f"add spec.topologySpreadConstraints (maxSkew 1 on topology.kubernetes.io/zone, labelSelector "
            f"matchLabels {selector})")
    return head if config.anti_affinity else (
        f"{head}, or set enable_pod_antiaffinity: true in the operator's configuration (it is off by default)")


def _pooler_workloads(doc: Document, spec: dict[str, Any], labels: dict[str, str], config: OperatorConfig,
                      present: set[tuple[str, str]]) -> list[tuple[DerivedDocument, str]]:
    """The connection pooler Deployments the operator runs for `doc`, with what is said of each."""
    start = getattr(spec, "line", 0) or doc.origin.line
    pooler = as_mapping(spec.get("connectionPooler"))
    out: list[tuple[DerivedDocument, str]] = []
    for suffix, role in _poolers(spec):
        name = doc.name + suffix
        count = _count(pooler.get("numberOfInstances"), config.pooler_instances)
        if (doc.namespace, name) in present:
            continue
        # the anti-affinity selects connectionPoolerLabels(role, false): no team, no role
        selected = {"application": "db-connection-pooler", CLUSTER_LABEL: doc.name, "connection-pooler": name}
        made = _derive(doc, "Deployment", name, count, {**labels, **selected, "spilo-role": role},
                       _pooler_pod(spec, start, config, selected), "spec.connectionPooler.numberOfInstances",
                       key_line(pooler, "numberOfInstances", key_line(spec, "connectionPooler", start)),
                       "" if config.anti_affinity else
                       "set enable_pod_antiaffinity: true in the operator's configuration (it is off by default)")
        out.append((made, f"{count} connection pooler pod(s) (Deployment {name})"))
    return out


def _expand(present: set[tuple[str, str]], config: OperatorConfig,
            doc: Document) -> tuple[list[Document], DerivedWorkload]:
    spec = as_mapping(doc.body.get("spec"))
    start = getattr(spec, "line", 0) or doc.origin.line
    name = doc.name
    replicas = _count(spec.get("numberOfInstances"), DEFAULT_INSTANCES)
    team = spec.get("teamId")
    labels = {"application": "spilo", CLUSTER_LABEL: name, **({"team": str(team)} if team is not None else {})}
    made: list[Document] = []
    said: list[str] = []
    if (doc.namespace, name) in present:
        said.append(f"its database pods (StatefulSet {name}) are in the input")
    else:
        made.append(_derive(doc, "StatefulSet", name, replicas, labels, _database_pod(spec, start, config, labels),
                            "spec.numberOfInstances", key_line(spec, "numberOfInstances", doc.origin.line),
                            _spread_fix(config, f"{CLUSTER_LABEL}: {name}")))
        sized = ("spec.resources" if isinstance(spec.get("resources"), dict) else
                 f"the default {dict(config.requests)['cpu']} CPU, {dict(config.requests)['memory']} memory")
        said.append(f"planned as the {replicas} Spilo pod(s) the operator creates (StatefulSet {name}), {sized}, "
                    + _placement_said(config))
    for pooler, text in _pooler_workloads(doc, spec, labels, config, present):
        made.append(pooler)
        said.append(text)
    if not made:
        return [], DerivedWorkload(KIND, name, doc.namespace, doc.origin, (), replicas, (), reason=said[0])
    containers = tuple(str(c.get("name")) for c in _database_pod(spec, start, config, labels)[0]["containers"])
    return made, DerivedWorkload(KIND, name, doc.namespace, doc.origin, tuple(d.name for d in made), replicas,
                                 containers, plain="; ".join(said), pod_specs=pod_specs_of(made))


def expand_zalando_postgresqls(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each `postgresql` followed by the workloads of its pods."""
    if not any(is_zalando_postgresql(d) for d in documents):
        return list(documents), []
    present: set[tuple[str, str]] = set()
    for d in documents:
        labels = d.metadata.get("labels")
        if d.kind in ("StatefulSet", "Deployment"):
            present.add((d.namespace, d.name))
        elif d.kind == "Pod" and isinstance(labels, dict) and isinstance(labels.get(CLUSTER_LABEL), str) \
                and labels.get("application") == "spilo":
            present.add((d.namespace, labels[CLUSTER_LABEL]))
    config = operator_config(documents)
    return expand_each(documents, is_zalando_postgresql, lambda doc: _expand(present, config, doc))
