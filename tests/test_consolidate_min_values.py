"""A NodePool whose requirements carry `minValues` (as karpenter-blueprints and many real NodePools write
`node.kubernetes.io/instance-type: Exists, minValues: N`): consolidation may replace a node only when the
types cheaper than it still hold that many distinct values, else Karpenter says "Filtering by price: minValues
requirement is not met ..." (consolidation_test.go Context("MinValuesPolicy"); the default policy, Strict)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_consolidate_semantics import node, nodepool, pod, reason, removed, run, write


def pool_with_min_values(key: str, least: int) -> dict[str, Any]:
    pool = nodepool(families=("m5", "c5"))
    pool["spec"]["template"]["spec"]["requirements"].append({"key": key, "operator": "Exists", "minValues": least})
    return pool


def _snapshot(tmp_path: Path, pool: dict[str, Any]) -> Path:
    # an m5.2xlarge ($0.384) running 900m: c5.large, m5.large, c5.xlarge, m5.xlarge and c5.2xlarge are cheaper
    docs = [node("big", "m5.2xlarge"), *(pod(f"w{i}", "big", cpu="300m") for i in range(3))]
    return write(tmp_path, *docs, pools=(pool,))


def test_too_few_cheaper_types_for_min_values_keep_the_node(tmp_path: Path) -> None:
    report = run(_snapshot(tmp_path, pool_with_min_values("node.kubernetes.io/instance-type", 10)))
    assert report.actions == []
    assert reason(report, "big") == ("Filtering by price: minValues requirement is not met for label(s) "
                                     "(label(s)=[node.kubernetes.io/instance-type])")


@pytest.mark.parametrize(("key", "least"), [("node.kubernetes.io/instance-type", 3),
                                            ("karpenter.k8s.aws/instance-family", 2)])
def test_min_values_the_cheaper_types_meet_allow_the_replacement(tmp_path: Path, key: str, least: int) -> None:
    report = run(_snapshot(tmp_path, pool_with_min_values(key, least)))
    assert removed(report) == {"big": ("single", "replace")}
    assert report.actions[0].replacement is not None
    assert report.actions[0].replacement.instance_type == "c5.large"


def test_a_family_min_values_one_family_cannot_meet(tmp_path: Path) -> None:
    pool = pool_with_min_values("karpenter.k8s.aws/instance-family", 2)
    pool["spec"]["template"]["spec"]["requirements"][0]["values"] = ["m5"]  # m5 only: one family
    report = run(_snapshot(tmp_path, pool))
    assert "minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family])" in \
        reason(report, "big")


def test_spot_to_spot_launches_among_as_many_types_as_min_values_take(tmp_path: Path) -> None:
    # consolidation.go computeSpotToSpotConsolidation: with minValues on the NodePool, the launch keeps
    # max(15, the cheapest types it takes to meet them) types, not 15
    families = ("m5", "m5a", "m5d", "m6i", "m6a", "m7i", "c5", "c5a", "c5d", "c6i", "c6a", "c7i", "r5", "r5a",
                "r6i", "r6a", "t3", "t3a")
    docs = (node("s", itype="m5.4xlarge", capacity="spot"), pod("w", "s", cpu="300m"))
    plain = nodepool(families=families, capacity=("spot",))
    fifteen = run(write(tmp_path, *docs, pools=(plain,)), spot_to_spot=True)
    assert len(fifteen.actions[0].options) == 15
    wide = nodepool(families=families, capacity=("spot",))
    wide["spec"]["template"]["spec"]["requirements"].append(
        {"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 20})
    twenty = run(write(tmp_path, *docs, pools=(wide,)), spot_to_spot=True)
    assert len(twenty.actions[0].options) == 20
