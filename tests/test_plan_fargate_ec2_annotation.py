"""CoreDNS annotated `eks.amazonaws.com/compute-type: ec2` (what older EKS versions gave it) stays on EC2 even when a
Fargate profile selects kube-system: EKS's Fargate webhook leaves such pods alone, and AWS's Fargate guide removes the
annotation to move CoreDNS there. A new user's plan priced both replicas on Fargate instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_plan_fargate_limits import CLUSTER, COREDNS

NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
"""
ANNOTATED = COREDNS.replace("metadata: {labels: {k8s-app: kube-dns}}",
                            "metadata:\n      labels: {k8s-app: kube-dns}\n"
                            "      annotations: {eks.amazonaws.com/compute-type: ec2}")


def _plan(tmp_path: Path, coredns: str) -> dict:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "nodepool.yaml").write_text(NODEPOOL)
    (tmp_path / "coredns.yaml").write_text(coredns)
    result = subprocess.run([sys.executable, "-m", "karpplan.cli.main", "plan", str(tmp_path), "-o", "json",
                             "--time-limit", "5"],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_ec2_annotation_keeps_a_profile_selected_workload_on_ec2_and_says_why(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ANNOTATED)
    kinds = [n["capacityType"] for n in plan["nodes"]]
    assert "fargate" not in kinds and kinds, kinds  # on EC2 nodes of the NodePool
    note = [w for w in plan["warnings"] if "compute-type: ec2" in w]
    assert len(note) == 1, plan["warnings"]
    assert "Fargate profile coredns selects its pods" in note[0] and "remove the annotation" in note[0]


def test_without_the_annotation_the_profile_takes_the_pods(tmp_path: Path) -> None:
    plan = _plan(tmp_path, COREDNS)
    assert [n["capacityType"] for n in plan["nodes"]] == ["fargate"] * 3
    assert not [w for w in plan["warnings"] if "compute-type: ec2" in w]
