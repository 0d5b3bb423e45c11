"""Nodes in an EC2 capacity reservation (`karpenter.sh/capacity-type: reserved`): priced as karpenter-provider-aws
prices a reserved offering (the on-demand price / 10,000,000, `reserved_capacity_resolver.go`) when an
EC2NodeClass's `status.capacityReservations` lists their reservation, with the reservation's fee (billed whether
used or not) said to be in no figure; without the listing, Karpenter has no offering for them: kept, unpriced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from test_consolidate_semantics import NODECLASS, node, nodepool, pod, run

RID = "cr-0a1b2c3d4e5f60718"
M5_LARGE = 0.096  # us-east-1 on-demand


def _reserved(name: str) -> dict[str, Any]:
    made = node(name, capacity="reserved")
    made["metadata"]["labels"]["karpenter.k8s.aws/capacity-reservation-id"] = RID
    return made


def _write(tmp_path: Path, listed: bool) -> Path:
    nodeclass: dict[str, Any] = {**NODECLASS}
    if listed:
        nodeclass["status"] = {"capacityReservations": [
            {"id": RID, "instanceType": "m5.large", "availabilityZone": "us-east-1a", "ownerID": "123456789012",
             "instanceMatchCriteria": "targeted", "reservationType": "default", "state": "active"}]}
    pool = nodepool(capacity=("reserved", "on-demand"), budgets=[{"nodes": "100%"}])
    items = [_reserved("r1"), pod("w", "r1", cpu="300m"), node("od"), pod("v", "od", cpu="300m")]
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "List", "items": items}, pool, nodeclass]))
    return path


def test_a_listed_reservation_prices_its_node_as_free_and_says_the_fee_is_left_out(tmp_path: Path) -> None:
    report = run(_write(tmp_path, listed=True))
    [r1] = [v.node for v in report.nodes if v.node.name == "r1"]
    assert r1.price is not None and abs(r1.price - M5_LARGE / 10_000_000) < 1e-12
    [fee] = [w for w in report.warnings if RID in w]
    assert "1 node(s) run in capacity reservation cr-0a1b2c3d4e5f60718 (r1)" in fee
    assert "$0.0960/h for these nodes' instances" in fee and "whether used or not" in fee
    # the on-demand node is the one worth removing: its pod moves to the (free) reserved node
    assert {n.name for a in report.actions for n in a.nodes} == {"od"}
    assert report.summary.current < M5_LARGE + 0.001  # the reserved node adds (almost) nothing


def test_an_unlisted_reservation_leaves_its_node_unpriced_and_says_why(tmp_path: Path) -> None:
    report = run(_write(tmp_path, listed=False))
    [r1] = [v for v in report.nodes if v.node.name == "r1"]
    assert r1.node.price is None and not r1.consolidatable
    [why] = [w for w in report.warnings if "node r1 runs in" in w]
    assert f"capacity reservation {RID}, which no EC2NodeClass's status.capacityReservations lists" in why
