"""`plan` carries, per unschedulable pod, the same fixes `explain --manifests` proposes (issue 12, item 5)."""

from __future__ import annotations

from pathlib import Path

from planner_helpers import plan_json

TAINTED_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: batch}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
      taints:
        - {key: dedicated, value: batch, effect: NoSchedule}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: public.ecr.aws/nginx/nginx:1.27
          resources: {requests: {cpu: 500m, memory: 1Gi}}
"""


def test_each_unschedulable_pod_carries_the_smallest_fix(tmp_path: Path) -> None:
    path = tmp_path / "tainted.yaml"
    path.write_text(TAINTED_POOL)
    plan = plan_json(path, time_limit="10")
    assert len(plan["unschedulable"]) == 2
    for pod in plan["unschedulable"]:
        best = pod["fixes"][0]
        assert best["field"] == "spec.template.spec.tolerations"
        assert best["file"] == str(path) and best["line"] == TAINTED_POOL.splitlines().index("    spec:", 20) + 1
        assert "dedicated" in best["action"] and best["hourlyCostDelta"] > 0


def test_a_plan_without_unschedulable_pods_has_no_fixes(tmp_path: Path) -> None:
    path = tmp_path / "fine.yaml"
    path.write_text(TAINTED_POOL.replace("      taints:\n        - {key: dedicated, value: batch, effect: NoSchedule}\n", ""))
    plan = plan_json(path)
    assert plan["unschedulable"] == []
