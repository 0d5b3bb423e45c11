"""The embedded AWS catalog: regions, prices, offerings, labels, extended resources, kubelet overrides."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from karpplan.catalog import (
    InstanceType,
    instance_requirements,
    instance_types_for,
    load_catalog,
    node_labels,
)
from karpplan.catalog import embedded as embedded_module
from karpplan.catalog.types import ON_DEMAND, SPOT
from karpplan.errors import InputError
from karpplan.model.pools import KubeletConfig
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import MEMORY, PODS

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ZONES = {
    "us-east-1": [f"us-east-1{z}" for z in "abcdef"],
    "us-west-2": [f"us-west-2{z}" for z in "abcd"],
    "eu-west-1": [f"eu-west-1{z}" for z in "abc"],
    "ap-northeast-2": [f"ap-northeast-2{z}" for z in "abcd"],
    "ap-northeast-1": ["ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"],
    "us-east-2": [f"us-east-2{z}" for z in "abc"],
    "eu-central-1": [f"eu-central-1{z}" for z in "abc"],
    "ap-southeast-1": [f"ap-southeast-1{z}" for z in "abc"],
    "us-west-1": ["us-west-1a", "us-west-1c"],
}


def test_every_commercial_region_of_the_data_is_embedded() -> None:
    commercial = {region for region in _prices_csv() if not region.startswith("us-gov-")}
    assert len(commercial) >= 21
    assert set(embedded_module.regions()) == commercial


def _type(region: str, name: str, **kwargs: bool) -> InstanceType:
    return load_catalog(region, **kwargs).by_name()[name]  # type: ignore[arg-type]


def _on_demand(it: InstanceType) -> set[float]:
    return {o.price for o in it.offerings if o.capacity_type == ON_DEMAND}


@pytest.mark.parametrize(
    ("region", "name", "price"),
    [("us-east-1", "m5.large", 0.096), ("ap-northeast-2", "m5.large", 0.118), ("ap-northeast-2", "t3a.micro", 0.0117)],
)
def test_prices_match_the_data(region: str, name: str, price: float) -> None:
    it = _type(region, name)
    assert _on_demand(it) == {price}
    assert not any(o.estimated for o in it.offerings if o.capacity_type == ON_DEMAND)


@pytest.mark.parametrize("region", sorted(ZONES))
def test_regions_zones_and_on_demand_everywhere(region: str) -> None:
    catalog = load_catalog(region)
    assert list(catalog.zones) == ZONES[region]
    for it in catalog.instance_types[:50]:
        on_demand_zones = [o.zone for o in it.offerings if o.capacity_type == ON_DEMAND]
        assert on_demand_zones == ZONES[region]


def test_default_region_is_us_east_1() -> None:
    assert load_catalog(None).region == "us-east-1"


def test_unknown_region_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown region 'mars-east-1'"):
        load_catalog("mars-east-1")


def _prices_csv() -> dict[str, dict[str, float]]:
    path = SHARED_DATA / "ec2-prices-ondemand.csv"
    if not path.exists():
        pytest.skip("../shared/data is not available")
    out: dict[str, dict[str, float]] = {}
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            out.setdefault(row["region"], {})[row["instance_type"]] = float(row["usd_per_hour"])
    return out


def _family(name: str) -> str:
    return name.split(".")[0]


@pytest.mark.parametrize("region", sorted(ZONES))
def test_every_price_comes_from_the_data_or_the_family_rule_and_unpriced_types_are_not_offered(region: str) -> None:
    """A listed price is offered as listed; a type the region does not list is offered (estimated) only when
    other sizes of its family are listed there, else not at all."""
    prices = _prices_csv()[region]
    base = _prices_csv()["us-east-1"]
    catalog = load_catalog(region)
    all_types = {t.name for t in embedded_module.embedded_data().types}
    listed = {name for name in prices if name in all_types}
    listed_families = {_family(n) for n in listed if "metal" not in n and n in base}
    for it in catalog.instance_types:
        estimated = {o.estimated for o in it.offerings if o.capacity_type == ON_DEMAND}
        if it.name in listed:
            assert _on_demand(it) == {prices[it.name]} and estimated == {False}
        else:
            assert _family(it.name) in listed_families and estimated == {True}, it.name
    derivable = {n for n in all_types if n in base and _family(n) in listed_families}
    assert {it.name for it in catalog.instance_types} == listed | derivable


def test_a_size_the_region_does_not_list_is_priced_from_its_familys_listed_sizes() -> None:
    """us-west-2 lists m8g.2xlarge, 12xlarge, 16xlarge and 24xlarge but not m8g.large: AWS prices are linear
    within a family and region, so m8g.large costs its us-east-1 price times the family's us-west-2 ratio."""
    prices = _prices_csv()
    west, base = prices["us-west-2"], prices["us-east-1"]
    assert "m8g.large" not in west
    ratio = statistics.median(west[n] / base[n] for n in west if _family(n) == "m8g" and "metal" not in n)
    it = _type("us-west-2", "m8g.large")
    assert _on_demand(it) == {round(base["m8g.large"] * ratio, 6)}
    assert all(o.estimated for o in it.offerings)
    assert "34 types priced as their us-east-1 price" in load_catalog("us-west-2").sources["derived on-demand prices"]
    # the rule reproduces the listed sizes it was not given (leave one out)
    for name in ("m8g.2xlarge", "m8g.24xlarge"):
        others = statistics.median(west[n] / base[n] for n in west if _family(n) == "m8g" and n != name)
        assert base[name] * others == pytest.approx(west[name], rel=0.005)


def test_estimated_prices_use_the_regions_median_ratio() -> None:
    prices = _prices_csv()
    base, seoul = prices["us-east-1"], prices["ap-northeast-2"]
    ratio = statistics.median(seoul[n] / base[n] for n in seoul if n in base)
    missing = sorted(n for n in base if n not in seoul and n.startswith("c7i."))
    assert missing, "the data should lack Seoul prices for c7i"
    assert missing[0] not in load_catalog("ap-northeast-2").by_name()
    estimated = load_catalog("ap-northeast-2", allow_estimated_prices=True)
    it = estimated.by_name()[missing[0]]
    on_demand = [o for o in it.offerings if o.capacity_type == ON_DEMAND]
    assert {o.estimated for o in on_demand} == {True}
    assert on_demand[0].price == pytest.approx(base[missing[0]] * ratio, rel=1e-5)
    assert estimated.estimated_prices
    assert "median" in estimated.sources["estimated on-demand prices"]
    # Real regional prices stay real.
    assert not any(o.estimated for o in estimated.by_name()["m5.large"].offerings if o.capacity_type == ON_DEMAND)


def test_spot_default_is_an_estimated_discount() -> None:
    it = _type("us-east-1", "m5.large")
    spot = [o for o in it.offerings if o.capacity_type == SPOT]
    assert [o.zone for o in spot] == ZONES["us-east-1"]
    assert [o.price for o in spot] == pytest.approx([0.096 * embedded_module.DEFAULT_SPOT_FACTOR] * 6)
    assert {o.estimated for o in spot} == {True}


def test_spot_price_file_replaces_estimates(tmp_path: Path) -> None:
    spot_file = Path(__file__).parent / "data" / "catalog" / "spot-prices.csv"
    catalog = load_catalog("us-east-1", spot_prices_file=str(spot_file))
    m5 = catalog.by_name()["m5.large"]
    spot = {o.zone: o for o in m5.offerings if o.capacity_type == SPOT}
    assert set(spot) == {"us-east-1a", "us-east-1b"}  # the file names zones: only those sell spot
    assert spot["us-east-1a"].price == 0.0342 and not spot["us-east-1a"].estimated
    c5 = [o for o in catalog.by_name()["c5.large"].offerings if o.capacity_type == SPOT]
    assert len(c5) == 6 and {o.price for o in c5} == {0.031} and not any(o.estimated for o in c5)
    m6i = [o for o in catalog.by_name()["m6i.large"].offerings if o.capacity_type == SPOT]
    assert {o.estimated for o in m6i} == {True}  # not in the file: still the estimate
    assert "spot-prices.csv" in catalog.sources["spot prices"]


def test_bad_spot_price_file_reports_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "spot.csv"
    bad.write_text("region,instance_type,usd_per_hour\nus-east-1,m5.large,0.03\nus-east-1,c5.large,cheap\n")
    with pytest.raises(InputError) as info:
        load_catalog("us-east-1", spot_prices_file=str(bad))
    assert str(info.value.problems[0]).startswith(f"{bad}:3: price must be a non-negative number")


# ------------------------------------------------------------------------------------------ labels
def test_m5_large_labels() -> None:
    assert node_labels(_type("us-east-1", "m5.large"), auto_mode=False) == {
        "karpenter.k8s.aws/instance-category": "m",
        "karpenter.k8s.aws/instance-cpu": "2",
        "karpenter.k8s.aws/instance-cpu-manufacturer": "intel",
        "karpenter.k8s.aws/instance-ebs-bandwidth": "4750",
        "karpenter.k8s.aws/instance-family": "m5",
        "karpenter.k8s.aws/instance-generation": "5",
        "karpenter.k8s.aws/instance-hypervisor": "nitro",
        "karpenter.k8s.aws/instance-memory": "8192",
        "karpenter.k8s.aws/instance-network-bandwidth": "750",
        "karpenter.k8s.aws/instance-size": "large",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m5.large",
    }


def test_auto_mode_labels() -> None:
    labels = node_labels(_type("us-east-1", "g4dn.xlarge"), auto_mode=True)
    assert labels["eks.amazonaws.com/compute-type"] == "auto"
    assert labels["eks.amazonaws.com/instance-gpu-name"] == "t4"
    assert labels["eks.amazonaws.com/instance-family"] == "g4dn"
    assert labels["node.kubernetes.io/instance-type"] == "g4dn.xlarge"
    assert not any(k.startswith("karpenter.k8s.aws/") for k in labels)
    inf2 = node_labels(_type("us-east-1", "inf2.xlarge"), auto_mode=True)
    assert not any("accelerator" in k for k in inf2)  # Auto Mode has no accelerator labels


def test_empty_values_are_omitted_and_known_absent() -> None:
    metal = _type("us-east-1", "m5.metal")
    assert "karpenter.k8s.aws/instance-hypervisor" not in metal.labels
    assert "karpenter.k8s.aws/instance-hypervisor" in metal.absent_label_keys
    m5 = _type("us-east-1", "m5.large")
    assert not any("gpu" in k for k in m5.labels)
    wants_gpu = Requirements([Requirement.of("karpenter.k8s.aws/instance-gpu-name", "Exists")])
    no_gpu = Requirements([Requirement.of("karpenter.k8s.aws/instance-gpu-name", "DoesNotExist")])
    assert not instance_requirements(m5, auto_mode=False).intersects(wants_gpu)
    assert instance_requirements(m5, auto_mode=False).intersects(no_gpu)
    assert instance_requirements(_type("us-east-1", "g4dn.xlarge"), auto_mode=False).intersects(wants_gpu)


def test_labels_agree_with_the_data_for_every_type() -> None:
    path = SHARED_DATA / "ec2-instance-types.csv"
    if not path.exists():
        pytest.skip("../shared/data is not available")
    by_name = {t.name: t.labels for t in embedded_module.embedded_data().types}
    columns = {
        "instance-category": "category",
        "instance-family": "family",
        "instance-generation": "generation",
        "instance-size": "size",
        "instance-cpu": "vcpu",
        "instance-memory": "memory_mib",
        "instance-hypervisor": "hypervisor",
        "instance-cpu-manufacturer": "cpu_manufacturer",
        "instance-gpu-name": "gpu_name",
        "instance-gpu-count": "gpu_count",
        "instance-gpu-manufacturer": "gpu_manufacturer",
        "instance-gpu-memory": "gpu_memory_mib",
        "instance-local-nvme": "local_nvme_gb",
        "instance-network-bandwidth": "network_mbps",
        "instance-accelerator-name": "accelerator_name",
        "instance-accelerator-count": "accelerator_count",
    }
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            labels = by_name[row["name"]]
            assert labels["kubernetes.io/arch"] == row["arch"]
            for suffix, column in columns.items():
                assert labels.get("karpenter.k8s.aws/" + suffix, "") == row[column], (row["name"], suffix)


def test_extended_resources_in_capacity_and_allocatable() -> None:
    g4dn = _type("us-east-1", "g4dn.xlarge")
    assert g4dn.capacity["nvidia.com/gpu"] == 1 and g4dn.allocatable["nvidia.com/gpu"] == 1
    inf2 = _type("us-east-1", "inf2.xlarge")
    assert inf2.allocatable["aws.amazon.com/neuron"] == 1
    assert inf2.allocatable["aws.amazon.com/neuroncore"] == 2
    p5 = _type("us-east-1", "p5.48xlarge")
    assert p5.capacity["nvidia.com/gpu"] == 8 and p5.capacity["vpc.amazonaws.com/efa"] == 32
    assert p5.allocatable[PODS] == 100
    m5 = _type("us-east-1", "m5.large")
    assert m5.allocatable["vpc.amazonaws.com/pod-eni"] == 9
    assert "vpc.amazonaws.com/pod-eni" not in _type("us-east-1", "t3.medium").capacity


# ------------------------------------------------------------------------------------------ kubelet overrides
def test_instance_types_for_recomputes_and_caches() -> None:
    catalog = load_catalog("us-east-1")
    assert instance_types_for(catalog, None) is catalog.instance_types
    kubelet = KubeletConfig(max_pods=110)
    first = instance_types_for(catalog, kubelet)
    assert instance_types_for(catalog, KubeletConfig(max_pods=110)) is first
    m5 = {it.name: it for it in first}["m5.large"]
    assert m5.allocatable[PODS] == 110 and m5.capacity[PODS] == 110
    assert m5.allocatable[MEMORY] == catalog.by_name()["m5.large"].allocatable[MEMORY]
    bottlerocket = {it.name: it for it in instance_types_for(catalog, kubelet, "Bottlerocket")}["m5.large"]
    assert bottlerocket.allocatable[MEMORY] == (7577 - 1465 - 100) * 2**20


def test_unchanged_types_are_the_same_objects() -> None:
    catalog = load_catalog("us-east-1")
    # maxPods equal to a type's ENI count leaves that type as it was.
    types = {it.name: it for it in instance_types_for(catalog, KubeletConfig(max_pods=29))}
    assert types["m5.large"] is catalog.by_name()["m5.large"]
    assert types["m5.xlarge"] is not catalog.by_name()["m5.xlarge"]


def test_windows_ami_family() -> None:
    catalog = load_catalog("us-east-1")
    m5 = {it.name: it for it in instance_types_for(catalog, None, "Windows2022")}["m5.large"]
    assert m5.labels["kubernetes.io/os"] == "windows"
    assert m5.labels["node.kubernetes.io/windows-build"] == "10.0.20348"
    assert m5.allocatable[PODS] == 110
    assert all(o.estimated for o in m5.offerings)


def test_invalid_kubelet_is_an_input_error() -> None:
    with pytest.raises(InputError, match="evictionHard"):
        instance_types_for(load_catalog("us-east-1"), KubeletConfig(eviction_hard={"memory.available": "lots"}))


def test_a_region_is_built_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command asks for the catalog several times (plan, lint, fixes, the Karpenter line): the data
    file is decoded once and a region's catalog built once, so the later asks cost nothing. (How long the
    first load takes is a benchmark figure, not a test: a loaded CI machine would make it flaky.)"""
    embedded_module.embedded_data.cache_clear()
    embedded_module._cached.cache_clear()
    reads = 0
    real = embedded_module._read_raw

    def counted() -> object:
        nonlocal reads
        reads += 1
        return real()

    monkeypatch.setattr(embedded_module, "_read_raw", counted)
    first = load_catalog("us-east-1")
    assert load_catalog("us-east-1") is first
    load_catalog("eu-west-1")
    assert reads == 1
