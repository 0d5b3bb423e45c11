"""What a change does to the nodes Karpenter launches, beside what it costs: `karpplan diff` names each pool's new
nodes by instance type on both sides, so a request bump or a narrowed requirement that keeps the count (`1 -> 1`)
still shows what it launches instead (`new nodes: 1 c5.xlarge -> 1 c5.2xlarge`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diff_helpers import karpplan, write
from manifests import ON_DEMAND, ZONE, deployment, ec2nodeclass, nodepool

FAMILY = "karpenter.k8s.aws/instance-family"


def _pool(*families: str) -> str:
    return "---\n".join([nodepool(requirements={**ON_DEMAND, ZONE: ("us-east-1a",), FAMILY: families}),
                         ec2nodeclass()])


def _diff(tmp_path: Path, base: tuple[str, ...], head: tuple[str, ...], args: tuple[str, ...] = ("-o", "json")) -> Any:
    write(tmp_path / "base" / "all.yaml", *base)
    write(tmp_path / "head" / "all.yaml", *head)
    out = karpplan("diff", "base", "head", "--region", "us-east-1", *args, cwd=tmp_path,
                   env=None if "-o" in args else {"COLUMNS": "140"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if "-o" in args else out.stdout


def test_a_request_bump_names_the_bigger_node(tmp_path: Path) -> None:
    # a Helm values bump of the requests (1 CPU -> 3 CPU, four replicas): still one new node, a bigger one
    doc = _diff(tmp_path, (_pool("c5"), deployment("web", 4, namespace="shop", cpu="1", memory="1Gi")),
                (_pool("c5"), deployment("web", 4, namespace="shop", cpu="3", memory="1Gi")))
    [pool] = doc["pools"]
    assert pool["change"] == "unchanged" and pool["nodesBase"] == pool["nodesHead"]
    assert pool["newNodeTypesBase"] != pool["newNodeTypesHead"]
    assert all(t.startswith("c5.") for t in (*pool["newNodeTypesBase"], *pool["newNodeTypesHead"]))
    assert sum(pool["newNodeTypesHead"].values()) == pool["nodesHead"]


def test_a_narrowed_family_names_the_types_it_moves_to(tmp_path: Path) -> None:
    # the NodePool's instance-family narrowed from [c5, m5] to [m5]: the same pods land on m5 nodes
    work = deployment("api", 3, namespace="shop", cpu="1", memory="1Gi")
    doc = _diff(tmp_path, (_pool("c5", "m5"), work), (_pool("m5"), work))
    [pool] = doc["pools"]
    assert pool["change"] == "changed"
    assert all(t.startswith("c5.") for t in pool["newNodeTypesBase"])
    assert all(t.startswith("m5.") for t in pool["newNodeTypesHead"])
    table = _diff(tmp_path, (_pool("c5", "m5"), work), (_pool("m5"), work), args=())
    assert "new nodes: " in table and " -> " in table.split("new nodes: ", 1)[1].splitlines()[0]


def test_the_same_nodes_on_both_sides_say_nothing_of_them(tmp_path: Path) -> None:
    work = deployment("api", 3, namespace="shop", cpu="1", memory="1Gi")
    doc = _diff(tmp_path, (_pool("m5"), work), (_pool("m5"), work))
    [pool] = doc["pools"]
    assert pool["newNodeTypesBase"] == pool["newNodeTypesHead"] and pool["newNodeTypesHead"]
    table = _diff(tmp_path, (_pool("m5"), work), (_pool("m5"), work), args=())
    assert "new nodes:" not in table


def _capped(limit: str) -> str:
    return _pool("c5").replace("spec:\n  template:", f"spec:\n  limits: {{cpu: \"{limit}\"}}\n  template:", 1)


def test_a_raised_pool_cap_places_the_pods_and_names_the_node_it_launches(tmp_path: Path) -> None:
    # JiRaska/open-bank-oss#3352 and #3572: the `default` NodePool "is simply full (22 nodes, exactly 48/48 vCPU)",
    # pods stayed Pending until the cap was raised ("from cpu: 48 ... to cpu: 72") and Karpenter launched a bigger
    # node; here 10 one-CPU replicas under a cap of 8 CPU, raised to 16
    work = deployment("web", 10, namespace="shop", cpu="1", memory="1Gi")
    doc = _diff(tmp_path, (_capped("8"), work), (_capped("16"), work))
    assert doc["delta"]["unschedulable"] < 0 and doc["head"]["unschedulable"] == 0
    [pool] = doc["pools"]
    assert pool["fields"] == ["spec.limits.cpu: 8 -> 16"]
    assert pool["newNodeTypesBase"] != pool["newNodeTypesHead"]
    assert doc["gate"]["exitCode"] == 0
