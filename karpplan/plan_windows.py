"""Pods that ask nothing of the node's OS, placed on Windows nodes: said, never silent.

kube-scheduler and Karpenter read no image's OS: a pod without a `kubernetes.io/os` selector lands on a Windows node
whenever it fits there and nothing keeps it off (a taint the pod does not tolerate), and a Linux image then fails to
start. Both engines place pods so, as the cluster would; the plan says which workloads landed there and the two usual
remedies (a new user's migration repo: Redis on an untainted eksctl Windows node group, with nothing said)."""

from __future__ import annotations

from collections.abc import Iterable

from karpplan.costs.showback import workload_key
from karpplan.engines.result import SolvedNode
from karpplan.model import labels as L
from karpplan.model.node_os import WINDOWS, image_os


def _node_os(node: SolvedNode) -> str | None:
    if node.option is not None:
        return node.option.labels.get(L.OS)
    return node.existing.node.labels.get(L.OS) if node.existing is not None else None


def linux_pods_on_windows(nodes: Iterable[SolvedNode]) -> list[str]:
    """One warning naming the workloads whose pods, asking nothing of the OS, the plan places on Windows nodes."""
    workloads: dict[str, int] = {}
    windows_nodes: list[str] = []
    for node in nodes:
        if _node_os(node) != WINDOWS:
            continue
        here = [pod for group, pod in node.pods if not image_os(group.template).has(WINDOWS)]  # node_os.py
        if here:
            windows_nodes.append(node.name)
        for pod in here:
            key = workload_key(pod.workload, pod.namespace)
            workloads[key] = workloads.get(key, 0) + 1
    if not workloads:
        return []
    named = ", ".join(f"{w} ({n} pod{'s' if n > 1 else ''})" for w, n in sorted(workloads.items())[:4])
    more = f" and {len(workloads) - 4} more" if len(workloads) > 4 else ""
    one = len(workloads) == 1
    return [f"{named}{more} {'asks' if one else 'ask'} nothing of the node's OS and {'is' if one else 'are'} placed on "
            f"Windows nodes ({', '.join(windows_nodes[:3])}"
            f"{', ...' if len(windows_nodes) > 3 else ''}), as kube-scheduler and Karpenter would place them: a Linux "
            "image does not start there. Give Linux workloads nodeSelector kubernetes.io/os: linux, or taint the "
            "Windows nodes (os=windows:NoSchedule, tolerated by the Windows pods)"]
