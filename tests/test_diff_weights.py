"""A change that opens a cheaper NodePool saves nothing while a heavier NodePool still takes the pods (Karpenter
tries NodePools by weight, heaviest first): the diff says so in the row of what changed, where a reviewer
expecting a saving reads "$0.00"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diff_helpers import deployment, karpplan, write
from manifests import CAPACITY_TYPE, ZONE, ec2nodeclass, nodepool

FAMILY = "karpenter.k8s.aws/instance-family"


def _pools(cheap_capacity: tuple[str, ...]) -> str:
    heavy = nodepool("steady", requirements={CAPACITY_TYPE: ("on-demand",), ZONE: ("us-east-1a",), FAMILY: ("m5",)})
    heavy += "  weight: 10\n"
    cheap = nodepool("cheap", requirements={CAPACITY_TYPE: cheap_capacity, ZONE: ("us-east-1a",), FAMILY: ("m5",)})
    return "---\n".join([heavy, cheap, ec2nodeclass()])


def _diff(tmp_path: Path, base: str, head: str) -> dict[str, Any]:
    write(tmp_path / "base" / "all.yaml", base, deployment("web", 3))
    write(tmp_path / "head" / "all.yaml", head, deployment("web", 3))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def test_spot_allowed_on_a_lighter_pool_says_the_heavier_pool_takes_the_pods(tmp_path: Path) -> None:
    doc = _diff(tmp_path, _pools(("on-demand",)), _pools(("on-demand", "spot")))
    assert doc["delta"]["hourlyCost"] == 0
    pools = {p["name"]: p for p in doc["pools"]}
    cheap = pools["cheap"]
    assert cheap["change"] == "changed" and cheap["nodesBase"] == cheap["nodesHead"] == 0
    assert cheap["note"] == ("launches nothing on either side: it admits Deployment/shop/web, but NodePool steady "
                             "(weight 10) is tried first and takes the pods (Karpenter launches from the heaviest "
                             "NodePool that can; cheap's weight is 0)")
    assert "note" not in pools["steady"]
    markdown = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "markdown", cwd=tmp_path).stdout
    assert "launches nothing on either side: it admits Deployment/shop/web, but NodePool steady" in markdown


def test_a_workload_that_newly_tolerates_a_tainted_pool_is_told_which_pool_takes_it(tmp_path: Path) -> None:
    tainted = nodepool("spot", requirements={CAPACITY_TYPE: ("spot",), ZONE: ("us-east-1a",), FAMILY: ("m5",)})
    tainted = tainted.replace("    spec:\n", "    spec:\n      taints: [{key: spot, value: \"true\", effect: NoSchedule}]\n", 1)
    heavy = nodepool("steady", requirements={CAPACITY_TYPE: ("on-demand",), ZONE: ("us-east-1a",), FAMILY: ("m5",)})
    pools = "---\n".join([heavy + "  weight: 10\n", tainted, ec2nodeclass()])
    tolerating = deployment("web", 3).replace(
        "    spec:\n", "    spec:\n      tolerations: [{key: spot, operator: Equal, value: \"true\", effect: NoSchedule}]\n", 1)
    write(tmp_path / "base" / "all.yaml", pools, deployment("web", 3))
    write(tmp_path / "head" / "all.yaml", pools, tolerating)
    doc = json.loads(karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path).stdout)
    [web] = [w for w in doc["workloads"] if w["workload"] == "Deployment/shop/web"]
    assert web["change"] == "changed"
    assert web["note"].startswith("its pods may now launch on NodePool spot, but NodePool steady (weight 10) is "
                                  "tried first and takes the pods")


def test_without_a_heavier_pool_the_opened_pool_is_used_and_nothing_is_said(tmp_path: Path) -> None:
    # the same change when the pools weigh the same: Karpenter's choice is the cheaper launch, no note
    flat = _pools(("on-demand",)).replace("  weight: 10\n", ""), _pools(("on-demand", "spot")).replace("  weight: 10\n", "")
    doc = _diff(tmp_path, *flat)
    assert all("note" not in p for p in doc["pools"])
