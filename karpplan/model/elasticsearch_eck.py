"""ECK's Elasticsearch (elasticsearch.k8s.elastic.co/v1) read as the StatefulSets the operator creates, one per
node set, so the nodes are planned with their requests and the placement the operator adds
(elastic/cloud-on-k8s pkg/controller/elasticsearch/nodespec/podspec.go BuildPodTemplateSpec, defaults.go,
pkg/controller/common/defaults/pod_template.go, pkg/apis/elasticsearch/v1/elasticsearch_types.go, name.go).

* Each of `spec.nodeSets`: the StatefulSet `<name>-es-<nodeSet>` of `count` pods of its `podTemplate`.
* Container `elasticsearch` (added when the template has none): when neither its `resources` nor the node set's
  `resources` shorthand set any request or limit, the operator's default, 2Gi memory request and limit, no
  CPU (`DefaultResources`); the shorthand's `requests` / `limits` cpu and memory override the template's
  (`WithResourcesAndOverrides`, ECK 3.5+). The init containers and stack-monitoring sidecars are not modelled.
* Affinity: the template's, else (no `affinity` at all; an empty one is kept) preferred anti-affinity, weight
  100, on `kubernetes.io/hostname` for pods labelled `elasticsearch.k8s.elastic.co/cluster-name: <name>`
  (`DefaultAffinity`).
* Zone awareness (`zoneAwareness` of a node set, ECK 3.4+): a DoNotSchedule spread of maxSkew 1 on its `topologyKey`
  (default `topology.kubernetes.io/zone`) over the node set's pods, unless the template spreads on that key
  already, and a required node requirement `<key> In zones` (`Exists` without zones) in every required term;
  the other node sets of a zone-aware cluster require the key to exist (`zoneAwarenessSchedulingDirectives`).
* Labels: `elasticsearch.k8s.elastic.co/cluster-name`, `elasticsearch.k8s.elastic.co/statefulset-name`,
  `common.k8s.elastic.co/type: elasticsearch`, with the template's labels.
* Storage is not modelled (the volumeClaimTemplates add no zone constraint here).

A StatefulSet of the derived name already in the input (a cluster dump) stands for its node set instead.
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
from karpplan.model.labels import HOSTNAME, ZONE
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of

GROUP = "elasticsearch.k8s.elastic.co"
KIND = "Elasticsearch"
CLUSTER_LABEL = "elasticsearch.k8s.elastic.co/cluster-name"
STATEFULSET_LABEL = "elasticsearch.k8s.elastic.co/statefulset-name"
CONTAINER = "elasticsearch"
DEFAULT_MEMORY = "2Gi"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def is_eck_elasticsearch(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind == KIND



def _copy(value: object, line: int = 0) -> LineDict:
    """A shallow copy keeping the lines (an empty mapping for anything else)."""
    out = LineDict(value if isinstance(value, dict) else {}, line=getattr(value, "line", 0) or line)
    if isinstance(value, LineDict):
        out.key_lines.update(value.key_lines)
    return out



def _zone_key(node_set: dict[str, Any]) -> str | None:
    zone_awareness = node_set.get("zoneAwareness")
    if not isinstance(zone_awareness, dict):
        return None
    key = zone_awareness.get("topologyKey")
    return key if isinstance(key, str) and key else ZONE


def _resources(container: dict[str, Any], shorthand: object) -> dict[str, Any]:
    """The main container's resources as the operator sets them."""
    written = as_mapping(container.get("resources"))
    overrides = as_mapping(shorthand)
    sides = {side: written.get(side) for side in ("requests", "limits")}
    if all(v is None for v in sides.values()) and not any(as_mapping(overrides.get(s)) for s in sides):
        return {**written, "requests": {"memory": DEFAULT_MEMORY}, "limits": {"memory": DEFAULT_MEMORY}}
    out = _copy(written)
    for side in ("requests", "limits"):
        override = {k: v for k, v in as_mapping(overrides.get(side)).items() if k in ("cpu", "memory") and v is not None}
        if override:
            out[side] = {**as_mapping(written.get(side)), **override}
    return out


def _with_requirement(affinity: LineDict, requirement: dict[str, Any], line: int) -> None:
    """`requirement` added to every required node-selector term (one term of it alone when there is none),
    unless a term has an expression on its key already guaranteeing it (`WithRequiredNodeAffinityMatchExpressions`)."""
    node = _copy(affinity.get("nodeAffinity"), line)
    required = _copy(node.get(_REQUIRED), line)
    terms = required.get("nodeSelectorTerms")
    if isinstance(terms, list) and terms:
        out = LineList(line=getattr(terms, "line", line))
        out.item_lines = list(getattr(terms, "item_lines", []))
        for term in terms:
            term_out = _copy(term, line)
            expressions = as_mapping(term).get("matchExpressions")
            expressions = list(expressions) if isinstance(expressions, list) else []
            guaranteed = requirement["operator"] == "Exists" and any(
                isinstance(e, dict) and e.get("key") == requirement["key"]
                and e.get("operator") in ("In", "Exists", "Gt", "Lt") for e in expressions)
            if not guaranteed and requirement not in expressions:
                expressions.append(dict(requirement))
            term_out["matchExpressions"] = expressions
            out.append(term_out)
        required["nodeSelectorTerms"] = out
    else:
        required["nodeSelectorTerms"] = [{"matchExpressions": [dict(requirement)]}]
    node[_REQUIRED] = required
    affinity["nodeAffinity"] = node
    affinity.key_lines.setdefault("nodeAffinity", line)


def _pod_spec(name: str, node_set: dict[str, Any], index: int, statefulset: str,
              cluster_zone_key: str | None) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    here = f"spec.nodeSets[{index}]"
    at = f"{here}.podTemplate.spec"
    set_line = getattr(node_set, "line", 0)
    template = as_mapping(node_set.get("podTemplate"))
    written = template.get("spec")
    spec = _copy(written, key_line(node_set, "podTemplate", set_line))
    line = spec.line or set_line
    aliases: list[FieldAlias] = []
    containers = LineList(spec.get("containers") if isinstance(spec.get("containers"), list) else [],
                          line=key_line(spec, "containers", line))
    containers.item_lines = list(getattr(spec.get("containers"), "item_lines", []))
    position = next((i for i, c in enumerate(containers) if isinstance(c, dict) and c.get("name") == CONTAINER), None)
    shorthand = node_set.get("resources")
    shorthand_at = f"{here}.resources" if isinstance(shorthand, dict) else here
    if position is None:
        containers.append(LineDict({"name": CONTAINER, "image": CONTAINER}, line=key_line(node_set, "resources", line)))
        containers.item_lines.append(key_line(node_set, "resources", line))
        position = len(containers) - 1
        aliases.append(FieldAlias(f"{at}.containers[{position}]", shorthand_at, same_shape=False))
    main = _copy(containers[position], containers.item_lines[position] if position < len(containers.item_lines)
                 else line)
    if main.get("resources") is None:  # what the operator sets is the shorthand's (or its default, at the set)
        aliases.insert(0, FieldAlias(f"{at}.containers[{position}].resources", shorthand_at,
                                     same_shape=isinstance(shorthand, dict)))
    main["resources"] = _resources(main, shorthand)
    main.key_lines.setdefault("resources", key_line(node_set, "resources", main.line))
    containers[position] = main
    spec["containers"] = containers
    spec.key_lines.setdefault("containers", line)
    if spec.get("affinity") is None:  # DefaultAffinity; an empty affinity is kept
        spec["affinity"] = LineDict({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"topologyKey": HOSTNAME,
                                                "labelSelector": {"matchLabels": {CLUSTER_LABEL: name}}}}]}},
            line=line)
        spec.key_lines["affinity"] = line
        aliases.append(FieldAlias(f"{at}.affinity.podAntiAffinity", here, same_shape=False))
    own_key = _zone_key(node_set)
    zone_awareness = f"{here}.zoneAwareness"
    if own_key is not None:
        _zone_aware(spec, node_set, own_key, name, statefulset, at, zone_awareness, aliases, line)
    elif cluster_zone_key is not None:
        affinity = _copy(spec.get("affinity"), line)
        _with_requirement(affinity, {"key": cluster_zone_key, "operator": "Exists"}, line)
        spec["affinity"] = affinity
        aliases.append(FieldAlias(f"{at}.affinity.nodeAffinity", here, same_shape=False))
    return spec, tuple(aliases)


def _zone_aware(spec: LineDict, node_set: dict[str, Any], key: str, name: str, statefulset: str, at: str,
                zone_awareness: str, aliases: list[FieldAlias], line: int) -> None:
    """The node set's zone awareness: its spread on `key` and the required node requirement on `key`."""
    zone_line = key_line(node_set, "zoneAwareness", line)
    written = spec.get("topologySpreadConstraints")
    constraints = LineList(written if isinstance(written, list) else [], line=key_line(spec, "topologySpreadConstraints",
                                                                                  zone_line))
    constraints.item_lines = list(getattr(written, "item_lines", []))
    selector = {"matchLabels": {CLUSTER_LABEL: name, STATEFULSET_LABEL: statefulset}}
    same = next((i for i, c in enumerate(constraints) if isinstance(c, dict) and c.get("topologyKey") == key), None)
    if same is None:
        constraints.append({"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": selector})
        constraints.item_lines.append(zone_line)
        aliases.append(FieldAlias(f"{at}.topologySpreadConstraints[{len(constraints) - 1}]", zone_awareness,
                                  same_shape=False, fix=(
            f"zoneAwareness spreads the node set's pods evenly over {key} (maxSkew 1, DoNotSchedule): let the "
            f"NodePools reach every zone it allows ({zone_awareness}.zones), or write your own "
            f"topologySpreadConstraint on {key} in {at}.topologySpreadConstraints (ECK keeps it)")))
    elif not as_mapping(constraints[same]).get("labelSelector"):
        constraints[same] = {**as_mapping(constraints[same]), "labelSelector": selector}
    spec["topologySpreadConstraints"] = constraints
    spec.key_lines.setdefault("topologySpreadConstraints", zone_line)
    zones = as_mapping(node_set.get("zoneAwareness")).get("zones")
    requirement: dict[str, Any] = {"key": key, "operator": "Exists"}
    if isinstance(zones, list) and zones:
        requirement = {"key": key, "operator": "In", "values": [str(z) for z in zones]}
    affinity = _copy(spec.get("affinity"), line)
    had_node_affinity = affinity.get("nodeAffinity") is not None
    _with_requirement(affinity, requirement, zone_line)
    spec["affinity"] = affinity
    if not had_node_affinity:
        aliases.append(FieldAlias(f"{at}.affinity.nodeAffinity", zone_awareness, same_shape=False, fix=(
            f"zoneAwareness requires nodes labelled {key}{' in ' + ', '.join(requirement['values']) if 'values' in requirement else ''}: "
            f"list zones the NodePools launch in ({zone_awareness}.zones), or let a NodePool launch there")))


def _expand(present: set[tuple[str, str]], doc: Document) -> tuple[list[Document], DerivedWorkload]:
    spec = as_mapping(doc.body.get("spec"))
    node_sets = [s for s in spec.get("nodeSets", []) if isinstance(s, dict)] \
        if isinstance(spec.get("nodeSets"), list) else []
    cluster_key = next((k for s in node_sets if (k := _zone_key(s)) is not None), None)
    made: list[DerivedDocument] = []
    skipped: list[str] = []
    for index, node_set in enumerate(node_sets):
        statefulset = f"{doc.name}-es-{node_set.get('name', index)}"
        if (doc.namespace, statefulset) in present:
            skipped.append(statefulset)
            continue
        count = node_set.get("count")
        replicas = count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else 0
        pod, aliases = _pod_spec(doc.name, node_set, index, statefulset, cluster_key)
        metadata = as_mapping(as_mapping(node_set.get("podTemplate")).get("metadata"))
        template = LineDict({"metadata": {"labels": dict(as_mapping(metadata.get("labels")))}, "spec": pod}, line=pod.line)
        labels = {CLUSTER_LABEL: doc.name, STATEFULSET_LABEL: statefulset, "common.k8s.elastic.co/type": KIND.lower()}
        at = f"spec.nodeSets[{index}]"
        workload = controller_workload(doc, "StatefulSet", statefulset, replicas, template, labels,
                                       f"{at}.podTemplate.spec")
        body_spec = workload.body["spec"]
        if isinstance(body_spec, LineDict):
            body_spec.key_lines["replicas"] = key_line(node_set, "count", getattr(node_set, "line", doc.origin.line))
        made.append(DerivedDocument(
            workload.body, workload.origin, workload.source, pod_spec_at=f"{at}.podTemplate.spec",
            field_aliases=aliases, replicas_at=f"{at}.count", resource=workload.resource,
            spread_fix=f"add podAntiAffinity on kubernetes.io/hostname or topology.kubernetes.io/zone to "
                       f"{at}.podTemplate.spec.affinity (a written affinity replaces ECK's default, preferred "
                       f"anti-affinity on kubernetes.io/hostname), or topologySpreadConstraints to "
                       f"{at}.podTemplate.spec, or set {at}.zoneAwareness (ECK 3.4+)"))
    shown = ", ".join(f"StatefulSet {m.name} ({m.body['spec']['replicas']} pod(s))" for m in made) or "no pod"
    plain = (f"planned as the pods ECK creates: {shown}"
             + (f"; {', '.join(skipped)} already in the input" if skipped else ""))
    pods = sum(int(m.body['spec']['replicas']) for m in made)
    return list(made), DerivedWorkload(KIND, doc.name, doc.namespace, doc.origin, tuple(m.name for m in made), pods,
                                       (CONTAINER,), plain=plain, pod_specs=pod_specs_of(made))


def expand_eck_elasticsearch(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each ECK Elasticsearch followed by the StatefulSets of its node sets."""
    if not any(is_eck_elasticsearch(d) for d in documents):
        return list(documents), []
    present = {(d.namespace, d.name) for d in documents if d.kind == "StatefulSet"}
    return expand_each(documents, is_eck_elasticsearch, lambda doc: _expand(present, doc))
