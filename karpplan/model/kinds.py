"""Which documents karpplan reads, and as what: (API group, kind) -> role; which are cluster-scoped; a
document's name (or its `generateName`)."""

from __future__ import annotations

from karpplan.inputs.loader import Document

# (API group, kind) -> what it is. Legacy groups are accepted where old manifests still use them.
_KINDS: dict[tuple[str, str], str] = {
    ("", "Pod"): "Pod",
    ("", "Node"): "Node",
    ("", "Namespace"): "Namespace",
    ("", "LimitRange"): "LimitRange",
    ("", "ResourceQuota"): "ResourceQuota",
    ("", "ReplicationController"): "workload",
    ("apps", "Deployment"): "workload",
    ("apps", "StatefulSet"): "workload",
    ("apps", "ReplicaSet"): "workload",
    ("apps", "DaemonSet"): "DaemonSet",
    ("extensions", "Deployment"): "workload",
    ("extensions", "ReplicaSet"): "workload",
    ("extensions", "DaemonSet"): "DaemonSet",
    ("batch", "Job"): "workload",
    ("batch", "CronJob"): "workload",
    ("argoproj.io", "Rollout"): "workload",  # Argo Rollouts: a Deployment's replicas and template
    ("karpenter.sh", "NodePool"): "NodePool",
    ("karpenter.sh", "Provisioner"): "Provisioner",
    ("karpenter.sh", "NodeOverlay"): "NodeOverlay",
    ("karpenter.k8s.aws", "EC2NodeClass"): "NodeClass",
    ("karpenter.k8s.aws", "AWSNodeTemplate"): "NodeClass",
    ("eks.amazonaws.com", "NodeClass"): "NodeClass",
    ("node.k8s.io", "RuntimeClass"): "RuntimeClass",
    ("scheduling.k8s.io", "PriorityClass"): "PriorityClass",
    ("eksctl.io", "ClusterConfig"): "ClusterConfig",
    ("", "PersistentVolumeClaim"): "PersistentVolumeClaim",
    ("", "PersistentVolume"): "PersistentVolume",
    ("storage.k8s.io", "StorageClass"): "StorageClass",
    ("autoscaling", "HorizontalPodAutoscaler"): "HorizontalPodAutoscaler",
    ("keda.sh", "ScaledObject"): "ScaledObject",  # KEDA: the HPA it makes scales the target
    ("vpcresources.k8s.aws", "SecurityGroupPolicy"): "SecurityGroupPolicy",  # security groups for pods: pod-eni
}
_KINDS_WITHOUT_GROUP = {kind: role for (_, kind), role in _KINDS.items()}
CLUSTER_SCOPED = frozenset(
    {
        "Node", "Namespace", "NodePool", "Provisioner", "NodeOverlay", "NodeClass", "RuntimeClass", "PriorityClass",
        "ClusterConfig",
    }
    | {"PersistentVolume", "StorageClass"}
)
FIRST_PASS = ("RuntimeClass", "PriorityClass", "Namespace", "LimitRange", "ResourceQuota", "HorizontalPodAutoscaler",
              "ScaledObject", "SecurityGroupPolicy")  # read first
STORAGE_ROLES = ("StorageClass", "PersistentVolume", "PersistentVolumeClaim")


def role_of(doc: Document) -> str | None:
    """What karpplan reads a document as (None: a kind it skips)."""
    if not doc.api_version:
        return _KINDS_WITHOUT_GROUP.get(doc.kind)
    return _KINDS.get((doc.group, doc.kind))


def document_name(doc: Document) -> str:
    """A document's name, or its `generateName` without the trailing dash (what a created object starts as)."""
    if doc.name:
        return doc.name
    generated = doc.metadata.get("generateName")
    return generated.rstrip("-") or generated if isinstance(generated, str) else ""
