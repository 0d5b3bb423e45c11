"""`--preferences honour|drop`: which preferences the optimal plan keeps.

kube-scheduler only scores preferences; Karpenter's provisioning decides what is launched, and it keeps a
preference whenever the pod can schedule with it, relaxing one (in `scheduling/preferences.py`'s order)
only for a pod that cannot. So under `honour` (the default) the optimal engine plans with every
preference the Karpenter simulation kept made required (`model/enforced_preferences.py`), and leaves the
ones it relaxed as preferences: the two plans are then compared like for like. Under `drop` the optimal
engine plans without them (each is only a tie-breaking penalty), and the summary states the cost of the
plan that keeps them next to it.

A preference counts as kept for a workload when Karpenter's plan meets it for every pod of the workload
and places them all; a workload Karpenter leaves partly unplaced keeps its preferences soft (making them
required could only leave more pods out). Should the simulation with the kept preferences made required
place fewer pods than Karpenter's own (its greedy order can differ), they are not enforced.

That second simulation is rarely needed: Karpenter's own plan keeps every preference it kept (that is what
kept means, on the plan's final counts), so it is a plan of the problem with them required as it stands:
its nodes and pods carried over (`carried_over`) are the warm start and the baseline, the very plan
`--engine karpenter` shows, and the simulation is not run again. It runs again only where the plan cannot
be carried over (a plan the NodePools' limits made the planner re-simulate, or an option the enforced
problem no longer offers a pod).
"""

from __future__ import annotations

from collections.abc import Iterable

from karpplan.constraints.registry import REGISTRY
from karpplan.engines.result import Solution, SolvedNode
from karpplan.model.pods import Pod
from karpplan.scheduling.problem import Problem


def has_preferences(pods: Iterable[Pod]) -> bool:
    """Does any of `pods` carry a preference the policy applies to?"""
    for template in {id(p.template): p.template for p in pods}.values():
        if (template.affinity.preferred or template.pod_affinity.preferred or template.pod_anti_affinity.preferred
                or any(not c.hard for c in template.spread)):
            return True
    return False


def kept_by_karpenter(problem: Problem, greedy: Solution) -> tuple[dict[int, set[int]], tuple[str, ...]]:
    """id(template) -> the ids of the preferences Karpenter's plan `greedy` kept for every pod of the
    workload (workloads it placed whole), and the preferences it left unmet, with what it did instead."""
    partial = {group.index for group, _ in greedy.unplaced}
    kept: dict[int, set[int]] = {}
    relaxed: list[str] = []
    for kind in REGISTRY:
        honoured, unmet = kind.preferences(problem, greedy)
        for group_index, preference in honoured:
            if group_index not in partial:
                kept.setdefault(id(problem.groups[group_index].template), set()).add(preference)
        relaxed.extend(str(u) for u in unmet)
    return kept, tuple(relaxed)


def carried_over(solution: Solution, problem: Problem) -> Solution | None:
    """`solution`, a plan of the same pods before their kept preferences were made required, as a plan of
    `problem` (those pods, those preferences required): the same nodes (by name, or by pool, instance type,
    zone, capacity type and labels) holding the same pods (by key), each one a node its group in `problem` may use.
    None when one cannot be carried over."""
    # An option is its pool, type, zone and capacity type *and* its labels: a NodePool requirement on a
    # custom key with several values (karpenter-blueprints' `capacity-spread`) gives one option per value,
    # and a node carried over keeps the value its spread counted it in.
    options = {(o.key, frozenset(o.labels.items())): o for o in problem.options}
    existing = {info.node.name: (i, info) for i, info in enumerate(problem.existing)}
    groups = {pod.key: group for group in problem.groups for pod in group.group.pods}
    pods = {pod.key: pod for group in problem.groups for pod in group.group.pods}
    if len(pods) != sum(len(n.pods) for n in solution.nodes) + len(solution.unplaced):
        return None
    existing_ok = {g.index: frozenset(g.existing_ok) for g in problem.groups}
    nodes: list[SolvedNode] = []
    for node in solution.nodes:
        if node.option is None:
            found = existing.get(node.name)
            if found is None:
                return None
            index, info = found
            allowed = [groups[p.key] for _, p in node.pods if p.key in groups]
            if len(allowed) != len(node.pods) or any(index not in existing_ok[g.index] for g in allowed):
                return None
            nodes.append(SolvedNode(node.name, info, None, [(groups[p.key], pods[p.key]) for _, p in node.pods]))
            continue
        option = options.get((node.option.key, frozenset(node.option.labels.items())))
        moved = [(groups[p.key], pods[p.key]) for _, p in node.pods if p.key in groups]
        if option is None or len(moved) != len(node.pods) or any(option.index not in g.option_ids for g, _ in moved):
            return None
        nodes.append(SolvedNode(node.name, None, option, moved))
    unplaced = [(groups[p.key], pods[p.key]) for _, p in solution.unplaced if p.key in groups]
    if len(unplaced) != len(solution.unplaced):
        return None
    return Solution(solution.engine, nodes, unplaced, solution.status, solution.lower_bound, solution.solve_seconds,
                    list(solution.notes), solution.exceeds_node_limits, solution.bound_source, solution.batches,
                    solution.not_simulated, solution.batch_note)

