"""The OpenTelemetry operator's OpenTelemetryCollector (opentelemetry.io/v1beta1, v1alpha1) read as the workload the
operator creates for it, so the collector's pods are planned (open-telemetry/opentelemetry-operator
internal/manifests/collector/deployment.go, daemonset.go, statefulset.go, container.go;
internal/manifests/manifestutils/labels.go, replicas.go). The opentelemetry-kube-stack chart renders one as a
DaemonSet: without it, every node's collector was missing from the plan.

* `spec.mode`: `deployment` (the default), `daemonset` or `statefulset` make a Deployment, DaemonSet or StatefulSet
  `<name>-collector`; `sidecar` makes none (the operator injects the collector into the pods that ask for it).
* Pods: `spec.replicas` (the default 1), at least `spec.autoscaler.minReplicas` (v1alpha1 also `spec.minReplicas`)
  when set (`GetDesiredReplicas`); a DaemonSet runs one per node.
* Containers: `otc-container` requesting `spec.resources`, then `spec.additionalContainers`; init containers
  `spec.initContainers`.
* Placement: `nodeSelector`, `tolerations`, `affinity`, `priorityClassName`, `hostNetwork`, `podSecurityContext`,
  `serviceAccount`, `volumes` are the pod's; `topologySpreadConstraints` too, but not for a DaemonSet.
* Labels: the resource's own labels, then `app.kubernetes.io/managed-by: opentelemetry-operator`,
  `app.kubernetes.io/instance: <namespace>.<name>`, `app.kubernetes.io/part-of: opentelemetry`,
  `app.kubernetes.io/component: opentelemetry-collector`, and `app.kubernetes.io/name: <name>-collector` unless
  the resource sets that label.
* A StatefulSet collector's `volumeClaimTemplates` are not modelled (their zones add no constraint here).

A workload `<name>-collector` already in the input (a cluster dump) stands for the resource instead.
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

GROUP = "opentelemetry.io"
KIND = "OpenTelemetryCollector"
CONTAINER = "otc-container"
MODES = {"deployment": "Deployment", "daemonset": "DaemonSet", "statefulset": "StatefulSet"}
NAME_LABEL = "app.kubernetes.io/name"
# spec field -> pod spec field
_COPIED = {"nodeSelector": "nodeSelector", "tolerations": "tolerations", "affinity": "affinity",
           "priorityClassName": "priorityClassName", "hostNetwork": "hostNetwork",
           "podSecurityContext": "securityContext", "serviceAccount": "serviceAccountName", "volumes": "volumes",
           "initContainers": "initContainers", "topologySpreadConstraints": "topologySpreadConstraints"}


def is_otel_collector(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind == KIND


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _replicas(spec: dict[str, Any]) -> int:
    """`GetDesiredReplicas`: spec.replicas (1 when unset), at least the autoscaler's minReplicas when set."""
    low = _count(as_mapping(spec.get("autoscaler")).get("minReplicas"))
    low = low if low is not None else _count(spec.get("minReplicas"))
    replicas = _count(spec.get("replicas"))
    if low is not None:
        return max(low, replicas) if replicas is not None else low
    return replicas if replicas is not None else 1


def _pod_spec(spec: dict[str, Any], kind: str, start: int) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    """The pod spec the operator writes, every field at the line of the resource's field it comes from."""
    pod = LineDict(line=start)
    aliases: list[FieldAlias] = []
    for field, into in _COPIED.items():
        if spec.get(field) is None or (field == "topologySpreadConstraints" and kind == "DaemonSet"):
            continue
        pod[into] = spec[field]
        pod.key_lines[into] = key_line(spec, field, start)
        if into != field:
            aliases.append(FieldAlias(f"spec.{into}", f"spec.{field}", same_shape=field != "serviceAccount"))
    line = key_line(spec, "resources", start)
    collector = LineDict({"name": CONTAINER, "image": "otel/opentelemetry-collector"}, line=line)
    if isinstance(spec.get("resources"), dict):
        collector["resources"] = spec["resources"]
        collector.key_lines["resources"] = line
    extra = spec.get("additionalContainers")
    extra = [c for c in extra if isinstance(c, dict)] if isinstance(extra, list) else []
    containers = LineList([collector, *extra], line=line)
    containers.item_lines = [line, *(getattr(c, "line", 0) or start for c in extra)]
    pod["containers"] = containers
    pod.key_lines["containers"] = line
    aliases.extend(FieldAlias(f"spec.containers[{i + 1}]", f"spec.additionalContainers[{i}]") for i in range(len(extra)))
    aliases.extend([FieldAlias("spec.containers[0].resources", "spec.resources"),
                    FieldAlias("spec.containers[0]", "spec.resources", same_shape=False),
                    FieldAlias("spec.containers", "spec.resources", same_shape=False)])
    return pod, tuple(aliases)


def _labels(doc: Document) -> dict[str, str]:
    own = {str(k): str(v) for k, v in as_mapping(doc.metadata.get("labels")).items()}
    labels = {**own, "app.kubernetes.io/managed-by": "opentelemetry-operator",
              "app.kubernetes.io/instance": f"{doc.namespace}.{doc.name}",
              "app.kubernetes.io/part-of": "opentelemetry",
              "app.kubernetes.io/component": "opentelemetry-collector"}
    labels.setdefault(NAME_LABEL, f"{doc.name}-collector")
    return labels


def _expand(present: set[tuple[str, str]], doc: Document) -> tuple[list[Document], DerivedWorkload]:
    spec = as_mapping(doc.body.get("spec"))
    mode = str(spec.get("mode") or "deployment").lower()
    name = f"{doc.name}-collector"
    kind = MODES.get(mode)
    if kind is None:
        return [], DerivedWorkload(KIND, doc.name, doc.namespace, doc.origin, (), 0, (), reason=(
            f"mode {mode}: the operator injects the collector into the pods that ask for it" if mode == "sidecar"
            else f"mode {mode} is none the operator knows (deployment, daemonset, statefulset, sidecar)"))
    replicas = 1 if kind == "DaemonSet" else _replicas(spec)
    if (doc.namespace, name) in present:
        return [], DerivedWorkload(KIND, doc.name, doc.namespace, doc.origin, (), replicas, (),
                                   reason=f"its workload {name} is in the input")
    pod, aliases = _pod_spec(spec, kind, doc.origin.line)
    template = LineDict({"metadata": {"labels": {}}, "spec": pod}, line=pod.line)
    made = controller_workload(doc, kind, name, replicas, template, _labels(doc), "spec")
    body_spec = made.body["spec"]
    if isinstance(body_spec, LineDict):
        body_spec.key_lines["replicas"] = key_line(spec, "replicas", doc.origin.line)
    derived = DerivedDocument(made.body, made.origin, made.source, pod_spec_at="spec", field_aliases=aliases,
                              replicas_at="" if kind == "DaemonSet" else "spec.replicas", resource=made.resource,
                              workload=f"{KIND}/{doc.name}" if kind != "DaemonSet" else "")
    sized = "spec.resources" if isinstance(spec.get("resources"), dict) else "no requests (spec.resources unset)"
    count = "one pod per node" if kind == "DaemonSet" else f"{replicas} pod(s)"
    plain = f"planned as the {kind} {name} the OpenTelemetry operator creates (mode {mode}): {count}, {sized}"
    return [derived], DerivedWorkload(KIND, doc.name, doc.namespace, doc.origin, (name,), replicas, (CONTAINER,),
                                      plain=plain, pod_specs=pod_specs_of([derived]))


def expand_otel_collectors(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each OpenTelemetryCollector followed by the workload of its pods."""
    if not any(is_otel_collector(d) for d in documents):
        return list(documents), []
    present = {(d.namespace, d.name) for d in documents if d.kind in MODES.values()}
    return expand_each(documents, is_otel_collector, lambda doc: _expand(present, doc))
