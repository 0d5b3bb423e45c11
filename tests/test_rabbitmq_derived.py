"""The RabbitMQ cluster operator's RabbitmqCluster planned and linted as the StatefulSet the operator creates
(model/rabbitmq_cluster.py): the CRD's default resources, the operator's default zone spread, the StatefulSet
override merged in, and lint findings at the RabbitmqCluster's own file:line. The manifests follow
rabbitmq/cluster-operator docs/examples (hello-world, production-ready, pod-anti-affinity, sidecar)."""

from __future__ import annotations

from derived_helpers import findings, line_of, plan, pods_of

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

# docs/examples/hello-world/rabbitmq.yaml
HELLO_WORLD = """\
apiVersion: rabbitmq.com/v1beta1
kind: RabbitmqCluster
metadata:
  name: hello-world
"""

# docs/examples/production-ready/rabbitmq.yaml (rabbitmq config and persistence left out)
PRODUCTION_READY = """\
apiVersion: rabbitmq.com/v1beta1
kind: RabbitmqCluster
metadata:
  name: production-ready
spec:
  replicas: 3
  resources:
    requests:
      cpu: 4000m
      memory: 10Gi
    limits:
      cpu: 4000m
      memory: 10Gi
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchExpressions:
            - key: app.kubernetes.io/name
              operator: In
              values:
              - production-ready
        topologyKey: kubernetes.io/hostname
  override:
    statefulSet:
      spec:
        template:
          spec:
            containers: []
            topologySpreadConstraints:
            - maxSkew: 1
              topologyKey: "topology.kubernetes.io/zone"
              whenUnsatisfiable: DoNotSchedule
              labelSelector:
                matchLabels:
                  app.kubernetes.io/name: production-ready
"""


def cluster(body: str, annotations: str = "") -> str:
    return f"""\
apiVersion: rabbitmq.com/v1beta1
kind: RabbitmqCluster
metadata:
  name: rabbit
  namespace: mq
{annotations}spec:
{body}"""






def test_hello_world_is_one_pod_of_the_crds_default_resources() -> None:
    pods = pods_of(plan(POOL + HELLO_WORLD), "StatefulSet/hello-world-server")
    assert len(pods) == 1 and pods[0]["node"]
    assert pods[0]["requests"] == {"cpu": "1", "memory": "2Gi"}
    assert pods[0]["labels"]["app.kubernetes.io/name"] == "hello-world"
    assert pods[0]["labels"]["app.kubernetes.io/component"] == "rabbitmq"


def test_production_ready_spreads_over_the_zones_and_lints_clean() -> None:
    text = POOL + PRODUCTION_READY
    pods = pods_of(plan(text), "StatefulSet/production-ready-server")
    assert len(pods) == 3 and all(p["node"] for p in pods)
    assert pods[0]["requests"] == {"cpu": "4", "memory": "10Gi"}
    assert len({p["node"] for p in pods}) == 3  # required anti-affinity on the hostname
    assert [f.rule for f in findings(text) if f.severity != "info"] == []


def test_the_operators_zone_spread_counts_as_spread_and_dropping_it_is_reported() -> None:
    body = "  replicas: 3\n"
    assert [f for f in findings(POOL + cluster(body)) if f.rule == "replicas-without-spread"] == []
    annotated = "  annotations:\n    rabbitmq.com/disable-default-topology-spread-constraints: \"true\"\n"
    text = POOL + cluster(body, annotated)
    found = [f for f in findings(text) if f.rule == "replicas-without-spread"]
    assert [(f.field, f.line) for f in found] == [("spec.replicas", line_of(text, "replicas: 3"))]
    assert "spec.affinity" in found[0].fix


def test_required_zone_anti_affinity_past_the_zones_is_reported_in_spec_affinity() -> None:
    body = """\
  replicas: 3
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchExpressions:
          - key: app.kubernetes.io/name
            operator: In
            values: [rabbit]
        topologyKey: topology.kubernetes.io/zone
"""
    text = POOL + cluster(body)
    found = [f for f in findings(text) if f.rule == "anti-affinity-caps-replicas"]
    assert len(found) == 1 and found[0].line == line_of(text, "topologyKey: topology.kubernetes.io/zone")
    assert found[0].field.startswith("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]")
    assert "2 of 3 replicas" in found[0].message
    assert len(plan(text)["unschedulable"]) == 1


def test_the_overrides_fields_are_reported_where_the_override_writes_them() -> None:
    body = """\
  replicas: 3
  override:
    statefulSet:
      spec:
        replicas: 5
        template:
          spec:
            nodeSelector:
              node-role: messaging
            topologySpreadConstraints:
            - maxSkew: 1
              topologyKey: topology.kubernetes.io/zone
              whenUnsatisfiable: DoNotSchedule
              labelSelector:
                matchLabels:
                  app.kubernetes.io/name: rabit
"""
    text = POOL + cluster(body)
    found = findings(text)
    pool = [(f.field, f.line) for f in found if f.rule == "no-pool-can-launch"]
    assert pool == [("spec.override.statefulSet.spec.template.spec.nodeSelector[node-role]",
                     line_of(text, "node-role: messaging"))]
    assert "5 pod(s)" in next(f.message for f in found if f.rule == "no-pool-can-launch")
    spread = [f for f in found if f.rule == "spread-selector-misses-own-pods"]
    assert len(spread) == 1 and spread[0].field.startswith(
        "spec.override.statefulSet.spec.template.spec.topologySpreadConstraints[0]")
    assert spread[0].line == line_of(text, "labelSelector:")


def test_a_sidecar_in_the_override_joins_the_rabbitmq_container() -> None:
    body = """\
  replicas: 1
  resources:
    requests: {cpu: "1", memory: 2Gi}
  override:
    statefulSet:
      spec:
        template:
          spec:
            containers:
            - name: additional-container
              image: busybox
              resources:
                requests: {cpu: 500m, memory: 1Gi}
"""
    pods = pods_of(plan(POOL + cluster(body)), "StatefulSet/rabbit-server")
    assert pods[0]["requests"] == {"cpu": "1500m", "memory": "3Gi"}


def test_its_statefulset_in_the_input_stands_for_it() -> None:
    dump = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: hello-world-server, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/name: hello-world}}
  template:
    metadata: {labels: {app.kubernetes.io/name: hello-world}}
    spec:
      containers: [{name: rabbitmq, image: rabbitmq, resources: {requests: {cpu: 250m, memory: 1Gi}}}]
---
"""
    pods = pods_of(plan(POOL + dump + HELLO_WORLD), "StatefulSet/hello-world-server")
    assert [p["requests"] for p in pods] == [{"cpu": "250m", "memory": "1Gi"}]
