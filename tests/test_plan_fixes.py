"""`plan` carries, per unschedulable pod, the same fixes `explain --manifests` proposes (issue 12, item 5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_fixes_of_a_plan_read_from_stdin_point_into_stdin() -> None:
    """The fixes come from the documents `plan` read once (review of plan_with_fixes: it read the files again,
    so input on stdin had no documents to point into): stdin's fix carries `<stdin>` and the line of the field."""
    r = subprocess.run([sys.executable, "-m", "karpplan", "plan", "-", "-o", "json", "--time-limit", "10"],
                       input=TAINTED_POOL, capture_output=True, text=True, check=False)
    plan = json.loads(r.stdout)
    best = plan["unschedulable"][0]["fixes"][0]
    lines = TAINTED_POOL.splitlines()
    assert best["file"] == "<stdin>" and best["line"] == lines.index("    spec:", lines.index("kind: Deployment")) + 1
    assert best["field"] == "spec.template.spec.tolerations"


def test_explain_reads_its_manifests_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """explain --manifests builds the inventory and the fixes' documents from one reading of the files."""
    from karpplan.explain import fixes
    from karpplan.explain.report import explain_text

    path = tmp_path / "tainted.yaml"
    path.write_text(TAINTED_POOL)
    reads: list[object] = []
    real = fixes.read_input

    def counting(*args: object, **kwargs: object) -> object:
        reads.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fixes, "read_input", counting)
    explanation = explain_text('Failed to schedule pod, incompatible with nodepool "default", did not tolerate '
                               'dedicated=batch:NoSchedule')
    fixes.reproduce_and_fix(explanation, [str(path)])
    assert len(reads) == 1
    found = [f for item in explanation.item_list() for f in item.fixes]
    assert found and found[0].file == str(path)


def test_a_plan_with_fixes_reads_its_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixes of unschedulable pods point into the documents `plan` read: the file is read once, not again
    for the fixes."""
    from collections import Counter

    from typer.testing import CliRunner

    from karpplan.cli.main import app
    from karpplan.inputs import loader

    reads: Counter[str] = Counter()
    real = loader._read_file

    def counting(path: Path, label: str, max_bytes: int) -> str:
        reads[label] += 1
        return real(path, label, max_bytes)

    monkeypatch.setattr(loader, "_read_file", counting)
    path = tmp_path / "tainted.yaml"
    path.write_text(TAINTED_POOL)
    result = CliRunner().invoke(app, ["plan", str(path), "-o", "json", "--time-limit", "10"])
    plan = json.loads(result.stdout)
    assert plan["unschedulable"] and plan["unschedulable"][0]["fixes"]
    assert reads == Counter({str(path): 1})


def _tainted_plan(tmp_path: Path) -> tuple[object, ...]:
    from karpplan.explain.fixes import documents_for_fixes
    from karpplan.model.build import read_input
    from karpplan.planner import PlanOptions, catalog_for, make_plan

    path = tmp_path / "tainted.yaml"
    path.write_text(TAINTED_POOL)
    inventory, documents = read_input([str(path)])
    catalog = catalog_for(inventory, None, None)
    plan = make_plan(inventory, catalog, PlanOptions(engine="karpenter"))
    return plan, inventory, documents_for_fixes(documents), catalog


def test_no_time_left_for_fixes_skips_them_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the plan's limit used up, the fixes still ran a Karpenter re-plan of its own 10s before looking at
    the clock: a plan could take its limit plus 10s."""
    from karpplan.explain import fixes

    plan, inventory, documents, catalog = _tainted_plan(tmp_path)
    replans: list[float] = []
    monkeypatch.setattr(fixes, "make_plan", lambda *a, **k: replans.append(1) or pytest.fail("re-planned"))
    out = fixes.plan_with_fixes(plan, inventory, documents, catalog, 0.0)  # type: ignore[arg-type]
    assert replans == [] and all(not u.fixes for u in out.unschedulable)
    assert out.warnings[-1] == ("fixes not searched for the 1 unschedulable workload(s): the plan used its time "
                                "limit, leaving none to re-plan with changes; a longer --time-limit lets karpplan "
                                "propose them")


def test_each_fix_replan_keeps_within_what_is_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from karpplan.explain import fixes

    plan, inventory, documents, catalog = _tainted_plan(tmp_path)
    limits: list[float] = []
    real = fixes.make_plan

    def recording(inv: object, cat: object, options: fixes.PlanOptions, *rest: object) -> object:
        limits.append(options.time_limit)
        return real(inv, cat, options)  # type: ignore[arg-type]

    monkeypatch.setattr(fixes, "make_plan", recording)
    out = fixes.plan_with_fixes(plan, inventory, documents, catalog, 3.0)  # type: ignore[arg-type]
    assert limits and all(limit <= 3.0 for limit in limits)
    assert out.unschedulable[0].fixes  # the search still finds the toleration in that time
