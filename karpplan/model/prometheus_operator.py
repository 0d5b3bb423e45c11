"""prometheus-operator's Prometheus, PrometheusAgent and Alertmanager (monitoring.coreos.com) read as the
StatefulSets the operator creates for them, so their pods are planned (prometheus-operator pkg/prometheus/server/statefulset.go,
pkg/alertmanager/statefulset.go, pkg/prometheus/common.go).

* Prometheus `<name>`: one StatefulSet per shard (`spec.shards`, default 1), `prometheus-<name>` and
  `prometheus-<name>-shard-<n>`, each of `spec.replicas` pods (default 1; negative reads as 1).
  Containers: `prometheus` (`spec.resources`), `config-reloader`, and `thanos-sidecar` (`spec.thanos.resources`)
  when `spec.thanos` is set; the init container `init-config-reloader`.
* PrometheusAgent `<name>` (v1alpha1): as a Prometheus, named `prom-agent-<name>`, labelled
  `app.kubernetes.io/name: prometheus-agent` (no `prometheus` label, no Thanos sidecar); `mode: DaemonSet` makes
  it one DaemonSet instead.
* Alertmanager `<name>`: the StatefulSet `alertmanager-<name>` of `spec.replicas` pods (default 1; negative
  reads as 0). Containers: `alertmanager` (`spec.resources`, a 200Mi memory request when none is set) and
  `config-reloader`; the init container `init-config-reloader`.
* The config reloaders request and are limited to 10m CPU and 50Mi memory (the operator's defaults,
  `--config-reloader-cpu-request` / `--config-reloader-memory-request`). `spec.containers` and
  `spec.initContainers` merge into these by name, as the operator's strategic merge patch does.
* The pods carry `spec.podMetadata.labels` and the operator's selector labels (`app.kubernetes.io/name`,
  `app.kubernetes.io/managed-by`, `app.kubernetes.io/instance`, `prometheus` or `alertmanager`, and for Prometheus
  `operator.prometheus.io/name` and `operator.prometheus.io/shard`); `nodeSelector`, `affinity`, `tolerations`,
  `topologySpreadConstraints` (their `additionalLabelSelectors` resolved to the selector labels),
  `priorityClassName`, `securityContext`, `hostNetwork` and `serviceAccountName` are copied; `spec.storage`'s
  `volumeClaimTemplate` becomes the StatefulSet's claim template `<statefulset>-db`.

A StatefulSet of the derived name already in the input (a cluster dump) stands for the resource instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from karpplan.errors import Origin
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.model.derived import DerivedDocument, resource_name, workload_of

GROUP = "monitoring.coreos.com"
KINDS = ("Prometheus", "PrometheusAgent", "Alertmanager")
RELOADER_RESOURCES = {"requests": {"cpu": "10m", "memory": "50Mi"}, "limits": {"cpu": "10m", "memory": "50Mi"}}
ALERTMANAGER_MEMORY = "200Mi"
MANAGED_BY = {"app.kubernetes.io/managed-by": "prometheus-operator"}
SHARD_LABEL = "operator.prometheus.io/shard"
_COPIED = ("nodeSelector", "affinity", "tolerations", "priorityClassName", "securityContext", "hostNetwork",
           "serviceAccountName", "schedulerName")


@dataclass(frozen=True)
class DerivedWorkload:
    """A custom resource planned as the StatefulSets its operator creates."""

    kind: str
    name: str
    namespace: str
    origin: Origin
    statefulsets: tuple[str, ...]
    replicas: int  # prometheus-operator's: pods per StatefulSet (each shard); other operators': pods of all its workloads
    containers: tuple[str, ...]
    reason: str = ""  # not expanded: why (its StatefulSet is in the input)
    plain: str = ""  # what was derived, in words, for a kind other than prometheus-operator's
    # (`Kind/name` of each derived workload, the resource's field its pod spec is written at)
    pod_specs: tuple[tuple[str, str], ...] = ()

    @property
    def text(self) -> str:
        if self.reason:
            return f"{self.kind} {self.namespace}/{self.name}: not derived, {self.reason}"
        if self.plain:
            return f"{self.kind} {self.namespace}/{self.name}: {self.plain}"
        many = len(self.statefulsets) > 1
        sets = (f"StatefulSets {', '.join(self.statefulsets)} (one per shard)" if many
                else f"StatefulSet {self.statefulsets[0]}")
        return (f"{self.kind} {self.namespace}/{self.name}: planned as {sets}, as prometheus-operator creates "
                f"them: {self.replicas} pod(s){' each' if many else ''} of containers {', '.join(self.containers)} "
                "(config-reloader at the operator's default 10m CPU, 50Mi memory)")


def is_operator_resource(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind in KINDS


def _integer(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _line(mapping: LineDict, key: str) -> int:
    return mapping.key_lines.get(key, 0) or mapping.line


def _copy(source: LineDict, keys: Sequence[str], line: int) -> LineDict:
    """A LineDict of `keys` taken from `source`, each keeping the line it is written on."""
    out = LineDict(line=line)
    for key in keys:
        if source.get(key) is not None:
            out[key] = source[key]
            out.key_lines[key] = _line(source, key)
    return out


def _container(name: str, resources: object, line: int) -> LineDict:
    out = LineDict(line=line)
    out.update({"name": name, "image": name})
    if isinstance(resources, dict) and resources:
        out["resources"] = resources
        if isinstance(resources, LineDict):
            out.key_lines["resources"] = resources.line
    return out


def _merged(defaults: list[LineDict], patches: object, line: int) -> LineList:
    """The operator's containers with the user's merged in by name (`resources` part by part), a new name
    appended: the operator's strategic merge patch of `spec.containers` / `spec.initContainers`."""
    out = LineList(defaults, line=line)
    by_name = {c["name"]: c for c in defaults}
    for patch in patches if isinstance(patches, list) else []:
        if not isinstance(patch, dict):
            continue
        base = by_name.get(patch.get("name"))
        if base is None:
            out.append(patch)
            continue
        for key, value in patch.items():
            if key == "resources" and isinstance(value, dict) and isinstance(base.get("resources"), dict):
                merged = dict(base["resources"])
                for part, amounts in value.items():
                    held = merged.get(part)
                    merged[part] = {**held, **amounts} if isinstance(held, dict) and isinstance(amounts, dict) else amounts
                value = merged
            base[key] = value
            if isinstance(patch, LineDict):
                base.key_lines[key] = _line(patch, key)
    return out


def _spread(spec: LineDict, selector: dict[str, str]) -> LineList | None:
    """`topologySpreadConstraints` with `additionalLabelSelectors` resolved (OnResource: the selector labels
    but the shard's; OnShard: all of them), as `MakeK8sTopologySpreadConstraint` does."""
    items = spec.get("topologySpreadConstraints")
    if not isinstance(items, list):
        return None
    out = LineList(line=_line(spec, "topologySpreadConstraints"))
    for item in items:
        if not isinstance(item, dict) or "additionalLabelSelectors" not in item:
            out.append(item)
            continue
        which = item.get("additionalLabelSelectors")
        constraint = LineDict({k: v for k, v in item.items() if k != "additionalLabelSelectors"},
                              line=getattr(item, "line", 0))
        if isinstance(item, LineDict):
            constraint.key_lines.update(item.key_lines)
        existing = constraint.get("labelSelector")
        label_selector = dict(existing) if isinstance(existing, dict) else {}
        match = dict(label_selector.get("matchLabels") or {})
        match.update({k: v for k, v in selector.items() if not (which == "OnResource" and k == SHARD_LABEL)})
        label_selector["matchLabels"] = match
        constraint["labelSelector"] = label_selector
        out.append(constraint)
    return out


def _statefulset(doc: Document, spec: LineDict, name: str, replicas: int, labels: dict[str, str],
                 containers: list[LineDict], init: list[LineDict]) -> Document:
    line = doc.origin.line
    pod_spec = _copy(spec, _COPIED, spec.line or line)
    pod_spec["containers"] = _merged(containers, spec.get("containers"), _line(spec, "resources"))
    pod_spec.key_lines["containers"] = _line(spec, "containers") if "containers" in spec else _line(spec, "resources")
    pod_spec["initContainers"] = _merged(init, spec.get("initContainers"), spec.line or line)
    spread = _spread(spec, labels)
    if spread is not None:
        pod_spec["topologySpreadConstraints"] = spread
        pod_spec.key_lines["topologySpreadConstraints"] = spread.line
    pod_metadata = spec.get("podMetadata")
    written = pod_metadata.get("labels") if isinstance(pod_metadata, dict) else None
    pod_labels = dict(written) if isinstance(written, dict) else {}
    pod_labels.update(labels)
    sts_spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": dict(labels)},
        "template": {"metadata": {"labels": pod_labels}, "spec": pod_spec},
    }
    storage = spec.get("storage")
    claim = storage.get("volumeClaimTemplate") if isinstance(storage, dict) else None
    if isinstance(claim, dict) and isinstance(claim.get("spec"), dict):
        sts_spec["volumeClaimTemplates"] = [{"metadata": {"name": f"{name}-db"}, "spec": claim["spec"]}]
    metadata = LineDict({"name": name, "namespace": doc.namespace}, line=line)
    body = LineDict({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": metadata,
                     "spec": _lined(sts_spec, spec, line)}, line=line)
    return DerivedDocument(body, doc.origin, doc.source, pod_spec_at="spec", resource=resource_name(doc))


def _lined(value: dict[str, Any], spec: LineDict, line: int) -> LineDict:
    """The StatefulSet spec as a LineDict: its replicas at the line of the resource's, the rest at the spec's."""
    out = LineDict(line=spec.line or line)
    for key, item in value.items():
        out[key] = item if isinstance(item, LineDict) or not isinstance(item, dict) else _lined(item, spec, line)
    out.key_lines["replicas"] = _line(spec, "replicas")
    return out


def _prometheus(doc: Document, spec: LineDict) -> tuple[list[Document], DerivedWorkload]:
    """A Prometheus, or a PrometheusAgent (`prom-agent-<name>`, no `prometheus` label nor Thanos sidecar; in
    `mode: DaemonSet` one DaemonSet instead of StatefulSets)."""
    name = doc.name
    agent = doc.kind == "PrometheusAgent"
    prefix, app = ("prom-agent", "prometheus-agent") if agent else ("prometheus", "prometheus")
    replicas = _integer(spec.get("replicas"), 1)
    replicas = 1 if replicas < 0 else replicas
    daemon = agent and spec.get("mode") == "DaemonSet"
    shards = 1 if daemon else max(_integer(spec.get("shards"), 1), 1)
    out: list[Document] = []
    names: list[str] = []
    thanos = None if agent else spec.get("thanos")
    for shard in range(shards):
        sts = f"{prefix}-{name}" + (f"-shard-{shard}" if shard else "")
        labels = {**MANAGED_BY, "app.kubernetes.io/name": app, "app.kubernetes.io/instance": name,
                  "operator.prometheus.io/name": name, **({} if agent else {"prometheus": name}),
                  **({} if daemon else {SHARD_LABEL: str(shard)})}
        line = _line(spec, "resources")
        containers = [_container("prometheus", spec.get("resources"), line),
                      _container("config-reloader", RELOADER_RESOURCES, line)]
        if isinstance(thanos, dict):
            containers.append(_container("thanos-sidecar", thanos.get("resources"), _line(spec, "thanos")))
        init = [_container("init-config-reloader", RELOADER_RESOURCES, line)]
        made = _statefulset(doc, spec, sts, replicas, labels, containers, init)
        if daemon:  # the operator's DaemonSet mode: one agent per node
            made.body["kind"] = "DaemonSet"
            for key in ("replicas", "volumeClaimTemplates"):
                made.body["spec"].pop(key, None)
        out.append(made)
        names.append(sts)
    shown = ("prometheus", "config-reloader", *(("thanos-sidecar",) if isinstance(thanos, dict) else ()))
    derived = DerivedWorkload(doc.kind, name, doc.namespace, doc.origin, tuple(names), replicas, shown)
    if daemon:
        derived = DerivedWorkload(doc.kind, name, doc.namespace, doc.origin, tuple(names), 0, shown, plain=(
            f"planned as DaemonSet {names[0]}, as prometheus-operator creates it in mode DaemonSet: one pod per node "
            "of containers prometheus, config-reloader (config-reloader at the operator's default 10m CPU, 50Mi "
            "memory)"))
    return out, derived


def _alertmanager(doc: Document, spec: LineDict) -> tuple[list[Document], DerivedWorkload]:
    name = doc.name
    replicas = max(_integer(spec.get("replicas"), 1), 0)
    resources = spec.get("resources")
    own = dict(resources) if isinstance(resources, dict) else {}
    requests = dict(own.get("requests") or {}) if isinstance(own.get("requests"), dict) else {}
    requests.setdefault("memory", ALERTMANAGER_MEMORY)
    own["requests"] = requests
    if isinstance(resources, LineDict):
        own = LineDict(own, line=resources.line)
    line = _line(spec, "resources")
    sts = f"alertmanager-{name}"
    labels = {"app.kubernetes.io/name": "alertmanager", **MANAGED_BY, "app.kubernetes.io/instance": name,
              "alertmanager": name}
    containers = [_container("alertmanager", own, line), _container("config-reloader", RELOADER_RESOURCES, line)]
    init = [_container("init-config-reloader", RELOADER_RESOURCES, line)]
    document = _statefulset(doc, spec, sts, replicas, labels, containers, init)
    derived = DerivedWorkload("Alertmanager", name, doc.namespace, doc.origin, (sts,), replicas,
                              ("alertmanager", "config-reloader"))
    return [document], derived


def expand_operator_resources(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each Prometheus and Alertmanager followed by the StatefulSets the operator creates for it
    (the resource itself stays, a kind the builder does not read), and what was derived."""
    if not any(is_operator_resource(d) for d in documents):
        return list(documents), []
    present = {(d.namespace, d.name) for d in documents if d.kind == "StatefulSet"}
    out: list[Document] = []
    derived: list[DerivedWorkload] = []
    for doc in documents:
        out.append(doc)
        spec = doc.body.get("spec")
        if not is_operator_resource(doc) or not doc.name:
            continue
        spec = spec if isinstance(spec, LineDict) else LineDict(line=doc.origin.line)
        made, what = (_alertmanager if doc.kind == "Alertmanager" else _prometheus)(doc, spec)
        if any((doc.namespace, m.name) in present for m in made if m.kind == "StatefulSet"):
            derived.append(DerivedWorkload(what.kind, what.name, what.namespace, what.origin, what.statefulsets,
                                           what.replicas, what.containers, "its StatefulSet is in the input"))
            continue
        out.extend(made)
        derived.append(replace(what, pod_specs=pod_specs_of(made)))
    return out, derived


def pod_specs_of(made: Sequence[Document]) -> tuple[tuple[str, str], ...]:
    """(`Kind/name`, where the resource writes its pod spec) per derived document."""
    return tuple((workload_of(d), d.pod_spec_at) for d in made if isinstance(d, DerivedDocument))
