"""Strimzi's Kafka, KafkaNodePool, KafkaConnect and KafkaMirrorMaker2 (kafka.strimzi.io) read as the pods the
Strimzi cluster operator creates, so brokers, controllers, ZooKeeper, Connect workers and the Entity Operator
are planned with their real requests and the placement users put in `template.pod`
(strimzi/strimzi-kafka-operator cluster-operator/.../model: KafkaCluster, KafkaPool, ZookeeperCluster,
KafkaConnectCluster, KafkaMirrorMaker2Cluster, EntityOperator, CruiseControl, KafkaExporter, ModelUtils).

* Brokers and controllers: one StatefulSet-like set per KafkaNodePool labelled `strimzi.io/cluster: <kafka>`,
  `<kafka>-<pool>`, of `spec.replicas` pods of container `kafka`; resources: the pool's `spec.resources`, else
  the Kafka's `spec.kafka.resources`; pod template: the pool's `spec.template.pod`, else (the pool has no
  `template`) the Kafka's `spec.kafka.template.pod` (`KafkaPool.fromCrd`). A Kafka without node pools in the
  input and without the `strimzi.io/node-pools: enabled` annotation has the virtual pool `kafka` of
  `spec.kafka.replicas` pods (`<kafka>-kafka-<i>`).
* Rack awareness (`spec.kafka.rack.topologyKey`; `spec.rack.topologyKey` of Connect and MirrorMaker 2): pods
  with the broker role (Connect and MirrorMaker 2 workers) require a node carrying the key: `Exists` is added to
  each required nodeSelectorTerm, or one term of it alone (`ModelUtils.affinityWithRackLabelSelector`).
* ZooKeeper (`spec.zookeeper`, not with `strimzi.io/kraft: enabled`): `<kafka>-zookeeper`, `spec.zookeeper.replicas`
  pods of `zookeeper` (`spec.zookeeper.resources`, `spec.zookeeper.template.pod`).
* Entity Operator (`spec.entityOperator` with a `topicOperator` or `userOperator`): Deployment
  `<kafka>-entity-operator`, one pod of containers `topic-operator` / `user-operator` (their `resources`),
  `spec.entityOperator.template.pod`. Cruise Control (`spec.cruiseControl`): `<kafka>-cruise-control`, one pod of
  `cruise-control` (`spec.cruiseControl.resources`). The Entity Operator's `tlsSidecar` adds the `tls-sidecar`
  container of its `resources` (operators before 0.41, which ignore it since; Cruise Control's went in 0.29). Kafka Exporter (`spec.kafkaExporter`): `<kafka>-kafka-exporter`,
  one pod of `kafka-exporter` (`spec.kafkaExporter.resources`).
* KafkaConnect `<name>`: `<name>-connect`; KafkaMirrorMaker2 `<name>`: `<name>-mirrormaker2`; `spec.replicas`
  pods (default 3, `AbstractKafkaConnectSpec`), `spec.resources`, `spec.template.pod`.
* The operator sets no default requests: a container without `resources` requests nothing.
* Labels (`Labels`): `strimzi.io/cluster`, `strimzi.io/name` (`<kafka>-kafka` for every pool, the component name
  otherwise), `strimzi.io/kind`, `strimzi.io/component-type`, `app.kubernetes.io/name`, `instance`, `part-of`
  (`strimzi-<cluster>`), `managed-by`; pool pods also `strimzi.io/pool-name`, `strimzi.io/broker-role` and
  `strimzi.io/controller-role`; over them `template.pod.metadata.labels`. Copied from `template.pod`: affinity,
  tolerations, topologySpreadConstraints, priorityClassName, schedulerName, securityContext.
* Storage is not modelled (persistent-claim volumes add no zone constraint here).

A StatefulSet, StrimziPodSet or Deployment of the derived name already in the input (a cluster dump) stands for
the resource instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from karpplan.errors import Origin
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.model.derived import DerivedDocument, as_mapping, controller_workload, expand_each
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of

GROUP = "kafka.strimzi.io"
KINDS = ("Kafka", "KafkaNodePool", "KafkaConnect", "KafkaMirrorMaker2")
CONNECT_REPLICAS = 3  # AbstractKafkaConnectSpec: replicas = 3
CLUSTER_LABEL = "strimzi.io/cluster"
_COPIED = ("affinity", "tolerations", "topologySpreadConstraints", "priorityClassName", "schedulerName",
           "securityContext")
_PRESENT_KINDS = ("StatefulSet", "StrimziPodSet", "Deployment")


def is_strimzi_resource(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind in KINDS


def rack_key(doc: Document, pod_template_at: str, documents: Sequence[Document]) -> str | None:
    """The rack topologyKey of the pods whose template is written at `pod_template_at`: a Kafka's
    `spec.kafka.rack` for its brokers' template and for its node pools, `spec.rack` of Connect and MirrorMaker 2."""
    if doc.kind == "KafkaNodePool":
        cluster = _Index.cluster_of(doc)
        doc = next((d for d in documents if is_strimzi_resource(d) and d.kind == "Kafka" and d.name == cluster
                    and d.namespace == doc.namespace), doc)
        pod_template_at = "spec.kafka.template.pod"
    if doc.kind == "Kafka":
        field = "spec.kafka" if pod_template_at == "spec.kafka.template.pod" else ""
    else:
        field = "spec"
    key = as_mapping(_at(doc, field).get("rack")).get("topologyKey") if field else None
    return key if isinstance(key, str) and key else None



def _at(doc: Document, path: str) -> dict[str, Any]:
    node: object = doc.body
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return as_mapping(node)


def _count(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _line(mapping: dict[str, Any], key: str, default: int) -> int:
    if isinstance(mapping, LineDict):
        return mapping.key_lines.get(key, 0) or mapping.line or default
    return default


def _labels(cluster: str, name: str, kind: str, component: str) -> dict[str, str]:
    return {CLUSTER_LABEL: cluster, "strimzi.io/name": name, "strimzi.io/kind": kind,
            "strimzi.io/component-type": component, "app.kubernetes.io/name": component,
            "app.kubernetes.io/instance": cluster, "app.kubernetes.io/part-of": f"strimzi-{cluster}",
            "app.kubernetes.io/managed-by": "strimzi-cluster-operator"}


def _with_rack(affinity: object, key: str) -> LineDict:
    """`affinity` with `key Exists` in each required nodeSelectorTerm (one term of it alone when there is none)."""
    out = _copy_mapping(affinity)
    node = _copy_mapping(out.get("nodeAffinity"))
    required = _copy_mapping(node.get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms = required.get("nodeSelectorTerms")
    exists = {"key": key, "operator": "Exists"}
    if isinstance(terms, list) and terms:
        enhanced = LineList(line=getattr(terms, "line", 0))
        enhanced.item_lines = list(getattr(terms, "item_lines", []))
        for term in terms:
            term_out = _copy_mapping(term)
            expressions = term_out.get("matchExpressions")
            term_out["matchExpressions"] = [*(expressions if isinstance(expressions, list) else []), exists]
            enhanced.append(term_out)
        required["nodeSelectorTerms"] = enhanced
    else:
        required["nodeSelectorTerms"] = [{"matchExpressions": [exists]}]
    node["requiredDuringSchedulingIgnoredDuringExecution"] = required
    out["nodeAffinity"] = node
    return out


def _copy_mapping(value: object) -> LineDict:
    """A shallow copy keeping the lines (an empty mapping for anything else)."""
    if not isinstance(value, dict):
        return LineDict()
    out = LineDict(value, line=getattr(value, "line", 0))
    if isinstance(value, LineDict):
        out.key_lines.update(value.key_lines)
    return out


def _template(pod: dict[str, Any], containers: Sequence[tuple[str, object, int]], rack: str | None,
              line: int) -> LineDict:
    """The pod template a `template.pod` and these (name, resources, line) containers make."""
    spec = LineDict(line=getattr(pod, "line", 0) or line)
    for key in _COPIED:
        if pod.get(key) is not None:
            spec[key] = pod[key]
            spec.key_lines[key] = _line(pod, key, line)
    if rack:
        spec["affinity"] = _with_rack(spec.get("affinity"), rack)
        spec.key_lines.setdefault("affinity", line)
    items = LineList(line=line)
    for name, resources, at in containers:
        container = LineDict(line=at)
        container.update({"name": name, "image": name})
        if isinstance(resources, dict) and resources:
            container["resources"] = resources
            container.key_lines["resources"] = getattr(resources, "line", 0) or at
        items.append(container)
        items.item_lines.append(at)
    spec["containers"] = items
    spec.key_lines["containers"] = line
    metadata = as_mapping(pod.get("metadata"))
    return LineDict({"metadata": {"labels": dict(as_mapping(metadata.get("labels")))}, "spec": spec},
                    line=getattr(pod, "line", 0) or line)


class _Index:
    """The Kafkas, their node pools and the workloads already in the input, by namespace and name."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.kafkas = {(d.namespace, d.name): d for d in documents
                       if is_strimzi_resource(d) and d.kind == "Kafka" and d.name}
        self.pools: dict[tuple[str, str], list[Document]] = {}
        for d in documents:
            if is_strimzi_resource(d) and d.kind == "KafkaNodePool" and d.name:
                self.pools.setdefault((d.namespace, self.cluster_of(d)), []).append(d)
        self.present = {(d.namespace, d.name) for d in documents if d.kind in _PRESENT_KINDS}

    @staticmethod
    def cluster_of(pool: Document) -> str:
        labels = pool.metadata.get("labels")
        return str(labels.get(CLUSTER_LABEL, "")) if isinstance(labels, dict) else ""


def _made(doc: Document, origin_doc: Document, kind: str, name: str, replicas: int, template: LineDict,
          labels: Mapping[str, str], pod_spec_at: str, replicas_line: int) -> DerivedDocument:
    made = controller_workload(origin_doc, kind, name, replicas, template, labels, pod_spec_at)
    spec = made.body["spec"]
    if isinstance(spec, LineDict):
        spec.key_lines["replicas"] = replicas_line or doc.origin.line
    # The derived workload lives in the resource's namespace (the origin document may be the Kafka's).
    made.body["metadata"]["namespace"] = doc.namespace
    return made


def _pool(doc: Document, index: _Index) -> list[DerivedDocument]:
    cluster = index.cluster_of(doc)
    kafka = index.kafkas.get((doc.namespace, cluster))
    spec = _at(doc, "spec")
    kafka_spec = _at(kafka, "spec.kafka") if kafka is not None else {}
    own_template = spec.get("template")
    if isinstance(own_template, dict) or kafka is None or not isinstance(kafka_spec.get("template"), dict):
        origin_doc, pod, at = doc, as_mapping(as_mapping(own_template).get("pod")), "spec.template.pod"
    else:
        origin_doc, pod, at = kafka, as_mapping(as_mapping(kafka_spec["template"]).get("pod")), "spec.kafka.template.pod"
    resources = spec.get("resources") if spec.get("resources") is not None else kafka_spec.get("resources")
    roles = spec.get("roles")
    roles = [str(r) for r in roles] if isinstance(roles, list) else []
    broker = "broker" in roles
    rack = as_mapping(kafka_spec.get("rack")).get("topologyKey") if broker else None
    name = f"{cluster or doc.name}-{doc.name}"
    line = _line(spec, "resources", doc.origin.line)
    labels = {**_labels(cluster, f"{cluster}-kafka", "Kafka", "kafka"), "strimzi.io/pool-name": doc.name,
              "strimzi.io/broker-role": str(broker).lower(),
              "strimzi.io/controller-role": str("controller" in roles).lower()}
    template = _template(pod, [("kafka", resources, line)], rack if isinstance(rack, str) else None, line)
    made = _made(doc, origin_doc, "StatefulSet", name, _count(spec.get("replicas"), 0), template, labels, at,
                 _line(spec, "replicas", doc.origin.line))
    return [replace(made, workload=f"{doc.kind}/{doc.name}")]  # the pool's pods, named as lint names the pool


def _component(doc: Document, field: str, name: str, component: str, replicas: int,
               containers: Sequence[tuple[str, object]], rack: object = None,
               kind: str = "StatefulSet", strimzi_kind: str = "Kafka") -> DerivedDocument:
    spec = _at(doc, field)
    pod = as_mapping(as_mapping(spec.get("template")).get("pod"))
    line = _line(spec, "resources", doc.origin.line)
    template = _template(pod, [(c, r, line) for c, r in containers], rack if isinstance(rack, str) else None, line)
    labels = _labels(doc.name, name, strimzi_kind, component)
    return _made(doc, doc, kind, name, replicas, template, labels, f"{field}.template.pod",
                 _line(spec, "replicas", doc.origin.line))


def _kafka(doc: Document, index: _Index) -> list[DerivedDocument]:
    name = doc.name
    spec = _at(doc, "spec")
    annotations = doc.metadata.get("annotations")
    annotations = annotations if isinstance(annotations, dict) else {}
    out: list[DerivedDocument] = []
    kafka = as_mapping(spec.get("kafka"))
    pooled = (doc.namespace, name) in index.pools or annotations.get("strimzi.io/node-pools") == "enabled"
    if not pooled and isinstance(kafka.get("replicas"), int):
        made = _component(doc, "spec.kafka", f"{name}-kafka", "kafka", _count(kafka.get("replicas"), 0),
                          [("kafka", kafka.get("resources"))], as_mapping(kafka.get("rack")).get("topologyKey"))
        made.body["spec"]["template"]["metadata"]["labels"].update({"strimzi.io/pool-name": "kafka"})
        out.append(made)
    zookeeper = spec.get("zookeeper")
    if isinstance(zookeeper, dict) and annotations.get("strimzi.io/kraft") != "enabled":
        out.append(_component(doc, "spec.zookeeper", f"{name}-zookeeper", "zookeeper",
                              _count(zookeeper.get("replicas"), 0), [("zookeeper", zookeeper.get("resources"))]))
    entity = spec.get("entityOperator")
    if isinstance(entity, dict):
        parts = [(c, as_mapping(entity.get(f)).get("resources")) for f, c in
                 (("topicOperator", "topic-operator"), ("userOperator", "user-operator")) if isinstance(entity.get(f), dict)]
        if parts and isinstance(entity.get("tlsSidecar"), dict):  # operators before 0.41 ran it
            parts.append(("tls-sidecar", entity["tlsSidecar"].get("resources")))
        if parts:
            out.append(_component(doc, "spec.entityOperator", f"{name}-entity-operator", "entity-operator", 1,
                                  parts, kind="Deployment"))
    for field, suffix in (("cruiseControl", "cruise-control"), ("kafkaExporter", "kafka-exporter")):
        part = spec.get(field)
        if isinstance(part, dict):
            out.append(_component(doc, f"spec.{field}", f"{name}-{suffix}", suffix, 1,
                                  [(suffix, part.get("resources"))], kind="Deployment"))
    return out


def _expand(index: _Index, doc: Document) -> tuple[list[Document], DerivedWorkload]:
    if doc.kind == "Kafka":
        made = _kafka(doc, index)
    elif doc.kind == "KafkaNodePool":
        made = _pool(doc, index)
    else:
        suffix, component = ("connect", "kafka-connect") if doc.kind == "KafkaConnect" else \
            ("mirrormaker2", "kafka-mirror-maker-2")
        spec = _at(doc, "spec")
        made = [replace(_component(doc, "spec", f"{doc.name}-{suffix}", component,
                                   _count(spec.get("replicas"), CONNECT_REPLICAS), [(component, spec.get("resources"))],
                                   as_mapping(spec.get("rack")).get("topologyKey"), strimzi_kind=doc.kind),
                        workload=f"{doc.kind}/{doc.name}")]
    kept = [m for m in made if (doc.namespace, m.name) not in index.present]
    # The operator runs brokers, controllers, ZooKeeper and Connect pods from StrimziPodSets (no StatefulSet since
    # 0.35; Connect's since StableConnectIdentities, GA in 0.39), planned here as StatefulSets of the same pods.
    shown = ", ".join(f"{'StrimziPodSet' if m.kind == 'StatefulSet' else m.kind} {m.name} "
                      f"({m.body['spec'].get('replicas', 1)} pod(s))" for m in kept) or "no pod"
    skipped = [m.name for m in made if (doc.namespace, m.name) in index.present]
    plain = (f"planned as the pods the Strimzi cluster operator creates: {shown}"
             + (f"; {', '.join(skipped)} already in the input" if skipped else ""))
    origin: Origin = kept[0].origin if kept and all(m.origin == kept[0].origin for m in kept) else doc.origin
    pods = sum(int(m.body['spec'].get('replicas', 1)) for m in kept)
    return list(kept), DerivedWorkload(doc.kind, doc.name, doc.namespace, origin, tuple(m.name for m in kept),
                                       pods, (), plain=plain, pod_specs=pod_specs_of(kept))


def expand_strimzi(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each Kafka, KafkaNodePool, KafkaConnect and KafkaMirrorMaker2 followed by the workloads of
    the pods Strimzi creates for it."""
    if not any(is_strimzi_resource(d) for d in documents):
        return list(documents), []
    index = _Index(documents)
    return expand_each(documents, is_strimzi_resource, lambda doc: _expand(index, doc))
