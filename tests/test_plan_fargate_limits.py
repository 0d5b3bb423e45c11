"""A Fargate pod whose container limit exceeds its request: said once per workload, where it is written,
with what it means for the Fargate size and price (a new user's CoreDNS on Fargate got one bare line per
replica: `kube-system/coredns-0: a container limit exceeds its request; Fargate sizes from requests`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: c, region: ap-southeast-2}
fargateProfiles:
  - name: coredns
    selectors:
      - namespace: kube-system
"""
COREDNS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system}
spec:
  replicas: 3
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      containers:
        - name: coredns
          image: coredns/coredns
          resources:
            requests: {cpu: 100m, memory: 70Mi}
            limits: {memory: 170Mi}
"""


def test_limit_over_request_on_fargate_is_one_warning_per_workload_with_file_line_and_size(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "coredns.yaml").write_text(COREDNS)
    result = subprocess.run([sys.executable, "-m", "karpplan.cli.main", "plan", str(tmp_path), "-o", "json"],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    fargate = [n for n in plan["nodes"] if n["capacityType"] == "fargate"]
    assert len(fargate) == 3
    size = fargate[0]["fargate"]["capacityProvisioned"]
    price = fargate[0]["hourlyPrice"]
    warnings = [w for w in plan["warnings"] if "limit exceeds its request" in w]
    assert len(warnings) == 1, warnings  # not one per replica
    warning = warnings[0]
    assert warning.startswith(f"{tmp_path / 'coredns.yaml'}:")
    assert "Deployment/kube-system/coredns (3 pods on Fargate)" in warning
    assert f"({size}, ${price:.4f}/h each)" in warning
    assert "never gets more than that size" in warning and "set requests to what the pods need" in warning
