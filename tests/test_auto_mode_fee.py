"""EKS Auto Mode's management fee: a plan whose new nodes are Auto Mode's says what the fee adds, marked an
estimate and with where the rule comes from; plans without Auto Mode nodes say nothing of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app

CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: auto, region: us-east-1}
autoModeConfig:
  enabled: true
---
"""
WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: "1", memory: 2Gi}}}]
"""
POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
"""


def _plan(tmp_path: Path, text: str) -> dict:  # type: ignore[type-arg]
    path = tmp_path / "m.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["plan", str(path), "--engine", "karpenter", "--zones", "us-east-1a", "-o", "json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_auto_mode_nodes_are_said_to_pay_the_fee_on_top_of_the_plans_cost(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CLUSTER + WEB)
    auto = [n for n in plan["nodes"] if n["new"]]
    assert auto and all(n["nodePool"] == "general-purpose" for n in auto)
    notes = [w for w in plan["warnings"] if w.startswith("EKS Auto Mode: the ")]
    assert len(notes) == 1
    # the on-demand nodes' fee is 12% of what they cost, and it is not in the plan's cost
    fee = 0.12 * sum(n["hourlyPrice"] for n in auto)
    assert f"about ${fee:.4f}/h" in notes[0]
    assert "estimated" in notes[0] and "not in this plan's cost" in notes[0]
    assert plan["summary"]["hourlyCost"] == pytest.approx(sum(n["hourlyPrice"] for n in auto), abs=1e-4)


def test_plans_without_auto_mode_nodes_say_nothing_of_the_fee(tmp_path: Path) -> None:
    plan = _plan(tmp_path, POOL + WEB)
    assert not [w for w in plan["warnings"] if "Auto Mode management fee" in w]


def test_catalog_info_says_where_the_fee_rule_comes_from() -> None:
    result = CliRunner().invoke(app, ["catalog", "--info", "-o", "json"])
    assert result.exit_code == 0, result.stderr
    source = json.loads(result.stdout)["sources"]["EKS Auto Mode fee"]
    assert "12%" in source and "aws.amazon.com/eks/pricing" in source
