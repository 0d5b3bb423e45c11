"""Karpenter's steady state as a plan: the consolidated cluster, shown when the optimiser's plan costs more.

`plan` consolidates Karpenter's launch to its steady state (`from_plan.py`). When the optimal engine had too
little time (a loaded machine, the wall guard), its plan can cost more than that steady state, a valid
cluster karpplan holds already. The consolidated cluster becomes a `Solution` of the plan's problem: the
problem's existing nodes with the pending pods on them, the launch's nodes left with their `LaunchOption`,
and each replacement consolidation launched with the problem's option of the same pool, type, zone,
capacity type, labels and taints. It is offered only when it is comparable with the plan (no existing node
removed, no bare pod evicted for good, every pod the launch placed still placed), names an option of the
problem for every node and keeps every rule (`verify`); otherwise the plan says why it is not shown, never
guesses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from karpplan.consolidate.loop import SteadyState as Consolidated
from karpplan.consolidate.snapshot import SimNode
from karpplan.engines.result import Solution, SolvedNode, node_name
from karpplan.model import labels as L
from karpplan.plan import SteadyState
from karpplan.planner import SteadyPlan, SteadyStateRequest
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

# Cheaper than the plan shown by more than the JSON's rounding ($/h to 6 decimals): anything less is a tie,
# and the optimiser's own plan stays.
CHEAPER_BY = 1e-6
# Notes of the optimiser's that say which plan is shown: untrue once the consolidated cluster is.
SAYS_WHICH_PLAN = ("the plan shown is", "; it is shown")


def offered(steady: SteadyState, request: SteadyStateRequest, result: Consolidated, new: set[str]) -> SteadyState:
    """`steady` as it is, or (when it is cheaper than the optimal engine's plan, `request.optimal`) a
    `SteadyPlan` with the consolidated cluster as the plan to show instead, or why it cannot be."""
    optimal, problem, cost = request.optimal, request.problem, steady.hourly_cost
    if optimal is None or problem is None or cost is None or steady.existing_removed > 0:
        return steady  # removing nodes the plans keep, it is another cluster (the summary says so)
    fixed = request.launch_cost - request.solution.cost  # Fargate pods and static NodePools' nodes
    shown = optimal.cost + fixed
    if cost >= shown - CHEAPER_BY:
        return steady
    settled = settled_plan(problem, request.solution, result, new)
    if isinstance(settled, str):
        then = ("the optimiser's plan is proven the cheapest" if optimal.status == "optimal"
                else "a longer --time-limit may find a cheaper plan")
        why_not = (f"the optimiser's own plan costs ${shown:.4f}/h, more than Karpenter's steady state "
                   f"(${cost:.4f}/h), which is not shown as the plan: {settled}; {then}")
        return SteadyPlan(**vars(steady), why_not=why_not)
    if len(settled.unplaced) > len(optimal.unplaced):
        return steady  # the optimiser's plan places more pods: the costs compare different things
    lower = optimal.lower_bound
    notes = [n for n in optimal.notes if not any(s in n for s in SAYS_WHICH_PLAN)]
    notes.append(f"the optimiser's own plan cost ${shown:.4f}/h; Karpenter's consolidated plan (its launch after "
                 f"consolidation, its steady state) is cheaper at ${cost:.4f}/h and is shown (a longer --time-limit "
                 "may find a cheaper one)")
    plan = Solution(optimal.engine, settled.nodes, settled.unplaced, "feasible",
                    None if lower is None else min(lower, settled.cost), optimal.solve_seconds, notes,
                    bound_source=optimal.bound_source, not_simulated=optimal.not_simulated)
    return SteadyPlan(**vars(steady), plan=plan)


def settled_plan(problem: Problem, launch: Solution, result: Consolidated, new: set[str]) -> Solution | str:
    """The consolidated cluster as a verified plan of `problem`, or why it is not comparable or not one."""
    if any(n.name not in new and not n.replacement for a in result.actions for n in a.nodes):
        return "consolidation removes existing nodes the plans keep"
    if result.state.gone:
        return f"consolidation evicts {len(result.state.gone)} bare pod(s) for good"
    pending = {pod.key: (group, pod) for group in problem.groups for pod in group.group.pods}
    launched = {s.name: s for s in launch.new_nodes}
    existing = {info.node.name: info for info in problem.existing}
    nodes: dict[str, SolvedNode] = {info.node.name: SolvedNode(info.node.name, info, None) for info in problem.existing}
    ordinal = 0
    for sim in result.state.nodes:
        pods = [pending[p.key] for p in result.state.pods_on.get(sim.name, []) if p.key in pending]
        if sim.name in existing:
            nodes[sim.name].pods.extend(pods)
            continue
        option = launched[sim.name].option if sim.name in launched else _option_of(problem.options, sim)
        if option is None:
            if not pods and not sim.replacement:
                continue  # a node of the cluster the problem leaves out, holding none of the plan's pods
            return f"node {sim.name} is not a node the plan can launch ({_what(sim)})"
        ordinal += 1
        nodes[sim.name] = SolvedNode(node_name(option, ordinal), None, option, pods)
    placed = {pod.key for node in nodes.values() for _, pod in node.pods}
    lost = sorted({pod.key for node in launch.nodes for _, pod in node.pods} - placed)
    if lost:
        return f"{len(lost)} pod(s) Karpenter's launch placed are left out ({', '.join(lost[:3])})"
    unplaced = [(g, p) for key, (g, p) in pending.items() if key not in placed]
    solution = Solution(launch.engine, list(nodes.values()), unplaced, "feasible")
    broken = verify(problem, solution)
    if broken:
        return f"it breaks {len(broken)} scheduling rule(s) every plan keeps (first, {broken[0]})"
    return solution


def _option_of(options: Sequence[LaunchOption], sim: SimNode) -> LaunchOption | None:
    """The problem's launch option a replacement node was launched as: same pool, type, zone, capacity
    type, labels and taints (None: the problem has none such)."""
    labels = {k: v for k, v in sim.node.labels.items() if k != L.HOSTNAME}
    if not sim.replacement or sim.pool is None:
        return None
    key = (sim.pool, sim.node.labels.get(L.INSTANCE_TYPE), sim.node.labels.get(L.ZONE), sim.node.capacity_type)
    return next((o for o in options if o.key == key and o.taints == sim.node.taints
                 and _same_labels(o.labels, labels, o.instance_type.name)), None)


def _same_labels(option: Mapping[str, str], node: Mapping[str, str], instance_type: str) -> bool:
    return {**option, L.INSTANCE_TYPE: option.get(L.INSTANCE_TYPE, instance_type)} == node


def _what(sim: SimNode) -> str:
    labels = sim.node.labels
    return " ".join(v for v in (labels.get(L.NODEPOOL), labels.get(L.INSTANCE_TYPE), labels.get(L.ZONE)) if v)


