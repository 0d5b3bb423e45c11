"""The RabbitMQ cluster operator's RabbitmqCluster (rabbitmq.com/v1beta1) read as the StatefulSet the operator
creates, so its nodes are planned with their requests and the placement the operator writes
(rabbitmq/cluster-operator api/v1beta1/rabbitmqcluster_types.go, internal/resource/statefulset.go,
internal/metadata/label.go).

* The StatefulSet `<name>-server` of `spec.replicas` pods (the CRD's default 1;
  `spec.override.statefulSet.spec.replicas` replaces it).
* Container `rabbitmq` requests `spec.resources`; when it is not written, the CRD's default: 1000m CPU and 2Gi
  memory requested, limits 2000m and 2Gi. The init container `setup-container` requests and is limited to 20m
  CPU and 64Mi memory.
* Labels: `app.kubernetes.io/name: <name>`, `app.kubernetes.io/component: rabbitmq`,
  `app.kubernetes.io/part-of: rabbitmq`.
* Placement: `spec.affinity` and `spec.tolerations` are the pod's; the operator spreads the pods over zones,
  maxSkew 1 on `topology.kubernetes.io/zone`, ScheduleAnyway, selecting `app.kubernetes.io/name: <name>`, unless
  the annotation `rabbitmq.com/disable-default-topology-spread-constraints: "true"` is set. (It writes no
  anti-affinity of its own.)
* `spec.override.statefulSet.spec.template.spec` is merged over that pod spec as Kubernetes' strategic merge
  patch merges it: containers and init containers by name, topology spread constraints by `topologyKey`,
  `nodeSelector` and `affinity` field by field; any other field replaces the operator's.
* Storage is not modelled (the PVC of `spec.persistence` adds no zone constraint here).

A StatefulSet `<name>-server` already in the input (a cluster dump) stands for the RabbitmqCluster instead.
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
from karpplan.model.labels import ZONE
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of

GROUP = "rabbitmq.com"
KIND = "RabbitmqCluster"
NAME_LABEL = "app.kubernetes.io/name"
DEFAULT_REPLICAS = 1  # +kubebuilder:default:=1
DEFAULT_RESOURCES = {"requests": {"cpu": "1000m", "memory": "2Gi"}, "limits": {"cpu": "2000m", "memory": "2Gi"}}
SETUP_RESOURCES = {"requests": {"cpu": "20m", "memory": "64Mi"}, "limits": {"cpu": "20m", "memory": "64Mi"}}
NO_DEFAULT_SPREAD = "rabbitmq.com/disable-default-topology-spread-constraints"
OVERRIDE = "spec.override.statefulSet.spec.template.spec"
_MERGE_KEYS = {"containers": "name", "initContainers": "name", "topologySpreadConstraints": "topologyKey"}


def is_rabbitmq_cluster(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind == KIND




def _path(mapping: object, *keys: str) -> dict[str, Any]:
    for key in keys:
        mapping = as_mapping(mapping).get(key)
    return as_mapping(mapping)


def _merged(base: object, patch: object) -> object:
    """`patch` over `base` as a strategic merge patch merges two mappings (lists replaced)."""
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return patch
    out = LineDict(base, line=getattr(patch, "line", 0) or getattr(base, "line", 0))
    if isinstance(base, LineDict):
        out.key_lines.update(base.key_lines)
    for key, value in patch.items():
        out[key] = _merged(base.get(key), value)
        out.key_lines[key] = key_line(patch, key, out.line)
    return out


def _merged_list(base: list[Any], patch: list[Any], key: str, line: int) -> tuple[LineList, list[int | None]]:
    """`patch`'s items merged into `base`'s by `key`, and for each item its index in the patch (None: the base's)."""
    items = list(base)
    lines = [getattr(b, "line", 0) or line for b in base]
    at: list[int | None] = [None] * len(base)
    for index, item in enumerate(patch):
        name = as_mapping(item).get(key)
        match = next((i for i, b in enumerate(items) if name is not None and as_mapping(b).get(key) == name), None)
        if match is None:
            items.append(item)
            lines.append(getattr(item, "line", 0) or line)
            at.append(index)
        else:
            items[match] = _merged(items[match], item)
            lines[match] = getattr(item, "line", 0) or lines[match]
            at[match] = index
    out = LineList(items, line=line)
    out.item_lines = lines
    return out, at


def _pod_spec(doc: Document) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    spec = as_mapping(doc.body.get("spec"))
    start = getattr(spec, "line", 0) or doc.origin.line
    pod = LineDict(line=start)
    aliases: list[FieldAlias] = []
    for key in ("affinity", "tolerations"):
        if spec.get(key) is not None:
            pod[key] = spec[key]
            pod.key_lines[key] = key_line(spec, key, start)
    resources = spec.get("resources")
    resources_line = key_line(spec, "resources", start)
    container = LineDict({"name": "rabbitmq", "image": "rabbitmq",
                          "resources": resources if isinstance(resources, dict) else DEFAULT_RESOURCES},
                         line=resources_line)
    container.key_lines["resources"] = resources_line
    setup = LineDict({"name": "setup-container", "resources": SETUP_RESOURCES}, line=start)
    pod["containers"] = _listed([container], start=resources_line)
    pod.key_lines["containers"] = resources_line
    pod["initContainers"] = _listed([setup], start=start)
    pod.key_lines["initContainers"] = start
    annotations = as_mapping(doc.metadata.get("annotations"))
    if str(annotations.get(NO_DEFAULT_SPREAD, "")).strip() != "true":
        spread = LineDict({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                           "labelSelector": {"matchLabels": {NAME_LABEL: doc.name}}}, line=doc.origin.line)
        pod["topologySpreadConstraints"] = _listed([spread], start=doc.origin.line)
        pod.key_lines["topologySpreadConstraints"] = doc.origin.line
        aliases.append(FieldAlias("spec.topologySpreadConstraints[0]", "metadata.annotations", same_shape=False, fix=(
            f"this is the operator's default zone spread: annotate the RabbitmqCluster {NO_DEFAULT_SPREAD}: \"true\" "
            f"to drop it, or write a constraint on {ZONE} in {OVERRIDE}.topologySpreadConstraints to replace it")))
    overrides = _path(spec, "override", "statefulSet", "spec", "template", "spec")
    for key, value in overrides.items():
        line = key_line(overrides, key, start)
        merge_key = _MERGE_KEYS.get(key)
        if merge_key is not None and isinstance(value, list):
            base = pod.get(key)
            merged, at = _merged_list(base if isinstance(base, list) else [], value, merge_key, line)
            if not value:
                continue  # an empty list patches nothing
            pod[key] = merged
            for index, patched in enumerate(at):
                if patched is not None:
                    aliases.insert(0, FieldAlias(f"spec.{key}[{index}]", f"{OVERRIDE}.{key}[{patched}]"))
        else:
            pod[key] = _merged(pod.get(key), value) if key in ("nodeSelector", "affinity") else value
            aliases.insert(0, FieldAlias(f"spec.{key}", f"{OVERRIDE}.{key}"))
        pod.key_lines[key] = line
    aliases.extend([FieldAlias("spec.containers[0].resources", "spec.resources"),
                    FieldAlias("spec.containers[0]", "spec.resources", same_shape=False),
                    FieldAlias("spec.containers", "spec.resources", same_shape=False),
                    FieldAlias("spec.initContainers", "spec", same_shape=False)])
    return pod, tuple(aliases)


def _listed(items: list[Any], start: int) -> LineList:
    out = LineList(items, line=start)
    out.item_lines = [getattr(i, "line", 0) or start for i in items]
    return out


def _expand(present: set[tuple[str, str]], doc: Document) -> tuple[list[Document], DerivedWorkload]:
    spec = as_mapping(doc.body.get("spec"))
    name = f"{doc.name}-server"
    override = _path(spec, "override", "statefulSet", "spec")
    written, replicas_at = spec.get("replicas"), "spec.replicas"
    replicas_line = key_line(spec, "replicas", doc.origin.line)
    if isinstance(override.get("replicas"), int):
        written, replicas_at = override["replicas"], "spec.override.statefulSet.spec.replicas"
        replicas_line = key_line(override, "replicas", replicas_line)
    replicas = written if isinstance(written, int) and not isinstance(written, bool) and written >= 0 \
        else DEFAULT_REPLICAS
    if (doc.namespace, name) in present:
        return [], DerivedWorkload(KIND, doc.name, doc.namespace, doc.origin, (), replicas, (),
                                   reason=f"its StatefulSet {name} is in the input")
    labels = {NAME_LABEL: doc.name, "app.kubernetes.io/component": "rabbitmq", "app.kubernetes.io/part-of": "rabbitmq"}
    override_labels = _path(override, "template", "metadata", "labels")
    pod, aliases = _pod_spec(doc)
    template = LineDict({"metadata": {"labels": {str(k): str(v) for k, v in override_labels.items()}}, "spec": pod},
                        line=pod.line)
    made = controller_workload(doc, "StatefulSet", name, replicas, template, labels, "spec")
    body_spec = made.body["spec"]
    if isinstance(body_spec, LineDict):
        body_spec.key_lines["replicas"] = replicas_line
    derived = DerivedDocument(made.body, made.origin, made.source, pod_spec_at="spec", field_aliases=aliases,
                              replicas_at=replicas_at, resource=made.resource,
                              spread_fix="add podAntiAffinity on kubernetes.io/hostname to spec.affinity (the "
                                         "operator spreads over zones only as a preference)")
    spread = "no zone spread (default spread disabled)" if NO_DEFAULT_SPREAD in as_mapping(
        doc.metadata.get("annotations")) else "the operator's zone spread (ScheduleAnyway)"
    sized = "spec.resources" if isinstance(spec.get("resources"), dict) else "the default 1000m CPU, 2Gi memory"
    plain = f"planned as the {replicas} RabbitMQ pod(s) the operator creates (StatefulSet {name}), {sized}, with {spread}"
    return [derived], DerivedWorkload(KIND, doc.name, doc.namespace, doc.origin, (name,), replicas, ("rabbitmq",),
                                      plain=plain, pod_specs=pod_specs_of([derived]))


def expand_rabbitmq_clusters(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each RabbitmqCluster followed by the StatefulSet of its pods."""
    if not any(is_rabbitmq_cluster(d) for d in documents):
        return list(documents), []
    present = {(d.namespace, d.name) for d in documents if d.kind == "StatefulSet"}
    return expand_each(documents, is_rabbitmq_cluster, lambda doc: _expand(present, doc))
