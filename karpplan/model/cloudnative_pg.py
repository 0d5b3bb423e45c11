"""CloudNativePG's Cluster (postgresql.cnpg.io/v1) read as the PostgreSQL instance pods the operator creates, so
they are planned with their requests and the placement the operator writes from `spec.affinity`
(cloudnative-pg/cloudnative-pg pkg/specs/pods.go: buildInstance, createClusterPodSpec, CreateAffinitySection,
CreateGeneratedAntiAffinity; api/v1/cluster_types.go, cluster_defaults.go).

* `spec.instances` pods (the CRD's default 1), `<name>-1` ... `<name>-N`, planned as the StatefulSet `<name>`.
  Container `postgres` requests `spec.resources` (the init container `bootstrap-controller` asks the same);
  the operator sets no default requests.
* Labels: `cnpg.io/cluster: <name>`, `cnpg.io/podRole: instance`, `app.kubernetes.io/name: postgresql`,
  `app.kubernetes.io/instance: <name>`, `app.kubernetes.io/component: database`,
  `app.kubernetes.io/managed-by: cloudnative-pg`, under `spec.inheritedMetadata.labels`.
* Anti-affinity: unless `spec.affinity.enablePodAntiAffinity` is false, one term on
  `spec.affinity.topologyKey` (default `kubernetes.io/hostname`) selecting `cnpg.io/cluster In [<name>]`,
  `cnpg.io/podRole In [instance]`: preferred with weight 100 when `podAntiAffinityType` is `preferred` (the
  defaulting webhook's value when it is empty), required when `required`, none for any other value.
  `additionalPodAntiAffinity` terms are added to it, `additionalPodAffinity` is the pod affinity,
  `nodeAffinity` the node affinity.
* `spec.affinity.nodeSelector` and `spec.affinity.tolerations` are the pod's; `spec.topologySpreadConstraints`,
  `spec.priorityClassName` and `spec.schedulerName` are copied.
* Storage is not modelled (the PVCs of `spec.storage` add no zone constraint here).

Pods labelled `cnpg.io/cluster: <name>` already in the input (a cluster dump) stand for the Cluster instead.
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
from karpplan.model.labels import HOSTNAME
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of

GROUP = "postgresql.cnpg.io"
KIND = "Cluster"
CLUSTER_LABEL = "cnpg.io/cluster"
ROLE_LABEL = "cnpg.io/podRole"
DEFAULT_INSTANCES = 1  # +kubebuilder:default:=1
_COPIED = ("topologySpreadConstraints", "priorityClassName", "schedulerName")
_FROM_AFFINITY = (("nodeSelector", "nodeSelector"), ("tolerations", "tolerations"))


def is_cnpg_cluster(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind == KIND




def _terms(value: object) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _generated_term(name: str, affinity: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(`required` | `preferred`, the term) the operator generates, None when it generates none."""
    if affinity.get("enablePodAntiAffinity") is False:
        return None
    kind = affinity.get("podAntiAffinityType")
    kind = "preferred" if kind in (None, "") else kind
    if kind not in ("preferred", "required"):
        return None
    key = affinity.get("topologyKey")
    term = {"labelSelector": {"matchExpressions": [
        {"key": CLUSTER_LABEL, "operator": "In", "values": [name]},
        {"key": ROLE_LABEL, "operator": "In", "values": ["instance"]}]},
        "topologyKey": key if isinstance(key, str) and key else HOSTNAME}
    return kind, term


def _anti_affinity(name: str, affinity: dict[str, Any], line: int) -> LineDict | None:
    generated = _generated_term(name, affinity)
    additional = as_mapping(affinity.get("additionalPodAntiAffinity"))
    required = _terms(additional.get("requiredDuringSchedulingIgnoredDuringExecution"))
    preferred = _terms(additional.get("preferredDuringSchedulingIgnoredDuringExecution"))
    if generated is not None:
        kind, term = generated
        if kind == "required":
            required = [term, *required]
        else:
            preferred = [{"weight": 100, "podAffinityTerm": term}, *preferred]
    if not required and not preferred:
        return None
    out = LineDict(line=line)
    for key, terms in (("requiredDuringSchedulingIgnoredDuringExecution", required),
                       ("preferredDuringSchedulingIgnoredDuringExecution", preferred)):
        if terms:
            items = LineList(terms, line=line)
            items.item_lines = [getattr(t, "line", 0) or line for t in terms]
            out[key] = items
            out.key_lines[key] = line
    return out


def _pod_spec(doc: Document) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    spec = as_mapping(doc.body.get("spec"))
    start = getattr(spec, "line", 0) or doc.origin.line
    affinity = as_mapping(spec.get("affinity"))
    at = key_line(spec, "affinity", start)
    anti_line = next((key_line(affinity, k, 0) for k in ("topologyKey", "podAntiAffinityType", "enablePodAntiAffinity")
                      if key_line(affinity, k, 0)), at)
    pod = LineDict(line=start)
    for key in _COPIED:
        if spec.get(key) is not None:
            pod[key] = spec[key]
            pod.key_lines[key] = key_line(spec, key, start)
    for written, key in _FROM_AFFINITY:
        if affinity.get(written) is not None:
            pod[key] = affinity[written]
            pod.key_lines[key] = key_line(affinity, written, at)
    pod_affinity = LineDict(line=at)
    anti = _anti_affinity(doc.name, affinity, anti_line)
    if anti is not None:
        pod_affinity["podAntiAffinity"] = anti
        pod_affinity.key_lines["podAntiAffinity"] = anti_line
    for written, key in (("additionalPodAffinity", "podAffinity"), ("nodeAffinity", "nodeAffinity")):
        if affinity.get(written) is not None:
            pod_affinity[key] = affinity[written]
            pod_affinity.key_lines[key] = key_line(affinity, written, at)
    if pod_affinity:
        pod["affinity"] = pod_affinity
        pod.key_lines["affinity"] = at
    resources = spec.get("resources")
    resources_line = key_line(spec, "resources", start)
    container = LineDict({"name": "postgres", "image": "postgres"}, line=resources_line)
    if isinstance(resources, dict) and resources:
        container["resources"] = resources
        container.key_lines["resources"] = resources_line
    containers = LineList([container], line=resources_line)
    containers.item_lines = [resources_line]
    pod["containers"] = containers
    pod.key_lines["containers"] = resources_line
    return pod, _aliases(doc.name, affinity)


def _aliases(name: str, affinity: dict[str, Any]) -> tuple[FieldAlias, ...]:
    """Where the Cluster writes each field of the pod spec the operator makes (`spec.affinity.tolerations` for the
    pod's `tolerations`), and the setting that makes its anti-affinity term."""
    generated_at = next((f"spec.affinity.{k}" for k in ("topologyKey", "podAntiAffinityType", "enablePodAntiAffinity")
                         if k in affinity), "spec.affinity")
    aliases = [FieldAlias("spec.containers[0].resources", "spec.resources"),
               FieldAlias("spec.containers[0]", "spec.resources", same_shape=False),
               FieldAlias("spec.containers", "spec.resources", same_shape=False),
               FieldAlias("spec.nodeSelector", "spec.affinity.nodeSelector"),
               FieldAlias("spec.tolerations", "spec.affinity.tolerations"),
               FieldAlias("spec.affinity.podAffinity", "spec.affinity.additionalPodAffinity")]
    generated = _generated_term(name, affinity)
    for kind, other in (("required", "preferred"), ("preferred", "required")):
        if generated is None or generated[0] == other:  # the additional terms of this kind keep their indices
            field = f"{kind}DuringSchedulingIgnoredDuringExecution"
            aliases.append(FieldAlias(f"spec.affinity.podAntiAffinity.{field}",
                                      f"spec.affinity.additionalPodAntiAffinity.{field}"))
    if generated is not None:
        # The generated term comes first: a finding on it points at the setting that makes it.
        first = ("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
                 if generated[0] == "required" else
                 "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]")
        key = generated[1]["topologyKey"]
        aliases.insert(0, FieldAlias(first, generated_at, same_shape=False, fix=(
            f"set spec.affinity.podAntiAffinityType: preferred (CloudNativePG then writes its anti-affinity on {key} "
            "as a preference), or set enablePodAntiAffinity: false and spread the instances with "
            f"spec.topologySpreadConstraints (maxSkew 1 on {key}), or run at most as many instances as the pods "
            f"can reach {key} domains")))
    aliases.append(FieldAlias("spec.affinity.podAntiAffinity", "spec.affinity", same_shape=False))
    return tuple(aliases)


def _expand(present: set[tuple[str, str]], doc: Document) -> tuple[list[Document], DerivedWorkload]:
    spec = as_mapping(doc.body.get("spec"))
    instances = spec.get("instances")
    replicas = instances if isinstance(instances, int) and not isinstance(instances, bool) and instances >= 0 \
        else DEFAULT_INSTANCES
    name = doc.name
    if (doc.namespace, name) in present:
        return [], DerivedWorkload(KIND, name, doc.namespace, doc.origin, (), replicas, (),
                                   reason=f"its instance pods (label {CLUSTER_LABEL}={name}) are in the input")
    labels = {CLUSTER_LABEL: name, ROLE_LABEL: "instance", "app.kubernetes.io/name": "postgresql",
              "app.kubernetes.io/instance": name, "app.kubernetes.io/component": "database",
              "app.kubernetes.io/managed-by": "cloudnative-pg"}
    inherited = as_mapping(as_mapping(spec.get("inheritedMetadata")).get("labels"))
    pod, aliases = _pod_spec(doc)
    template = LineDict({"metadata": {"labels": {str(k): str(v) for k, v in inherited.items()}}, "spec": pod},
                        line=pod.line)
    made = controller_workload(doc, "StatefulSet", name, replicas, template, labels, "spec")
    body_spec = made.body["spec"]
    if isinstance(body_spec, LineDict):
        body_spec.key_lines["replicas"] = key_line(spec, "instances", doc.origin.line)
    derived = DerivedDocument(made.body, made.origin, made.source, pod_spec_at="spec", field_aliases=aliases,
                              replicas_at="spec.instances", resource=made.resource,
                              spread_fix="leave spec.affinity.enablePodAntiAffinity unset or true (the operator's "
                                         "anti-affinity on spec.affinity.topologyKey, kubernetes.io/hostname by "
                                         "default), or add spec.topologySpreadConstraints on topology.kubernetes.io/zone")
    anti = _generated_term(name, as_mapping(spec.get("affinity")))
    placement = ("no anti-affinity (enablePodAntiAffinity: false)" if anti is None else
                 f"{anti[0]} anti-affinity on {anti[1]['topologyKey']}")
    plain = (f"planned as the {replicas} PostgreSQL instance pod(s) CloudNativePG creates (StatefulSet {name}), "
             f"with {placement}")
    return [derived], DerivedWorkload(KIND, name, doc.namespace, doc.origin, (name,), replicas, ("postgres",),
                                      plain=plain, pod_specs=pod_specs_of([derived]))


def expand_cnpg_clusters(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each CloudNativePG Cluster followed by the workload of its instance pods."""
    if not any(is_cnpg_cluster(d) for d in documents):
        return list(documents), []
    present: set[tuple[str, str]] = set()
    for d in documents:
        labels = d.metadata.get("labels")
        if d.kind == "Pod" and isinstance(labels, dict) and isinstance(labels.get(CLUSTER_LABEL), str):
            present.add((d.namespace, labels[CLUSTER_LABEL]))
    return expand_each(documents, is_cnpg_cluster, lambda doc: _expand(present, doc))
