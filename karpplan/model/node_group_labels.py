"""Node labels only node groups, Fargate or another cloud's node pools give their nodes: the nodes Karpenter
launches never carry them, so a pod selecting one never runs on a NodePool's node (explain's `known`
reads it here too)."""

from __future__ import annotations

from karpplan.model.eksctl import EKS_CAPACITY_TYPE_LABEL
from karpplan.model.eksctl import KARPENTER_CAPACITY_TYPES as KARPENTER_CAPACITY_TYPES  # lint reads it here

# label key -> the capacity whose nodes carry it (never a Karpenter node)
NODE_GROUP_LABELS = {
    "eks.amazonaws.com/nodegroup": "an EKS managed node group",
    "eks.amazonaws.com/nodegroup-image": "an EKS managed node group",
    EKS_CAPACITY_TYPE_LABEL: "an EKS managed node group",
    "alpha.eksctl.io/nodegroup-name": "an eksctl node group",
    "alpha.eksctl.io/cluster-name": "an eksctl node group",
    "eks.amazonaws.com/fargate-profile": "a Fargate profile",
    "cloud.google.com/gke-nodepool": "a GKE node pool",
    "kubernetes.azure.com/agentpool": "an AKS node pool",
}
