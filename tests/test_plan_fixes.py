"""`plan` carries, per unschedulable pod, the same fixes `explain --manifests` proposes (issue 12, item 5)."""

from __future__ import annotations

from pathlib import Path

from karpplan.lint.rules.examples import NODEPOOL, deployment

from planner_helpers import plan_json

TAINT = "      taints:\n        - {key: dedicated, value: batch, effect: NoSchedule}\n"
TAINTED_POOL = NODEPOOL.replace("      requirements:\n", TAINT + "      requirements:\n") + deployment("", replicas=2)


def test_each_unschedulable_pod_carries_the_smallest_fix(tmp_path: Path) -> None:
    path = tmp_path / "tainted.yaml"
    path.write_text(TAINTED_POOL)
    plan = plan_json(path, time_limit="10")
    assert len(plan["unschedulable"]) == 2
    for pod in plan["unschedulable"]:
        best = pod["fixes"][0]
        assert best["field"] == "spec.template.spec.tolerations"
        lines = TAINTED_POOL.splitlines()
        pod_spec = lines.index("    spec:", lines.index("kind: Deployment")) + 1
        assert best["file"] == str(path) and best["line"] == pod_spec
        assert "dedicated" in best["action"] and best["hourlyCostDelta"] > 0


def test_a_plan_without_unschedulable_pods_has_no_fixes(tmp_path: Path) -> None:
    path = tmp_path / "fine.yaml"
    path.write_text(TAINTED_POOL.replace(TAINT, ""))
    plan = plan_json(path)
    assert plan["unschedulable"] == []
