"""The Fargate table at 80 columns (a CI log's width) with real names: every price is printed whole. A new user's
eu-central-1 plan read `$0.06…` for each Fargate pod, the pod-name column's floor having pushed the price out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: shop, region: eu-central-1}
availabilityZones: [eu-central-1a, eu-central-1b, eu-central-1c]
fargateProfiles:
  - name: fp-coredns
    selectors: [{namespace: kube-system, labels: {k8s-app: kube-dns}}]
  - name: fp-jobs
    selectors: [{namespace: jobs}]
"""
WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system}
spec:
  replicas: 2
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      containers:
        - name: coredns
          image: coredns/coredns
          resources: {requests: {cpu: 100m, memory: 70Mi}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: product-feed-export, namespace: jobs}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: shop/export
          resources: {requests: {cpu: "1", memory: 3Gi}}
"""


def test_every_fargate_price_is_whole_at_80_columns(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "workloads.yaml").write_text(WORKLOADS)
    result = subprocess.run([sys.executable, "-m", "karpplan.cli.main", "plan", str(tmp_path)],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Fargate pods (3)"))
    rows = [line for line in lines[start + 3:start + 12] if line.startswith(("jobs/", "kube-sys"))]
    assert len(rows) == 3, lines[start:start + 12]
    assert all(len(line) <= 80 for line in lines[start:start + 12])
    assert all(re.search(r"\$0\.\d{4}$", row.rstrip()) for row in rows), rows
