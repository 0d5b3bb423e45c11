"""Karpenter's `SimulateScheduling` for a set of candidates, run by karpplan's Karpenter engine.

The candidates' nodes leave the cluster; their pods that must be rescheduled (`IsReschedulable`, minus the
pods a PDB fully blocks) become pending beside the pods already pending, and one run of the provisioning
simulation (`engines/karpenter.py`, the engine `plan` uses) places them on the nodes left (as `plan`
treats existing Nodes) or on new NodeClaims. The run's new claims are what a command would launch; each
claim's instance-type flexibility (every launch option of its NodePool that holds all its pods) is what
Karpenter's price rule filters. Nodes being deleted (`SimNode.deleting`) take no pod, and their reschedulable
pods are placed by every run too, as Karpenter's `SimulateScheduling` adds `deletingNodePods` (not those a
do-not-disrupt annotation or a PDB that never allows an eviction holds there): one that would not schedule blocks
the command as the candidates' own pods do; they stay bound where they are. A candidate's pod placed on a node still
initializing makes the command invalid, and a consolidation never moves one onto a node inside its NodePool's
`consolidateAfter` (drift may).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from karpplan.catalog import instance_types_for, node_labels
from karpplan.consolidate.candidates import do_not_disrupt, is_evictable, is_reschedulable
from karpplan.consolidate.cron import go_duration
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import Pod, PodTemplate, group_pods
from karpplan.model.resources import Resources
from karpplan.plan_reasons import reasons_for
from karpplan.scheduling.build_problem import build_problem
from karpplan.scheduling.candidates import LaunchOption, OptionTable, option_table
from karpplan.scheduling.existing_nodes import ExistingNodeInfo
from karpplan.scheduling.state import PlacementState

if TYPE_CHECKING:
    from karpplan.consolidate.candidates import Candidate
    from karpplan.consolidate.snapshot import SimNode
    from karpplan.consolidate.state import ClusterState
    from karpplan.engines.result import SolvedNode

_ZONAL = ("topology.kubernetes.io/zone", "topology.k8s.aws/zone-id", "failure-domain.beta.kubernetes.io/zone")


NEW_CLAIM = None  # `Outcome.where` of a pod placed on a new NodeClaim
NOWHERE = ""  # ... of a pod the simulation could not place (no node is named "")


@dataclass
class NewClaim:
    """A NodeClaim the simulation would launch: the engine's choice and the options that hold its pods."""

    chosen: LaunchOption
    pods: list[Pod]
    options: list[LaunchOption] = field(default_factory=list)  # cheapest first


@dataclass
class Outcome:
    """What re-scheduling the candidates' pods gives."""

    moving: list[Pod]  # the candidates' pods that must find a new home
    placed: dict[str, str] = field(default_factory=dict)  # pod key -> existing node name
    claims: list[NewClaim] = field(default_factory=list)
    errors: list[tuple[Pod, str]] = field(default_factory=list)  # moving pods that would not schedule
    # every simulated pod (moving or pending) -> the existing node it went to, NEW_CLAIM or NOWHERE
    where: dict[str, str | None] = field(default_factory=dict)

    def error_text(self) -> str:
        """`Results.NonPendingPodSchedulingErrors`, as a sentence (at most 5 pods named)."""
        shown = [f"{pod.key} => {why}" for pod, why in self.errors[:5]]
        more = f" and {len(self.errors) - 5} other(s)" if len(self.errors) > 5 else ""
        return "Not all pods would schedule, " + "; ".join(shown) + more


_ZONES: list[tuple[OptionTable, npt.NDArray[np.str_]]] = []


def _zones(table: OptionTable) -> npt.NDArray[np.str_]:
    """Each row's zone (kept for the last table asked about: the simulations share one)."""
    if not _ZONES or _ZONES[0][0] is not table:
        _ZONES[:] = [(table, np.array([o.zone for o in table.options], dtype=np.str_))]
    return _ZONES[0][1]


def _flexibility(solved: SolvedNode, options: Sequence[LaunchOption]) -> list[LaunchOption]:
    """Every option of the claim's NodePool that all its pods may use and that holds them all, cheapest first
    (price, type, zone, capacity type: the table's `cheapest` rank)."""
    chosen = solved.option
    assert chosen is not None
    groups = {id(g): g for g, _ in solved.pods}
    requests = Resources()
    for _, pod in solved.pods:
        requests = requests + pod.requests
    zonal = any(c.topology_key in _ZONAL for g in groups.values() for c in g.template.hard_spread) or any(
        t.topology_key in _ZONAL for g in groups.values()
        for t in (*g.template.pod_affinity.required, *g.template.pod_anti_affinity.required))
    distinct = list({id(g.option_ids): g.option_ids for g in groups.values()}.values())
    allowed = distinct[0].intersection(*distinct[1:])  # the options every group may use
    table = option_table(options)
    mask = np.zeros(table.size, dtype=np.bool_)
    mask[table.rows_of(allowed)] = True
    rows = table.pool_rows(chosen.pool)
    rows = rows[mask[rows]]
    rows = rows[table.fits(requests, rows)]
    if zonal:
        rows = rows[_zones(table)[rows] == chosen.zone]
    own = table.rows_of([chosen.index])
    if not np.isin(own, rows).all():
        rows = np.concatenate((rows, own))
    rows = rows[np.argsort(table.rank("cheapest")[rows], kind="stable")]
    return table.rows(rows)


def receivers(state: ClusterState, leaving: set[str], pods: Sequence[Pod]) -> set[str]:
    """The nodes left with room for at least one of `pods` (the others cannot take any: leaving them out of
    the placement, not of topology, only saves work)."""
    wanted = [Resources(dict(s)) for s in {tuple(sorted(p.requests.items())) for p in pods}]
    rooms = state.rooms()
    if rooms is not None:
        names = rooms.names
        return {names[i] for i in np.flatnonzero(rooms.with_room_for(wanted)).tolist() if names[i] not in leaving}
    return {n.name for n in state.nodes if n.name not in leaving and not n.node.unschedulable
            and any(w.fits_in(state.room(n)) for w in wanted)}


def _folded(state: ClusterState, leaving: set[str], moving: Sequence[Pod]) -> tuple[list[ExistingNode], list[Pod]]:
    """The nodes left, each shrunk by the bound pods the placement need not see, and the pods it must."""
    index = state.bound_index()
    by_node = index.by_node(index.relevant(moving))
    nodes: list[ExistingNode] = []
    pods: list[Pod] = []
    for n, bare in zip(state.nodes, state.folded_all(), strict=True):
        if n.name in leaving:
            continue
        kept = by_node.get(n.name)
        if kept:
            pods.extend(kept)
            nodes.append(state.folded(n, kept))
        else:
            nodes.append(bare)
    return nodes, pods


def _leaving_with(state: ClusterState, deleting: Sequence[str]) -> list[Pod]:
    """The pods of nodes being deleted that Karpenter will place again (`CurrentlyReschedulablePods`):
    reschedulable, not protected by `karpenter.sh/do-not-disrupt` and not held by a PDB that never allows an
    eviction (they stay until the node's terminationGracePeriod, if any, runs out)."""
    pods = [p for name in deleting for p in state.pods_on.get(name, []) if is_reschedulable(p)]
    if not pods:
        return pods
    limits = state.pdb_limits() if state.pdbs else None
    return [p for p in pods if not do_not_disrupt(p)
            and not (limits is not None and is_evictable(p) and limits.fully_blocked(p))]


def uninitialized_error(node: str, claim_only: bool = False) -> str:
    """`UninitializedNodeError` (helpers.go): a candidate's pod the simulation put on a node still starting
    (`claim_only`: a NodeClaim whose Node has not registered, named as Karpenter names it)."""
    return f"would schedule against uninitialized {'nodeclaim' if claim_only else 'node'}/{node}"


def waits_out_consolidate_after(state: ClusterState, node: SimNode) -> bool:
    """`IsUnderConsolidateAfter` of a destination: initialized, its NodePool's `consolidateAfter` a positive
    duration that has not passed since its last pod event (karpenter#3006, v1.14)."""
    if node.uninitialized or not node.not_consolidatable or node.pool is None:
        return False
    settings = state.disruption.get(node.pool)
    after = go_duration(settings.consolidate_after) if settings is not None and settings.consolidate_after else None
    return after is not None and after > timedelta(0)


def _destinations(state: ClusterState, moving: Sequence[Pod],
                  ) -> Callable[[PodTemplate], Callable[[ExistingNodeInfo], list[str]]]:
    """The static filters, and for consolidation (`IsConsolidationSimulation`) one more: a candidate's pod
    never goes to a node still inside its `consolidateAfter` (pending pods and those of deleting nodes may)."""
    waiting = {n.name for n in state.nodes if waits_out_consolidate_after(state, n)}
    templates = {id(p.template) for p in moving}
    if not waiting:
        return state.static_filter

    def for_template(template: PodTemplate) -> Callable[[ExistingNodeInfo], list[str]]:
        base = state.static_filter(template)
        if id(template) not in templates:
            return base

        def on_node(info: ExistingNodeInfo) -> list[str]:
            if info.node.name in waiting:
                return ["node(s) are under their NodePool's consolidateAfter"]
            return base(info)
        return on_node
    return for_template


def simulate(state: ClusterState, candidates: Sequence[Candidate], consolidation: bool = True) -> Outcome:
    """Re-schedule the candidates' pods on the rest of the cluster (one provisioning run). `consolidation`:
    a consolidation's simulation, whose candidates' pods shun nodes inside `consolidateAfter` (not drift's)."""

    leaving = {c.node.name for c in candidates}
    moving = [replace(p, node_name=None) for c in candidates for p in c.moving]
    outcome = Outcome(moving)
    if not moving:
        return outcome
    deleting = [n.name for n in state.nodes if n.deleting]
    leaving.update(deleting)
    evacuating = [replace(p, node_name=None) for p in _leaving_with(state, deleting)]
    others = evacuating + state.pending
    nodes, pods = _folded(state, leaving, moving + others)
    inventory = replace(state.inventory, nodes=tuple(nodes), pods=tuple(pods + moving + others))
    problem = build_problem(inventory, state.catalog, group_pods(moving + others), instance_types_for,
                            node_labels, launch_options=state.launch_options(),
                            receivers=receivers(state, leaving, moving + others),
                            static_filter_for=_destinations(state, moving) if consolidation else state.static_filter,
                            eligible_cache=state.eligible,
                            pool_check=state.pool_verdict, shared=state.shared, option_tests_key=state.filter_shape)
    # Replicas share a template, so a group holds pods the queue had apart: they keep their listed order.
    problem.queue_rank = {id(p): i for i, p in enumerate(moving + others)}
    starting = {n.name for n in state.nodes if n.uninitialized}
    problem.existing_last = frozenset(starting)  # `sortExistingNodes`: initialized nodes are tried first
    solution, _ = solve_karpenter(problem, max_batches=1)
    moving_keys = {p.key for p in moving}
    blocking = moving_keys | {p.key for p in evacuating}
    for solved in solution.nodes:
        mine = [p for _, p in solved.pods if p.key in moving_keys]
        for _, p in solved.pods:
            outcome.where[p.key] = solved.name if solved.existing is not None else NEW_CLAIM
        if solved.existing is not None:
            for p in mine:
                outcome.placed[p.key] = solved.name
        elif solved.pods:
            assert solved.option is not None
            outcome.claims.append(NewClaim(solved.option, [p for _, p in solved.pods],
                                           _flexibility(solved, problem.options)))
    for _, p in solution.unplaced:
        outcome.where[p.key] = NOWHERE
    # SimulateScheduling: a candidate's pod placed on an uninitialized node makes the command invalid
    claims = {n.name for n in state.nodes if n.claim_only}
    outcome.errors.extend((p, uninitialized_error(where, where in claims)) for p in moving
                          if (where := outcome.placed.get(p.key)) is not None and where in starting)
    unplaced = [(g, p) for g, p in solution.unplaced if p.key in blocking]
    if unplaced:

        placement = PlacementState(problem)
        for group, pod in unplaced:
            reasons = reasons_for(problem, group, pod, placement)
            outcome.errors.append((pod, reasons[0] if reasons else "no node or NodePool fits it"))
    return outcome
