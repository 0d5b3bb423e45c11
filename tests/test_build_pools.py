"""NodePools (v1, v1beta1), v1alpha5 Provisioners with their webhook defaults, Auto Mode, node classes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from karpplan.model.inventory import Inventory
from karpplan.model.pools import NodeClassRef
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.taints import Taint

Build = Callable[..., Inventory]
Problems = Callable[..., list[str]]

NODEPOOL_V1 = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  weight: 10
  limits: {cpu: "100", memory: 400Gi, nodes: "20"}
  template:
    metadata:
      labels: {team: shop, beta.kubernetes.io/arch: amd64}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
      - {key: karpenter.k8s.aws/instance-cpu, operator: Gte, values: ["4"], minValues: 2}
      - {key: karpenter.k8s.aws/instance-memory, operator: Lte, values: ["65536"]}
      - {key: failure-domain.beta.kubernetes.io/zone, operator: NotIn, values: [us-east-1e]}
      taints: [{key: dedicated, value: shop, effect: NoSchedule}]
      startupTaints: [{key: node.cilium.io/agent-not-ready, effect: NoExecute}]
"""


def test_v1_nodepool(build: Build) -> None:
    (pool,) = build(NODEPOOL_V1, "pools.yaml").nodepools
    assert (pool.name, pool.kind, pool.api_version, pool.weight) == ("general", "NodePool", "karpenter.sh/v1", 10)
    assert pool.labels == {"team": "shop", "beta.kubernetes.io/arch": "amd64"}
    assert pool.requirements == Requirements(
        [
            Requirement.of("karpenter.sh/capacity-type", "In", ["spot", "on-demand"]),
            Requirement.of("karpenter.k8s.aws/instance-cpu", "Gte", ["4"]),
            Requirement.of("karpenter.k8s.aws/instance-memory", "Lte", ["65536"]),
            Requirement.of("topology.kubernetes.io/zone", "NotIn", ["us-east-1e"]),
            Requirement.of("team", "In", ["shop"]),  # template labels become requirements
            Requirement.of("kubernetes.io/arch", "In", ["amd64"]),
            Requirement.of("karpenter.sh/nodepool", "In", ["general"]),
        ]
    )
    assert pool.taints == (Taint("dedicated", "shop", "NoSchedule"),)
    assert pool.startup_taints == (Taint("node.cilium.io/agent-not-ready", "", "NoExecute"),)
    assert pool.limits == {"cpu": 100_000, "memory": 400 * 2**30}
    assert pool.node_limit == 20
    assert pool.node_class_ref == NodeClassRef("karpenter.k8s.aws", "EC2NodeClass", "default")
    assert not pool.auto_mode
    assert str(pool.origin) == "pools.yaml:2"


def test_v1beta1_nodepool_kubelet_and_group_from_api_version(build: Build) -> None:
    (pool,) = build(
        """
        apiVersion: karpenter.sh/v1beta1
        kind: NodePool
        metadata: {name: old}
        spec:
          template:
            spec:
              nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, name: default}
              kubelet:
                maxPods: 110
                podsPerCore: 4
                kubeReserved: {cpu: 200m, memory: 100Mi}
                systemReserved: {memory: 50Mi}
                evictionHard: {memory.available: 5%}
        """
    ).nodepools
    assert pool.node_class_ref == NodeClassRef("karpenter.k8s.aws", "EC2NodeClass", "default")
    assert pool.kubelet is not None
    assert (pool.kubelet.max_pods, pool.kubelet.pods_per_core) == (110, 4)
    assert pool.kubelet.kube_reserved == {"cpu": 200, "memory": 100 * 2**20}
    assert pool.kubelet.system_reserved == {"memory": 50 * 2**20}
    assert pool.kubelet.eviction_hard == {"memory.available": "5%"}
    assert pool.weight == 0 and pool.limits is None and pool.node_limit is None


def test_auto_mode_pools(build: Build) -> None:
    (pool,) = build(
        """
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: auto}
        spec:
          template:
            spec:
              nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: default}
              requirements: [{key: eks.amazonaws.com/instance-category, operator: In, values: [c]}]
        """
    ).nodepools
    assert pool.auto_mode
    assert "eks.amazonaws.com/instance-category" in pool.requirements


PROVISIONER = """
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: legacy}
spec:
  weight: 50
  labels: {team: data}
  requirements: {requirements}
  taints: [{key: data, effect: NoSchedule}]
  limits: {resources: {cpu: "1000", nodes: "5"}}
  providerRef: {name: default}
  kubeletConfiguration: {maxPods: 58}
"""


def test_provisioner_gets_the_v027_webhook_defaults(build: Build) -> None:
    (pool,) = build(PROVISIONER.replace("{requirements}", "[]")).nodepools
    assert pool.kind == "Provisioner" and pool.pool_label_key == "karpenter.sh/provisioner-name"
    assert pool.requirements == Requirements(
        [
            Requirement.of("kubernetes.io/os", "In", ["linux"]),
            Requirement.of("kubernetes.io/arch", "In", ["amd64"]),
            Requirement.of("karpenter.sh/capacity-type", "In", ["on-demand"]),
            Requirement.of("karpenter.k8s.aws/instance-category", "In", ["c", "m", "r"]),
            Requirement.of("karpenter.k8s.aws/instance-generation", "Gt", ["2"]),
            Requirement.of("team", "In", ["data"]),
            Requirement.of("karpenter.sh/provisioner-name", "In", ["legacy"]),
        ]
    )
    assert pool.weight == 50
    assert pool.taints == (Taint("data", "", "NoSchedule"),)
    assert pool.limits == {"cpu": 1_000_000} and pool.node_limit == 5
    assert pool.node_class_ref == NodeClassRef("karpenter.k8s.aws", "AWSNodeTemplate", "default")
    assert pool.kubelet is not None and pool.kubelet.max_pods == 58


def test_provisioner_defaults_only_fill_what_is_missing(build: Build) -> None:
    given = (
        "[{key: kubernetes.io/arch, operator: In, values: [arm64]},"
        " {key: karpenter.sh/capacity-type, operator: In, values: [spot]},"
        " {key: node.kubernetes.io/instance-type, operator: In, values: [m6g.large]}]"
    )
    (pool,) = build(PROVISIONER.replace("{requirements}", given)).nodepools
    assert pool.requirements["kubernetes.io/arch"] == Requirement.of("kubernetes.io/arch", "In", ["arm64"])
    assert pool.requirements["karpenter.sh/capacity-type"].values == frozenset({"spot"})
    assert pool.requirements["kubernetes.io/os"].values == frozenset({"linux"})
    assert "karpenter.k8s.aws/instance-category" not in pool.requirements
    assert "karpenter.k8s.aws/instance-generation" not in pool.requirements
    family = "[{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]"
    (pool,) = build(PROVISIONER.replace("{requirements}", family)).nodepools
    assert "karpenter.k8s.aws/instance-category" not in pool.requirements


def test_node_classes(build: Build) -> None:
    inventory = build(
        """
        apiVersion: karpenter.k8s.aws/v1
        kind: EC2NodeClass
        metadata: {name: v1}
        spec:
          amiSelectorTerms: [{alias: al2023@latest}]
          kubelet: {maxPods: 20, systemReserved: {cpu: 100m}}
        ---
        apiVersion: karpenter.k8s.aws/v1beta1
        kind: EC2NodeClass
        metadata: {name: beta}
        spec: {amiFamily: Bottlerocket}
        ---
        apiVersion: karpenter.k8s.aws/v1alpha1
        kind: AWSNodeTemplate
        metadata: {name: old}
        spec: {amiFamily: AL2}
        ---
        apiVersion: eks.amazonaws.com/v1
        kind: NodeClass
        metadata: {name: auto}
        spec: {role: r}
        """
    )
    summary = [(c.name, c.kind, c.ami_family) for c in inventory.nodeclasses]
    assert summary == [
        ("v1", "EC2NodeClass", "AL2023"),
        ("beta", "EC2NodeClass", "Bottlerocket"),
        ("old", "AWSNodeTemplate", "AL2"),
        ("auto", "NodeClass", None),
    ]
    kubelet = inventory.nodeclasses[0].kubelet
    assert kubelet is not None and kubelet.max_pods == 20 and kubelet.system_reserved == {"cpu": 100}


def test_nodepool_validation(problems: Problems) -> None:
    text = """
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: bad}
    spec:
      weight: 101
      limits: {cpu: 1K}
      template:
        metadata: {labels: {team: 5}}
        spec:
          requirements:
          - {key: a, operator: Foo}
          - {key: b, operator: In, values: []}
          - {key: c, operator: Gt, values: ["x"]}
          - {key: kubernetes.io/hostname, operator: In, values: [n1]}
          taints: [{key: t, effect: Sometimes}, {effect: NoSchedule}]
    """
    reqs = "spec.template.spec.requirements"
    assert problems(text) == [
        "test.yaml:6: spec.weight: Invalid value: 101: spec.weight in body should be less than or equal to 100",
        "test.yaml:7: spec.limits[cpu]: Invalid value: \"1K\": unable to parse quantity's suffix",
        "test.yaml:9: spec.template.metadata.labels.team: Invalid value: 5: must be a string, not a number (quote it)",
        f'test.yaml:12: {reqs}[0].operator: Unsupported value: "Foo": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"',
        f"test.yaml:13: {reqs}[1].values: Required value: requirements with operator 'In' must have a value defined",
        f'test.yaml:14: {reqs}[2].values: Invalid value: ["x"]: requirements with operator \'Gt\' must have a single integer value',
        f'test.yaml:15: {reqs}[3].key: Invalid value: "kubernetes.io/hostname": label is restricted (Karpenter sets it itself)',
        'test.yaml:16: spec.template.spec.taints[0].effect: Unsupported value: "Sometimes": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        "test.yaml:16: spec.template.spec.taints[1].key: Required value: taint key is required",
    ]


def test_provisioners_beside_nodepools_are_said_in_the_plan(tmp_path: Path) -> None:
    """A migration repo holding v1alpha5 Provisioners and v1 NodePools of the same names was planned as one cluster
    of both, silently (a new user's migration trial): the plan says no Karpenter version serves both."""
    from karpplan.model.build import load_inventory

    (tmp_path / "old.yaml").write_text(
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: gpu}\nspec: {}\n")
    (tmp_path / "new.yaml").write_text(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n"
        "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n")
    notices = [n.message for n in load_inventory([str(tmp_path)]).scale_notes]
    said = [m for m in notices if "no Karpenter version serves both" in m]
    assert len(said) == 1 and "gpu is defined both ways" in said[0]
    (tmp_path / "old.yaml").unlink()
    assert not [m for m in (n.message for n in load_inventory([str(tmp_path)]).scale_notes) if "serves both" in m]
