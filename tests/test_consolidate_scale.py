"""Consolidation at scale (issue 27's benchmark): the fast paths give Karpenter's same actions.

The bench's seeded snapshot (`bench/consolidate_bench.py`, 1,600 replicas provisioned then scaled down to
60%: 59 nodes, 884 pods) is consolidated to its steady state, and every action (method, decision, nodes,
replacement, savings, where each pod went) and every kept node's reason is compared with
tests/golden/consolidate-bench-1600.json, which was written by the code before the performance cuts
(replicas sharing one template, cached spread domains and static filters, indexed topology counts).
The golden file must not be rewritten to make a speed change pass: a difference is a changed simulation.
Its kept reasons were rewritten once (session 15): 10 of the 36 read as an earlier pass had found them; they
are now those a full re-simulation at the final state gives (as Karpenter re-simulates every pass), which the
test checks too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from karpplan.consolidate.loop import one_pass, steady_state
from karpplan.consolidate.memory import Memory
from karpplan.consolidate.run import ConsolidateOptions, read
from karpplan.consolidate.snapshot import Snapshot
from karpplan.consolidate.state import ClusterState, share_templates

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "consolidate-bench-1600.json"


@pytest.fixture(scope="module")
def bench_snapshot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, ClusterState]:
    sys.path.insert(0, str(REPO))
    from bench.consolidate_bench import snapshot

    path, nodes, pods = snapshot(1600, 0.6, 42, tmp_path_factory.mktemp("bench"))
    assert (nodes, pods) == (59, 884)
    return read(ConsolidateOptions(paths=(str(path),)))


def _report(state: ClusterState) -> dict[str, Any]:
    result = steady_state(state)
    now: dict[str, str] = {}
    assert one_pass(state, False, now, Memory(enabled=False)) is None  # nothing left to do ...
    assert now == result.verdicts  # ... for the reasons a full re-simulation gives
    return {"actions": [{"method": a.method, "decision": a.decision, "nodes": [n.name for n in a.nodes],
                         "replacement": a.replacement.name if a.replacement else None,
                         "savings": round(a.savings, 6), "moves": dict(sorted(a.moves.items()))}
                        for a in result.actions],
            "kept": dict(sorted(result.verdicts.items())), "passes": result.passes}


def test_bench_snapshot_consolidates_to_the_same_actions_as_before(
        bench_snapshot: tuple[Snapshot, ClusterState]) -> None:
    _, state = bench_snapshot
    got = _report(state)
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got["passes"] == expected["passes"] == 22
    assert len(expected["actions"]) == 21
    for i, (a, b) in enumerate(zip(got["actions"], expected["actions"], strict=True), start=1):
        assert a == b, f"action {i} differs"
    assert got["kept"] == expected["kept"]


def test_replicas_of_one_controller_share_one_template(bench_snapshot: tuple[Snapshot, ClusterState]) -> None:
    snap, _ = bench_snapshot
    pods = [p for ps in snap.pods_on.values() for p in ps]
    assert len({id(p.template) for p in pods}) == len(pods)  # as read: one template per pod
    shared, _ = share_templates(snap.pods_on, snap.pending)
    folded = [p for ps in shared.values() for p in ps]
    by_template: dict[int, set[str | None]] = {}
    for p in folded:
        by_template.setdefault(id(p.template), set()).add(p.owner)
    assert len(by_template) < len(folded) / 2  # replicas fold into far fewer groups
    assert all(len(owners) == 1 for owners in by_template.values())  # never across controllers
    assert [p.key for p in folded] == [p.key for p in pods]  # the same pods, in the same order


def test_static_filters_shared_by_templates_alike_give_kube_schedulers_verdicts(
        bench_snapshot: tuple[Snapshot, ClusterState]) -> None:
    """Templates alike in what the static filters read share one verdict per node: every template of the
    snapshot gets, on every node, exactly the reasons the filters give it uncached."""
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.filters import static_reasons

    snap, read_state = bench_snapshot
    state = ClusterState.of(snap, read_state.catalog)  # the fixture's state is consolidated by another test
    templates = list({id(p.template): p.template for ps in state.pods_on.values() for p in ps}.values())
    assert len({state.filter_shape(t) for t in templates}) < len(templates) / 3  # most share a filter shape
    refused = 0
    for template in templates:
        cached = state.static_filter(template)
        for node in state.nodes:
            info = ExistingNodeInfo(node.node, used=state.used(node.name))
            expected = static_reasons(template, info)
            assert cached(info) == expected, (template.name, node.name)
            refused += bool(expected)
    assert refused  # some pods are refused by some nodes (full, tainted or without their labels)
