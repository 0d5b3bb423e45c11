"""Preferences a plan does not honour are reported, with what honouring them costs (issue 14, item 12).

The optimal engine minimises cost; a ScheduleAnyway spread is a preference, so it may put an HA web tier in
one zone. Karpenter honours preferences until it cannot: the plan must say which one it dropped, where it
is written and what a plan that keeps it costs.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

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


# ------------------------------------------------------------------------------------ preferred pod (anti-)affinity
def _strip_affinity(text: str) -> str:
    """The manifest without the web tier's `affinity:` block (what a plan costs with no preference)."""
    start = text.index("      affinity:\n")
    return text[:start] + text[text.index("      containers:\n", start):]


def _zones_of(plan: dict[str, Any], prefix: str) -> collections.Counter[str]:
    nodes = {n["name"]: n for n in plan["nodes"]}
    return collections.Counter(nodes[p["node"]]["zone"] for p in plan["pods"]
                               if p.get("node") and p["name"].startswith(prefix))


def test_a_free_preferred_pod_affinity_is_honoured(tmp_path: Path) -> None:
    # The web tier prefers the cache's zone (us-east-1c, the cache pool's only zone); any zone costs the
    # web tier the same. Without the preference the plan takes the first zone; with it, the cache's, at
    # the same price, and no warning.
    manifest = MANIFEST.parent / "web-near-cache.yaml"
    unpreferred = tmp_path / "web-anywhere.yaml"
    unpreferred.write_text(_strip_affinity(manifest.read_text()))
    baseline = plan_json(unpreferred)
    assert _zones_of(baseline, "web-server") != collections.Counter({"us-east-1c": 6})
    for engine in ("optimal", "karpenter"):
        plan = plan_json(manifest, "--engine", engine)
        assert plan["summary"]["scheduled"] == 7
        assert _zones_of(plan, "redis-cache") == collections.Counter({"us-east-1c": 1})
        assert _zones_of(plan, "web-server") == collections.Counter({"us-east-1c": 6})
        assert not any("preferred pod" in w for w in plan["warnings"])
        if engine == "optimal":
            assert plan["summary"]["hourlyCost"] == baseline["summary"]["hourlyCost"]


def test_a_dropped_preferred_pod_anti_affinity_is_named_with_its_price() -> None:
    # One small API replica per node (preferred) costs four nodes; a plan that drops it packs them onto one
    # and says which term it dropped, for how many pods, and what Karpenter's plan, which keeps it, costs.
    manifest = MANIFEST.parent / "api-spread-over-hosts.yaml"
    karpenter = plan_json(manifest, "--engine", "karpenter")
    assert karpenter["summary"]["newNodes"] == 4
    assert not any("preferred pod" in w for w in karpenter["warnings"])
    honoured = plan_json(manifest)  # the default keeps it, as Karpenter does: like for like
    assert honoured["summary"]["hourlyCost"] == karpenter["summary"]["hourlyCost"]
    assert honoured["summary"]["preferences"] == {"policy": "honour", "kept": 1, "relaxed": 0, "relaxedPreferences": []}
    assert not any("preferred pod" in w for w in honoured["warnings"])
    plan = plan_json(manifest, "--preferences", "drop")
    assert plan["summary"]["preferences"]["honouredHourlyCost"] == karpenter["summary"]["hourlyCost"]
    assert plan["summary"]["scheduled"] == 4
    assert plan["summary"]["hourlyCost"] < karpenter["summary"]["hourlyCost"]
    (node,) = plan["nodes"]
    line = manifest.read_text().splitlines().index("              podAffinityTerm:") + 1
    (warning,) = [w for w in plan["warnings"] if "preferred pod" in w]
    assert warning == (
        f"{manifest}:{line}: Deployment/api: preferred pod anti-affinity (weight 1, topologyKey "
        "kubernetes.io/hostname, selector app.kubernetes.io/instance In [payments], app.kubernetes.io/name In "
        f"[api]) is not honoured for 4 of 4 pod(s): {node['name']} holds 4 pod(s) it selects; honouring it as "
        f"Karpenter's plan does costs ${karpenter['summary']['hourlyCost']:.4f}/h "
        f"(+${karpenter['summary']['hourlyCost'] - plan['summary']['hourlyCost']:.4f}/h)")


def test_a_free_preferred_hostname_anti_affinity_is_honoured(tmp_path: Path) -> None:
    # Three API replicas of 1.5 vCPU: a node each (three 2-vCPU nodes) costs what packing does (a 4-vCPU
    # node for two and a 2-vCPU one), so the plan keeps one replica per node and says nothing.
    text = (MANIFEST.parent / "api-spread-over-hosts.yaml").read_text()
    text = text.replace("replicas: 4", "replicas: 3").replace("cpu: 250m, memory: 512Mi", "cpu: 1500m, memory: 2Gi")
    preferred, unpreferred = tmp_path / "api.yaml", tmp_path / "api-packed.yaml"
    preferred.write_text(text)
    unpreferred.write_text(_strip_affinity(text))
    baseline = plan_json(unpreferred)
    plan = plan_json(preferred)
    assert plan["summary"]["hourlyCost"] == baseline["summary"]["hourlyCost"]
    assert [len(n["pods"]) for n in plan["nodes"]] == [1, 1, 1]
    assert not any("preferred pod" in w for w in plan["warnings"])


def test_the_price_of_honouring_a_preference_includes_the_fargate_pods(tmp_path: Path) -> None:
    # The same API, and a batch pod a Fargate profile takes: every plan pays for the Fargate pod, so the
    # price quoted for Karpenter's plan is the one its summary reports (Fargate included).
    manifest = tmp_path / "api-and-batch.yaml"
    manifest.write_text((MANIFEST.parent / "api-spread-over-hosts.yaml").read_text() + """\
---
apiVersion: v1
kind: Pod
metadata: {name: report, namespace: batch}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 2Gi}}}]
""")
    plan = plan_json(manifest, "--fargate-profile", "namespace=batch", "--preferences", "drop")
    assert plan["summary"]["scheduled"] == 5
    assert any(n["capacityType"] == "fargate" for n in plan["nodes"])
    karpenter = plan["summary"]["karpenter"]["hourlyCost"]
    assert karpenter > plan["summary"]["hourlyCost"]
    (warning,) = [w for w in plan["warnings"] if "preferred pod" in w]
    assert warning.endswith(f"honouring it as Karpenter's plan does costs ${karpenter:.4f}/h "
                            f"(+${karpenter - plan['summary']['hourlyCost']:.4f}/h)")
