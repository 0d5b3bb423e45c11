"""A pod that selects a label only EKS managed node groups, eksctl node groups or Fargate give their nodes
(`eks.amazonaws.com/capacityType: SPOT`, a node group's name), linted against Karpenter NodePools: Karpenter's
nodes never carry it, so what to write instead (eks-workshop's managed-node-group lessons, a migration from node
groups to Karpenter)."""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.lint.rules.blame import Written
from karpplan.model.eksctl import EKS_CAPACITY_TYPE_LABEL
from karpplan.model.labels import CAPACITY_TYPE
from karpplan.model.node_group_labels import KARPENTER_CAPACITY_TYPES, NODE_GROUP_LABELS
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirement


def node_group_fix(field: str | None, written: Sequence[Written], pools: Sequence[NodePool]) -> str | None:
    """The fix when the blamed field selects a node-group-only label (None for any other field); `pools`: the
    NodePools the pod could use instead."""
    found = next((w for w in written if w.path == field), None)
    if found is None:
        return None
    key = found.requirement.key
    what = NODE_GROUP_LABELS.get(key)
    if what is None:
        return None
    carried = f"{key} is a label only {what} gives its nodes; the nodes Karpenter launches never carry it"
    if key == EKS_CAPACITY_TYPE_LABEL:
        values = sorted(KARPENTER_CAPACITY_TYPES.get(v.upper(), v.lower()) for v in found.requirement.values) or ["spot"]
        wanted = Requirement(CAPACITY_TYPE, frozenset(values))
        shown = f": {values[0]}" if len(values) == 1 else f" In [{', '.join(values)}]"
        allowed = any(not p.requirements.get_or_any(CAPACITY_TYPE).intersect(wanted).is_empty() for p in pools)
        widen = "" if allowed else f" and let a NodePool allow {' or '.join(values)} (its {CAPACITY_TYPE} requirement)"
        return (f"{carried}: select {CAPACITY_TYPE}{shown} instead (Karpenter's label; its values are spot, "
                f"on-demand and reserved){widen}, or add the node group's nodes to the input (kubectl get nodes -o "
                "yaml, or an eksctl ClusterConfig) if the pod should run there")
    return (f"{carried}: select a NodePool by karpenter.sh/nodepool (or a label of its template) instead, or add "
            "the node group's nodes to the input (kubectl get nodes -o yaml, or an eksctl ClusterConfig) if the pod "
            "should run there")
