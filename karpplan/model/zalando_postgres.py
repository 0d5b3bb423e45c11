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


def _database_pod(spec: dict[str, Any], start: int) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    pod = LineDict(line=start)
    _placement(spec, start, pod, initial=True)
    resources_line = key_line(spec, "resources", start)
    containers = [_container("postgres", spec.get("resources"), DEFAULT_REQUESTS, resources_line)]
    aliases = [FieldAlias("spec.containers[0].resources", "spec.resources"),
               FieldAlias("spec.containers[0]", "spec.resources", same_shape=False)]
    sidecars = spec.get("sidecars")
    for index, sidecar in enumerate(sidecars if isinstance(sidecars, list) else []):
        side = as_mapping(sidecar)
        line = getattr(sidecar, "line", 0) or key_line(spec, "sidecars", start)
        written = side.get("name")
        name = written if isinstance(written, str) else f"sidecar-{index}"
        containers.append(_container(name, side.get("resources"), DEFAULT_REQUESTS, line))
        aliases.insert(0, FieldAlias(f"spec.containers[{index + 1}]", f"spec.sidecars[{index}]"))
    pod["containers"] = _listed(containers, resources_line)
    pod.key_lines["containers"] = resources_line
    aliases += [FieldAlias("spec.containers", "spec.resources", same_shape=False),
                FieldAlias("spec.affinity.nodeAffinity", "spec.nodeAffinity"),
                FieldAlias("spec.affinity", "spec.nodeAffinity", same_shape=False),
                FieldAlias("spec.priorityClassName", "spec.podPriorityClassName")]
    return pod, tuple(aliases)


def _pooler_pod(spec: dict[str, Any], start: int) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    pooler = as_mapping(spec.get("connectionPooler"))
    line = key_line(spec, "connectionPooler", start)
    pod = LineDict(line=start)
    _placement(spec, start, pod, initial=False)
    container = _container("connection-pooler", pooler.get("resources"), POOLER_REQUESTS,
                           key_line(pooler, "resources", line))
    pod["containers"] = _listed([container], line)
    pod.key_lines["containers"] = line
    aliases = (FieldAlias("spec.containers[0].resources", "spec.connectionPooler.resources"),
               FieldAlias("spec.containers", "spec.connectionPooler", same_shape=False),
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


def _expand(present: set[tuple[str, str]], doc: Document) -> tuple[list[Document], DerivedWorkload]:
    spec = as_mapping(doc.body.get("spec"))
    start = getattr(spec, "line", 0) or doc.origin.line
    name = doc.name
    replicas = _count(spec.get("numberOfInstances"), DEFAULT_INSTANCES)
    team = spec.get("teamId")
    labels = {"application": "spilo", CLUSTER_LABEL: name, **({"team": str(team)} if team is not None else {})}
    selector = f"{CLUSTER_LABEL}: {name}"
    made: list[Document] = []
    names: list[str] = []
    said: list[str] = []
    if (doc.namespace, name) in present:
        said.append(f"its database pods (StatefulSet {name}) are in the input")
    else:
        made.append(_derive(doc, "StatefulSet", name, replicas, labels, _database_pod(spec, start),
                            "spec.numberOfInstances", key_line(spec, "numberOfInstances", doc.origin.line),
                            "add spec.topologySpreadConstraints (maxSkew 1 on topology.kubernetes.io/zone, "
                            f"labelSelector matchLabels {selector}), or set enable_pod_antiaffinity: true in the "
                            "operator's configuration (it is off by default)"))
        names.append(name)
        sized = "spec.resources" if isinstance(spec.get("resources"), dict) else "the default 100m CPU, 100Mi memory"
        said.append(f"planned as the {replicas} Spilo pod(s) the operator creates (StatefulSet {name}), {sized}, "
                    "without anti-affinity (the operator's default enable_pod_antiaffinity: false)")
    pooler = as_mapping(spec.get("connectionPooler"))
    for suffix, role in _poolers(spec):
        pooler_name = name + suffix
        count = _count(pooler.get("numberOfInstances"), POOLER_INSTANCES)
        if (doc.namespace, pooler_name) in present:
            continue
        pooler_labels = {**labels, "application": "db-connection-pooler", "connection-pooler": pooler_name,
                         "spilo-role": role}
        made.append(_derive(doc, "Deployment", pooler_name, count, pooler_labels, _pooler_pod(spec, start),
                            "spec.connectionPooler.numberOfInstances",
                            key_line(pooler, "numberOfInstances", key_line(spec, "connectionPooler", start)),
                            "set enable_pod_antiaffinity: true in the operator's configuration (it is off by "
                            "default)"))
        names.append(pooler_name)
        said.append(f"{count} connection pooler pod(s) (Deployment {pooler_name})")
    if not made:
        return [], DerivedWorkload(KIND, name, doc.namespace, doc.origin, (), replicas, (), reason=said[0])
    containers = tuple(str(c.get("name")) for c in _database_pod(spec, start)[0]["containers"])
    return made, DerivedWorkload(KIND, name, doc.namespace, doc.origin, tuple(names), replicas, containers,
                                 plain="; ".join(said), pod_specs=pod_specs_of(made))


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
    return expand_each(documents, is_zalando_postgresql, lambda doc: _expand(present, doc))
