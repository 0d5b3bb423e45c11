"""ECK's Elasticsearch planned and linted as the StatefulSets the operator creates per node set
(model/elasticsearch_eck.py): default memory, the default anti-affinity, zone awareness, and lint findings at
the node set's own file:line. The manifests follow elastic/cloud-on-k8s config/samples/elasticsearch and the ECK
docs (node sets, zone awareness)."""

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
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b, us-east-1c]}
---
"""

# config/samples/elasticsearch/elasticsearch.yaml (comments dropped)
SAMPLE = """\
apiVersion: elasticsearch.k8s.elastic.co/v1
kind: Elasticsearch
metadata:
  name: elasticsearch-sample
spec:
  version: 9.5.1
  nodeSets:
  - name: default
    config:
      node.roles: ["master", "data", "ingest", "ml"]
      node.store.allow_mmap: false
    podTemplate:
      metadata:
        labels:
          foo: bar
      spec:
        containers:
        - name: elasticsearch
          resources:
            limits:
              memory: 4Gi
              cpu: 1
    count: 3
"""


def node_sets(*sets: str) -> str:
    return """\
apiVersion: elasticsearch.k8s.elastic.co/v1
kind: Elasticsearch
metadata:
  name: quickstart
  namespace: logging
spec:
  version: 9.1.0
  nodeSets:
""" + "".join(sets)


MASTERS = """\
  - name: masters
    count: 3
    config:
      node.roles: ["master"]
"""






def test_the_sample_is_three_pods_of_its_limits_spread_over_nodes() -> None:
    pods = pods_of(plan(POOL + SAMPLE), "StatefulSet/elasticsearch-sample-es-default")
    assert len(pods) == 3
    assert pods[0]["requests"] == {"cpu": "1", "memory": "4Gi"}  # limits alone: requests default to them
    assert pods[0]["labels"]["foo"] == "bar"
    assert pods[0]["labels"]["elasticsearch.k8s.elastic.co/cluster-name"] == "elasticsearch-sample"
    assert len({p["node"] for p in pods}) == 3  # ECK's default preferred anti-affinity on kubernetes.io/hostname
    assert [f.rule for f in findings(POOL + SAMPLE) if f.severity != "info"] == []


def test_without_resources_the_operator_default_is_2gi_and_the_shorthand_overrides() -> None:
    shorthand = "  - name: data\n    count: 2\n    resources:\n      requests: {cpu: \"2\", memory: 8Gi}\n"
    document = plan(POOL + node_sets(MASTERS, shorthand))
    assert pods_of(document, "StatefulSet/quickstart-es-masters")[0]["requests"] == {"memory": "2Gi"}
    assert pods_of(document, "StatefulSet/quickstart-es-data")[0]["requests"] == {"cpu": "2", "memory": "8Gi"}


def test_a_written_affinity_replaces_the_default_so_the_count_is_reported() -> None:
    written = MASTERS + "    podTemplate:\n      spec:\n        affinity: {}\n"
    text = POOL + node_sets(written)
    found = [f for f in findings(text) if f.rule == "replicas-without-spread"]
    assert len(found) == 1
    assert (found[0].field, found[0].line) == ("spec.nodeSets[0].count", line_of(text, "count: 3"))
    assert "spec.nodeSets[0].podTemplate.spec.affinity" in found[0].fix
    assert [f for f in findings(POOL + node_sets(MASTERS)) if f.rule == "replicas-without-spread"] == []


def test_zone_awareness_spreads_the_node_set_over_the_zones() -> None:
    zoned = "  - name: data\n    count: 6\n    zoneAwareness: {}\n"
    pods = pods_of(plan(POOL + node_sets(zoned)), "StatefulSet/quickstart-es-data")
    zones = sorted(p["node"].split("-us-east-")[1][:2] for p in pods)
    assert zones == ["1a", "1a", "1b", "1b", "1c", "1c"]


def test_zone_awareness_zones_no_pool_launches_in_are_reported_at_zone_awareness() -> None:
    zoned = "  - name: data\n    count: 3\n    zoneAwareness:\n      zones: [us-east-1d]\n"
    text = POOL + node_sets(MASTERS, zoned)
    found = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert len(found) == 1
    assert (found[0].field, found[0].line) == ("spec.nodeSets[1].zoneAwareness", line_of(text, "zoneAwareness:"))
    assert "us-east-1d" in found[0].fix and "zoneAwareness.zones" in found[0].fix
    fixed = POOL + node_sets(MASTERS, zoned.replace("us-east-1d", "us-east-1a, us-east-1b"))
    assert [f for f in findings(fixed) if f.severity == "error"] == []


def test_a_node_set_field_no_pool_meets_is_reported_in_its_pod_template() -> None:
    written = MASTERS + "    podTemplate:\n      spec:\n        nodeSelector:\n          kubernetes.io/arch: s390x\n"
    text = POOL + node_sets(written)
    found = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert len(found) == 1
    assert found[0].field == "spec.nodeSets[0].podTemplate.spec.nodeSelector[kubernetes.io/arch]"
    assert found[0].line == line_of(text, "kubernetes.io/arch: s390x")
