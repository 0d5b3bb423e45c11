"""KubeRay's RayCluster (ray.io/v1; also the cluster of a RayJob or RayService) read as the pods the KubeRay
operator creates, so its head and worker pods (GPU workers for vLLM and Ray Serve) are planned
(ray-project/kuberay ray-operator/controllers/ray/common/pod.go, utils/util.go).

* The head: one pod of `headGroupSpec.template`, and with `enableInTreeAutoscaling: true` the `autoscaler`
  sidecar container (500m CPU, 512Mi memory, or `autoscalerOptions.resources`).
* Each worker group of `workerGroupSpecs`: `GetWorkerGroupDesiredReplicas` pods of its `template`: `replicas`
  held within `minReplicas` (default 0) and `maxReplicas`, times `numOfHosts` (default 1); none when the group
  or the cluster is suspended. Workers carry the `wait-gcs-ready` init container (200m CPU, 256Mi memory).
* Labels (`labelPod`): `ray.io/is-ray-node: yes`, `ray.io/cluster`, `ray.io/node-type` (head or worker),
  `ray.io/group` (`headgroup` for the head), `ray.io/identifier`, `app.kubernetes.io/name: kuberay`,
  `app.kubernetes.io/created-by: kuberay-operator`, over the template's own.

They are planned as ReplicaSets `<cluster>-head` and `<cluster>-<group>-worker` (KubeRay creates bare pods with
generated names; the planner names them `<set>-<i>`). A RayJob's submitter Job is not planned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.model.derived import controller_workload, expand_each
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of

GROUP = "ray.io"
# kind -> where its RayCluster spec is written
KINDS = {"RayCluster": "spec", "RayJob": "spec.rayClusterSpec", "RayService": "spec.rayClusterConfig"}
AUTOSCALER = {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}
WAIT_GCS = {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"cpu": "200m", "memory": "256Mi"}}


def is_ray_cluster(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind in KINDS


def _count(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _desired(group: dict[str, Any]) -> int:
    """`GetWorkerGroupDesiredReplicas`: replicas within [minReplicas, maxReplicas], times numOfHosts."""
    if group.get("suspend") is True:
        return 0
    low = _count(group.get("minReplicas"), 0)
    high = _count(group.get("maxReplicas"), 2**31 - 1)
    replicas = group.get("replicas")
    wanted = low if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < low else min(replicas, high)
    return wanted * max(_count(group.get("numOfHosts"), 1), 1)


def _with_container(spec: dict[str, Any], field: str, name: str, resources: object) -> LineDict:
    """The pod spec with one more container (or init container) of `resources`, every field at its line."""
    out = LineDict(spec, line=getattr(spec, "line", 0))
    if isinstance(spec, LineDict):
        out.key_lines.update(spec.key_lines)
    written = spec.get(field)
    items = LineList(written if isinstance(written, list) else [], line=getattr(written, "line", out.line))
    items.append({"name": name, "image": name, "resources": resources})
    out[field] = items
    return out


def _replica_set(doc: Document, name: str, replicas: int, template: object, labels: dict[str, str],
                 written_at: str, extra: tuple[str, str, object] | None) -> Document:
    def with_extra(pod_spec: dict[str, Any]) -> dict[str, Any]:
        return pod_spec if extra is None else _with_container(pod_spec, *extra)

    return controller_workload(doc, "ReplicaSet", name, replicas, template, labels, f"{written_at}.template.spec",
                               with_extra)


def _labels(cluster: str, node_type: str, group: str) -> dict[str, str]:
    return {"ray.io/is-ray-node": "yes", "ray.io/cluster": cluster, "ray.io/node-type": node_type,
            "ray.io/group": group, "ray.io/identifier": f"{cluster}-{node_type}",
            "app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator"}


def _expand(doc: Document) -> tuple[list[Document], DerivedWorkload]:
    at = KINDS[doc.kind]
    node: object = doc.body
    for part in at.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    spec: dict[str, Any] = node if isinstance(node, dict) else {}
    name = doc.name
    suspended = spec.get("suspend") is True
    out: list[Document] = []
    head = spec.get("headGroupSpec")
    head = head if isinstance(head, dict) else {}
    autoscaler = None
    if spec.get("enableInTreeAutoscaling") is True:
        options = spec.get("autoscalerOptions")
        own = options.get("resources") if isinstance(options, dict) else None
        autoscaler = ("containers", "autoscaler", own if isinstance(own, dict) else AUTOSCALER)
    out.append(_replica_set(doc, f"{name}-head", 0 if suspended else 1, head.get("template"),
                            _labels(name, "head", "headgroup"), f"{at}.headGroupSpec", autoscaler))
    groups = spec.get("workerGroupSpecs")
    shown: list[str] = []
    for index, group in enumerate(groups if isinstance(groups, list) else []):
        if not isinstance(group, dict):
            continue
        written = group.get("groupName")
        group_name = written if isinstance(written, str) and written else f"group-{index}"
        count = 0 if suspended else _desired(group)
        out.append(_replica_set(doc, f"{name}-{group_name}-worker", count, group.get("template"),
                                _labels(name, "worker", group_name), f"{at}.workerGroupSpecs[{index}]",
                                ("initContainers", "wait-gcs-ready", WAIT_GCS)))
        shown.append(f"{count} {group_name}")
    workers = ", ".join(shown) or "none"
    plain = (f"planned as the pods the KubeRay operator creates: a head{' (and its autoscaler sidecar)' * bool(autoscaler)}"
             f" and workers per group ({workers}){'; suspended: no pod' if suspended else ''}")
    pods = sum(int(d.body["spec"].get("replicas", 1)) for d in out)
    return out, DerivedWorkload(doc.kind, name, doc.namespace, doc.origin, tuple(d.name for d in out), pods, (),
                                plain=plain, pod_specs=pod_specs_of(out))


def expand_ray_clusters(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each RayCluster (RayJob, RayService) followed by the ReplicaSets of its pods."""
    return expand_each(documents, is_ray_cluster, _expand)
