"""The plan's final state as the verifier reads it: every node with its labels, taints and pods.

Built from the solution alone (plus the existing nodes' bound pods), not from the engines' internal
counts, so the kinds' `violations` judge what a cluster would actually hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from karpplan.model.labels import HOSTNAME
from karpplan.model.taints import NO_SCHEDULE, Taint

if TYPE_CHECKING:
    from karpplan.engines.result import Solution, SolvedNode
    from karpplan.model.pods import Pod, PodTemplate
    from karpplan.scheduling.problem import GroupInfo

UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)


@dataclass
class NodeView:
    """One node of the plan: existing or new, with the pods the plan puts there and those bound to it."""

    solved: SolvedNode
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    fargate: bool
    pending: list[tuple[GroupInfo, Pod]]
    bound: list[Pod] = field(default_factory=list)  # bound pods counted by spread and affinity

    @property
    def name(self) -> str:
        return self.solved.name

    @property
    def new(self) -> bool:
        return self.solved.new

    def domain(self, key: str) -> str | None:
        """The node's value of a topology key (hostname falls back to the node's name)."""
        value = self.labels.get(key)
        if value is None and key == HOSTNAME:
            return self.name
        return value

    def counted_pods(self) -> list[tuple[str, Mapping[str, str], PodTemplate | None, Pod]]:
        """(namespace, labels, template of a pending pod or None for a bound one, pod) of every pod here."""
        out: list[tuple[str, Mapping[str, str], PodTemplate | None, Pod]] = [
            (p.namespace, p.labels, None, p) for p in self.bound]
        out.extend((p.namespace, p.labels, group.template, p) for group, p in self.pending)
        return out


def node_views(solution: Solution) -> list[NodeView]:
    """Every node of the solution, in order."""
    views: list[NodeView] = []
    for node in solution.nodes:
        if node.existing is not None:
            n = node.existing.node
            taints = n.taints + ((UNSCHEDULABLE_TAINT,) if n.unschedulable else ())
            bound = [p for p in node.existing.bound if p.counts_for_topology]
            views.append(NodeView(node, n.labels, taints, n.is_fargate, list(node.pods), bound))
        else:
            assert node.option is not None
            labels = {**node.option.labels, HOSTNAME: node.name}
            views.append(NodeView(node, labels, tuple(node.option.taints), False, list(node.pods)))
    return views
