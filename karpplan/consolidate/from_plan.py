"""`plan`'s Karpenter baseline consolidated: the steady state a cluster run by Karpenter settles in.

Karpenter's provisioning plan (the Karpenter simulation's Solution over all batches) becomes a simulated
cluster: the existing nodes with their bound pods, the pods the plan placed on them, and every node it
launches with its pods (named as the plan names them, labelled as the NodePool labels them); the pods it
could not place stay pending. The Node annotations, the NodePools' `spec.disruption` and the
PodDisruptionBudgets come from the plan's own reading of the input (`Inventory.disruption_documents`, typed by
`snapshot.py`): no file is read again, so input from stdin is consolidated too. `loop.steady_state`
consolidates within the time it is given; what it cannot compute honestly (no time left) is said, never
guessed. When the steady state is cheaper than the optimal engine's plan, its cluster is offered as the plan
to show instead (`steady_plan.py`).
"""

from __future__ import annotations

import time
from dataclasses import replace

from karpplan.consolidate.loop import SteadyState as Consolidated
from karpplan.consolidate.loop import steady_state
from karpplan.consolidate.snapshot import SimNode, Snapshot, make_snapshot
from karpplan.consolidate.state import ClusterState
from karpplan.consolidate.steady_plan import offered
from karpplan.engines.result import Solution, SolvedNode
from karpplan.model import labels as L
from karpplan.model.nodes import ExistingNode
from karpplan.plan import SteadyState
from karpplan.planner import SteadyStateRequest

# The time limit ran out before a pass found nothing to do: Karpenter would go on, so what the commands reached
# so far is not its steady state; it is said as what it is (where consolidation had got to), never quoted as the
# baseline.
OUT_OF_TIME = "not computed: the time limit ran out"
# A consolidation simulation re-schedules part of the launch's pods onto the rest of its cluster (the nodes
# left filtered one by one): the first, multi-node consolidation's largest batch, is expected to take up to
# twice the launch's own simulation (aws diverse 1,000 pods: 1.2 s against 0.53 s on a loaded machine), so one
# that cannot end in time is not started.
FIRST_SIMULATION_FACTOR = 2.0


def out_of_time_note(seconds: float, actions: int, reached: float | None) -> str:
    """Why the steady state is not computed when the time limit cut consolidation: after how many commands,
    in how long, and what those alone bring the launch down to (Karpenter would go on from there)."""
    if seconds <= 0:
        return f"{OUT_OF_TIME} before consolidation could start; raise --time-limit"
    where = "" if reached is None else f"; they alone take the launch to ${reached:.4f}/h, and Karpenter would go on"
    return (f"{OUT_OF_TIME} after {actions} consolidation command{'s' if actions != 1 else ''} "
            f"({seconds:.1f}s of consolidation{where}); raise --time-limit")


def _launched_node(solved: SolvedNode) -> SimNode:
    """A node the plan launches, as the cluster would have it: the NodePool's labels, the plan's name."""
    option = solved.option
    assert option is not None
    labels = dict(option.labels)
    labels[L.HOSTNAME] = solved.name
    labels.setdefault(L.INSTANCE_TYPE, option.instance_type.name)
    node = ExistingNode(solved.name, labels, option.taints, allocatable=option.allocatable, capacity=option.capacity,
                        hourly_price=option.price, capacity_type=option.capacity_type)
    return SimNode(node, {}, option.price)


def launched(snapshot: Snapshot, solution: Solution) -> tuple[Snapshot, set[str]]:
    """The snapshot once the plan is carried out (its pods bound where it placed them, its new nodes up, its
    unplaced pods pending), and the names of the nodes it launched."""
    nodes = list(snapshot.nodes)
    pods_on = {name: list(pods) for name, pods in snapshot.pods_on.items()}
    new = {s.name for s in solution.new_nodes}
    for solved in solution.nodes:
        if solved.name in new:
            nodes.append(_launched_node(solved))
            pods_on[solved.name] = []
        elif solved.name not in pods_on:  # an eksctl node group's or a static NodePool's node: not a candidate
            assert solved.existing is not None
            node = solved.existing.node
            nodes.append(SimNode(node, {}, node.hourly_price))
            pods_on[solved.name] = list(solved.existing.bound)
        pods_on[solved.name].extend(replace(pod, node_name=solved.name) for _, pod in solved.pods)
    pending = [pod for _, pod in solution.unplaced]
    return replace(snapshot, nodes=nodes, pods_on=pods_on, pending=pending), new


def figures(result: Consolidated, request: SteadyStateRequest, new: set[str]) -> SteadyState:
    """The steady state's cost, nodes and commands, with what the figure includes beyond the plan's nodes."""
    savings = sum(a.savings for a in result.actions)
    left = sum(1 for n in result.state.nodes if n.name in new or n.replacement)
    nodes = request.launch_nodes - len(new) + left
    notes = []
    existing = [n for a in result.actions for n in a.nodes if n.name not in new and not n.replacement]
    if existing:
        names = ", ".join(n.name for n in existing[:3]) + (f" and {len(existing) - 3} more" if len(existing) > 3 else "")
        notes.append(f"includes ${sum(n.cost for n in existing):.4f}/h of existing nodes consolidation removes "
                     f"({names}), which the plans keep")
    evicted = [p.key for a in result.actions for p in a.evicted]
    if evicted:
        notes.append(f"consolidation evicts {len(evicted)} bare pod(s) for good ({', '.join(evicted[:3])}"
                     + (", ..." if len(evicted) > 3 else "") + "): nothing recreates them")
    return SteadyState(request.launch_cost - savings, nodes, len(result.actions), "; ".join(notes) or None,
                       existing_removed=sum(n.cost for n in existing))


def steady_state_of(request: SteadyStateRequest) -> SteadyState:
    """Karpenter's plan consolidated to its steady state, or why that was not computed (never a guess)."""
    if request.time_limit <= 0:
        return SteadyState(None, actions=0, note=out_of_time_note(0.0, 0, None))
    started = time.monotonic()  # the time limit covers building the cluster to consolidate too
    inventory = request.inventory
    snapshot = make_snapshot(inventory, inventory.disruption_documents, request.catalog)
    after_launch, new = launched(snapshot, request.solution)
    state = ClusterState.of(after_launch, request.catalog)
    state.launched = len(new)  # replacements are numbered after the launch's nodes: no name is taken twice
    result = steady_state(state, time_limit=request.time_limit - (time.monotonic() - started),
                          first_simulation=FIRST_SIMULATION_FACTOR * request.solution.solve_seconds,
                          exact_reasons=False)  # plan quotes no node's reason
    if not result.complete:
        saved = sum(a.savings for a in result.actions)
        note = out_of_time_note(request.time_limit, len(result.actions), request.launch_cost - saved if saved else None)
        return SteadyState(None, actions=len(result.actions), note=note)
    return offered(figures(result, request, new), request, result, new)
