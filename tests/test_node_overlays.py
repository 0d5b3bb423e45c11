"""NodeOverlays change prices and extended capacity as Karpenter's simulation sees them (issue 14, item 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from karpplan.catalog import load_catalog
from karpplan.catalog.overlays import apply_node_overlays
from karpplan.catalog.types import ON_DEMAND
from karpplan.errors import InputError
from karpplan.inputs.loader import parse_documents
from karpplan.model.build import build_inventory
from karpplan.model.overlays import NodeOverlay, PriceAdjustment
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import Resources

from planner_helpers import plan_json

MANIFEST = Path(__file__).parent / "data" / "manifests" / "node-overlays.yaml"




def _without(name: str, tmp_path: Path) -> Path:
    documents = MANIFEST.read_text().split("\n---\n")
    kept = [d for d in documents if f"name: {name}\n" not in d]
    assert len(kept) == len(documents) - 1
    path = tmp_path / f"without-{name}.yaml"
    path.write_text("\n---\n".join(kept))
    return path


def test_a_price_adjustment_steers_the_plan_and_is_in_its_cost(tmp_path: Path) -> None:
    plan = plan_json(MANIFEST)
    general = [n for n in plan["nodes"] if n["nodePool"] == "general"]
    assert general and all(n["labels"]["karpenter.k8s.aws/instance-family"] == "m7i" for n in general)
    linux = load_catalog("us-east-1").by_name()
    for node in general:
        (price,) = {o.price for o in linux[node["instanceType"]].offerings if o.capacity_type == ON_DEMAND}
        assert node["hourlyPrice"] == pytest.approx(price * 0.6, abs=1e-5)
    (note,) = [w for w in plan["warnings"] if "savings-plan-m7i" in w]
    assert note.startswith(f"{MANIFEST}:4: NodeOverlay savings-plan-m7i (weight 10)")
    # Without the overlay m7i is not the cheapest way to run the api pods.
    plain = plan_json(_without("savings-plan-m7i", tmp_path))
    assert not all(n["labels"]["karpenter.k8s.aws/instance-family"] == "m7i"
                   for n in plain["nodes"] if n["nodePool"] == "general")


def test_overlay_capacity_lets_time_sliced_gpus_share_a_node(tmp_path: Path) -> None:
    plan = plan_json(MANIFEST)
    gpu = [n for n in plan["nodes"] if n["nodePool"] == "gpu"]
    assert len(gpu) == 1 and len(gpu[0]["pods"]) == 4
    assert gpu[0]["allocatable"]["nvidia.com/gpu"] == "4"
    plain = plan_json(_without("gpu-time-slicing", tmp_path))
    assert sum(1 for n in plain["nodes"] if n["nodePool"] == "gpu") >= 2


def _overlay(name: str, weight: int = 0, **fields: Any) -> NodeOverlay:
    requirements = Requirements([Requirement.of("node.kubernetes.io/instance-type", "In", ["m5.large"])])
    return NodeOverlay(name=name, requirements=requirements, weight=weight, **fields)


def test_higher_weight_decides_the_price_and_capacity_merges() -> None:
    catalog = load_catalog("us-east-1")
    base = {o.price for o in catalog.by_name()["m5.large"].offerings if o.capacity_type == ON_DEMAND}.pop()
    overlays = [
        _overlay("overlay-a", 5, price_adjustment=PriceAdjustment.parse("-10%"),
                 capacity=Resources({"hugepages-2Mi": 50 * 2**20})),
        _overlay("overlay-b", 10, price_adjustment=PriceAdjustment.parse("-20%"),
                 capacity=Resources({"custom-device/gpu": 1})),
    ]
    overlaid, notes = apply_node_overlays(catalog, overlays)
    m5 = overlaid.by_name()["m5.large"]
    (price,) = {o.price for o in m5.offerings if o.capacity_type == ON_DEMAND}
    assert price == pytest.approx(base * 0.8)
    assert m5.allocatable["hugepages-2Mi"] == 50 * 2**20 and m5.allocatable["custom-device/gpu"] == 1
    assert len(notes) == 2
    # Equal weights on the same offerings: Karpenter takes the name later in the alphabet first and marks the
    # other one a conflict, applying none of it.
    tied, tie_notes = apply_node_overlays(catalog, [_overlay("a", price=2.0), _overlay("b", price=1.0)])
    assert {o.price for o in tied.by_name()["m5.large"].offerings} == {1.0}
    assert any("NodeOverlay a (weight 0) conflicts with NodeOverlay b, of the same weight" in n for n in tie_notes)
    # Other types are untouched.
    assert overlaid.by_name()["m5.xlarge"] is catalog.by_name()["m5.xlarge"]


def test_absolute_adjustments_never_go_below_zero() -> None:
    assert PriceAdjustment.parse("-5.00").apply(0.096) == 0.0
    assert PriceAdjustment.parse("+0.5").apply(0.1) == pytest.approx(0.6)


BAD = """\
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: bad}
spec:
  requirements: []
  price: "5.00"
  priceAdjustment: "+10%"
  capacity:
    cpu: "2"
"""


def test_an_invalid_overlay_is_refused_at_its_lines() -> None:
    with pytest.raises(InputError) as caught:
        build_inventory(parse_documents(BAD, "overlay.yaml"))
    messages = [str(p) for p in caught.value.problems]
    assert any(m.startswith("overlay.yaml:4: spec: Invalid value") and "cannot set both" in m for m in messages)
    assert any(m.startswith("overlay.yaml:8: spec.capacity") and "restricted" in m for m in messages)


def test_an_overlay_pricing_a_type_the_region_lacks_says_so_and_a_capacity_overlay_names_no_price() -> None:
    # A game studio priced g6.xlarge with an overlay in ap-northeast-1 (whose public prices predate g6): the note
    # said its requirements "select no pool's instance types" though the pool allowed g6.xlarge; and a capacity-only
    # overlay's note spoke of "overlay prices".
    from karpplan.model.pools import NodePool

    pool = NodePool("gpu", "NodePool", "karpenter.sh/v1", Requirements(
        [Requirement.of("karpenter.k8s.aws/instance-family", "In", ["g6"])]))
    catalog = load_catalog("ap-northeast-1")
    priced = NodeOverlay(name="price-g6", requirements=Requirements(
        [Requirement.of("node.kubernetes.io/instance-type", "In", ["g6.xlarge"])]), weight=20, price=0.95)
    _, notes = apply_node_overlays(catalog, [priced], [pool])
    (note,) = notes
    assert "its requirements select g6.xlarge, which the embedded ap-northeast-1 catalog lacks" in note
    assert "select no pool's instance types" not in note
    capacity = _overlay("slices", capacity=Resources({"nvidia.com/gpu": 4}))
    _, notes = apply_node_overlays(load_catalog("us-east-1"), [capacity])
    assert "overlay prices" not in notes[0] and "capacity includes it" in notes[0]


def test_catalog_lists_a_pools_types_with_the_overlays_of_its_manifests(tmp_path: Path) -> None:
    # A game studio's time-slicing overlay (nvidia.com/gpu=4 on g6) let plan pack four 1-GPU pods on a g6.4xlarge,
    # while `catalog --nodepool gpu --request nvidia.com/gpu=3` listed no g6 below 4 real GPUs: the two disagreed.
    from typer.testing import CliRunner

    from karpplan.cli.main import app

    (tmp_path / "pools.yaml").write_text("""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6]}
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: slices}
spec:
  requirements:
    - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6]}
  capacity: {nvidia.com/gpu: "4"}
""")
    result = CliRunner().invoke(app, ["catalog", str(tmp_path / "pools.yaml"), "--nodepool", "gpu", "--region",
                                      "us-east-1", "--request", "nvidia.com/gpu=3"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert any(line.startswith("g6.xlarge ") for line in result.stdout.splitlines()), result.stdout
