"""Existing Nodes read without the pods that run on them (`kubectl get nodes -o yaml` pasted alone): planned as
if empty but for the input's DaemonSets, which overstates their free room, and always said."""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.model.inventory import InputNotice
from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import DaemonSet, Pod

_SHOWN = 3


def empty_nodes_notice(nodes: Sequence[ExistingNode], pods: Sequence[Pod],
                       daemonsets: Sequence[DaemonSet]) -> InputNotice | None:
    """A notice when the input holds Nodes (not Fargate's) and not one pod bound to any node: the nodes' own
    pods (kube-system's, the apps already running) are not in the input, so their free room is overstated."""
    real = [n for n in nodes if not n.is_fargate]
    if not real or any(p.node_name is not None for p in pods):
        return None
    names = ", ".join(n.name for n in real[:_SHOWN]) + (f" and {len(real) - _SHOWN} more" if len(real) > _SHOWN else "")
    daemons = (f"the input's {len(daemonsets)} DaemonSet(s)" if daemonsets else
               "no DaemonSet (the input holds none: not even EKS's aws-node and kube-proxy)")
    return InputNotice(real[0].origin, (
        f"{len(real)} existing node(s) ({names}) are read without the pods running on them: the input binds no pod "
        f"to any node, so karpplan plans them as empty but for {daemons}, and their real free room is smaller; "
        "add `kubectl get pods -A -o yaml` (and the DaemonSets) to the input to plan with what they run"))
