"""The library entry of `karpplan consolidate`: read the snapshot, consolidate to the steady state, re-pack
optimally, and assemble the report (`ConsolidateOptions` in, `Report` out)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from karpplan.catalog.overlays import apply_node_overlays
from karpplan.consolidate.loop import SteadyState, steady_state
from karpplan.consolidate.optimal import optimal_repack
from karpplan.consolidate.report import NodeVerdict, Report, Summary, removal_reason
from karpplan.consolidate.snapshot import Snapshot, make_snapshot, read_documents_or_fail
from karpplan.consolidate.state import ClusterState
from karpplan.inputs.loader import DEFAULT_MAX_BYTES, Document
from karpplan.model.build import build_inventory
from karpplan.planner import catalog_for

FALLBACK_REASON = "No consolidation command applies to it"


@dataclass(frozen=True)
class ConsolidateOptions:
    paths: tuple[str, ...] = ()
    region: str | None = None
    catalog: str | None = None
    zones: tuple[str, ...] = ()
    spot_to_spot: bool = False  # the SpotToSpotConsolidation feature gate
    time_limit: float = 5.0  # the optimal re-pack's
    max_file_size: int = DEFAULT_MAX_BYTES


def read(options: ConsolidateOptions, documents: Sequence[Document] | None = None) -> tuple[Snapshot, ClusterState]:
    """The snapshot and the cluster state to simulate; InputError (exit 2) for unreadable input.
    `documents`: the paths' documents, already read (stdin can be read only once)."""

    if documents is None:
        documents = read_documents_or_fail(options.paths, options.max_file_size)
    inventory = build_inventory(documents)
    catalog = catalog_for(inventory, options.region, options.catalog, zones=options.zones)
    catalog, _ = apply_node_overlays(catalog, inventory.overlays)
    snapshot = make_snapshot(inventory, documents, catalog)
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
            out.append(NodeVerdict(node, False, result.verdicts.get(node.name, FALLBACK_REASON)))
    return out


def consolidate(options: ConsolidateOptions) -> Report:
    snapshot, state = read(options)
    current = state.cost
    initial = ClusterState.of(snapshot, state.catalog)
    result = steady_state(state, options.spot_to_spot)
    karpenter = current - sum(a.savings for a in result.actions)
    repack = optimal_repack(initial, karpenter, options.time_limit)
    summary = Summary(current, karpenter, repack.cost, repack.lower_bound, repack.status,
                      state.catalog.region, result.passes, options.spot_to_spot, repack.note)
    warnings = list(snapshot.warnings)
    for i, a in enumerate(result.actions, start=1):
        for pod in a.evicted:
            warnings.append(f"{pod.origin}: bare pod {pod.key} (no controller) is evicted by action {i} ({a.method}) "
                            "and never comes back: nothing recreates it")
    return Report(result.actions, verdicts(result, snapshot), summary, warnings)
