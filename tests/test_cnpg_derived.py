"""CloudNativePG's Cluster planned and linted as the instance pods the operator creates (model/cloudnative_pg.py):
their requests, labels and the anti-affinity the operator writes from `spec.affinity`, and lint findings at the
Cluster's own file:line with fixes in the Cluster's own fields. The manifests follow cloudnative-pg/cloudnative-pg
docs/src/samples (cluster-example.yaml, cluster-example-full.yaml) and its API reference (AffinityConfiguration)."""

from __future__ import annotations

from derived_helpers import findings, line_of, plan

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
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b, us-east-1c]}
---
"""

# docs/src/samples/cluster-example.yaml
EXAMPLE = """\
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata:
  name: cluster-example
spec:
  instances: 3

  postgresql:
    synchronous:
      method: any
      number: 1

  storage:
    size: 1Gi
"""

# docs/src/samples/cluster-example-full.yaml (abridged): resources, and anti-affinity on the (beta) zone label.
FULL = """\
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata:
  name: cluster-example-full
spec:
  description: "Example of cluster"
  imageName: ghcr.io/cloudnative-pg/postgresql:18.1-system-trixie
  instances: 3
  startDelay: 300
  stopDelay: 300
  primaryUpdateStrategy: unsupervised

  storage:
    storageClass: standard
    size: 1Gi

  resources:
    requests:
      memory: "512Mi"
      cpu: "1"
    limits:
      memory: "1Gi"
      cpu: "2"

  affinity:
    enablePodAntiAffinity: true
    topologyKey: failure-domain.beta.kubernetes.io/zone
"""


def cluster(affinity: str, instances: int = 3) -> str:
    return f"""\
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata:
  name: pg-main
  namespace: db
spec:
  instances: {instances}
  affinity:
{affinity}  resources:
    requests:
      cpu: "2"
      memory: 8Gi
  storage:
    size: 100Gi
"""





def test_the_sample_cluster_is_three_instance_pods_on_three_nodes() -> None:
    document = plan(POOL + EXAMPLE)
    pods = [p for p in document["pods"] if p["workload"] == "StatefulSet/cluster-example"]
    assert len(pods) == 3 and all(p["node"] for p in pods)
    assert pods[0]["labels"]["cnpg.io/cluster"] == "cluster-example"
    assert pods[0]["labels"]["cnpg.io/podRole"] == "instance"
    # The operator's default anti-affinity (preferred, kubernetes.io/hostname): one instance per node.
    assert len({p["node"] for p in pods}) == 3


def test_requests_are_spec_resources_and_the_sample_lints_clean() -> None:
    pods = [p for p in plan(POOL + FULL)["pods"] if p["workload"] == "StatefulSet/cluster-example-full"]
    assert len(pods) == 3 and pods[0]["requests"] == {"cpu": "1", "memory": "512Mi"}
    assert [f.rule for f in findings(POOL + FULL) if f.severity != "info"] == []


def test_instances_without_anti_affinity_are_reported_at_spec_instances() -> None:
    text = POOL + cluster("    enablePodAntiAffinity: false\n")
    found = [f for f in findings(text) if f.rule == "replicas-without-spread"]
    assert len(found) == 1
    assert (found[0].object, found[0].field, found[0].line) == ("Cluster/db/pg-main", "spec.instances",
                                                               line_of(text, "instances: 3"))
    assert "enablePodAntiAffinity" in found[0].fix
    assert [f for f in findings(POOL + cluster("    enablePodAntiAffinity: true\n"))
            if f.rule == "replicas-without-spread"] == []


def test_a_node_selector_no_pool_meets_is_reported_at_spec_affinity_node_selector() -> None:
    text = POOL + cluster("    nodeSelector:\n      workload: postgres\n")
    found = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert len(found) == 1
    assert found[0].field == "spec.affinity.nodeSelector[workload]"
    assert found[0].line == line_of(text, "workload: postgres")


def test_required_zone_anti_affinity_past_the_zones_points_at_the_setting_with_the_clusters_fix() -> None:
    affinity = "    topologyKey: topology.kubernetes.io/zone\n    podAntiAffinityType: required\n"
    text = POOL + cluster(affinity, instances=4)
    found = [f for f in findings(text) if f.rule == "anti-affinity-caps-replicas"]
    assert len(found) == 1
    assert found[0].line == line_of(text, "topologyKey: topology.kubernetes.io/zone")
    assert found[0].field == "spec.affinity.topologyKey"
    assert "podAntiAffinityType: preferred" in found[0].fix
    assert "3 of 4 replicas" in found[0].message
    # The fix works: the operator then writes the term as a preference.
    fixed = POOL + cluster(affinity.replace("required", "preferred"), instances=4)
    assert [f for f in findings(fixed) if f.severity == "error"] == []
    unschedulable = plan(text)["unschedulable"]
    assert len(unschedulable) == 1


def test_instance_pods_in_the_input_stand_for_the_cluster() -> None:
    dump = """\
apiVersion: v1
kind: Pod
metadata:
  name: cluster-example-1
  namespace: default
  labels: {cnpg.io/cluster: cluster-example, cnpg.io/podRole: instance}
spec:
  nodeName: ip-10-0-1-1.ec2.internal
  containers: [{name: postgres, image: postgres}]
---
"""
    workloads = {p["workload"] for p in plan(POOL + dump + EXAMPLE)["pods"]}
    assert "StatefulSet/cluster-example" not in workloads


def test_spread_constraints_are_judged_at_spec_topology_spread_constraints() -> None:
    spread = """\
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchLabels:
        cnpg.io/cluster: cluster-example
"""
    text = POOL + EXAMPLE.replace("  instances: 3\n", "  instances: 3\n" + spread)
    found = [f for f in findings(text) if f.rule == "spread-key-unknown"]
    assert [(f.field, f.line) for f in found] == [("spec.topologySpreadConstraints[0].topologyKey",
                                                   line_of(text, "topologyKey: kubernetes.io/zone"))]
    fixed = text.replace("topologyKey: kubernetes.io/zone", "topologyKey: topology.kubernetes.io/zone")
    assert [f for f in findings(fixed) if f.severity != "info"] == []


def test_a_tainted_pool_is_told_which_taint_to_tolerate_in_spec_affinity_tolerations() -> None:
    tainted = POOL.replace("      requirements:\n",
                           "      taints: [{key: dedicated, value: db, effect: NoSchedule}]\n      requirements:\n")
    text = tainted + cluster("    topologyKey: topology.kubernetes.io/zone\n")
    found = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert len(found) == 1
    assert (found[0].field, found[0].line) == ("spec.affinity.tolerations", line_of(text, "  affinity:"))
    assert found[0].fix.startswith("tolerate dedicated=db:NoSchedule (NodePool default) in spec.affinity.tolerations")
    tolerated = "    tolerations:\n    - {key: dedicated, operator: Equal, value: db, effect: NoSchedule}\n"
    fixed = tainted + cluster("    topologyKey: topology.kubernetes.io/zone\n" + tolerated)
    assert [f for f in findings(fixed) if f.severity == "error"] == []
