"""kube-scheduler's static filters for existing nodes, with its reason strings.

Static means: independent of where other pending pods go. Resources, topology spread and inter-pod
affinity depend on the rest of the plan and live in `state.py` / `topology.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import HostPort, Pod, PodTemplate
from karpplan.model.resources import Resources
from karpplan.model.taints import NO_SCHEDULE, SCHEDULING_EFFECTS, Taint, Toleration, tolerates, untolerated

UNSCHEDULABLE = "node(s) were unschedulable"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
POD_AFFINITY = "node(s) didn't match pod affinity rules"
POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
HOST_PORTS = "node(s) didn't have free ports for the requested pod ports"
TOO_MANY_PODS = "Too many pods"

_UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)


def untolerated_taint_reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {taint.kube_text()}"


def insufficient(resource: str) -> str:
    return TOO_MANY_PODS if resource == "pods" else f"Insufficient {resource}"


@dataclass
class ExistingNodeInfo:
    """An existing node with what is already on it."""

    node: ExistingNode
    bound: list[Pod] = field(default_factory=list)
    used: Resources = Resources()  # requests of bound pods + DaemonSet pods still to come
    host_ports: list[HostPort] = field(default_factory=list)

    @property
    def free(self) -> Resources:
        return self.node.allocatable - self.used


def static_reasons(template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
    """The filters that fail for this pod on this node regardless of other pending pods (empty = passes)."""
    node = info.node
    reasons: list[str] = []
    if node.unschedulable and not tolerates(template.tolerations, _UNSCHEDULABLE_TAINT):
        reasons.append(UNSCHEDULABLE)
    bad = untolerated(template.tolerations, node.taints, SCHEDULING_EFFECTS)
    if bad:
        reasons.append(untolerated_taint_reason(bad[0]))
    if not template.affinity.matches(node.labels, node.name):
        reasons.append(NODE_AFFINITY)
    if any(p.conflicts(q) for p in template.host_ports for q in info.host_ports):
        reasons.append(HOST_PORTS)
    for c in template.hard_spread:
        if c.topology_key not in node.labels and c.topology_key != "kubernetes.io/hostname":
            reasons.append(SPREAD_MISSING_LABEL)
            break
    for resource in template.requests.shortfalls(info.free):
        reasons.append(insufficient(resource))
    return reasons


def fits_taints(tolerations: Sequence[Toleration], taints: Sequence[Taint]) -> bool:
    return not untolerated(tolerations, taints, SCHEDULING_EFFECTS)


def aggregate_message(total_nodes: int, reasons_by_node: dict[str, list[str]]) -> str:
    """kube-scheduler's FitError text: `0/3 nodes are available: 1 Insufficient cpu, 2 ...`."""
    counts: dict[str, int] = {}
    for reasons in reasons_by_node.values():
        for r in dict.fromkeys(reasons):
            counts[r] = counts.get(r, 0) + 1
    parts = sorted(f"{n} {r}" for r, n in counts.items())
    return f"0/{total_nodes} nodes are available: " + ", ".join(parts) + "."
