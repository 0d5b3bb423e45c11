"""Windows nodes are priced as Windows, not Linux (issue 14, item 5).

There is no per-type Windows price table in the public data; the licence rule of ../shared/data/NOTES.md
applies: Linux on-demand + 0.046 USD per vCPU-hour, x86 only, not for t2/t3/t3a, always marked estimated.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from karpplan.catalog import WINDOWS_LICENCE_USD_PER_VCPU_HOUR, instance_types_for, load_catalog
from karpplan.catalog.types import ON_DEMAND

from planner_helpers import plan_json

MANIFEST = Path(__file__).parent / "data" / "manifests" / "windows2022.yaml"
SHARED_PRICES = Path(__file__).resolve().parents[2] / "shared" / "data" / "ec2-prices-ondemand.csv"


def _plan(path: Path, region: str = "us-east-1") -> dict[str, Any]:
    return plan_json(path, "--region", region)


def _linux_price(region: str, name: str) -> float:
    if SHARED_PRICES.exists():
        with SHARED_PRICES.open(newline="") as fh:
            for row in csv.DictReader(fh):
                if row["region"] == region and row["instance_type"] == name:
                    return float(row["usd_per_hour"])
        raise AssertionError(f"no Linux price for {name} in {region}")
    it = load_catalog(region).by_name()[name]
    return next(o.price for o in it.offerings if o.capacity_type == ON_DEMAND)


@pytest.mark.parametrize("region", ["us-east-1", "eu-central-1"])
def test_windows_nodes_cost_linux_plus_the_licence_and_say_so(region: str) -> None:
    plan = _plan(MANIFEST, region)
    assert plan["summary"]["scheduled"] == 3
    assert plan["summary"]["estimatedPrices"] is True
    for node in plan["nodes"]:
        vcpu = int(node["labels"]["karpenter.k8s.aws/instance-cpu"])
        expected = _linux_price(region, node["instanceType"]) + WINDOWS_LICENCE_USD_PER_VCPU_HOUR * vcpu
        assert node["hourlyPrice"] == pytest.approx(expected, abs=1e-4)
        assert node["priceEstimated"] is True
        assert node["labels"]["kubernetes.io/os"] == "windows"
        # The pool allows t3, but the licence rule does not price burstable types: never chosen.
        assert node["labels"]["karpenter.k8s.aws/instance-family"] not in ("t2", "t3", "t3a")


def test_windows_offers_no_arm64_and_no_burstable_types() -> None:
    catalog = load_catalog("us-east-1")
    windows = instance_types_for(catalog, None, "Windows2022")
    linux = catalog.by_name()
    assert windows, "x86 types must stay"
    assert all(it.labels["kubernetes.io/arch"] == "amd64" for it in windows)
    assert not any(it.name.split(".")[0] in ("t2", "t3", "t3a") for it in windows)
    assert any(it.name.startswith("t3.") for it in linux.values())
    m5 = next(it for it in windows if it.name == "m5.xlarge")
    (price,) = {o.price for o in m5.offerings if o.capacity_type == ON_DEMAND}
    linux_price = next(o.price for o in linux["m5.xlarge"].offerings if o.capacity_type == ON_DEMAND)
    assert price == pytest.approx(linux_price + 4 * 0.046)


def test_a_windows_pool_of_burstable_types_only_places_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t-only.yaml"
    path.write_text(MANIFEST.read_text().replace('values: ["c", "m", "r", "t"]', 'values: ["t"]'))
    plan = _plan(path)
    assert plan["nodes"] == []
    assert len(plan["unschedulable"]) == 3
