"""Preferences a plan does not honour are reported, with what honouring them costs (issue 14, item 12).

The optimal engine minimises cost; a ScheduleAnyway spread is a preference, so it may put an HA web tier in
one zone. Karpenter honours preferences until it cannot: the plan must say which one it dropped, where it
is written and what a plan that keeps it costs.
"""

from __future__ import annotations

import collections
from pathlib import Path

from planner_helpers import plan_json

MANIFEST = Path(__file__).parent / "data" / "manifests" / "ha-schedule-anyway.yaml"


def _zones(plan: dict[str, object]) -> collections.Counter[str]:
    nodes = {n["name"]: n for n in plan["nodes"]}  # type: ignore[attr-defined, index]
    return collections.Counter(nodes[p["node"]]["zone"] for p in plan["pods"] if p.get("node"))  # type: ignore[attr-defined, index]


def test_a_dropped_preference_is_named_with_its_line_and_price() -> None:
    plan = plan_json(MANIFEST)
    zones = _zones(plan)
    line = MANIFEST.read_text().splitlines().index("      topologySpreadConstraints:") + 2
    if max(zones.values()) - min(zones.get(z, 0) for z in [f"us-east-1{x}" for x in "abcdef"]) > 1:
        (warning,) = [w for w in plan["warnings"] if "preferred spread" in w]
        assert warning.startswith(f"{MANIFEST}:{line}: Deployment/web: preferred spread (ScheduleAnyway, maxSkew 1 on "
                                  "topology.kubernetes.io/zone) is not honoured")
        assert "honouring it as Karpenter's plan does costs $" in warning
    else:
        assert not any("preferred spread" in w for w in plan["warnings"])


def test_karpenter_honours_it_and_says_nothing() -> None:
    plan = plan_json(MANIFEST, "--engine", "karpenter")
    assert sorted(_zones(plan).values()) == [1, 1, 1, 1, 1, 1]
    assert not any("preferred spread" in w for w in plan["warnings"])


def test_a_dropped_preferred_node_affinity_is_named_with_its_price() -> None:
    manifest = MANIFEST.parent / "prefer-on-demand.yaml"
    plan = plan_json(manifest)
    capacity = {n["capacityType"] for n in plan["nodes"]}
    warnings = [w for w in plan["warnings"] if "preferred node affinity" in w]
    if capacity == {"on-demand"}:
        assert warnings == []
    else:
        (warning,) = warnings
        assert "Deployment/api: preferred node affinity (weight 50) is not honoured" in warning
        assert "karpenter.sh/capacity-type In [on-demand]" in warning
        assert "honouring it as Karpenter's plan does costs $" in warning
    karpenter = plan_json(manifest, "--engine", "karpenter")
    assert {n["capacityType"] for n in karpenter["nodes"]} == {"on-demand"}
    assert not any("preferred node affinity" in w for w in karpenter["warnings"])
