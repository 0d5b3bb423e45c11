"""Inputs that change the answer are never ignored silently (issue 14, item 7): each is a plan warning at
its `file:line`, and karpplan reads it as Karpenter does."""

from __future__ import annotations

from pathlib import Path

from karpplan.inputs.loader import parse_documents
from karpplan.model.build import build_inventory

from planner_helpers import plan_json

MANIFEST = Path(__file__).parent / "data" / "manifests" / "static-and-v1-kubelet.yaml"




def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_v1_nodepool_kubelet_is_ignored_and_said() -> None:
    plan = plan_json(MANIFEST)
    text = MANIFEST.read_text()
    (warning,) = [w for w in plan["warnings"] if "spec.template.spec.kubelet" in w]
    assert warning.startswith(f"{MANIFEST}:{_line_of(text, 'kubelet:')}: NodePool general")
    # maxPods 8 would need two nodes for 12 pods; Karpenter v1 never sees it, so one node holds them all.
    general = [n for n in plan["nodes"] if n["nodePool"] == "general"]
    assert len(general) == 1 and len(general[0]["pods"]) == 12


def test_v1beta1_nodepool_kubelet_still_applies(tmp_path: Path) -> None:
    path = tmp_path / "v1beta1.yaml"
    text = MANIFEST.read_text().replace("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: general",
                                        "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: general")
    path.write_text(text)
    plan = plan_json(path)
    assert not any("spec.template.spec.kubelet" in w for w in plan["warnings"])
    general = [n for n in plan["nodes"] if n["nodePool"] == "general"]
    assert all(int(n["allocatable"]["pods"]) == 8 for n in general)
    assert sum(len(n["pods"]) for n in general) == 12 and len(general) >= 2


def test_static_nodepool_nodes_are_planned_and_said() -> None:
    # The static pool's two nodes are in the plan (tainted: the web pods stay on the general pool), and
    # the warning at the NodePool says what is assumed about them (tests/test_static_nodepools.py).
    plan = plan_json(MANIFEST)
    static = [n for n in plan["nodes"] if n["nodePool"] == "ingress-static"]
    assert len(static) == 2 and all(n["static"] and n["new"] and not n["pods"] for n in static)
    (warning,) = [w for w in plan["warnings"] if "ingress-static" in w]
    assert "static (replicas: 2)" in warning
    assert warning.startswith(f"{MANIFEST}:{_line_of(MANIFEST.read_text(), 'name: ingress-static') - 3}:")


POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  template:
    spec:
      requirements: []
      nodeClassRef: {{group: {group}, kind: {kind}, name: {ref}}}
---
"""
NODECLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: bottlerocket@latest}]
"""


def _notices(text: str) -> list[str]:
    return [str(n) for n in build_inventory(parse_documents(text, "pools.yaml")).notices]


def test_a_missing_node_class_is_named_when_others_are_given() -> None:
    text = POOL.format(name="a", group="karpenter.k8s.aws", kind="EC2NodeClass", ref="defualt") + NODECLASS
    (notice,) = _notices(text)
    assert notice.startswith("pools.yaml:1: NodePool a: nodeClassRef EC2NodeClass/defualt is not in the input")


def test_no_node_class_at_all_is_one_notice() -> None:
    text = "".join(POOL.format(name=n, group="karpenter.k8s.aws", kind="EC2NodeClass", ref="default") for n in "ab")
    (notice,) = _notices(text)
    assert "no node class in the input (nodeClassRef default)" in notice


def test_a_node_class_of_another_provider_is_named() -> None:
    text = POOL.format(name="kwok", group="karpenter.kwok.sh", kind="KWOKNodeClass", ref="default") + NODECLASS
    (notice,) = _notices(text)
    assert "nodeClassRef KWOKNodeClass/default (karpenter.kwok.sh) is not an AWS node class" in notice


def test_a_present_node_class_gives_no_notice() -> None:
    text = POOL.format(name="a", group="karpenter.k8s.aws", kind="EC2NodeClass", ref="default") + NODECLASS
    assert _notices(text) == []
