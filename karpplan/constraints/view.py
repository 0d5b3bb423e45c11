"""The plan's final state as the verifier reads it: every node with its labels, taints and pods.

Built from the solution alone (plus the existing nodes' bound pods), not from the engines' internal
counts, so the kinds' `violations` judge what a cluster would actually hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from karpplan.model.labels import HOSTNAME
from karpplan.model.taints import NO_SCHEDULE, Taint

if TYPE_CHECKING:
    from karpplan.engines.result import Solution, SolvedNode
    from karpplan.model.pods import Pod, PodTemplate
    from karpplan.model.selectors import LabelSelector
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


class PlanTally:
    """The plan's nodes counted once for every question the spread checks ask of them.

    The verifier and the unmet-preference report ask, for each group and rule, which nodes hold the group
    and how many pods each node holds that a selector matches. Asked node by node and pod by pod that is
    groups x rules x pods; here the pods of each node are tallied once by (namespace, labels), so a
    selector is matched once per distinct label set, and each group's nodes are found in one pass.
    """

    def __init__(self, solution: Solution) -> None:
        self.views = node_views(solution)
        self.by_name = {v.name: v for v in self.views}
        self._homes: dict[int, set[str]] = {}
        self._label_sets: dict[tuple[str, tuple[tuple[str, str], ...]], Mapping[str, str]] = {}
        self.tallies: list[Counter[tuple[str, tuple[tuple[str, str], ...]]]] = []
        for view in self.views:
            tally: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
            for namespace, labels, _, _ in view.counted_pods():
                key = (namespace, tuple(sorted(labels.items())))
                self._label_sets.setdefault(key, labels)
                tally[key] += 1
            self.tallies.append(tally)
            for group, _ in view.pending:
                self._homes.setdefault(id(group), set()).add(view.name)

    def homes(self, group: GroupInfo) -> set[str]:
        """The names of the nodes holding pods of the group."""
        return self._homes.get(id(group), set())

    def matching_counts(self, namespace: str, selector: LabelSelector) -> list[int]:
        """For each node (in `views` order), its pods in `namespace` whose labels the selector matches."""
        hits: dict[tuple[str, tuple[tuple[str, str], ...]], bool] = {}
        out: list[int] = []
        for tally in self.tallies:
            total = 0
            for key, count in tally.items():
                if key[0] != namespace:
                    continue
                hit = hits.get(key)
                if hit is None:
                    hit = hits[key] = selector.matches(self._label_sets[key])
                if hit:
                    total += count
            out.append(total)
        return out
