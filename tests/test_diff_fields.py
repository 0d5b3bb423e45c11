"""What a reviewer reads first about a changed NodePool or workload: which fields changed, from what to what
(`karpplan diff` names the cause, not only that there is one)."""

from __future__ import annotations

import json
from pathlib import Path

import manifests
from diff_helpers import deployment, karpplan, write
from manifests import HOSTNAME, ON_DEMAND, ZONE, ec2nodeclass, nodepool

from karpplan.diff.fields import LIMIT, changed_fields

ARCH = "kubernetes.io/arch"
FAMILY = "karpenter.k8s.aws/instance-family"


def _pool(arch: tuple[str, ...]) -> str:
    requirements = {**ON_DEMAND, ZONE: ("us-east-1a",), FAMILY: ("m6g", "m5"), ARCH: arch}
    return "---\n".join([nodepool(requirements=requirements), ec2nodeclass()])


def test_a_requirement_narrowed_to_arm64_is_named_with_both_values(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", _pool(("amd64", "arm64")), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", _pool(("arm64",)), deployment("web", 2))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    doc = json.loads(out.stdout)
    [pool] = doc["pools"]
    assert pool["change"] == "changed"
    assert pool["fields"] == [f'spec.template.spec.requirements[{ARCH}].values: ["amd64","arm64"] -> ["arm64"]']
    assert [w["fields"] for w in doc["workloads"]] == [[]]  # the workload did not change
    table = karpplan("diff", "base", "head", "--region", "us-east-1", cwd=tmp_path, env={"COLUMNS": "120"})
    assert f"spec.template.spec.requirements[{ARCH}].values" in table.stdout


def test_a_node_class_change_is_named_under_the_pool_it_changes(tmp_path: Path) -> None:
    base_class, head_class = ec2nodeclass("demo"), ec2nodeclass("prod")
    requirements = {**ON_DEMAND, ZONE: ("us-east-1a",), FAMILY: ("m5",)}
    write(tmp_path / "base" / "all.yaml", nodepool(requirements=requirements), base_class, deployment("web", 1))
    write(tmp_path / "head" / "all.yaml", nodepool(requirements=requirements), head_class, deployment("web", 1))
    doc = json.loads(karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path).stdout)
    assert doc["pools"][0]["fields"][0] == "EC2NodeClass/default: spec.role: KarpenterNodeRole-demo -> KarpenterNodeRole-prod"


def test_named_items_are_matched_by_name_and_long_lists_are_cut() -> None:
    base = {"spec": {"containers": [{"name": "app", "image": "a:1"}, {"name": "sidecar", "image": "s:1"}]}}
    head = {"spec": {"containers": [{"name": "sidecar", "image": "s:1"}, {"name": "app", "image": "a:2"}]}}
    assert changed_fields([base], [head]) == ("spec.containers[app].image: a:1 -> a:2",)
    many = {"metadata": {"labels": {f"k{i}": str(i) for i in range(LIMIT + 3)}}}
    fields = changed_fields([{}], [many])
    assert fields == ("metadata added",)
    grown = changed_fields([{"metadata": {"labels": {}}}], [many])
    assert len(grown) == LIMIT and grown[-1] == "and 4 more"


def test_a_tightened_spread_s_half_empty_nodes_are_put_next_to_the_workload(tmp_path: Path) -> None:
    # Four 250m pods share one m5.large in BASE; a hostname spread (maxSkew 1, DoNotSchedule) gives each its own
    # node in HEAD. The showback rule charges the workload its share only, so most of the increase is the pool's
    # idle cost: the pool's row names the changed workload running on those nodes.
    requirements = {**ON_DEMAND, ZONE: ("us-east-1a",), FAMILY: ("m5",)}
    pool = "---\n".join([nodepool(requirements=requirements), ec2nodeclass()])
    write(tmp_path / "base" / "all.yaml", pool, manifests.deployment("api", 4, namespace="shop", cpu="250m",
                                                                    memory="256Mi"))
    write(tmp_path / "head" / "all.yaml", pool, manifests.deployment("api", 4, namespace="shop", cpu="250m",
                                                                    memory="256Mi", spread=(HOSTNAME, "DoNotSchedule")))
    doc = json.loads(karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path).stdout)
    assert (doc["base"]["newNodes"], doc["head"]["newNodes"]) == (1, 4)
    [api] = doc["workloads"]
    assert api["fields"] == ["spec.template.spec.topologySpreadConstraints added"]
    [pool_change] = doc["pools"]
    assert pool_change["idleWith"] == ["Deployment/shop/api"]
    assert pool_change["idleHourlyCostHead"] > pool_change["idleHourlyCostBase"]
    table = karpplan("diff", "base", "head", "--region", "us-east-1", cwd=tmp_path, env={"COLUMNS": "160"}).stdout
    assert "left unrequested (idle) on HEAD, where these changed workloads run: Deployment/shop/api" in table


def test_an_idle_pool_without_a_changed_workload_names_none(tmp_path: Path) -> None:
    requirements = {**ON_DEMAND, ZONE: ("us-east-1a",), FAMILY: ("m5",)}
    pool = "---\n".join([nodepool(requirements=requirements), ec2nodeclass()])
    for side in ("base", "head"):
        write(tmp_path / side / "all.yaml", pool, manifests.deployment("api", 2, namespace="shop", cpu="250m"))
    doc = json.loads(karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path).stdout)
    assert doc["pools"][0]["idleWith"] == []


def _hpa(minimum: int) -> str:
    return f"""\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: api, namespace: shop}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: api}}
  minReplicas: {minimum}
  maxReplicas: 11
"""


def test_a_replica_bump_made_in_the_hpa_is_named_under_its_workload(tmp_path: Path) -> None:
    # a Helm chart with autoscaling enabled renders no spec.replicas and an HPA (ingress-nginx's
    # controller.autoscaling.minReplicas): the bump is the HPA's, and the workload row says so
    requirements = {**ON_DEMAND, ZONE: ("us-east-1a",), FAMILY: ("m5",)}
    pool = "---\n".join([nodepool(requirements=requirements), ec2nodeclass()])
    api = manifests.deployment("api", 1, namespace="shop", cpu="500m", memory="512Mi").replace("  replicas: 1\n", "")
    write(tmp_path / "base" / "all.yaml", pool, api, _hpa(3))
    write(tmp_path / "head" / "all.yaml", pool, api, _hpa(6))
    doc = json.loads(karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path).stdout)
    [w] = doc["workloads"]
    assert (w["change"], w["podsBase"], w["podsHead"]) == ("changed", 3, 6)
    assert w["fields"] == ["HorizontalPodAutoscaler/api: spec.minReplicas: 3 -> 6"]


def test_block_devices_are_matched_by_device_name() -> None:
    # aws-samples/karpenter-blueprints' soci-snapshotter EC2NodeClass (commit e49863f) raised the root volume's
    # throughput and set its iops: named by device, not `spec.blockDeviceMappings changed`
    def node_class(ebs: dict[str, object]) -> dict[str, object]:
        return {"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": ebs}]}}
    base = node_class({"volumeSize": "100Gi", "volumeType": "gp3", "throughput": 600})
    head = node_class({"volumeSize": "100Gi", "volumeType": "gp3", "throughput": 1000, "iops": 16000})
    assert changed_fields([base], [head]) == ("spec.blockDeviceMappings[/dev/xvda].ebs.iops added: 16000",
                                              "spec.blockDeviceMappings[/dev/xvda].ebs.throughput: 600 -> 1000")
