"""The plan's final state as the verifier reads it: every node with its labels, taints and pods.

Built from the solution alone (plus the existing nodes' bound pods), not from the engines' internal
counts, so the kinds' `violations` judge what a cluster would actually hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from karpplan.model.labels import HOSTNAME
from karpplan.model.selectors import LabelIndex
from karpplan.model.taints import NO_SCHEDULE, Taint

if TYPE_CHECKING:
    from karpplan.model.pods import Pod, PodTemplate
    from karpplan.model.selectors import LabelSelector
    from karpplan.scheduling.candidates import LaunchOption
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import GroupInfo

UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)



class SolvedPlanNode(Protocol):
    """What the kinds read of one node of a plan (the engines' `SolvedNode`): existing or launched, and its
    pending pods."""

    @property
    def name(self) -> str: ...

    @property
    def existing(self) -> ExistingNodeInfo | None: ...

    @property
    def option(self) -> LaunchOption | None: ...

    @property
    def pods(self) -> Sequence[tuple[GroupInfo, Pod]]: ...

    @property
    def new(self) -> bool: ...


class SolvedPlan(Protocol):
    """What the kinds read of a plan (the engines' `SolvedPlan`): its nodes, the launched ones apart."""

    @property
    def nodes(self) -> Sequence[SolvedPlanNode]: ...

    @property
    def new_nodes(self) -> Sequence[SolvedPlanNode]: ...

@dataclass
class NodeView:
    """One node of the plan: existing or new, with the pods the plan puts there and those bound to it."""

    solved: SolvedPlanNode
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


def node_views(solution: SolvedPlan) -> list[NodeView]:
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

    def __init__(self, solution: SolvedPlan) -> None:
        self.views = node_views(solution)
        self.by_name = {v.name: v for v in self.views}
        self.position = {v.name: i for i, v in enumerate(self.views)}
        self._homes: dict[int, set[str]] = {}
        self._label_sets: dict[tuple[str, tuple[tuple[str, str], ...]], Mapping[str, str]] = {}
        self.tallies: list[Counter[tuple[str, tuple[tuple[str, str], ...]]]] = []
        # label set -> (node position, pods) of the nodes holding it; (namespace, key, value) -> label sets
        self._where: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[int, int]]] = {}
        self._by_labels: LabelIndex[tuple[str, tuple[tuple[str, str], ...]]] | None = None
        # The spread kind's eligible nodes per (key, node affinity, tolerations): see `eligible` there
        self.eligible_memo: dict[tuple[object, ...], dict[int, str]] = {}
        for view in self.views:
            tally: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
            for namespace, labels, _, _ in view.counted_pods():
                key = (namespace, tuple(sorted(labels.items())))
                self._label_sets.setdefault(key, labels)
                tally[key] += 1
            self.tallies.append(tally)
            for key, n in tally.items():
                self._where.setdefault(key, []).append((len(self.tallies) - 1, n))
            for group, _ in view.pending:
                self._homes.setdefault(id(group), set()).add(view.name)

    def homes(self, group: GroupInfo) -> set[str]:
        """The names of the nodes holding pods of the group."""
        return self._homes.get(id(group), set())

    def matching_counts(self, namespace: str, selector: LabelSelector) -> list[int]:
        """For each node (in `views` order), its pods in `namespace` whose labels the selector matches."""
        out = [0] * len(self.tallies)
        for key in self._label_index().candidates(namespace, selector):
            if selector.matches(self._label_sets[key]):
                for position, count in self._where[key]:
                    out[position] += count
        return out

    def _label_index(self) -> LabelIndex[tuple[str, tuple[tuple[str, str], ...]]]:
        """The distinct (namespace, labels) of the plan's pods, by label (`LabelIndex`), built on first use:
        a selector is then tested only on the label sets holding a pair it requires."""
        if self._by_labels is None:
            self._by_labels = LabelIndex()
            for key in self._where:
                self._by_labels.add(key, key[0], self._label_sets[key])
        return self._by_labels
