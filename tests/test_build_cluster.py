"""Existing nodes, namespaces, RuntimeClasses and eksctl ClusterConfig."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from karpplan.model.cluster import FargateSelector
from karpplan.model.inventory import Inventory
from karpplan.model.taints import Taint

Build = Callable[..., Inventory]
Problems = Callable[..., list[str]]


def test_nodes(build: Build) -> None:
    inventory = build(
        """
        apiVersion: v1
        kind: Node
        metadata:
          name: ip-10-0-0-1
          labels: {topology.kubernetes.io/zone: us-east-1a, node.kubernetes.io/instance-type: m5.large}
        spec:
          unschedulable: true
          taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule, timeAdded: "2024-01-01T00:00:00Z"}]
        status:
          capacity: {cpu: "2", memory: 7934272Ki, pods: "29"}
          allocatable: {cpu: 1930m, memory: 7244096Ki, pods: "29"}
        ---
        apiVersion: v1
        kind: Node
        metadata: {name: bare}
        status:
          allocatable: {cpu: "4"}
        """
    )
    first, bare = inventory.nodes
    assert first.name == "ip-10-0-0-1" and first.unschedulable
    assert first.labels["topology.kubernetes.io/zone"] == "us-east-1a"
    assert first.taints == (Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"),)
    assert first.allocatable == {"cpu": 1930, "memory": 7244096 * 1024, "pods": 29}
    assert first.capacity == {"cpu": 2000, "memory": 7934272 * 1024, "pods": 29}
    assert bare.capacity == bare.allocatable == {"cpu": 4000}
    assert not bare.unschedulable and bare.domain("kubernetes.io/hostname") == "bare"


def test_namespaces_runtime_classes_and_cluster_config(build: Build) -> None:
    inventory = build(
        """
        apiVersion: v1
        kind: Namespace
        metadata: {name: shop, labels: {env: prod}}
        ---
        apiVersion: eksctl.io/v1alpha5
        kind: ClusterConfig
        metadata: {name: demo, region: ap-northeast-2}
        availabilityZones: [ap-northeast-2a, ap-northeast-2c]
        fargateProfiles:
        - name: serverless
          selectors:
          - {namespace: study-*}
          - {namespace: batch, labels: {fargate: "yes"}}
        """
    )
    assert inventory.namespace_labels == {"shop": {"env": "prod"}}
    (cluster,) = inventory.clusters
    assert (cluster.name, cluster.region) == ("demo", "ap-northeast-2")
    assert cluster.availability_zones == ("ap-northeast-2a", "ap-northeast-2c")
    assert inventory.region == "ap-northeast-2"
    (profile,) = inventory.fargate_profiles
    assert profile.name == "serverless"
    assert profile.selectors == (FargateSelector("study-*"), FargateSelector("batch", {"fargate": "yes"}))


def test_cluster_object_validation(problems: Problems) -> None:
    text = """
    apiVersion: v1
    kind: Node
    metadata: {name: n, labels: zone-a}
    spec: {unschedulable: "yes"}
    status: {allocatable: {cpu: lots}}
    ---
    apiVersion: eksctl.io/v1alpha5
    kind: ClusterConfig
    metadata: {name: c}
    fargateProfiles: [{name: p, selectors: [{labels: {a: b}}]}, {selectors: []}]
    """
    assert problems(text) == [
        'test.yaml:4: metadata.labels: Invalid value: "zone-a": must be a mapping, not a string',
        'test.yaml:5: spec.unschedulable: Invalid value: "yes": must be a boolean (true or false)',
        'test.yaml:6: status.allocatable[cpu]: Invalid value: "lots": quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        "test.yaml:11: fargateProfiles[0].selectors[0].namespace: Required value: a Fargate profile selector needs a namespace",
        "test.yaml:11: fargateProfiles[1].name: Required value: a Fargate profile needs a name",
        "test.yaml:11: fargateProfiles[1].selectors: Required value: a Fargate profile needs at least one selector",
    ]


def test_a_kubectl_dump_of_nodes_and_pods() -> None:
    from karpplan.model.build import load_inventory
    from karpplan.model.pods import HostPort

    dump = Path(__file__).resolve().parents[1] / "fixtures" / "cluster-dump" / "kubectl-get-nodes-pods.yaml"
    inventory = load_inventory([str(dump)])
    (node,) = inventory.nodes
    assert node.allocatable["pods"] == 29 and node.capacity["cpu"] == 2000
    daemon_pod, running, pending = inventory.pods
    assert daemon_pod.owner == "DaemonSet/aws-node" and daemon_pod.bound
    assert daemon_pod.template.priority == 2000001000
    assert daemon_pod.template.host_ports == (HostPort(61678),)
    assert daemon_pod.template.affinity.matches({}, node.name)
    assert not daemon_pod.template.affinity.matches({}, "another-node")
    assert running.bound and running.namespace == "shop" and running.workload == "Pod/web-7d9f8b6c5d-4hq2x"
    assert pending.labels["pod-template-hash"] == "7d9f8b6c5d" and not pending.bound
    assert [p.name for p in inventory.pending] == ["web-7d9f8b6c5d-9zt4m"]
    assert [(s.name, s.reason) for s in inventory.skipped] == [
        ("aws-node-pending", "pending DaemonSet pod (Karpenter ignores these)")
    ]
