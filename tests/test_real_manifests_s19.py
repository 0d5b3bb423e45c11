"""`plan` on real manifests, session 19: requests and node room as kube-scheduler and Karpenter compute them.

Each test names its source: fixtures/real/ (each with its URL), or the upstream code whose arithmetic it pins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app

from conftest import FIXTURES

REAL = FIXTURES / "real"
ZONE = ["--zones", "us-east-1a"]


def _plan(tmp_path: Path, *texts: str, paths: tuple[Path, ...] = (), code: int = 0,
          args: tuple[str, ...] = ()) -> dict[str, Any]:
    files = [str(p) for p in paths]
    for i, text in enumerate(texts):
        f = tmp_path / f"in{i}.yaml"
        f.write_text(text)
        files.append(str(f))
    result = CliRunner().invoke(app, ["plan", *files, *ZONE, "--engine", "karpenter", "-o", "json", *args])
    assert result.exit_code == code, result.stderr + result.stdout[-2000:]
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _deployment(name: str, replicas: int, spec: str) -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
{spec}"""


def _pool(types: str) -> str:
    return f"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: default}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
        - {{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}
        - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
---
"""


# ------------------------------------------------------------------------------------- pod-level resources
# kubernetes/kubernetes pkg/apis/core/v1/defaults.go `defaultPodRequests`: a pod-level limit without a pod-level
# request defaults the request to the containers' aggregate request when a container requests the resource, and
# to the limit only when none does (https://kubernetes.io/docs/tasks/configure-pod-container/assign-pod-level-resources/).
def test_a_pod_level_limit_is_not_the_request_when_the_containers_request(tmp_path: Path) -> None:
    spec = """\
      resources: {limits: {cpu: "4", memory: 4Gi}}
      containers:
      - {name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 512Mi}}}
      - {name: sidecar, image: envoy, resources: {requests: {cpu: 500m}}}
"""
    plan = _plan(tmp_path, _pool("m5.large, m5.xlarge") + _deployment("web", 2, spec))
    assert {p["name"]: p["requests"] for p in plan["pods"]}["web-0"] == {"cpu": "1", "memory": "512Mi"}
    # both on one m5.xlarge (3920m): read as the 4-CPU limit, neither would fit any type the pool allows
    assert plan["summary"]["unschedulable"] == 0
    assert [n["instanceType"] for n in plan["nodes"]] == ["m5.xlarge"]


def test_a_pod_level_limit_is_the_request_when_no_container_requests(tmp_path: Path) -> None:
    spec = """\
      resources: {limits: {cpu: "3", memory: 2Gi}}
      containers:
      - {name: app, image: nginx}
"""
    plan = _plan(tmp_path, _pool("m5.large, m5.xlarge") + _deployment("web", 1, spec))
    assert {p["name"]: p["requests"] for p in plan["pods"]}["web-0"] == {"cpu": "3", "memory": "2Gi"}
    assert [n["instanceType"] for n in plan["nodes"]] == ["m5.xlarge"]
