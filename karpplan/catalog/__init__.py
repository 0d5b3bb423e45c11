"""What can be launched: instance types, their offerings, and the catalog that holds them.

Public API (the planner's entry points):

    load_catalog(region, catalog_file=None, *, allow_estimated_prices=False, spot_prices_file=None) -> Catalog
    instance_types_for(catalog, kubelet, ami_family=None, storage=None) -> tuple[InstanceType, ...]
    node_labels(it, *, auto_mode) -> dict[str, str]
    instance_requirements(it, *, auto_mode, with_offerings=True) -> Requirements
    allocatable.compute(shape, kubelet, ami_family, extended, storage) / allocatable.derive_from_capacity(capacity, kubelet)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from karpplan.catalog import allocatable
from karpplan.catalog.aws_import import read_spot_price_file
from karpplan.catalog.embedded import DEFAULT_REGION, DEFAULT_SPOT_FACTOR, embedded_catalog, regions
from karpplan.catalog.nodelabels import instance_requirements, node_labels
from karpplan.catalog.prices import PriceRow, zone_price
from karpplan.catalog.types import ON_DEMAND, RESERVED, SPOT, Catalog, InstanceShape, InstanceType, Offering
from karpplan.catalog.user import load_user_catalog
from karpplan.errors import InputError, Origin
from karpplan.model.labels import AWS_PREFIX, OS, WINDOWS_BUILD
from karpplan.model.pools import KubeletConfig, NodeStorage
from karpplan.model.resources import PODS
from karpplan.model.security_group_policies import PRIVATE_IPV4

__all__ = [
    "DEFAULT_REGION",
    "DEFAULT_SPOT_FACTOR",
    "ON_DEMAND",
    "RESERVED",
    "SPOT",
    "Catalog",
    "InstanceShape",
    "InstanceType",
    "Offering",
    "allocatable",
    "apply_price_rows",
    "instance_requirements",
    "instance_types_for",
    "WINDOWS_LICENCE_USD_PER_VCPU_HOUR",
    "windows_priced",
    "load_catalog",
    "node_labels",
    "regions",
]

# node.kubernetes.io/windows-build of each Windows AMI family (Karpenter's amifamily/windows.go).
# Windows Server licence-included charge per vCPU-hour, added to the Linux price (../shared/data/NOTES.md:
# AWS's "Optimize CPUs for License-Included instances" table). An estimate: burstable t2/t3/t3a are priced
# differently, so they get no Windows price, and Windows AMIs are x86_64 only.
WINDOWS_LICENCE_USD_PER_VCPU_HOUR = 0.046
NO_WINDOWS_ESTIMATE_FAMILIES = frozenset({"t2", "t3", "t3a"})
WINDOWS_BUILDS = {"Windows2019": "10.0.17763", "Windows2022": "10.0.20348", "Windows2025": "10.0.26100"}


def load_catalog(
    region: str | None,
    catalog_file: str | None = None,
    *,
    allow_estimated_prices: bool = False,
    spot_prices_file: str | None = None,
    region_origin: Origin | None = None,
    region_field: str = "metadata.region",
) -> Catalog:
    """The catalog to plan with: a user's InstanceCatalog (`--catalog`) or the embedded AWS one.

    `region` None means us-east-1 for the embedded catalog; for a user catalog it is informational.
    `spot_prices_file` is `aws ec2 describe-spot-price-history` JSON, or a price CSV
    (region,instance_type,usd_per_hour[,capacity_type][,zone]) whose rows default to spot; they replace the
    estimated spot offerings of the types they name.
    Raises InputError (file:line) for a malformed catalog or price list, or an unknown region.
    """
    rows: list[PriceRow] = []
    if spot_prices_file:
        rows = read_spot_price_file(spot_prices_file)
    if catalog_file:
        catalog = load_user_catalog(catalog_file, region=region)
        return apply_price_rows(catalog, rows, label=spot_prices_file) if rows else catalog
    return embedded_catalog(
        region,
        allow_estimated_prices=allow_estimated_prices,
        spot_prices=rows,
        spot_prices_label=spot_prices_file,
        region_origin=region_origin,
        region_field=region_field,
    )


def apply_price_rows(catalog: Catalog, rows: Sequence[PriceRow], *, label: str | None = None) -> Catalog:
    """Replace a user catalog's offerings with the prices in `rows` for the types and zones they name.

    Rows must be for the catalog's region (any region when the catalog names none). A row without a
    zone applies to every catalog zone; the listed capacity types of a named type are replaced whole.
    """
    by_type: dict[str, dict[str, dict[str | None, float]]] = {}
    for row in rows:
        if catalog.region and row.region != catalog.region:
            continue
        by_type.setdefault(row.instance_type, {}).setdefault(row.capacity_type, {})[row.zone] = row.price
    if not by_type:
        return catalog
    types: list[InstanceType] = []
    for it in catalog.instance_types:
        prices = by_type.get(it.name)
        if prices is None:
            types.append(it)
            continue
        kept = [o for o in it.offerings if o.capacity_type not in prices]
        for capacity_type, by_zone in prices.items():
            for zone in catalog.zones:
                price = zone_price(by_zone, zone)
                if price is not None:
                    kept.append(Offering(zone, capacity_type, price, False))
        types.append(dataclasses.replace(it, offerings=tuple(kept)))
    sources = dict(catalog.sources)
    sources["price list"] = f"{label or 'price list'} ({len(by_type)} types)"
    return dataclasses.replace(catalog, instance_types=tuple(types), sources=sources)


# ------------------------------------------------------------------------------------------ kubelet
_CacheKey = tuple[int, object, str, NodeStorage | None]
_cache: dict[_CacheKey, tuple[Catalog, tuple[InstanceType, ...]]] = {}
_CACHE_LIMIT = 64


def _kubelet_key(kubelet: KubeletConfig | None) -> object:
    if kubelet is None:
        return None
    eviction = tuple(sorted((kubelet.eviction_hard or {}).items()))
    return (kubelet.max_pods, kubelet.pods_per_core, kubelet.kube_reserved, kubelet.system_reserved, eviction)


def instance_types_for(
    catalog: Catalog,
    kubelet: KubeletConfig | None,
    ami_family: str | None = None,
    storage: NodeStorage | None = None,
) -> tuple[InstanceType, ...]:
    """The catalog's types as nodes of a NodeClass with these kubelet settings and AMI family would be.

    EC2 types (with `shape`) and capacity-only user types get capacity/allocatable recomputed; types
    with an explicit allocatable are returned unchanged. Windows AMI families turn EC2 types into
    Windows nodes (os label, windows-build, 110 pods, 50Gi root), priced at the Linux price plus the
    licence charge per vCPU-hour and marked estimated; types with no Windows price (arm64, t2/t3/t3a) are
    left out.
    The result is cached per (catalog, kubelet, AMI family); a type whose figures do not change is
    returned as the very same object, and with no kubelet and a Linux AMI family the catalog's own
    tuple is returned.
    """
    problems = allocatable.validate_kubelet(kubelet)
    if problems:
        raise InputError.at(Origin("EC2NodeClass kubelet"), "; ".join(problems))
    flags = allocatable.ami_family_flags(ami_family)
    windows = flags.name in WINDOWS_BUILDS
    if storage == NodeStorage():
        storage = None
    if kubelet is None and not windows and storage is None:
        return catalog.instance_types
    key: _CacheKey = (id(catalog), _kubelet_key(kubelet), flags.name, storage)
    hit = _cache.get(key)
    if hit is not None and hit[0] is catalog:
        return hit[1]
    result = tuple(
        _recomputed(it, kubelet, ami_family, windows, flags.name, storage)
        for it in catalog.instance_types
        if not windows or windows_priced(it)
    )
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[key] = (catalog, result)
    return result


def windows_priced(it: InstanceType) -> bool:
    """Whether a Windows node of this type has a price: user types (their own prices) and x86 EC2 types
    outside the burstable families the licence rule does not cover."""
    if it.shape is None:
        return True
    family = it.labels.get(AWS_PREFIX + "instance-family", it.name.split(".", 1)[0])
    return it.shape.arch == "amd64" and family not in NO_WINDOWS_ESTIMATE_FAMILIES


def _recomputed(
    it: InstanceType,
    kubelet: KubeletConfig | None,
    ami_family: str | None,
    windows: bool,
    family: str,
    storage: NodeStorage | None,
) -> InstanceType:
    if it.shape is not None:
        extended = {k: v for k, v in it.capacity.items() if k not in allocatable.CORE_RESOURCES}
        node = allocatable.compute(it.shape, kubelet, ami_family, extended, storage)
    elif it.allocatable_derived:
        node = allocatable.derive_from_capacity(it.capacity, kubelet)
    else:
        return it
    capacity = it.capacity if node.capacity == it.capacity else node.capacity
    alloc = it.allocatable if node.allocatable == it.allocatable else node.allocatable
    if windows and it.shape is not None:
        labels = {**it.labels, OS: "windows", WINDOWS_BUILD: WINDOWS_BUILDS[family]}
        # The Windows IPAM's secondary addresses: one per pod, IPv4 per interface − 1 (Karpenter's privateIPv4Address)
        addresses = {PRIVATE_IPV4: it.shape.ipv4_per_eni - 1 if it.shape.ipv4_per_eni else capacity.get(PODS)}
        capacity, alloc = capacity + addresses, alloc + addresses
        # EC2 catalog prices are Linux prices: add the licence, and say the result is an estimate.
        licence = WINDOWS_LICENCE_USD_PER_VCPU_HOUR * it.shape.vcpu
        offerings = tuple(
            dataclasses.replace(o, price=round(o.price + licence, 6), estimated=True) for o in it.offerings
        )
        return dataclasses.replace(
            it,
            capacity=capacity,
            allocatable=alloc,
            labels=labels,
            os_values=("windows",),
            offerings=offerings,
        )
    if capacity is it.capacity and alloc is it.allocatable:
        return it
    return dataclasses.replace(it, capacity=capacity, allocatable=alloc)
