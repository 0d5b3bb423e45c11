"""Zalando postgres-operator's `postgresql` planned and linted as the Spilo StatefulSet (and connection pooler
Deployments) the operator creates (model/zalando_postgres.py): the operator's default requests, no anti-affinity
by default, the pooler when enabled, findings at the postgresql's own file:line. The manifests follow
zalando/postgres-operator manifests/minimal-postgres-manifest.yaml and complete-postgres-manifest.yaml."""

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

# manifests/minimal-postgres-manifest.yaml
MINIMAL = """\
apiVersion: "acid.zalan.do/v1"
kind: postgresql
metadata:
  name: acid-minimal-cluster
spec:
  teamId: "acid"
  volume:
    size: 1Gi
  numberOfInstances: 2
  users:
    zalando:  # database owner
    - superuser
    - createdb
    foo_user: []  # role for application foo
  databases:
    foo: zalando  # dbname: owner
  preparedDatabases:
    bar: {}
  postgresql:
    version: "18"
"""


def postgresql(body: str) -> str:
    return f"""\
apiVersion: acid.zalan.do/v1
kind: postgresql
metadata:
  name: acid-db
  namespace: data
spec:
  teamId: acid
  postgresql: {{version: "17"}}
  volume: {{size: 10Gi}}
{body}"""






def test_the_minimal_manifest_is_two_spilo_pods_of_the_operators_default_requests() -> None:
    pods = pods_of(plan(POOL + MINIMAL), "StatefulSet/acid-minimal-cluster")
    assert len(pods) == 2 and all(p["node"] for p in pods)
    assert pods[0]["requests"] == {"cpu": "100m", "memory": "100Mi"}
    assert pods[0]["labels"] == {"application": "spilo", "cluster-name": "acid-minimal-cluster", "team": "acid"}


def test_two_instances_without_spread_are_reported_at_number_of_instances() -> None:
    text = POOL + MINIMAL
    found = [f for f in findings(text) if f.rule == "replicas-without-spread"]
    assert [(f.field, f.line) for f in found] == [("spec.numberOfInstances", line_of(text, "numberOfInstances: 2"))]
    assert "enable_pod_antiaffinity" in found[0].fix and "topologySpreadConstraints" in found[0].fix


def test_a_written_zone_spread_is_the_pods_and_lints_clean() -> None:
    body = """\
  numberOfInstances: 3
  resources:
    requests: {cpu: "2", memory: 8Gi}
    limits: {cpu: "2", memory: 8Gi}
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchLabels: {cluster-name: acid-db}
"""
    text = POOL + postgresql(body)
    pods = pods_of(plan(text), "StatefulSet/acid-db")
    assert len(pods) == 3 and all(p["node"] for p in pods)
    assert pods[0]["requests"] == {"cpu": "2", "memory": "8Gi"}
    assert [f.rule for f in findings(text) if f.severity != "info"] == []


def test_a_request_left_out_gets_the_default_and_sidecars_add_theirs() -> None:
    body = """\
  numberOfInstances: 1
  resources:
    requests: {memory: 1Gi}
  sidecars:
  - name: telegraf-sidecar
    image: telegraf:latest
    resources:
      requests: {cpu: 100m, memory: 100Mi}
  - name: exporter
    image: exporter
"""
    pods = pods_of(plan(POOL + postgresql(body)), "StatefulSet/acid-db")
    assert pods[0]["requests"] == {"cpu": "300m", "memory": "1224Mi"}


def test_the_connection_pooler_is_a_deployment_of_two_pods_by_default() -> None:
    body = "  numberOfInstances: 1\n  enableConnectionPooler: true\n  enableReplicaConnectionPooler: true\n" \
           "  connectionPooler:\n    resources:\n      requests: {cpu: 300m, memory: 100Mi}\n"
    document = plan(POOL + postgresql(body))
    master = pods_of(document, "Deployment/acid-db-pooler")
    replica = pods_of(document, "Deployment/acid-db-pooler-repl")
    assert len(master) == 2 and len(replica) == 2
    assert master[0]["requests"] == {"cpu": "300m", "memory": "100Mi"}
    assert master[0]["labels"]["application"] == "db-connection-pooler"
    assert pods_of(plan(POOL + postgresql("  numberOfInstances: 1\n")), "Deployment/acid-db-pooler") == []


def test_node_affinity_no_pool_offers_is_reported_at_spec_node_affinity() -> None:
    body = """\
  numberOfInstances: 1
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: postgres-operator
              operator: In
              values:
                - enabled
"""
    text = POOL + postgresql(body)
    found = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert len(found) == 1 and found[0].field.startswith("spec.nodeAffinity")
    assert found[0].line >= line_of(text, "nodeAffinity:")
    assert len(plan(text)["unschedulable"]) == 1


def test_its_statefulset_in_the_input_stands_for_it() -> None:
    dump = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: acid-minimal-cluster, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {application: spilo, cluster-name: acid-minimal-cluster}}
  template:
    metadata: {labels: {application: spilo, cluster-name: acid-minimal-cluster}}
    spec:
      containers: [{name: postgres, image: spilo, resources: {requests: {cpu: 250m, memory: 1Gi}}}]
---
"""
    pods = pods_of(plan(POOL + dump + MINIMAL), "StatefulSet/acid-minimal-cluster")
    assert [p["requests"] for p in pods] == [{"cpu": "250m", "memory": "1Gi"}] * 2


# manifests/configmap.yaml (abridged) with the pod anti-affinity turned on and larger default requests
CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: postgres-operator
data:
  default_cpu_request: 250m
  default_memory_request: 1Gi
  enable_pod_antiaffinity: "true"
  pod_antiaffinity_preferred_during_scheduling: "false"
  pod_antiaffinity_topology_key: "topology.kubernetes.io/zone"
---
"""


def test_the_operators_config_map_in_the_input_sets_defaults_and_anti_affinity() -> None:
    text = POOL + CONFIG_MAP + MINIMAL.replace("numberOfInstances: 2", "numberOfInstances: 3")
    document = plan(text)
    pods = pods_of(document, "StatefulSet/acid-minimal-cluster")
    assert [p["requests"] for p in pods if p["node"]] == [{"cpu": "250m", "memory": "1Gi"}] * 2
    assert len(document["unschedulable"]) == 1  # required anti-affinity on the zone: the pool has two
    found = findings(text)
    assert [f for f in found if f.rule == "replicas-without-spread"] == []
    capped = [f for f in found if f.rule == "anti-affinity-caps-replicas"]
    assert len(capped) == 1 and capped[0].object == "postgresql/default/acid-minimal-cluster"
    assert "pod_antiaffinity_preferred_during_scheduling" in capped[0].fix


def test_an_operator_configuration_resource_is_read_as_its_config_map() -> None:
    configuration = """\
apiVersion: acid.zalan.do/v1
kind: OperatorConfiguration
metadata:
  name: postgresql-operator-default-configuration
configuration:
  kubernetes:
    enable_pod_antiaffinity: true
    pod_antiaffinity_preferred_during_scheduling: true
  postgres_pod_resources:
    default_cpu_request: 500m
---
"""
    text = POOL + configuration + MINIMAL
    pods = pods_of(plan(text), "StatefulSet/acid-minimal-cluster")
    assert [p["requests"] for p in pods] == [{"cpu": "500m", "memory": "100Mi"}] * 2
    assert [f for f in findings(text) if f.rule == "replicas-without-spread"] == []
