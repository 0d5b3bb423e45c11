"""A change that leaves pods out only because the region's embedded catalog has no price for the types they need
(a pool narrowed to Graviton3 in eu-central-1, whose public price list predates c7g): the diff still fails the
check, but says those pods would run and that HEAD's lower cost is no saving. A new user's diff read
"-$120/month (-4.0%), 6 pods newly unschedulable" with nothing else to tell a catalog gap from a broken change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diff_helpers import deployment, karpplan, write
from manifests import ec2nodeclass, nodepool

FAMILY = "karpenter.k8s.aws/instance-family"
ARCH = "kubernetes.io/arch"


def _diff(tmp_path: Path, head_families: tuple[str, ...]) -> tuple[int, dict[str, Any]]:
    base = nodepool("graviton", requirements={ARCH: ("arm64",), FAMILY: ("m6g",)})
    head = nodepool("graviton", requirements={ARCH: ("arm64",), FAMILY: head_families})
    write(tmp_path / "base" / "all.yaml", "---\n".join([base, ec2nodeclass()]), deployment("search", 3))
    write(tmp_path / "head" / "all.yaml", "---\n".join([head, ec2nodeclass()]), deployment("search", 3))
    out = karpplan("diff", "base", "head", "--region", "eu-central-1", "-o", "json", cwd=tmp_path)
    doc: dict[str, Any] = json.loads(out.stdout)
    return out.returncode, doc


def test_pods_left_out_for_want_of_a_price_are_said_to_run_and_the_lower_cost_no_saving(tmp_path: Path) -> None:
    code, doc = _diff(tmp_path, ("c7g", "m7g"))
    assert code == 1  # still a failed check: the plan cannot price HEAD
    assert len(doc["newlyUnschedulable"]) == 3
    (reason,) = doc["gate"]["reasons"]
    assert reason.endswith("3 of them only for want of a price in the catalog")
    (note,) = [n for n in doc["notes"] if "only because the catalog has no price" in n]
    assert note.startswith("Deployment/shop/search: 3 pods left unschedulable only because")
    assert "no saving" in note and "--allow-estimated-prices" in note


def test_a_change_that_breaks_placement_is_not_blamed_on_the_catalog(tmp_path: Path) -> None:
    code, doc = _diff(tmp_path, ("no-such-family",))
    assert code == 1
    assert not any("only because the catalog has no price" in n for n in doc["notes"])
    assert "want of a price" not in doc["gate"]["reasons"][0]


def test_pods_base_left_out_for_want_of_a_price_that_head_places_are_said(tmp_path: Path) -> None:
    # A game studio's diff read "+$4,776/month (+1222.8%)": BASE's GPU pods were unschedulable only because the
    # Tokyo catalog has no g5 prices, and HEAD allowed g4dn, which it prices.
    base = nodepool("graviton", requirements={ARCH: ("arm64",), FAMILY: ("c7g",)})
    head = nodepool("graviton", requirements={ARCH: ("arm64",), FAMILY: ("m6g",)})
    write(tmp_path / "base" / "all.yaml", "---\n".join([base, ec2nodeclass()]), deployment("search", 3))
    write(tmp_path / "head" / "all.yaml", "---\n".join([head, ec2nodeclass()]), deployment("search", 3))
    out = karpplan("diff", "base", "head", "--region", "eu-central-1", "-o", "json", cwd=tmp_path)
    doc = json.loads(out.stdout)
    (note,) = [n for n in doc["notes"] if "BASE left" in n]
    assert note.startswith("Deployment/shop/search: BASE left 3 pods out only because the catalog has no price")
    assert "the increase overstates the change" in note
