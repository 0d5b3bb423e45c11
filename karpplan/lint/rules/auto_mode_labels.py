"""A pod that selects an instance attribute by the other flavour's label key: Karpenter's AWS provider labels its
nodes `karpenter.k8s.aws/instance-*`, EKS Auto Mode's nodes carry the same attributes as
`eks.amazonaws.com/instance-*` (aws-samples/karpenter-blueprints nvidia-gpu-workload: "On Auto Mode, that label key
is eks.amazonaws.com/instance-gpu-name. Update the workload accordingly"). Linted against NodePools of the other
flavour only, the selector matches no node: the fix names the key to write."""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.lint.rules.blame import Written
from karpplan.model.pools import NodePool

KARPENTER_AWS = "karpenter.k8s.aws/instance-"
EKS_AUTO = "eks.amazonaws.com/instance-"


def auto_mode_label_fix(field: str | None, written: Sequence[Written], pools: Sequence[NodePool]) -> str | None:
    """The fix when the blamed field selects `karpenter.k8s.aws/instance-X` and every NodePool is EKS Auto Mode's
    (or `eks.amazonaws.com/instance-X` and none is); None for any other field."""
    found = next((w for w in written if w.path == field), None)
    dynamic = [p for p in pools if p.kind == "NodePool"]
    if found is None or not dynamic:
        return None
    key = found.requirement.key
    if key.startswith(KARPENTER_AWS) and all(p.auto_mode for p in dynamic):
        meant, theirs, ours = EKS_AUTO + key.removeprefix(KARPENTER_AWS), "EKS Auto Mode's", "Karpenter's AWS provider"
    elif key.startswith(EKS_AUTO) and not any(p.auto_mode for p in dynamic):
        meant, theirs, ours = KARPENTER_AWS + key.removeprefix(EKS_AUTO), "Karpenter's AWS provider's", "EKS Auto Mode"
    else:
        return None
    names = ", ".join(sorted(p.name for p in dynamic)[:4])
    return (f"{key} is the label {ours} gives its nodes; {theirs} nodes (NodePool {names}) carry the same attribute "
            f"as {meant}: select {meant} instead")
