"""A small plan under NodePool weights is proven (issue 29: every plan up to 100 pods proven). A new user's
four 1-CPU pods over data-on-eks's weighted NodePools ended "feasible, gap 32.5%: the plan is the likely cause;
a longer --time-limit may find a cheaper one" although CP-SAT had proven the plan: its bound was dropped under
weights. The model minimises the pods' weight tiers first, then the price, so its bound (less the plan's own tier
penalty) bounds the price of every plan that honours the weights as Karpenter's heaviest-pool-first launches do;
the LP bounds, which ignore weights, sit below it."""

from __future__ import annotations

from pathlib import Path

from planner_helpers import plan_text

POOLS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: memory}
spec:
  weight: 50
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [r6g]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: compute}
spec:
  weight: 10
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [c6g]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - {name: api, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}
"""


def test_a_weighted_small_plan_is_proven_in_the_heaviest_pool(tmp_path: Path) -> None:
    plan = plan_text(tmp_path, POOLS, catalog=None, region="us-east-1", time_limit=10)
    summary = plan.summary
    assert not plan.unschedulable
    assert {n.node_pool for n in plan.nodes} == {"memory"}  # the heavier pool, though c6g is cheaper
    assert summary.status == "optimal"
    assert summary.lower_bound is not None and summary.gap is not None and summary.gap <= 1e-6
