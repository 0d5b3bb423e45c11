"""What a reviewer reads first about a changed NodePool or workload: which fields changed, from what to what
(`karpplan diff` names the cause, not only that there is one)."""

from __future__ import annotations

import json
from pathlib import Path

from diff_helpers import deployment, karpplan, write
from manifests import ON_DEMAND, ZONE, ec2nodeclass, nodepool

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
