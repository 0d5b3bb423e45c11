"""A Windows pod and a NodePool whose node class launches Linux only (Bottlerocket): the reason says the AMI family
decides the OS and which alias runs the pod, where Karpenter's own words ("no instance type met all requirements")
left a migrating user guessing."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.model.requirements import Requirement
from karpplan.scheduling.shortfall_hints import os_nowhere

MANIFESTS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: bottlerocket}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: bottlerocket}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: bottlerocket}
spec:
  amiSelectorTerms: [{alias: bottlerocket@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: iis, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: iis}}
  template:
    metadata: {labels: {app: iis}}
    spec:
      nodeSelector: {kubernetes.io/os: windows}
      containers: [{name: iis, image: mcr.microsoft.com/windows/servercore/iis, resources: {requests: {cpu: "1"}}}]
"""


def test_a_windows_pod_against_a_bottlerocket_pool_is_told_the_ami_decides(tmp_path: Path) -> None:
    (tmp_path / "all.yaml").write_text(MANIFESTS)
    result = CliRunner().invoke(app, ["plan", str(tmp_path), "-o", "json"])
    assert result.exit_code == 1, result.output
    (pod,) = json.loads(result.stdout)["unschedulable"]
    pool = next(r for r in pod["reasons"] if r.startswith('nodepool "bottlerocket"'))
    assert pool.startswith('nodepool "bottlerocket": no instance type met all requirements')
    assert "launches linux nodes only" in pool and "alias windows2022@latest" in pool


def test_no_hint_where_the_pool_runs_the_os_or_the_pod_names_none() -> None:
    windows = Requirement.of("kubernetes.io/os", "In", ["windows"])
    assert os_nowhere(windows, ["linux"]).startswith("; this NodePool's node class launches linux nodes only")
    assert os_nowhere(windows, ["linux", "windows"]) == ""
    assert os_nowhere(None, ["linux"]) == ""
    assert "a Linux AMI" in os_nowhere(Requirement.of("kubernetes.io/os", "In", ["linux"]), ["windows"])
