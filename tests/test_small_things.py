"""Small things a new user saw (issue 14, item 14): readable Fargate waste, no empty `counts = ,`, and GPU
reasons that name the resource no instance type offers."""

from __future__ import annotations

from pathlib import Path

from karpplan.lint.rules.examples import NODEPOOL
from karpplan.render.plan_table import readable_bytes
from karpplan.scheduling.topology import SpreadRule

from planner_helpers import plan_json

GPU_TRAINER = NODEPOOL + """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: nvcr.io/nvidia/pytorch:24.08-py3
          resources:
            limits: {nvidia.com/gpu: "1"}
            requests: {cpu: "4", memory: 16Gi}
"""


def test_fargate_waste_reads_in_mi_and_gi() -> None:
    assert readable_bytes("786432Ki") == "768Mi"
    assert readable_bytes("1395864371") == "1.3Gi"
    assert readable_bytes("2Gi") == "2Gi"


def test_counts_of_no_domain_are_said() -> None:
    assert SpreadRule.describe_counts(None, {}, []) == "no domain"  # type: ignore[arg-type]


def test_a_gpu_no_type_offers_is_named(tmp_path: Path) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_text(GPU_TRAINER)
    plan = plan_json(path)
    (reason, _) = plan["unschedulable"][0]["reasons"]
    assert "no instance type this NodePool allows offers nvidia.com/gpu" in reason
