"""The embedded AWS catalog: karpplan/catalog/data/aws-catalog.json.gz, built by scripts/build_catalog.py.

Offerings (docs/catalog.md explains each choice):
- on-demand: every type priced in the region, in every zone of the region (the data has no per-zone
  availability). A type the region's price list lacks while other sizes of its family are listed there is
  priced from them (`FAMILY_DERIVED`, scripts/build_catalog.py), marked `estimated`. With `allow_estimated_prices`, a type priced in us-east-1 but not in the region is
  offered at the us-east-1 price × the region's median price ratio, marked `estimated`.
- spot: every offered type, in every zone, at `DEFAULT_SPOT_FACTOR` × its on-demand price, marked
  `estimated`, unless a spot price list gives real prices for it.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources as importlib_resources
from typing import Any

from karpplan.catalog import allocatable
from karpplan.catalog.nodelabels import aws_labels
from karpplan.catalog.prices import PriceRow, listed_prices, spot_offerings
from karpplan.catalog.types import ON_DEMAND, Catalog, InstanceShape, InstanceType, Offering
from karpplan.errors import InputError, Origin
from karpplan.model.resources import Resources

DATA_FILE = "aws-catalog.json.gz"
DEFAULT_REGION = "us-east-1"
# Spot is estimated at 40% of on-demand (a 60% discount) when no spot price list is given; see
# docs/catalog.md for why this figure.
DEFAULT_SPOT_FACTOR = 0.40
# The price source of a type priced from the listed sizes of its family in the region (an estimate).
FAMILY_DERIVED = "family-derived"


@dataclass(frozen=True)
class _BaseType:
    """The region-independent part of an instance type."""

    name: str
    labels: Mapping[str, str]
    absent: frozenset[str]
    shape: InstanceShape
    capacity: Resources
    allocatable: Resources


@dataclass(frozen=True)
class EmbeddedData:
    sources: Mapping[str, str]
    regions: Mapping[str, tuple[str, ...]]
    base_region: str
    median_ratio: Mapping[str, float]
    price_sources: Mapping[str, Mapping[str, str]]  # region -> source key -> as_of
    price_source_names: Mapping[str, str]  # source key -> description
    prices: Mapping[str, Mapping[str, tuple[float, str]]]  # region -> type -> (price, source key)
    types: tuple[_BaseType, ...]


def _read_raw() -> dict[str, Any]:
    blob = importlib_resources.files("karpplan.catalog").joinpath("data", DATA_FILE).read_bytes()
    document: dict[str, Any] = json.loads(gzip.decompress(blob))
    return document


@functools.cache
def embedded_data() -> EmbeddedData:
    """The decoded data file (read once per process)."""
    raw = _read_raw()
    columns: list[str] = raw["columns"]
    types: list[_BaseType] = []
    for row in raw["types"]:
        record = dict(zip(columns, row, strict=True))
        types.append(_base_type(record))
    keys: list[str] = raw["price_source_keys"]
    prices = {
        region: {name: (float(entry[0]), keys[int(entry[1])]) for name, entry in by_name.items()}
        for region, by_name in raw["prices"].items()
    }
    return EmbeddedData(
        sources=dict(raw["sources"]),
        regions={region: tuple(zones) for region, zones in raw["regions"].items()},
        base_region=raw["base_region"],
        median_ratio={k: float(v) for k, v in raw["median_ratio"].items()},
        price_sources=raw["price_sources"],
        price_source_names=dict(zip(keys, raw["price_source_names"], strict=True)),
        prices=prices,
        types=tuple(types),
    )


def _base_type(r: Mapping[str, Any]) -> _BaseType:
    values: dict[str, object | None] = {
        "instance-category": r["category"],
        "instance-generation": r["generation"],
        "instance-family": r["family"],
        "instance-size": r["size"],
        "instance-cpu": r["vcpu"],
        "instance-cpu-manufacturer": r["cpu_manufacturer"],
        "instance-memory": r["memory_mib"],
        "instance-ebs-bandwidth": r["ebs_bandwidth_mbps"],
        "instance-network-bandwidth": r["network_mbps"],
        "instance-hypervisor": r["hypervisor"],
        "instance-local-nvme": r["local_nvme_gb"],
        "instance-gpu-name": r["gpu_name"],
        "instance-gpu-manufacturer": r["gpu_manufacturer"],
        "instance-gpu-count": r["gpu_count"],
        "instance-gpu-memory": r["gpu_memory_mib"],
        "instance-accelerator-name": r["accelerator_name"],
        "instance-accelerator-manufacturer": r["accelerator_manufacturer"],
        "instance-accelerator-count": r["accelerator_count"],
    }
    labels, absent = aws_labels(name=r["name"], arch=r["arch"], os="linux", values=values)
    shape = InstanceShape(
        vcpu=r["vcpu"], memory_mib=r["memory_mib"], arch=r["arch"], eni_pods=r["eni_pods"],
        local_storage_gb=r["local_nvme_gb"] or 0, ipv4_per_eni=r["ipv4_per_eni"],
    )
    node = allocatable.compute(shape, None, None, r["extended"])
    return _BaseType(r["name"], labels, absent, shape, node.capacity, node.allocatable)


def regions() -> dict[str, tuple[str, ...]]:
    """Region -> zones of the embedded catalog."""
    return dict(embedded_data().regions)


# AWS's commercial, GovCloud and China regions (aws ec2 describe-regions --all-regions, 2026): a region here that the
# embedded catalog lacks is real but newer than its price list (or outside it), not a typo.
AWS_REGIONS = frozenset({
    "af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-south-1",
    "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5",
    "ap-southeast-6", "ap-southeast-7", "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2", "eu-north-1",
    "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3", "il-central-1", "me-central-1", "me-south-1",
    "mx-central-1", "sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2", "us-gov-east-1",
    "us-gov-west-1", "cn-north-1", "cn-northwest-1",
})


def _region_error(region: str, origin: Origin | None, field: str = "metadata.region") -> InputError:
    """A region the embedded catalog lacks, blamed on where it came from: `--region`, or the file:line (and `field`)
    that names it. A real AWS region gets the way to a catalog of its own; anything else is a typo."""
    known = ", ".join(sorted(embedded_data().regions))
    where = f"{field}: " if origin is not None else ""
    if region in AWS_REGIONS:
        message = (f"{where}{region} is an AWS region the embedded catalog does not cover (it covers {known}); "
                   f"build a catalog for it with `karpplan catalog refresh --region {region} -o catalog.yaml` (AWS "
                   "credentials) or `karpplan catalog import` (describe-instance-types output), then plan with "
                   "--catalog catalog.yaml")
    else:
        message = f"{where}unknown region {region!r}; the embedded catalog covers {known}"
    return InputError.at(origin or Origin("--region"), message)


@functools.lru_cache(maxsize=16)
def _cached(region: str, allow_estimated_prices: bool) -> Catalog:
    return _build(region, allow_estimated_prices, (), DEFAULT_SPOT_FACTOR, None)


def embedded_catalog(
    region: str | None = None,
    *,
    allow_estimated_prices: bool = False,
    spot_prices: Sequence[PriceRow] = (),
    spot_prices_label: str | None = None,
    spot_factor: float = DEFAULT_SPOT_FACTOR,
    region_origin: Origin | None = None,
    region_field: str = "metadata.region",
) -> Catalog:
    """The embedded catalog for one region (cached when no price list is supplied).

    `region_origin` says where the region was written (a ClusterConfig line, or a Node's) when not on the
    command line, and `region_field` what names it there.
    """
    region = region or DEFAULT_REGION
    if region not in embedded_data().regions:
        raise _region_error(region, region_origin, region_field)
    if not spot_prices and spot_factor == DEFAULT_SPOT_FACTOR:
        return _cached(region, allow_estimated_prices)
    return _build(region, allow_estimated_prices, tuple(spot_prices), spot_factor, spot_prices_label)


def _sources(data: EmbeddedData, region: str, estimated_count: int | None) -> dict[str, str]:
    """Where the region's catalog comes from: the data's sources, the on-demand prices' (per price source,
    with its date), and how many were estimated from the base region (None: no estimates allowed)."""
    regional = data.prices.get(region, {})
    sources = dict(data.sources)
    by_source: dict[str, int] = {}
    for _, source in regional.values():
        by_source[source] = by_source.get(source, 0) + 1
    sources["on-demand prices"] = "; ".join(
        f"{data.price_source_names.get(key, key)}, as of {data.price_sources[region].get(key, '?')} ({count} types)"
        for key, count in sorted(by_source.items()) if key != FAMILY_DERIVED
    )
    if FAMILY_DERIVED in by_source:
        sources["derived on-demand prices"] = (
            f"{by_source[FAMILY_DERIVED]} types {data.price_source_names.get(FAMILY_DERIVED, FAMILY_DERIVED)}, "
            "marked estimated")
    if estimated_count is not None:
        ratio = data.median_ratio.get(region, 1.0)
        sources["estimated on-demand prices"] = (
            f"{estimated_count} types priced as {data.base_region} × {ratio:g} "
            f"(median {region}/{data.base_region} price ratio)"
        )
    return sources


def _build(
    region: str,
    allow_estimated: bool,
    spot_rows: tuple[PriceRow, ...],
    spot_factor: float,
    spot_label: str | None,
) -> Catalog:
    data = embedded_data()
    zones = data.regions[region]
    regional = data.prices.get(region, {})
    base_prices = data.prices.get(data.base_region, {})
    ratio = data.median_ratio.get(region, 1.0)
    # A price list's spot rows, and its on-demand rows, which replace the embedded figure.
    real_on_demand, real_spot = listed_prices(spot_rows, region)
    out: list[InstanceType] = []
    estimated_count = 0
    for base in data.types:
        offerings: list[Offering] = []
        on_demand: float | None = None
        od_estimated = False
        if base.name in real_on_demand:
            on_demand = real_on_demand[base.name]
        elif base.name in regional:
            on_demand, source = regional[base.name]
            od_estimated = source == FAMILY_DERIVED
        elif allow_estimated and base.name in base_prices:
            on_demand, od_estimated = round(base_prices[base.name][0] * ratio, 6), True
            estimated_count += 1
        if on_demand is not None:
            offerings.extend(Offering(z, ON_DEMAND, on_demand, od_estimated) for z in zones)
        offerings.extend(spot_offerings(zones, real_spot.get(base.name), on_demand, spot_factor))
        if not offerings:
            continue  # not sold in this region as far as the data knows
        out.append(
            InstanceType(
                name=base.name,
                labels=base.labels,
                capacity=base.capacity,
                allocatable=base.allocatable,
                offerings=tuple(offerings),
                shape=base.shape,
                absent_label_keys=base.absent,
            )
        )
    sources = _sources(data, region, estimated_count if allow_estimated else None)
    spot_note = f"estimated at {spot_factor:g} × on-demand"
    if spot_rows:
        spot_note = f"{spot_label or 'price list'} for {len(real_spot)} types; others {spot_note}"
    sources["spot prices"] = spot_note
    return Catalog(
        name=f"aws-{region}",
        region=region,
        zones=zones,
        instance_types=tuple(out),
        sources=sources,
        estimated_prices=allow_estimated,
        embedded=True,
    )
