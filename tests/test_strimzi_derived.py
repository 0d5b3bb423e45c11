"""Strimzi's Kafka, KafkaNodePool, KafkaConnect and KafkaMirrorMaker2 planned as the pods the cluster operator
creates (model/strimzi.py): names, requests, which template a node pool's pods take, rack awareness, and lint
findings at the custom resource's own file:line. The manifests follow strimzi/strimzi-kafka-operator's
packaging/examples (kafka/kafka-persistent.yaml, kafka-with-node-pools.yaml, connect/kafka-connect.yaml)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.run import LintOptions, lint

runner = CliRunner()

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}
---
"""

# kafka-persistent.yaml (KRaft, node pools) with the resources users give each pool.
KRAFT = """\
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: controller
  namespace: kafka
  labels:
    strimzi.io/cluster: my-cluster
spec:
  replicas: 3
  roles:
    - controller
  resources:
    requests: {cpu: 500m, memory: 2Gi}
  storage:
    type: jbod
    volumes:
      - {id: 0, type: persistent-claim, size: 100Gi, kraftMetadata: shared}
---
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: broker
  namespace: kafka
  labels:
    strimzi.io/cluster: my-cluster
spec:
  replicas: 3
  roles:
    - broker
  storage:
    type: jbod
    volumes:
      - {id: 0, type: persistent-claim, size: 100Gi, kraftMetadata: shared}
---
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata:
  name: my-cluster
  namespace: kafka
spec:
  kafka:
    version: 4.1.0
    resources:
      requests: {cpu: "2", memory: 8Gi}
    rack:
      topologyKey: topology.kubernetes.io/zone
    listeners:
      - {name: plain, port: 9092, type: internal, tls: false}
  entityOperator:
    topicOperator:
      resources:
        requests: {cpu: 100m, memory: 256Mi}
    userOperator:
      resources:
        requests: {cpu: 100m, memory: 256Mi}
  cruiseControl:
    resources:
      requests: {cpu: 500m, memory: 1Gi}
"""

# The classic layout: spec.kafka.replicas, ZooKeeper, and required zone anti-affinity in template.pod.
ZOOKEEPER = """\
apiVersion: kafka.strimzi.io/v1beta2
kind: Kafka
metadata:
  name: events
spec:
  kafka:
    replicas: 3
    resources:
      requests: {cpu: "1", memory: 4Gi}
    template:
      pod:
        affinity:
          podAntiAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              - labelSelector:
                  matchLabels:
                    strimzi.io/name: events-kafka
                topologyKey: topology.kubernetes.io/zone
    listeners:
      - {name: plain, port: 9092, type: internal, tls: false}
    storage: {type: ephemeral}
  zookeeper:
    replicas: 3
    resources:
      requests: {cpu: 250m, memory: 1Gi}
    storage: {type: ephemeral}
"""

CONNECT = """\
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaConnect
metadata:
  name: my-connect
spec:
  bootstrapServers: my-cluster-kafka-bootstrap:9093
  resources:
    requests: {cpu: "1", memory: 2Gi}
  template:
    pod:
      tolerations:
        - {key: dedicated, operator: Equal, value: kafka, effect: NoSchedule}
---
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata:
  name: mm2
spec:
  replicas: 2
  target: {alias: target, bootstrapServers: target:9092}
"""


def plan(text: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", "-", "-o", "json"], input=text)
    assert result.exit_code in (0, 1), result.stdout + str(result.exception)
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def requests_by_workload(document: dict[str, Any]) -> dict[str, tuple[int, dict[str, str]]]:
    out: dict[str, tuple[int, dict[str, str]]] = {}
    for pod in document["pods"]:
        count, _ = out.get(pod["workload"], (0, {}))
        out[pod["workload"]] = (count + 1, pod["requests"])
    return out


def test_node_pools_take_their_own_resources_else_the_kafkas() -> None:
    got = requests_by_workload(plan(POOL + KRAFT))
    assert got["KafkaNodePool/controller"] == (3, {"cpu": "500m", "memory": "2Gi"})
    assert got["KafkaNodePool/broker"] == (3, {"cpu": "2", "memory": "8Gi"})
    assert got["Deployment/my-cluster-entity-operator"] == (1, {"cpu": "200m", "memory": "512Mi"})
    assert got["Deployment/my-cluster-cruise-control"] == (1, {"cpu": "500m", "memory": "1Gi"})
    assert len(got) == 4  # node pools: no virtual pool of spec.kafka.replicas (StatefulSet/my-cluster-kafka)


def test_plan_names_a_node_pools_pods_as_lint_names_the_pool() -> None:
    """One name for one thing: plan said "StatefulSet/my-cluster-controller" (a StatefulSet Strimzi no longer
    makes: its StrimziPodSets run the pods) where lint's findings say "KafkaNodePool/kafka/controller"."""
    document = plan(POOL + KRAFT)
    pools = {f"{p['workload'].split('/')[0]}/{p['namespace']}/{p['workload'].split('/')[1]}"
             for p in document["pods"] if p["workload"].startswith("KafkaNodePool/")}
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(KRAFT)))
    assert pools == {"KafkaNodePool/kafka/controller", "KafkaNodePool/kafka/broker"}
    assert pools <= set(report.object_names)


def test_pod_names_are_strimzis() -> None:
    names = {p["name"] for p in plan(POOL + KRAFT)["pods"]}
    assert {"my-cluster-broker-0", "my-cluster-broker-2", "my-cluster-controller-1"} <= names


def test_rack_awareness_keeps_brokers_on_nodes_with_the_key() -> None:
    """Brokers require a node carrying the rack key: a node pool whose nodes have no such label cannot take them,
    the controllers (no broker role) can."""
    rack = KRAFT.replace("topologyKey: topology.kubernetes.io/zone", "topologyKey: example.com/rack")
    document = plan(POOL + rack)
    stuck = {u["workload"] for u in document["unschedulable"]}
    assert stuck == {"KafkaNodePool/broker"}


def test_zookeeper_and_the_virtual_pool() -> None:
    got = requests_by_workload(plan(POOL + ZOOKEEPER))
    assert got["StatefulSet/events-kafka"] == (3, {"cpu": "1", "memory": "4Gi"})
    assert got["StatefulSet/events-zookeeper"] == (3, {"cpu": "250m", "memory": "1Gi"})


def test_zone_anti_affinity_past_the_zones_is_found_at_the_kafka() -> None:
    """Three brokers, one per zone required, two zones: lint says so at the topologyKey in the Kafka, and the
    plan leaves one broker pending."""
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(POOL + ZOOKEEPER)))
    (finding,) = [f for f in report.findings if f.rule == "anti-affinity-caps-replicas"]
    assert finding.object == "Kafka/default/events"
    assert finding.field.startswith("spec.kafka.template.pod.affinity.podAntiAffinity")
    text = POOL + ZOOKEEPER
    assert text.splitlines()[finding.line - 1].strip() == "topologyKey: topology.kubernetes.io/zone"
    assert [u["pod"] for u in plan(text)["unschedulable"]] == ["default/events-kafka-2"]


def test_connect_and_mirror_maker_2() -> None:
    got = requests_by_workload(plan(POOL + CONNECT))
    assert got["KafkaConnect/my-connect"] == (3, {"cpu": "1", "memory": "2Gi"})  # replicas default 3
    assert got["KafkaMirrorMaker2/mm2"][0] == 2


def test_a_cluster_dump_holding_the_workload_stands_for_it() -> None:
    dump = ZOOKEEPER + """\
---
apiVersion: core.strimzi.io/v1beta2
kind: StrimziPodSet
metadata: {name: events-zookeeper}
spec: {pods: []}
"""
    got = requests_by_workload(plan(POOL + dump))
    assert "StatefulSet/events-zookeeper" not in got and "StatefulSet/events-kafka" in got


def spread_findings(text: str) -> list[tuple[str, int, str]]:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    return [(f.object, f.line, f.field) for f in report.findings if f.rule == "replicas-without-spread"]


def test_pools_and_zookeeper_without_spread_are_found_at_their_replicas() -> None:
    text = POOL + KRAFT.replace("    rack:\n      topologyKey: topology.kubernetes.io/zone\n", "")
    found = spread_findings(text)
    assert [(o, f) for o, _, f in found] == [("KafkaNodePool/kafka/controller", "spec.replicas"),
                                             ("KafkaNodePool/kafka/broker", "spec.replicas")]
    assert all(text.splitlines()[line - 1].strip() == "replicas: 3" for _, line, _ in found)
    zookeeper = spread_findings(POOL + ZOOKEEPER)  # the brokers have zone anti-affinity, ZooKeeper nothing
    assert [(o, f) for o, _, f in zookeeper] == [("Kafka/default/events", "spec.zookeeper.replicas")]


def test_a_spread_in_template_pod_satisfies_it_rack_awareness_does_not() -> None:
    # Rack awareness spreads no pod: Strimzi 0.49 and later add only a node affinity on the rack key (strimzi
    # proposal 123 removed the preferred anti-affinity), so a new user's 3 brokers were planned on one node.
    assert [o for o, _, _ in spread_findings(POOL + KRAFT)] == ["KafkaNodePool/kafka/controller",
                                                                "KafkaNodePool/kafka/broker"]
    spread = """\
  template:
    pod:
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: DoNotSchedule
          labelSelector: {matchLabels: {strimzi.io/pool-name: broker}}
"""
    fixed = KRAFT.replace("    rack:\n      topologyKey: topology.kubernetes.io/zone\n", "").replace(
        "    - broker\n", "    - broker\n" + spread)
    assert [o for o, _, _ in spread_findings(POOL + fixed)] == ["KafkaNodePool/kafka/controller"]


# A controller pool from a public EKS Kafka guide (data-on-eks, Strimzi 1.2): its own pod label in
# template.pod.metadata.labels, selected by its zone spread with minDomains 3. The guide warns that the pods stay
# Pending when only two zones have eligible nodes; lint says so at the pool's minDomains.
GUIDE_POOL = """\
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata:
  name: controller
  namespace: kafka
  labels:
    strimzi.io/cluster: my-cluster
spec:
  replicas: 3
  roles:
  - controller
  resources:
    requests:
      cpu: '1'
      memory: 2Gi
  template:
    pod:
      metadata:
        labels:
          docs.example.com/kafka-role: controller
      topologySpreadConstraints:
      - maxSkew: 1
        minDomains: 3
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        nodeAffinityPolicy: Honor
        nodeTaintsPolicy: Honor
        labelSelector:
          matchLabels:
            strimzi.io/cluster: my-cluster
            docs.example.com/kafka-role: controller
---
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata:
  name: my-cluster
  namespace: kafka
spec:
  kafka:
    rack:
      topologyKey: topology.kubernetes.io/zone
    listeners:
      - {name: tls, port: 9093, type: internal, tls: true}
"""


def test_a_pools_min_domains_above_the_zones_is_found_at_the_pool() -> None:
    text = POOL + GUIDE_POOL
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    found = {f.rule: f for f in report.findings if f.object == "KafkaNodePool/kafka/controller"}
    assert set(found) == {"min-domains-unreachable", "spread-caps-replicas"}
    minimum = found["min-domains-unreachable"]
    assert minimum.field == "spec.template.pod.topologySpreadConstraints[0].minDomains"
    assert text.splitlines()[minimum.line - 1].strip() == "minDomains: 3"
    assert "lets 2 of 3 replicas run" in found["spread-caps-replicas"].message
    assert [u["pod"] for u in plan(text)["unschedulable"]] == ["kafka/my-cluster-controller-2"]
    # The fix it names: minDomains 2 (the zones the pods can reach).
    fixed = text.replace("minDomains: 3", "minDomains: 2")
    assert not [f for f in lint(LintOptions(paths=("-",), stdin=io.StringIO(fixed))).findings
                if f.object == "KafkaNodePool/kafka/controller"]
    assert plan(fixed)["unschedulable"] == []


def test_an_older_entity_operators_tls_sidecar_adds_its_requests() -> None:
    older = ZOOKEEPER + """\
  entityOperator:
    topicOperator:
      resources:
        requests: {cpu: 100m, memory: 256Mi}
    tlsSidecar:
      resources:
        requests: {cpu: 50m, memory: 64Mi}
"""
    got = requests_by_workload(plan(POOL + older))
    assert got["Deployment/events-entity-operator"] == (1, {"cpu": "150m", "memory": "320Mi"})


def test_a_node_pools_fix_names_the_kafka_where_rack_awareness_is_set() -> None:
    """A KafkaNodePool has no `rack`: rack awareness is the Kafka's spec.kafka.rack (a new user was told to set
    `rack.topologyKey` on the pool)."""
    text = POOL + KRAFT.replace("    rack:\n      topologyKey: topology.kubernetes.io/zone\n", "")
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    fixes = {f.object: f.fix for f in report.findings if f.rule == "replicas-without-spread"}
    assert "spec.kafka.rack.topologyKey on the Kafka" in fixes["KafkaNodePool/kafka/broker"]
    assert ", or set rack.topologyKey" not in fixes["KafkaNodePool/kafka/broker"]


def test_inventory_says_how_many_pods_each_resource_becomes(tmp_path: Path) -> None:
    """`karpplan inventory -o json`'s derived[].replicas is the pods planned for the resource: a KafkaNodePool of
    three brokers read 1 beside its own words "StatefulSet my-cluster-broker (3 pod(s))" (a new user's trial)."""
    (tmp_path / "kafka.yaml").write_text(POOL + "---\n" + KRAFT)
    result = CliRunner().invoke(app, ["inventory", str(tmp_path), "-o", "json"])
    assert result.exit_code == 0, result.output
    derived = json.loads(result.stdout)["derived"]
    for entry in derived:
        planned = [int(n) for n in re.findall(r"\((\d+) pod\(s\)\)", entry["plain"])]
        if planned:
            assert entry["replicas"] == sum(planned), entry
    assert any(e["kind"] == "KafkaNodePool" and e["replicas"] == 3 for e in derived), derived
    # named as the operator runs them: StrimziPodSets, not StatefulSets (none since Strimzi 0.35)
    pools = [e["plain"] for e in derived if e["kind"] == "KafkaNodePool"]
    assert all("StrimziPodSet my-cluster-" in p and "StatefulSet" not in p.replace("StrimziPodSet", "") for p in pools)
