"""`karpplan explain`: the Explanation document of cli-contract.md, exit codes, and fixes on a realistic manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.rules.examples import NODEPOOL

runner = CliRunner()
LOG = ('{"level":"ERROR","time":"2024-04-03T06:40:04.552Z","logger":"controller.provisioner","message":"Could not '
       'schedule pod, incompatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"675m\\"}, '
       'incompatible requirements, label \\"nodegroup\\" does not have known values","pod":"payments/web-746d677b76-lghl4"}\n'
       '{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"gpu-job-0","namespace":"ml"},'
       '"error":"incompatible with nodepool \\"gpu\\", daemonset overhead={}, did not tolerate nvidia.com/gpu=true:NoSchedule"}\n')
# the lint examples' NodePool, twice: "default" (label team=web, categories c and m) and a tainted "gpu" pool
_DEFAULT_POOL = NODEPOOL.replace("  template:\n    spec:\n", "  template:\n    metadata:\n      labels:\n        team: web\n    spec:\n").replace(
    "values: [c, m, r]", "values: [c, m]")
_GPU_POOL = NODEPOOL.replace("  name: default\n", "  name: gpu\n").replace(
    "      requirements:\n", "      taints:\n        - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}\n      requirements:\n"
).replace("values: [c, m, r]", "values: [g]")
MANIFESTS = _DEFAULT_POOL + _GPU_POOL + """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: payments
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector:
        nodegroup: workers
      containers:
        - name: app
          image: nginx
          resources: {requests: {cpu: "1", memory: 1Gi}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: gpu-job
  namespace: ml
spec:
  replicas: 1
  selector: {matchLabels: {app: gpu-job}}
  template:
    metadata: {labels: {app: gpu-job}}
    spec:
      nodeSelector:
        karpenter.k8s.aws/instance-category: g
      containers:
        - name: train
          image: pytorch
          resources: {requests: {cpu: "2", memory: 8Gi}}
"""


def _run(tmp_path: Path, log: str, *args: str) -> tuple[int, str]:
    path = tmp_path / "log.txt"
    path.write_text(log)
    result = runner.invoke(app, ["explain", str(path), *args])
    return result.exit_code, result.stdout


def test_json_document_shape(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "noise\n" + LOG, "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["apiVersion"] == "karpplan.io/v1alpha1" and doc["kind"] == "Explanation"
    assert {k: doc["summary"][k] for k in ("lines", "explained", "unrecognised")} == {
        "lines": 3, "explained": 2, "unrecognised": 1}
    item = doc["items"][0]
    assert {"line", "source", "dialect", "time", "pod", "nodePools", "reasons", "plain", "fixes"} <= set(item)
    pool = item["nodePools"][0]
    assert pool["name"] == "default" and pool["kind"] == "nodepool" and pool["daemonsetOverhead"] == {"cpu": "675m"}
    assert pool["reasons"][0]["kind"] == "unknown-label" and pool["reasons"][0]["plain"]


def test_yaml_and_table(tmp_path: Path) -> None:
    code, out = _run(tmp_path, LOG, "-o", "yaml")
    assert code == 0 and "kind: Explanation" in out
    code, out = _run(tmp_path, LOG)
    assert code == 0 and "payments/web-746d677b76-lghl4" in out and "unknown-label" in out


def test_exit_codes(tmp_path: Path) -> None:
    assert _run(tmp_path, "nothing to see\n", "-o", "json")[0] == 1
    result = runner.invoke(app, ["explain", str(tmp_path / "missing.txt")])
    assert result.exit_code == 2 and result.stdout == ""


def test_fixes_with_manifests(tmp_path: Path) -> None:
    manifests = tmp_path / "deploy.yaml"
    manifests.write_text(MANIFESTS)
    code, out = _run(tmp_path, LOG, "--manifests", str(manifests), "--region", "us-east-1", "-o", "json")
    assert code == 0
    web, gpu = json.loads(out)["items"]
    assert web["workload"] == "Deployment/web" and web["reproduced"] is True
    best = web["fixes"][0]
    assert best["object"] == "NodePool/default" and best["line"] == 8  # spec.template.metadata.labels
    assert isinstance(best["hourlyCostDelta"], float) and best["hourlyCostDelta"] > 0
    assert any(f["line"] == 42 and "nodegroup" in f["action"] for f in web["fixes"])  # the nodeSelector entry
    assert gpu["workload"] == "StatefulSet/gpu-job" and gpu["reproduced"] is True
    tol = [f for f in gpu["fixes"] if "toleration" in f["action"]]
    assert tol and tol[0]["line"] == 58 and tol[0]["hourlyCostDelta"] > 0  # the pod spec the toleration goes in


def test_manifests_in_several_paths_as_the_readme_writes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README: `karpplan explain - --manifests deploy/ pools/` (the second path follows --manifests)."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "pools").mkdir()
    pools, _, workloads = MANIFESTS.partition("apiVersion: apps/v1")
    (tmp_path / "pools" / "pools.yaml").write_text(pools)
    (tmp_path / "deploy" / "apps.yaml").write_text("apiVersion: apps/v1" + workloads)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["explain", "-", "--manifests", "deploy/", "pools/", "--region", "us-east-1",
                                 "-o", "json"], input=LOG)
    assert result.exit_code == 0, result.output
    web = json.loads(result.stdout)["items"][0]
    assert web["workload"] == "Deployment/web" and web["fixes"][0]["file"].startswith("pools/")


def test_unrecognised_lines_listed_and_counted(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "INFO starting controller\n\n" + LOG + "some other line\n", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["summary"]["unrecognised"] == 3
    assert doc["unrecognised"] == [{"line": 1, "text": "INFO starting controller"},
                                   {"line": 5, "text": "some other line"}]  # blank lines are counted, not listed
    code, out = _run(tmp_path, "INFO starting controller\n" + LOG)
    assert "1 unrecognised" in out and "unrecognised lines: 1" in out


def test_wrapped_message_is_one_record(tmp_path: Path) -> None:
    """A message a terminal wrapped (aws/karpenter-provider-aws#3315 pasted it over three lines)."""
    wrapped = ('Failed to schedule pod, incompatible with provisioner "gaudi", no instance type satisfied resources\n'
               '{"cpu":"24","habana.ai/gaudi":"8","hugepages-2Mi":"21000Mi","pods":"1"}\n'
               "and requirements kubernetes.io/os In [linux], node.kubernetes.io/instance-type In [dl1.24xlarge]\n")
    code, out = _run(tmp_path, wrapped, "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["summary"]["explained"] == 3 and doc["summary"]["unrecognised"] == 0
    (item,) = doc["items"]
    reason = item["nodePools"][0]["reasons"][0]
    assert reason["resources"]["hugepages-2Mi"] == "21000Mi" and reason["requirements"][1]["values"] == ["dl1.24xlarge"]
    assert "hugepages-2Mi" in item["plain"] and "Lower the pod" not in item["plain"]


def test_describe_headers_are_context_not_unrecognised(tmp_path: Path) -> None:
    """`kubectl describe pod` pasted whole: its name, namespace, its other fields (Priority:) and the Events header
    rows frame the events; a line after the describe that is none of those is unrecognised."""
    describe = ("Name:         web-1\nNamespace:    shop\nPriority:     0\nEvents:\n"
                "  Type     Reason            Age   From               Message\n"
                "  ----     ------            ----  ----               -------\n"
                "  Warning  FailedScheduling  16s   default-scheduler  0/3 nodes are available: 3 Insufficient cpu.\n"
                "I0815 10:22:06.718419       1 main.go:42] started\n")
    code, out = _run(tmp_path, describe, "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["summary"]["unrecognised"] == 1 and doc["summary"]["context"] == 6
    assert doc["unrecognised"] == [{"line": 8, "text": "I0815 10:22:06.718419       1 main.go:42] started"}]
    code, out = _run(tmp_path, describe)
    assert "1 unrecognised, 6 read as context" in out
