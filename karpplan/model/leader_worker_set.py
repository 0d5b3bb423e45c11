"""LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, kubernetes-sigs/lws: multi-node inference such as vLLM) read as
the StatefulSets its controller creates, so its pods are planned.

`spec.replicas` groups (default 1) of `spec.leaderWorkerTemplate.size` pods (default 1): the leaders are the
StatefulSet `<name>` (one pod per group, `leaderTemplate`, or `workerTemplate` when there is none), each group's
workers the StatefulSet `<name>-<group>` of size - 1 pods (`workerTemplate`). The pods carry
`leaderworkerset.sigs.k8s.io/name`, `group-index` and `worker-index` (0 for the leader). With the annotation
`leaderworkerset.sigs.k8s.io/exclusive-topology: <key>`, a group's pods share one domain of `<key>` that no other
group's pods use: required pod affinity to their own group and anti-affinity to the others, as the controller
writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict
from karpplan.model.derived import controller_workload, expand_each
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of

GROUP = "leaderworkerset.x-k8s.io"
KIND = "LeaderWorkerSet"
NAME = "leaderworkerset.sigs.k8s.io/name"
GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
EXCLUSIVE = "leaderworkerset.sigs.k8s.io/exclusive-topology"


def is_leader_worker_set(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind == KIND


def _count(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _exclusive(spec: dict[str, Any], name: str, group: int, key: str) -> dict[str, Any]:
    """The pod spec with the group's exclusive placement on `key` (the controller's affinity terms)."""
    own = {"matchExpressions": [{"key": NAME, "operator": "In", "values": [name]},
                                {"key": GROUP_INDEX, "operator": "In", "values": [str(group)]}]}
    others = {"matchExpressions": [{"key": NAME, "operator": "In", "values": [name]},
                                   {"key": GROUP_INDEX, "operator": "NotIn", "values": [str(group)]}]}
    affinity = dict(spec.get("affinity") or {}) if isinstance(spec.get("affinity"), dict) else {}
    affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": own, "topologyKey": key}]}
    affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": others, "topologyKey": key}]}
    out = LineDict(spec, line=getattr(spec, "line", 0))
    if isinstance(spec, LineDict):
        out.key_lines.update(spec.key_lines)
    out["affinity"] = affinity
    return out


def _statefulset(doc: Document, name: str, replicas: int, template: dict[str, Any], labels: dict[str, str],
                 exclusive: str | None, lws: str, group: int | None, written_at: str) -> Document:
    def placed(pod_spec: dict[str, Any]) -> dict[str, Any]:
        return _exclusive(pod_spec, lws, group, exclusive) if exclusive and group is not None else pod_spec

    return controller_workload(doc, "StatefulSet", name, replicas, template, labels, f"{written_at}.spec", placed)


def _expand(doc: Document) -> tuple[list[Document], DerivedWorkload]:
    spec = doc.body.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    lwt = spec.get("leaderWorkerTemplate")
    lwt = lwt if isinstance(lwt, dict) else {}
    groups = _count(spec.get("replicas"), 1)
    size = max(_count(lwt.get("size"), 1), 1)
    written_worker, written_leader = lwt.get("workerTemplate"), lwt.get("leaderTemplate")
    worker: dict[str, Any] = written_worker if isinstance(written_worker, dict) else {}
    leader: dict[str, Any] = written_leader if isinstance(written_leader, dict) else worker
    at = "spec.leaderWorkerTemplate"
    worker_at = f"{at}.workerTemplate"
    leader_at = f"{at}.leaderTemplate" if isinstance(written_leader, dict) else worker_at
    annotations = doc.metadata.get("annotations")
    exclusive = annotations.get(EXCLUSIVE) if isinstance(annotations, dict) else None
    exclusive = exclusive if isinstance(exclusive, str) and exclusive else None
    name = doc.name
    out: list[Document] = []
    if exclusive is None:
        # Without exclusive placement the groups' pods are alike: one leader StatefulSet, one for all workers.
        out.append(_statefulset(doc, name, groups, leader, {NAME: name, WORKER_INDEX: "0"}, None, name, None,
                                leader_at))
        if size > 1 and groups:
            out.append(_statefulset(doc, f"{name}-workers", groups * (size - 1), worker, {NAME: name}, None, name,
                                    None, worker_at))
    else:
        for group in range(groups):
            labels = {NAME: name, GROUP_INDEX: str(group)}
            out.append(_statefulset(doc, f"{name}-{group}-leader", 1, leader, {**labels, WORKER_INDEX: "0"},
                                    exclusive, name, group, leader_at))
            if size > 1:
                out.append(_statefulset(doc, f"{name}-{group}", size - 1, worker, labels, exclusive, name, group,
                                        worker_at))
    placement = (f"; each group alone in one {exclusive} domain (exclusive-topology)" if exclusive else "")
    plain = (f"planned as the pods the LeaderWorkerSet controller creates: {groups} group(s) of {size} pod(s), "
             f"a leader ({'leaderTemplate' if leader is not worker else 'workerTemplate'}) and {size - 1} worker(s) "
             f"(workerTemplate) each{placement}")
    return out, DerivedWorkload(KIND, name, doc.namespace, doc.origin, tuple(d.name for d in out), groups,
                                (), plain=plain, pod_specs=pod_specs_of(out))


def expand_leader_worker_sets(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each LeaderWorkerSet followed by the StatefulSets of its pods, and what was derived."""
    return expand_each(documents, is_leader_worker_set, _expand)
