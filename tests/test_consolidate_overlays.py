"""`karpplan consolidate` prices each node from its own NodePool's instance types, NodeOverlays that select
that pool applied (Karpenter's `NewCandidate` reads `instanceTypeMap[nodePool.Name]`): a reserved or
discounted price a NodeOverlay gives one pool decides whether its nodes are worth replacing, what a
replacement must undercut and what the command saves, while the same node in another pool is priced as listed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from test_consolidate_semantics import NODECLASS, node, nodepool, pod, reason, removed, run

POOL = "karpenter.sh/nodepool"


def overlay(name: str, pool: str, instance_type: str, **price: str) -> dict[str, Any]:
    return {"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": name},
            "spec": {"requirements": [{"key": POOL, "operator": "In", "values": [pool]},
                                      {"key": "node.kubernetes.io/instance-type", "operator": "In",
                                       "values": [instance_type]}], **price}}


def _snapshot(tmp_path: Path, *extra: dict[str, Any]) -> Path:
    docs: list[dict[str, Any]] = []
    for pool in ("default", "reserved"):
        docs.append(node(f"{pool}-big", "m5.2xlarge", pool=pool))
        docs += [pod(f"{pool}-{i}", f"{pool}-big", cpu="300m", owner=f"ReplicaSet/{pool}",
                     labels={"app": pool}, spec={"nodeSelector": {POOL: pool}}) for i in range(3)]
    pools = [nodepool(name, families=("m5", "c5")) for name in ("default", "reserved")]
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "List", "items": docs}, *pools, NODECLASS,
                                        *extra], sort_keys=True))
    return path


def test_a_pool_s_reserved_price_keeps_its_node_and_the_other_pool_s_is_replaced(tmp_path: Path) -> None:
    # reserved's m5.2xlarge costs $0.05/h by its overlay: no type that holds its pods is cheaper (c5.large
    # $0.085); default's, at the listed $0.384, is replaced by a c5.large
    report = run(_snapshot(tmp_path, overlay("reserved-m5", "reserved", "m5.2xlarge", price="0.05")))
    assert removed(report) == {"default-big": ("single", "replace")}
    assert "Can't replace with a cheaper node" in reason(report, "reserved-big")
    assert abs(report.summary.current - (0.384 + 0.05)) < 1e-9
    assert abs(report.actions[0].savings - (0.384 - 0.085)) < 1e-9


def test_a_discounted_node_saves_what_it_costs_in_its_pool(tmp_path: Path) -> None:
    # reserved's m5.2xlarge at half price ($0.192): the c5.large replacing it saves $0.107, not $0.299, and
    # only types cheaper than $0.192 are offered for the launch
    report = run(_snapshot(tmp_path, overlay("half", "reserved", "m5.2xlarge", priceAdjustment="-50%")))
    savings = {n.name: a.savings for a in report.actions for n in a.nodes}
    assert abs(savings["reserved-big"] - (0.192 - 0.085)) < 1e-9
    assert abs(savings["default-big"] - (0.384 - 0.085)) < 1e-9
    assert abs(report.summary.current - (0.384 + 0.192)) < 1e-9
    options = next(a.options for a in report.actions if a.nodes[0].name == "reserved-big")
    assert "m5.2xlarge" not in options and "c5.2xlarge" not in options
