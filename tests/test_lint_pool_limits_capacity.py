"""pool-limits-too-small counts what Karpenter counts (a new user's trial: a batch Job of 10 x 3 CPU / 12Gi on a
NodePool with limits cpu 32, memory 128Gi). The requests add up to 30 CPU and 120Gi, inside the limits, and lint
said nothing while `plan` left one pod unschedulable: Karpenter charges each node it launches its whole capacity
(`subtractMax` in its scheduler), and the node within the limits, an m5a.8xlarge (32 CPU, 118312Mi
allocatable), holds 9 of the pods."""

from __future__ import annotations

import io

from karpplan.lint.registry import BY_NAME
from karpplan.lint.run import LintOptions, lint

POOL_AND_JOB = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: batch}
spec:
  template:
    metadata: {labels: {workload-class: batch}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints: [{key: batch, effect: NoSchedule}]
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
  limits: {cpu: "32", memory: 128Gi}
---
apiVersion: batch/v1
kind: Job
metadata: {name: nightly-recon, namespace: batch}
spec:
  parallelism: 10
  completions: 10
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {workload-class: batch}
      tolerations: [{key: batch, operator: Exists, effect: NoSchedule}]
      containers:
        - name: recon
          image: recon:1.0
          resources: {requests: {cpu: "3", memory: 12Gi}}
"""
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def _limit_findings(text: str) -> list[str]:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text), zones=ZONES))
    return [f.message + " | " + f.fix for f in report.findings if f.rule == "pool-limits-too-small"]


def test_requests_within_the_limits_still_leave_a_pod_pending_when_nodes_are_charged_whole() -> None:
    (finding,) = _limit_findings(POOL_AND_JOB)
    assert "let 9 of the 10 pod(s)" in finding
    assert "cpu: 30, memory: 120Gi" in finding  # the requests: within the limits
    assert "whole capacity" in finding
    assert "cpu: 32" in finding.split("nodes within them")[1]  # the node charged: 32 CPU, the whole limit


def test_limits_the_finding_proposes_hold_every_pod() -> None:
    (finding,) = _limit_findings(POOL_AND_JOB)
    proposed = finding.split("raise the NodePool's limits to ")[1].split(" (")[0]
    cpu, memory = (part.split(": ")[1] for part in proposed.split(", "))
    raised = POOL_AND_JOB.replace('limits: {cpu: "32", memory: 128Gi}', f'limits: {{cpu: "{cpu}", memory: {memory}}}')
    assert _limit_findings(raised) == []


def test_nine_pods_fit_and_nothing_is_said() -> None:
    assert _limit_findings(POOL_AND_JOB.replace("parallelism: 10", "parallelism: 9")) == []


def test_a_node_limit_is_counted_without_the_batch_that_launches_past_it() -> None:
    """Karpenter's one batch may launch past limits.nodes (the simulation's `exceeds_node_limits`): that run
    keeps no limit, so it does not count as holding the pods (plan leaves 2 of the 3 unschedulable)."""
    text = BY_NAME["pool-limits-too-small"].bad.replace('limits: {cpu: "10"}', 'limits: {nodes: "1"}')
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text), zones=ZONES))
    (finding,) = [f for f in report.findings if f.rule == "pool-limits-too-small"]
    assert "limits (nodes: 1) let 1 of the 3 pod(s)" in finding.message
    assert finding.fix.startswith("raise the NodePool's limits.nodes")
