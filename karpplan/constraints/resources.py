"""Resources: a node holds the requests of its pods within its allocatable, DaemonSets' share included.

* Filter: kube-scheduler's NodeResourcesFit on an existing node (`Insufficient cpu`, `Too many pods`)
  against allocatable minus the requests of bound pods and of DaemonSet pods still to come.
* Model: every pending pod is placed or counted as left out (demand); existing nodes are single bins
  (exact rows); new nodes of one launch option are aggregated: the fluid row
  `sum_g r[g] y[g,k] <= A[k] n[k]`, whole pods per node `y[g,k] <= floor(A[k]/r[g]) n[k]`, and a
  redundant total-capacity row. The decoder packs each option's pods into real nodes. In the exact
  slot model each slot's pods fit the room of the option it launches (exact), plus the total row.
* Verifier: on every node, the pending pods' requests fit in allocatable minus what bound pods and the
  DaemonSets take (a new node: the DaemonSets that would run on its instance type).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from karpplan.constraints.base import ConstraintKind, CountsModel, SlotCountsModel, Violation
from karpplan.constraints.view import node_views
from karpplan.model.resources import Resources

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from karpplan.constraints.view import SolvedPlan
    from karpplan.model.pods import PodTemplate
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import GroupInfo, Problem



def floor_fit(requests: Resources, room: Resources, cap: int) -> int:
    """How many pods with these requests fit into `room` (at most `cap`)."""
    best = cap
    for name, amount in requests.items():
        if amount > 0:
            best = min(best, room.get(name) // amount)
    return max(best, 0)


class ResourcesKind(ConstraintKind):
    name = "resources"
    summary = "a node holds its pods' requests within allocatable minus DaemonSet overhead"
    messages = {
        "insufficient": "Insufficient {resource}",
        "too_many_pods": "Too many pods",
    }

    def insufficient(self, resource: str) -> str:
        """kube-scheduler's NodeResourcesFit reason for one resource."""
        return self.reason("too_many_pods") if resource == "pods" else self.reason("insufficient", resource=resource)

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        return [self.insufficient(r) for r in template.requests.shortfalls(info.free)]

    def add_to_model(self, model: CountsModel) -> None:
        self._demand(model)
        self._existing_capacity(model)
        self._new_capacity(model)

    def add_to_slot_model(self, model: SlotCountsModel) -> None:
        self._demand(model)
        self._existing_capacity(model)
        self._slot_capacity(model)

    @staticmethod
    def _slot_capacity(model: SlotCountsModel) -> None:
        """Each slot holds its pods within the room of the option it launches (exact), and the redundant
        total-capacity row."""
        m = model.model
        by_slot: dict[int, list[tuple[GroupInfo, cp_model.IntVar]]] = defaultdict(list)
        for (g, s), v in model.y.items():
            by_slot[s].append((model.groups[g], v))
        choices: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
        for (s, k), z in model.z.items():
            choices[s].append((k, z))
        options = model.problem.options
        for s, items in by_slot.items():
            for d in model.dims:
                terms = [(v, group.template.requests.get(d)) for group, v in items if group.template.requests.get(d)]
                if terms:
                    m.add(sum(c * v for v, c in terms) <= sum(options[k].free.get(d) * z for k, z in choices[s]))
        for d in model.dims:
            demand = [(group.template.requests.get(d), group.size - model.u[group.index]) for group in model.groups
                      if group.template.requests.get(d)]
            if demand:
                fixed = sum(max(model.problem.existing[e].free.get(d), 0) for e in {e for (_, e) in model.x})
                m.add(sum(c * expr for c, expr in demand)
                      <= sum(options[k].free.get(d) * z for (_, k), z in model.z.items()) + fixed)

    @staticmethod
    def _demand(model: CountsModel) -> None:
        """Every pending pod is placed somewhere or counted as left out."""
        for g in model.groups:
            parts = [v for _, v in model.y_of[g.index]] + [v for _, v in model.x_of[g.index]]
            model.model.add(sum(parts) + model.u[g.index] == g.size)

    @staticmethod
    def _existing_capacity(model: CountsModel) -> None:
        """Existing nodes are single bins: these rows are exact."""
        by_node: dict[int, list[tuple[GroupInfo, cp_model.IntVar]]] = defaultdict(list)
        for (g, e), v in model.x.items():
            by_node[e].append((model.groups[g], v))
        for e, items in by_node.items():
            free = model.problem.existing[e].free
            for d in model.dims:
                terms = [(v, group.template.requests.get(d)) for group, v in items if group.template.requests.get(d)]
                if terms:
                    model.model.add(sum(c * v for v, c in terms) <= max(free.get(d), 0))

    @staticmethod
    def _new_capacity(model: CountsModel) -> None:
        """Fluid capacity per launch option, whole pods per node, and the redundant total row."""
        m = model.model
        by_option: dict[int, list[tuple[GroupInfo, cp_model.IntVar]]] = defaultdict(list)
        for (g, k), v in model.y.items():
            by_option[k].append((model.groups[g], v))
        options = {o.index: o for o in model.options}
        for k, items in by_option.items():
            o = options[k]
            nk = model.n[k]
            free = o.free
            for d in model.dims:
                terms = [(v, group.template.requests.get(d)) for group, v in items if group.template.requests.get(d)]
                if terms:
                    m.add(sum(c * v for v, c in terms) <= free.get(d) * nk)
            for group, v in items:
                m.add(v <= floor_fit(group.template.requests, free, group.size) * nk)
        for d in model.dims:
            demand = [(group.template.requests.get(d), group.size - model.u[group.index]) for group in model.groups
                      if group.template.requests.get(d)]
            if not demand:
                continue
            fixed = sum(max(model.problem.existing[e].free.get(d), 0) for e in {e for (_, e) in model.x})
            from ortools.sat.python.cp_model import LinearExpr  # OR-Tools only once a model is built

            supply = LinearExpr.weighted_sum([model.n[k] for k in by_option], [options[k].free.get(d) for k in by_option])
            m.add(sum(c * expr for c, expr in demand) <= supply + fixed)

    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        del problem
        return capacity_violations(solution)


def capacity_violations(solution: SolvedPlan) -> list[Violation]:
    """Nodes whose pending pods' requests exceed what is left of their allocatable."""
    out: list[Violation] = []
    for view in node_views(solution):
        node = view.solved
        if node.existing is not None:
            room = node.existing.node.allocatable - node.existing.used
        else:
            assert node.option is not None
            room = node.option.allocatable - node.option.daemon_overhead
        used: dict[str, int] = defaultdict(int)
        for group, _ in view.pending:
            for name, amount in group.template.requests.items():
                used[name] += amount
        for name, amount in sorted(used.items()):
            if amount > 0 and amount > room.get(name):
                out.append(Violation(RESOURCES.name, "", node.name,
                                     f"{node.name}: {name} requests {amount} > {room.get(name)} left of allocatable"))
        if view.pending and node.option is not None and not node.option.daemon_overhead.fits_in(node.option.allocatable):
            out.append(Violation(RESOURCES.name, "", node.name, f"{node.name}: the DaemonSets alone overflow the node"))
    return out


RESOURCES = ResourcesKind()
