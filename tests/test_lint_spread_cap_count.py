"""spread-caps-replicas counts what can really run (a new user's trial: 9 trino workers of 7 CPU, maxSkew 1 over
three zones, a NodePool of cpu: 64; lint said "lets 7 of 9 replicas run" while `plan` placed 8: eight 2xlarge,
3/3/2 over the zones). The lint's own placement had grown one claim to an 8xlarge for a third pod and left the
limit no room; as many run as the better of its two placements (limits as capacity, Karpenter's subtractMax)
places. Without the spread all nine fit one m7g.16xlarge (63 of its 63.775 allocatable CPU), so the spread is
still the cause."""

from __future__ import annotations

import io

from karpplan.lint.run import LintOptions, lint

POOL_AND_WORKERS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: team-analytics}
spec:
  template:
    metadata: {labels: {team: analytics}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints: [{key: team, value: analytics, effect: NoSchedule}]
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m, r]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["6"]}
        - {key: kubernetes.io/arch, operator: In, values: [arm64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits: {cpu: "64"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: trino-worker, namespace: analytics}
spec:
  replicas: 9
  selector: {matchLabels: {app: trino-worker}}
  template:
    metadata: {labels: {app: trino-worker}}
    spec:
      tolerations: [{key: team, operator: Equal, value: analytics, effect: NoSchedule}]
      nodeSelector: {team: analytics}
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: trino-worker}}}
      containers:
        - name: trino
          image: trinodb/trino:470
          resources: {requests: {cpu: "7", memory: 28Gi}}
"""
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def test_the_count_is_what_a_placement_keeping_the_spread_and_the_limits_runs() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(POOL_AND_WORKERS), zones=ZONES))
    (finding,) = [f for f in report.findings if f.rule == "spread-caps-replicas"]
    assert finding.message.endswith("lets 8 of 9 replicas run")  # eight 8-vCPU nodes, 3/3/2


def test_with_room_for_every_replica_nothing_is_said() -> None:
    roomy = POOL_AND_WORKERS.replace('limits: {cpu: "64"}', 'limits: {cpu: "72"}')
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(roomy), zones=ZONES))
    assert [f for f in report.findings if f.rule == "spread-caps-replicas"] == []
