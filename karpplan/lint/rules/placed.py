"""How many pods the planner's Karpenter engine places when some groups are placed alone: the counting behind
the rules that say a workload cannot run all its replicas (spread-caps-replicas, pool-limits-too-small).

The engine is `plan`'s own (`solve_karpenter`): NodePool limits are charged as Karpenter charges them (each
launched node's whole capacity, `constraints/pool_headroom.py`), so lint counts what `plan` counts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypeVar

from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.result import Solution
from karpplan.scheduling.problem import GroupInfo
from karpplan.scheduling.problem import Problem as SchedulingProblem

_T = TypeVar("_T")


def alone(problem: SchedulingProblem, groups: Sequence[GroupInfo], *, without_hard_spread: GroupInfo | None = None,
          ) -> SchedulingProblem:
    """The problem with only these groups pending (their rules kept, other templates' rules dropped)."""
    topology = problem.topology
    kept = {id(g.template) for g in groups}

    def only_kept(by_template: dict[int, _T]) -> dict[int, _T]:
        return {k: v for k, v in by_template.items() if k in kept}

    # The other templates' rules would only be counted for nothing (they place no pod), and building their
    # counts for every workload is most of lint's time on large repositories.
    spread = only_kept(topology.spread)
    if without_hard_spread is not None:
        spread[id(without_hard_spread.template)] = [
            r for r in topology.rules_for(without_hard_spread.template) if not r.hard]
    topology = dataclasses.replace(
        topology, spread=spread, affinity=only_kept(topology.affinity), anti_affinity=only_kept(topology.anti_affinity),
        preferred_affinity=only_kept(topology.preferred_affinity), preferred_anti=only_kept(topology.preferred_anti))
    return dataclasses.replace(problem, groups=list(groups), topology=topology)


def best_placement(problem: SchedulingProblem, wanted: Sequence[GroupInfo]) -> Solution:
    """The better of two placements that keep every rule and the limits: limits as capacity (no batch
    pessimism), and Karpenter's own subtractMax run (what `plan --engine karpenter` launches). Each grows open
    claims greedily, so either may strand a pod the other places (a claim grown to an 8xlarge for a third
    7-CPU pod uses the limit three 2xlarge would not): as many run as the better of the two places. A run
    whose one batch launched past `limits.nodes` (Karpenter's batch may) keeps no limit and is not counted.
    `wanted`: the groups whose pods are counted."""
    ids = {id(g) for g in wanted}
    total = sum(g.size for g in wanted)
    best: tuple[int, Solution] | None = None
    for exact in (True, False):
        solution, _ = solve_karpenter(problem, exact_limits=exact)
        if solution.exceeds_node_limits and best is not None:
            continue  # one batch launched past limits.nodes: not an answer within the limits
        placed = total - sum(1 for g, _ in solution.unplaced if id(g) in ids)
        if best is None or placed > best[0]:
            best = (placed, solution)
        if placed >= total:
            break
    assert best is not None
    return best[1]


def placed_of(solution: Solution, group_info: GroupInfo) -> int:
    """How many of the group's pods the solution places."""
    return group_info.size - sum(1 for g, _ in solution.unplaced if g is group_info)
