"""replicas-without-spread judges a Strimzi node pool as Strimzi creates its pods (a new user's trial: a
KafkaNodePool of 3 brokers with the Kafka's `rack.topologyKey: topology.kubernetes.io/zone` got no finding while a
2-replica Deployment did, and `plan` put all 3 brokers on one node). Rack awareness tells Kafka each broker's zone;
since Strimzi 0.49 (strimzi proposal 123) the operator adds only a node affinity requiring the rack key, no pod
anti-affinity, so nothing spreads the brokers. A spread or zone anti-affinity in template.pod does, as it would
in a Deployment's pod template."""

from __future__ import annotations

import io

from karpplan.lint.run import LintOptions, lint

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
---
"""
KAFKA = """\
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaNodePool
metadata:
  name: dual-role
  namespace: kafka
  labels: {strimzi.io/cluster: events}
spec:
  replicas: 3
  roles: [controller, broker]
  resources: {requests: {cpu: "2", memory: 8Gi}}
  storage: {type: ephemeral}
TEMPLATE---
apiVersion: kafka.strimzi.io/v1beta2
kind: Kafka
metadata:
  name: events
  namespace: kafka
  annotations: {strimzi.io/node-pools: enabled, strimzi.io/kraft: enabled}
spec:
  kafka:
    version: 3.8.0
    listeners: [{name: plain, port: 9092, type: internal, tls: false}]
    rack:
      topologyKey: topology.kubernetes.io/zone
"""


def _findings(template: str = "") -> list[tuple[str, int, str, str]]:
    text = POOL + KAFKA.replace("TEMPLATE", template)
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    return [(f.object, f.line, f.message, f.fix) for f in report.findings if f.rule == "replicas-without-spread"]


def test_rack_awareness_alone_leaves_the_brokers_unspread() -> None:
    ((obj, line, message, fix),) = _findings()
    assert obj == "KafkaNodePool/kafka/dual-role"
    assert (POOL + KAFKA).splitlines()[line - 1].strip() == "replicas: 3"
    assert message.startswith("3 replicas with neither a topologySpreadConstraint nor pod anti-affinity")
    assert "rack awareness (topology.kubernetes.io/zone)" in message and "does not spread the pods" in message
    assert "topologySpreadConstraints on topology.kubernetes.io/zone" in fix
    assert "rack.topologyKey" not in fix  # already set: not the fix


def test_a_zone_spread_or_a_zone_anti_affinity_in_template_pod_is_enough() -> None:
    spread = """\
  template:
    pod:
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {strimzi.io/pool-name: dual-role}}}
"""
    anti = """\
  template:
    pod:
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: topology.kubernetes.io/zone
                labelSelector: {matchLabels: {strimzi.io/pool-name: dual-role}}
"""
    assert _findings(spread) == []
    assert _findings(anti) == []
