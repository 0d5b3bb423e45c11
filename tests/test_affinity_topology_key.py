"""A required pod-affinity term only matches nodes that carry its topologyKey, even for the first pod of a
series that matches itself (kube-scheduler's InterPodAffinity filter; issue 14, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner_helpers import plan_json

MANIFEST = Path(__file__).parent / "data" / "manifests" / "pod-affinity-network-layer.yaml"
LABELLED = "ip-10-0-1-17.ec2.internal"


@pytest.mark.parametrize("engine", ["optimal", "karpenter"])
def test_pods_go_only_to_nodes_with_the_topology_key(engine: str) -> None:
    plan = plan_json(MANIFEST, "--engine", engine)
    placed = [p for p in plan["pods"] if p["workload"] == "Deployment/spine-cache" and p.get("node")]
    # The labelled node has room for three 1-CPU pods; the bigger unlabelled node and new nodes are no domain.
    assert {p["node"] for p in placed} == {LABELLED}
    assert len(placed) == 3
    assert [n for n in plan["nodes"] if n["new"]] == []


@pytest.mark.parametrize("engine", ["optimal", "karpenter"])
def test_without_a_labelled_node_the_pods_are_unschedulable_and_say_why(tmp_path: Path, engine: str) -> None:
    text = MANIFEST.read_text().replace("    topology.k8s.aws/network-node-layer-3: nn-3f8e4a2b1c0d9e7f6\n", "")
    path = tmp_path / "no-label.yaml"
    path.write_text(text)
    plan = plan_json(path, "--engine", engine)
    assert len(plan["unschedulable"]) == 3 and plan["nodes"] == [] or all(not n["new"] for n in plan["nodes"])
    reasons = plan["unschedulable"][0]["reasons"]
    assert any("didn't match pod affinity rules" in r for r in reasons)
    assert any('nodepool "default": unsatisfiable topology constraint for pod affinity, '
               "key=topology.k8s.aws/network-node-layer-3" in r for r in reasons)


def test_a_pool_that_labels_its_nodes_with_the_key_can_take_them(tmp_path: Path) -> None:
    text = MANIFEST.read_text().replace("    topology.k8s.aws/network-node-layer-3: nn-3f8e4a2b1c0d9e7f6\n", "").replace(
        '          values: ["amd64"]\n',
        '          values: ["amd64"]\n        - key: topology.k8s.aws/network-node-layer-3\n'
        '          operator: In\n          values: ["nn-spine-1"]\n')
    path = tmp_path / "pool-label.yaml"
    path.write_text(text)
    plan = plan_json(path)
    assert plan["unschedulable"] == []
    new = [n for n in plan["nodes"] if n["new"]]
    assert new and all(n["labels"]["topology.k8s.aws/network-node-layer-3"] == "nn-spine-1" for n in new)
