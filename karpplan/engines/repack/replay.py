"""A plan replayed into a placement state (final counts, for the unschedulable pods' reasons)."""

from __future__ import annotations

from karpplan.engines.result import Solution
from karpplan.scheduling.problem import Problem
from karpplan.scheduling.state import PlacementState


def state_for(problem: Problem, solution: Solution) -> PlacementState:
    """Replay a plan into a placement state (final counts for the unschedulable pods' reasons)."""
    state = PlacementState(problem)
    existing = {s.name: s for s in state.slots}
    for node in solution.nodes:
        if node.option is None:
            slot = existing[node.name]
            options = slot.options
        else:
            slot = state.new_slot(node.option.pool, [node.option])
            state.add_slot(slot)
            options = [node.option]
        for group, pod in node.pods:
            state._commit(group, pod, slot, options)
    return state
