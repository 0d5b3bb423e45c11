"""Fixes for a workload a controller derives from a custom resource point at the resource's own pod spec path
(a RayService's worker group, a PrometheusAgent's spec), not at a `spec.template.spec` the user never wrote."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from karpplan.cli.main import app

from conftest import FIXTURES

REAL = FIXTURES / "real"
TAINTED_POOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: tainted}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints:
      - {key: dedicated, value: infra, effect: NoSchedule}
---
"""


def fixes(manifests: str) -> set[tuple[str, str, str, int]]:
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "3", "--zones", "us-east-1a", "-o", "json"],
                                input=manifests)
    assert result.exit_code == 1, result.stderr
    plan = json.loads(result.stdout)
    return {(u["workload"], f["object"], f["field"], f["line"]) for u in plan["unschedulable"] for f in u["fixes"]
            if f["action"].startswith("add a toleration")}


def test_a_rayservice_worker_groups_toleration_fix_names_its_path() -> None:
    # kuberay's LLM serving sample with a second taint on its GPU pool the worker group does not tolerate.
    text = (REAL / "kuberay-llm-serve-gpu.yaml").read_text()
    taint = "      taints:\n        - key: nvidia.com/gpu\n          effect: NoSchedule\n"
    assert taint in text
    text = text.replace(taint, taint + "        - {key: team, value: llm, effect: NoSchedule}\n")
    assert fixes(text) == {(
        "ReplicaSet/ray-serve-llm-gpu-group-worker", "RayService/default/ray-serve-llm",
        "spec.rayClusterConfig.workerGroupSpecs[0].template.spec.tolerations", 77,  # the worker template's spec:
    )}


def test_a_prometheus_agents_toleration_fix_names_its_spec() -> None:
    found = fixes(TAINTED_POOL + (REAL / "prometheus-agent.yaml").read_text())
    assert found == {("StatefulSet/prom-agent-prometheus-agent", "PrometheusAgent/default/prometheus-agent",
                      "spec.tolerations", 16)}
