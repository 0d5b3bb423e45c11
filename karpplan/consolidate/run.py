"""The library entry of `karpplan consolidate`: read the snapshot, consolidate to the steady state, re-pack
optimally, and assemble the report (`ConsolidateOptions` in, `Report` out).

The command keeps one time limit (`--time-limit auto|SECONDS`, `time_limit.py`: `auto` is fitted to the pods
the simulation may move), counted from when the snapshot is read: consolidation to the steady state, what the
report is about, takes what it needs of it but `REPACK_SHARE`, and the optimal re-pack gets what is left. When
the limit cuts consolidation, the report says so: the actions found so far stand (Karpenter would take them, in
that order), the nodes not reached are not decided, never "no command applies", and the command exits 3.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from karpplan.catalog.overlays import apply_node_overlays
from karpplan.catalog.spot_prices import spot_price_source
from karpplan.catalog.types import Catalog
from karpplan.consolidate.candidates import is_reschedulable
from karpplan.consolidate.claims import claim_only_nodes
from karpplan.consolidate.loop import SteadyState, steady_state
from karpplan.consolidate.optimal import Repack, movable, optimal_repack
from karpplan.consolidate.report import NodeVerdict, Report, Summary, removal_reason
from karpplan.consolidate.snapshot import SimNode, Snapshot, make_snapshot, read_documents_or_fail
from karpplan.consolidate.state import ClusterState
from karpplan.engines.effort import AUTO_TIME_LIMIT_MAX_SECONDS
from karpplan.errors import InputError, Origin
from karpplan.inputs.loader import DEFAULT_MAX_BYTES, Document
from karpplan.model.build import build_inventory
from karpplan.model.default_namespace import in_namespace
from karpplan.model.pods import Pod
from karpplan.planner import catalog_for
from karpplan.time_limit import TimeLimit

FALLBACK_REASON = "No consolidation command applies to it"
# The share of the limit kept for the optimal re-pack (it gets more when consolidation ends early), and the
# least time worth starting it in (its process, problem and warm start); below it, it is not run.
REPACK_SHARE = 0.25
MIN_REPACK_SECONDS = 0.5
# The re-pack's plan stops this share of its time before the process running it is stopped.
REPACK_PLAN_SHARE = 0.9
# What the first consolidation simulation is expected to take, per pod that may move: it re-schedules the pods
# of up to a hundred nodes onto the rest of the cluster and builds what later ones reuse (on a loaded machine,
# 1.2 s at 1,000 pods, 2.8 s to 5 s at 4,505); one that cannot end in time is not started.
FIRST_SIMULATION_POD_SECONDS = 1e-3
# `auto` adds the consolidation simulation's own time to the re-pack's: passes times candidates, each pass
# over the nodes left, so it grows with the square of the nodes. Measured on 2 cores (docs/consolidate.md,
# 2026-11-27): 6e-5 s per node squared with both cores, 7.5e-5 with one; twice that leaves room for a
# loaded machine (1,043 nodes: 109 s, of which a quiet machine needs 55).
CONSOLIDATION_NODE_SQUARED_SECONDS = 1e-4


@dataclass(frozen=True)
class ConsolidateOptions:
    paths: tuple[str, ...] = ()
    region: str | None = None
    catalog: str | None = None
    zones: tuple[str, ...] = ()
    spot_to_spot: bool = False  # the SpotToSpotConsolidation feature gate
    time_limit: float | None = None  # seconds for the whole simulation; None: `auto`, fitted to the snapshot
    max_file_size: int = DEFAULT_MAX_BYTES
    now: datetime | None = None  # `--now`: the time budget schedules are evaluated at (None: the snapshot's)
    namespace: str | None = None  # `--namespace`: where objects that name none are (`model/default_namespace.py`)
    allow_estimated_prices: bool = False  # `--allow-estimated-prices`, as `plan` reads it
    spot_prices: str | None = None  # `--spot-prices FILE`, as `plan` reads it


def time_limit_of(options: ConsolidateOptions, state: ClusterState) -> float:
    """The seconds the simulation keeps: those given, else `auto` of the pods it may move (every pending pod
    and every reschedulable pod bound to a node), as `plan` fits its limit to its pending pods. The state's
    pods, whose replicas of one controller share a template (`share_templates`), so its pod groups are the
    workloads, not one per pod as a snapshot lists them. `auto` adds what consolidating that many nodes takes
    (`CONSOLIDATION_NODE_SQUARED_SECONDS`), within the auto limit's ceiling, so that a large cluster's steady
    state is computed under the default limit rather than cut."""
    limit = TimeLimit(options.time_limit)
    fitted = limit.fitted(_may_move(state))
    if not limit.auto:
        return fitted
    simulation = round(CONSOLIDATION_NODE_SQUARED_SECONDS * len(state.nodes) ** 2)  # none under 71 nodes
    return float(max(fitted, min(AUTO_TIME_LIMIT_MAX_SECONDS, fitted + simulation)))


def _may_move(state: ClusterState) -> list[Pod]:
    return [*state.pending, *(p for pods in state.pods_on.values() for p in pods if is_reschedulable(p))]


def not_decided(actions: int) -> str:
    """A node's reason when the time limit cut consolidation before it was decided."""
    return (f"Not decided: the time limit ran out after {actions} consolidation command(s), before a pass found "
            "nothing more to do; raise --time-limit")


def read(options: ConsolidateOptions, documents: Sequence[Document] | None = None) -> tuple[Snapshot, ClusterState]:
    """The snapshot and the cluster state to simulate; InputError (exit 2) for unreadable input.
    `documents`: the paths' documents, already read (stdin can be read only once)."""

    if documents is None:
        documents = read_documents_or_fail(options.paths, options.max_file_size)
    documents = in_namespace(documents, options.namespace)
    made, unlaunched = claim_only_nodes(documents)
    documents = [*documents, *made]
    inventory = build_inventory(documents)  # DaemonSets as Karpenter reads them (model/daemon_pods.py)
    derived = [str(notice) for notice in inventory.daemon_notices]
    catalog = catalog_for(inventory, options.region, options.catalog, zones=options.zones,
                          allow_estimated_prices=options.allow_estimated_prices, spot_prices_file=options.spot_prices)
    catalog, _ = apply_node_overlays(catalog, inventory.overlays, inventory.nodepools)
    snapshot = make_snapshot(inventory, documents, catalog, options.now)
    snapshot.warnings[:0] = [*unlaunched, *derived]
    return snapshot, ClusterState.of(snapshot, catalog)


def verdicts(result: SteadyState, snapshot: Snapshot) -> list[NodeVerdict]:
    """Every node of the snapshot and every replacement: removed (by which action) or kept (why)."""
    out: list[NodeVerdict] = []
    removed: dict[str, int] = {}
    for i, a in enumerate(result.actions, start=1):
        for n in a.nodes:
            removed[n.name] = i
    seen: set[str] = set()
    everyone = list(snapshot.nodes) + [a.replacement for a in result.actions if a.replacement is not None]
    for node in everyone:
        if node.name in seen:
            continue
        seen.add(node.name)
        number = removed.get(node.name)
        if number is not None:
            out.append(NodeVerdict(node, True, removal_reason(result.actions[number - 1], number), number))
        else:
            fallback = FALLBACK_REASON if result.complete else not_decided(len(result.actions))
            out.append(NodeVerdict(node, False, result.verdicts.get(node.name, fallback)))
    return out


def _repack(initial: ClusterState, karpenter: float, deadline: float) -> Repack:
    """The optimal re-pack until `deadline` (a `time.monotonic()` value; its process stopped then), or, with
    too little time to start it, Karpenter's figure quoted and the nodes that cannot move as the bound, said."""
    if deadline - time.monotonic() >= MIN_REPACK_SECONDS:
        # lazy: OR-Tools loads here, in this process and inside the limit, so the re-pack's forked process does
        # not spend its own time importing it (a second on a loaded machine); `explain` imports this module
        # without it
        import karpplan.engines.optimiser  # noqa: F401
    left = deadline - time.monotonic()
    if left < MIN_REPACK_SECONDS:
        names = {c.name for c in movable(initial)}
        fixed = sum(n.cost for n in initial.nodes if n.name not in names)
        return Repack(karpenter, min(karpenter, fixed), "karpenter",
                      "not computed: the time limit ran out before the optimal re-pack; Karpenter's figure is quoted "
                      "instead, and the cost of the nodes that cannot move as the bound; raise --time-limit")
    return optimal_repack(initial, karpenter, REPACK_PLAN_SHARE * left, wall=left)


def price_estimated(catalog: Catalog, node: SimNode) -> bool:
    """Is the node priced by an estimate (spot as 0.4 x on-demand, a type the region's list lacks)? The offering
    `offering_price` chose: the cheapest of its type, zone and capacity type."""
    it = catalog.by_name().get(node.instance_type or "")
    if it is None or node.price is None:
        return False
    wanted = node.capacity_type or "on-demand"
    chosen = [o for o in it.offerings if o.capacity_type == wanted and o.price == node.price]
    return bool(chosen) and all(o.estimated for o in chosen)


def consolidate(options: ConsolidateOptions) -> Report:
    snapshot, state = read(options)
    if not snapshot.nodes:
        # Nothing runs, so nothing could be consolidated: "no consolidation applies" would read as a verdict.
        where = Origin(options.paths[0] if options.paths else "-")
        raise InputError.at(where, "no Node in the input: consolidate reads a running cluster's snapshot "
                                   "(kubectl get nodes,pods,pdb,daemonsets,pvc,pv -A -o yaml) with its NodePools; "
                                   "to plan pods that are not running yet, use karpplan plan")
    started = time.monotonic()  # the limit counts from here: reading the snapshot is outside it, as for `plan`
    limit = time_limit_of(options, state)
    current = state.cost
    initial = ClusterState.of(snapshot, state.catalog)
    first = FIRST_SIMULATION_POD_SECONDS * len(_may_move(state))
    result = steady_state(state, options.spot_to_spot, first_simulation=first,
                          time_limit=(1 - REPACK_SHARE) * limit - (time.monotonic() - started))
    karpenter = current - sum(a.savings for a in result.actions)
    repack = _repack(initial, karpenter, started + limit)
    note = None if result.complete else (
        f"the time limit ran out after {len(result.actions)} consolidation command(s): Karpenter would go on, so "
        "the cost after Karpenter's consolidation is where these commands take the cluster, not its steady state; "
        "raise --time-limit")
    summary = Summary(current, karpenter, repack.cost, repack.lower_bound, repack.status,
                      state.catalog.region, result.passes, options.spot_to_spot, repack.note,
                      time_limit=limit, time_limit_auto=options.time_limit is None, complete=result.complete,
                      karpenter_note=note, simulated_at=snapshot.clock.source or None,
                      spot_prices=spot_price_source(state.catalog, options.spot_prices))
    warnings = list(snapshot.warnings)
    for i, a in enumerate(result.actions, start=1):
        for pod in a.evicted:
            warnings.append(f"{pod.origin}: bare pod {pod.key} (no controller) is evicted by action {i} ({a.method}) "
                            "and never comes back: nothing recreates it")
    judged = verdicts(result, snapshot)
    estimated = frozenset(v.node.name for v in judged if price_estimated(state.catalog, v.node))
    return Report(result.actions, judged, summary, warnings, estimated)
