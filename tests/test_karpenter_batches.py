"""The Karpenter simulation is one provisioning batch, and says so when that matters (issue 14, items 2, 13).

Within a batch Karpenter charges each new NodeClaim its largest candidate's capacity against NodePool
limits (subtractMax); the smaller nodes it launches leave room that later batches use. A plan that stops
after one batch must say so, never silently report the waiting pods as if nothing could take them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import karpplan.explain.reasons as reasons_module
from karpplan.catalog import load_catalog
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, make_plan

from planner_helpers import plan_json

MANIFEST = Path(__file__).parent / "data" / "manifests" / "limits-batch-workers.yaml"


def test_one_batch_under_pessimistic_limits_is_said() -> None:
    plan = plan_json(MANIFEST, "--engine", "karpenter")
    assert plan["unschedulable"], "the first batch leaves pods waiting"
    (note,) = [w for w in plan["warnings"] if "first provisioning batch" in w]
    assert "nodepool 'default'" in note and f"{len(plan['unschedulable'])} waiting pod(s)" in note
    launched_cpu = sum(int(n["labels"]["karpenter.k8s.aws/instance-cpu"]) for n in plan["nodes"])
    assert f"cpu={100 - launched_cpu}" in note


def test_the_optimal_engine_fills_the_limit_in_one_plan() -> None:
    plan = plan_json(MANIFEST)
    launched_cpu = sum(int(n["labels"]["karpenter.k8s.aws/instance-cpu"]) for n in plan["nodes"])
    assert launched_cpu <= 100
    assert plan["summary"]["scheduled"] >= 100  # 0.9-CPU pods on ~96 vCPU of nodes
    assert not any("first provisioning batch" in w for w in plan["warnings"])


def test_reasons_are_worked_out_once_per_group(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = reasons_module.reasons_for

    def counting(*args: object) -> list[str]:
        calls.append("x")
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(reasons_module, "reasons_for", counting)
    inventory = load_inventory([str(MANIFEST)])
    plan = make_plan(inventory, load_catalog("us-east-1"), PlanOptions(engine="karpenter", time_limit=10))
    assert len(plan.unschedulable) > 50
    assert len(calls) == 1
    assert len({u.reasons for u in plan.unschedulable}) == 1


def test_a_simulation_cut_by_the_time_limit_says_so() -> None:
    plan = plan_json(MANIFEST, "--engine", "karpenter", time_limit="0.001")
    assert any("reached the time limit" in w for w in plan["warnings"])
