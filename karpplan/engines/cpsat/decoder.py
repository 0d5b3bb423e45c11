"""The optimal engine's decoder: the CP-SAT model's counts turned into real nodes and pods."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from karpplan.constraints.pool_headroom import Headroom
from karpplan.constraints.port_conflicts import ports_clash
from karpplan.constraints.spread_counts import node_cap
from karpplan.constraints.view import node_views
from karpplan.engines.result import Solution, SolvedNode, node_name
from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import Pod
from karpplan.model.resources import Resources
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.nodeclaim import PlannedNode
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.state import PlacementState
from karpplan.verify import verify

if TYPE_CHECKING:
    from karpplan.constraints.base import CountsModel
    from karpplan.engines.result import Solution



@dataclass
class ModelValues:
    """A CP-SAT solution's counts: pods per (group, existing node) `x`, per (group, option) `y`, nodes per
    option `n`, pods left out per group `u`."""

    x: dict[tuple[int, int], int]
    y: dict[tuple[int, int], int]
    n: dict[int, int]
    u: dict[int, int]


class Decoder:
    """Turns counts into nodes: existing placements as given, each option's pods packed into its nodes."""

    def __init__(self, problem: Problem, model: CountsModel, values: ModelValues) -> None:
        self.problem = problem
        self.model = model
        self.values = values
        self.state = PlacementState(problem)
        self.extra_nodes = 0
        self.dropped = 0  # pods the model placed that whole-pod packing could not
        # What each pool's limits leave for nodes beyond the model's counts: the model keeps its counts
        # within the limits (existing nodes of the pool counted in `Problem.headroom`), so an extra node
        # must fit in what those counts leave, or the plan overruns the NodePool's limits (issue 14).
        self.left: dict[str, Headroom] = {}
        for pool, headroom in problem.headroom.items():
            used = Resources()
            count = 0
            for k, n in values.n.items():
                option = problem.options[k]
                if option.pool.name == pool and n:
                    used = used + option.capacity.scaled(n)
                    count += n
            self.left[pool] = headroom.charged(used, count)

    def decode(self) -> tuple[list[SolvedNode], list[tuple[GroupInfo, Pod]]]:
        groups = self.problem.groups
        queues: dict[int, list[Pod]] = {g.index: list(g.group.pods) for g in groups}
        for (g, e), count in sorted(self.values.x.items()):
            slot = self.state.slots[e]
            for _ in range(count):
                self._force(groups[g], queues[g].pop(0), slot)
        new_slots: list[PlannedNode] = []
        by_option: dict[int, list[tuple[GroupInfo, int]]] = defaultdict(list)
        for (g, k), count in self.values.y.items():
            if count:
                by_option[k].append((groups[g], count))
        unplaced: list[tuple[GroupInfo, Pod]] = []
        for k, items in sorted(by_option.items()):
            option = self.problem.options[k]
            slots = [self.state.new_slot(option.pool, [option]) for _ in range(self.values.n.get(k, 0))]
            for s in slots:
                self.state.add_slot(s)
            # Most constrained groups first, larger pods first: first-fit decreasing with per-node rules.
            items.sort(key=lambda it: (-len(self._local_rules(it[0])), -it[0].template.requests.get("cpu"),
                                       -it[0].template.requests.get("memory")))
            for group_info, count in items:
                for _ in range(count):
                    pod = queues[group_info.index].pop(0)
                    target = self._best_slot(group_info, slots)
                    if target is None:
                        extra = self.state.new_slot(option.pool, [option])
                        if self._within_limits(option) and self._fits(group_info, extra):
                            self._charge_limits(option)
                            self.state.add_slot(extra)
                            slots.append(extra)
                            self.extra_nodes += 1
                            target = extra
                    if target is None:
                        unplaced.append((group_info, pod))
                        self.dropped += 1
                        continue
                    self._force(group_info, pod, target)
            new_slots.extend(slots)
        for group in groups:
            unplaced.extend((group, p) for p in queues[group.index])
        nodes: list[SolvedNode] = []
        for slot in self.state.slots[: len(self.problem.existing)]:
            nodes.append(SolvedNode(slot.name, slot.existing, None, list(slot.members)))
        ordinal = 0
        for slot in new_slots:
            if not slot.members:
                continue
            ordinal += 1
            nodes.append(SolvedNode(node_name(slot.options[0], ordinal), None, slot.options[0], list(slot.members)))
        if self.dropped:
            return self._drop_broken(nodes, unplaced)
        return nodes, unplaced

    def _drop_broken(self, nodes: list[SolvedNode], unplaced: list[tuple[GroupInfo, Pod]]
                     ) -> tuple[list[SolvedNode], list[tuple[GroupInfo, Pod]]]:
        """The model's rules hold for the pods it places; a pod the packing left out can take with it a rule
        another pod relied on (a required pod affinity partner, a zone's share of a spread). Such pods are left
        out too, as the verifier finds them, until the plan keeps every rule (issue 14: every plan valid)."""

        while True:
            solution = Solution("optimal", nodes, unplaced, "")
            broken: set[str] = set()
            for v in verify(self.problem, solution):
                culprit = v.pod or (_spread_culprit(solution, v.node, v.key) if v.kind == "topology-spread" else None)
                if culprit:
                    broken.add(culprit)
            if not broken:
                break
            for node in nodes:
                unplaced.extend(member for member in node.pods if member[1].key in broken)
                node.pods = [member for member in node.pods if member[1].key not in broken]
            nodes = [n for n in nodes if n.pods or not n.new]
            self.dropped += len(broken)
        return nodes, unplaced

    def _within_limits(self, option: LaunchOption) -> bool:
        """Does one more node of `option` keep its pool's limits (resources and limits.nodes)?"""
        return self.left[option.pool.name].admits(option.capacity)

    def _charge_limits(self, option: LaunchOption) -> None:
        self.left[option.pool.name] = self.left[option.pool.name].charged(option.capacity, 1)

    def _local_rules(self, group_info: GroupInfo) -> list[object]:
        topo = self.problem.topology
        rules: list[object] = [r for r in topo.rules_for(group_info.template) if r.hostname and r.hard]
        anti = topo.anti_affinity.get(id(group_info.template))
        if anti is not None:
            rules.extend(t for t in anti.terms if t.key == HOSTNAME)
        return rules

    def _fits(self, group_info: GroupInfo, slot: PlannedNode) -> bool:
        option = slot.options[0]
        if not (slot.requests + group_info.template.requests).fits_in(option.free):
            return False
        if ports_clash(group_info.template.host_ports, slot.host_ports):
            return False
        ns_labels = self.problem.namespace_labels
        pod_template = group_info.template
        for rule in self.problem.topology.rules_for(pod_template):
            if rule.hostname and rule.hard:
                here = sum(1 for h, _ in slot.members if rule.counts(h.template.namespace, h.template.labels))
                if here + (1 if rule.self_match else 0) > node_cap(rule):
                    return False
        anti = self.problem.topology.anti_affinity.get(id(pod_template))
        if anti is not None:
            for t in anti.terms:
                if t.key == HOSTNAME and any(t.matches(h.template.namespace, h.template.labels, ns_labels)
                                             for h, _ in slot.members):
                    return False
        for h, _ in slot.members:
            other = self.problem.topology.anti_affinity.get(id(h.template))
            if other is not None and any(t.key == HOSTNAME and t.matches(pod_template.namespace, pod_template.labels, ns_labels)
                                         for t in other.terms):
                return False
        aff = self.problem.topology.affinity.get(id(pod_template))
        if aff is not None and any(t.key == HOSTNAME for t in aff.terms):
            holders = [s for s in self.state.slots if any(h is group_info for h, _ in s.members)]
            if holders and slot not in holders:
                return False
        return True

    def _best_slot(self, group_info: GroupInfo, slots: Iterable[PlannedNode]) -> PlannedNode | None:
        fitting = [s for s in slots if self._fits(group_info, s)]
        if not fitting:
            return None
        if self._local_rules(group_info):
            # Spread hostname-constrained pods: the node with the fewest of this group's pods.
            return min(fitting, key=lambda s: (sum(1 for h, _ in s.members if h is group_info), s.index))
        return fitting[0]

    def _force(self, group_info: GroupInfo, pod: Pod, slot: PlannedNode) -> None:
        self.state._commit(group_info, pod, slot, slot.options)


def _spread_culprit(solution: Solution, domain: str, key: str) -> str | None:
    """A pending pod in `domain` of `key` that a hard spread rule on `key` counts (one of its own group
    matches it): leaving it out lowers the domain's count. A spread violation names a domain, not a pod."""

    for view in reversed(node_views(solution)):
        if view.domain(key) != domain:
            continue
        for group_info, pod in reversed(view.pending):
            for c in group_info.template.spread:
                selector = c.selector_for(group_info.template.labels)
                if c.hard and c.topology_key == key and selector is not None and selector.matches(pod.labels):
                    return pod.key
    return None


__all__ = ["Decoder"]
