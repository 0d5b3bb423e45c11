"""Custom resources karpplan does not read but whose controller runs pods (a RedisCluster, a Zalando
`postgresql`, a Flux HelmRelease's chart): a spec with pod-shaped fields (containers, resource requests,
affinity, tolerations, a nodeSelector). lint says so, so that "0 errors" does not read as those pods judged."""

from __future__ import annotations

from karpplan.inputs.kustomize import is_kustomization
from karpplan.inputs.loader import Document
from karpplan.model.build import made_into_workloads, role_of

# Groups of Kubernetes' own APIs (their kinds that run pods karpplan reads; the rest run none), and of the node
# APIs karpplan reads (a Karpenter NodeClaim's resources are a node's, not a pod's).
_BUILT_IN = frozenset({"", "apps", "batch", "policy", "autoscaling", "extensions", "karpenter.sh", "karpenter.k8s.aws",
                       "eks.amazonaws.com", "eksctl.io", "karpplan.io"})
_POD_FIELDS = frozenset({"affinity", "tolerations", "nodeSelector", "containers", "topologySpreadConstraints"})
_DEPTH = 8


def _pod_shaped(value: object, depth: int = 0) -> str | None:
    """The first pod-shaped field under `value` (a requests/limits `resources` counts), None when none."""
    if depth > _DEPTH:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _POD_FIELDS and item:
                return str(key)
            if key == "resources" and isinstance(item, dict) and ("requests" in item or "limits" in item):
                return "resources"
            found = _pod_shaped(item, depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for item in value:
            found = _pod_shaped(item, depth + 1)
            if found:
                return found
    return None


def unread_pod_resource(doc: Document) -> str | None:
    """The pod-shaped field of a custom resource karpplan neither reads nor derives workloads of (None for any
    other document)."""
    if (not doc.kind or role_of(doc) is not None or made_into_workloads(doc) or is_kustomization(doc)
            or doc.group in _BUILT_IN or doc.group.endswith(".k8s.io") or doc.kind == "CustomResourceDefinition"):
        return None
    return _pod_shaped(doc.body.get("spec"))
