"""A proposed fix, applied to the manifests at the file:line it names, makes the pod schedule on re-planning,
at the hourly cost delta it announced (issue 12: "fixes checked by re-planning with the fix applied")."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.rules.examples import NODEPOOL, deployment

from planner_helpers import plan_json

TAINT = "      taints:\n        - {key: dedicated, value: batch, effect: NoSchedule}\n"
TAINTED_POOL = NODEPOOL.replace("      requirements:\n", TAINT + "      requirements:\n") + deployment("", replicas=2)
LOG = ('{"level":"ERROR","time":"2026-01-02T10:00:00.000Z","logger":"controller","message":"could not schedule pod",'
       '"Pod":{"name":"web-7d9f8b6c5d-x2x3z","namespace":"default"},"error":"did not tolerate '
       'dedicated=batch:NoSchedule"}\n')
TOLERATION = "      tolerations:\n        - {key: dedicated, operator: Equal, value: batch, effect: NoSchedule}\n"


def test_the_proposed_toleration_applied_at_its_line_schedules_the_pod(tmp_path: Path) -> None:
    manifests = tmp_path / "tainted.yaml"
    manifests.write_text(TAINTED_POOL)
    log = tmp_path / "karpenter.log"
    log.write_text(LOG)
    result = CliRunner().invoke(app, ["explain", str(log), "--manifests", str(manifests), "--region", "us-east-1",
                                      "-o", "json"])
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.stdout)["items"]
    assert item["workload"] == "Deployment/web" and item["reproduced"] is True
    fix = next(f for f in item["fixes"] if f["field"] == "spec.template.spec.tolerations")
    assert fix["file"] == str(manifests) and "dedicated" in fix["action"]

    before = plan_json(manifests, time_limit="10")
    assert len(before["unschedulable"]) == 2
    lines = TAINTED_POOL.splitlines(keepends=True)
    assert lines[fix["line"] - 1].strip() == "spec:"  # the pod spec the toleration goes in
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text("".join(lines[:fix["line"]]) + TOLERATION + "".join(lines[fix["line"]:]))
    after = plan_json(fixed, time_limit="10")
    assert after["unschedulable"] == []
    delta = after["summary"]["hourlyCost"] - before["summary"]["hourlyCost"]
    assert abs(delta - fix["hourlyCostDelta"]) < 1e-6  # the delta it announced


WINDOWS_NODE_CLASS = """\
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: windows}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: windows2022@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
---
"""
WINDOWS_POOL = NODEPOOL.replace("name: default\n", "name: windows\n").replace(
    "name: default}", "name: windows}").replace(
    "      requirements:\n", "      requirements:\n        - {key: kubernetes.io/os, operator: In, values: [windows]}\n")
SELECTOR_LOG = ('{"level":"ERROR","time":"2026-01-02T10:00:00.000Z","logger":"controller","message":"could not '
                'schedule pod","Pod":{"name":"web-7d9f8b6c5d-x2x3z","namespace":"default"},"error":"incompatible '
                'with nodepool \\"default\\", incompatible requirements, label \\"intent\\" does not have known '
                'values"}\n')


def test_a_pool_of_another_os_is_never_the_fix_for_a_pod_that_names_none(tmp_path: Path) -> None:
    # A new user's Linux nginx (nodeSelector intent: apps) was told to "add the label intent: apps to NodePool
    # windows2022": Karpenter would then launch a Windows node for it, where its image never starts.
    manifests = tmp_path / "all.yaml"
    manifests.write_text(NODEPOOL + WINDOWS_POOL.removesuffix("---\n") + WINDOWS_NODE_CLASS
                         + deployment("      nodeSelector: {intent: apps}\n"))
    log = tmp_path / "karpenter.log"
    log.write_text(SELECTOR_LOG)
    result = CliRunner().invoke(app, ["explain", str(log), "--manifests", str(manifests), "--region", "us-east-1",
                                      "-o", "json"])
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.stdout)["items"]
    actions = [f["action"] for f in item["fixes"]]
    assert any('NodePool "default"' in a for a in actions), actions
    assert not any("windows" in a for a in actions), actions
