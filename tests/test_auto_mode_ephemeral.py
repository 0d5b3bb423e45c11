"""An EKS Auto Mode node's ephemeral-storage is its NodeClass's `ephemeralStorage.size` (eks.amazonaws.com/v1
NodeClass; 80Gi by default, the EKS user guide's "Node Class Specification"), not the 20Gi root volume of a
Karpenter EC2NodeClass: pods asking for more than 20Gi fit, pods asking for more than the size do not, and the
fix names the size to write."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app

runner = CliRunner()

NODE_CLASS = """\
apiVersion: eks.amazonaws.com/v1
kind: NodeClass
metadata:
  name: private-compute
spec:
  ephemeralStorage:
    size: "{size}"
---
"""

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: auto}}
spec:
  template:
    spec:
      nodeClassRef: {{group: eks.amazonaws.com, kind: NodeClass, name: {node_class}}}
      requirements:
        - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
        - {{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}}
---
"""

WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: scratch}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: scratch}}}}
  template:
    metadata: {{labels: {{app: scratch}}}}
    spec:
      containers:
      - name: c
        image: busybox
        resources: {{requests: {{cpu: "1", memory: 2Gi, ephemeral-storage: {request}}}}}
"""


def plan(text: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", "-", "-o", "json"], input=text)
    assert result.exit_code in (0, 1), result.stdout + str(result.exception)
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_the_node_class_size_holds_a_request_past_the_default_volume() -> None:
    text = NODE_CLASS.format(size="160Gi") + POOL.format(node_class="private-compute") + WORKLOAD.format(request="120Gi")
    document = plan(text)
    assert document["unschedulable"] == []
    assert all(p["node"] for p in document["pods"])


def test_a_request_past_the_size_is_unschedulable_and_the_fix_names_the_size() -> None:
    text = NODE_CLASS.format(size="100Gi") + POOL.format(node_class="private-compute") + WORKLOAD.format(request="120Gi")
    document = plan(text)
    assert len(document["unschedulable"]) == 2
    said = json.dumps(document["unschedulable"])
    assert "ephemeralStorage.size" in said and "private-compute" in said


def test_the_default_node_class_gives_80gi() -> None:
    fits = plan(POOL.format(node_class="default") + WORKLOAD.format(request="60Gi"))
    assert fits["unschedulable"] == []
    short = plan(POOL.format(node_class="default") + WORKLOAD.format(request="90Gi"))
    assert len(short["unschedulable"]) == 2
    assert "80Gi by default" in json.dumps(short["unschedulable"])
