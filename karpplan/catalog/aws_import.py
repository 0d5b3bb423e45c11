"""Turn AWS's own outputs into an InstanceCatalog.

Inputs (any number, any order; the kind of each file is recognised from its content):
- `aws ec2 describe-instance-types` JSON/YAML (`{"InstanceTypes": [...]}`): shapes and labels;
- `aws ec2 describe-instance-type-offerings --location-type availability-zone` (`InstanceTypeOfferings`):
  which zones sell which types;
- prices: a CSV `region,instance_type,usd_per_hour[,capacity_type][,zone]` or
  `aws pricing get-products --service-code AmazonEC2` JSON (`PriceList`);
- `aws ec2 describe-spot-price-history` JSON (`SpotPriceHistory`): real spot prices per zone.

Labels follow Karpenter's AWS provider (`computeRequirements`), capacity and allocatable its
`computeCapacity` (karpplan.catalog.allocatable). The same conversion serves `catalog refresh`, which
gets these documents from boto3 instead of files.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpplan.catalog import allocatable
from karpplan.catalog.embedded import DEFAULT_SPOT_FACTOR, embedded_data
from karpplan.catalog.nodelabels import aws_labels
from karpplan.catalog.prices import (
    PriceRow,
    ZonePrices,
    is_pricing_document,
    listed_prices,
    parse_price,
    pricing_products,
    read_price_csv,
    spot_offerings,
)
from karpplan.catalog.types import ON_DEMAND, SPOT, Catalog, InstanceShape, InstanceType, Offering
from karpplan.errors import InputError, InputProblem, Origin
from karpplan.inputs.loader import load_documents
from karpplan.inputs.origins import origin_of

_CATEGORY_GENERATION = re.compile(r"^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.")
_ARCH = {"x86_64": "amd64", "arm64": "arm64"}
_CPU_MANUFACTURER = {"amazon web services": "aws", "aws": "aws", "intel": "intel", "amd": "amd"}


def lower_kabob(text: str) -> str:
    """Karpenter's `lowerKabobCase`: lower case, spaces to dashes ("Radeon Pro V520" → radeon-pro-v520)."""
    return text.strip().lower().replace(" ", "-")


@dataclass(frozen=True)
class Ec2Type:
    """One DescribeInstanceTypes entry reduced to what a catalog needs."""

    name: str
    arch: str
    shape: InstanceShape
    labels: Mapping[str, str]
    absent: frozenset[str]
    extended: Mapping[str, int]
    usage_classes: tuple[str, ...] = (ON_DEMAND, SPOT)
    origin: Origin = field(default=Origin("<aws>"), compare=False)


def _get(node: Any, *path: str | int) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                return None
        elif not isinstance(node, Mapping):
            return None
        node = node[step] if isinstance(step, int) else node.get(step)
        if node is None:
            return None
    return node


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def ec2_type(info: Mapping[str, Any], origin: Origin) -> Ec2Type | None:
    """Convert one `InstanceTypeInfo`; None for types Karpenter could not run (no Linux arch we know).

    Raises InputError when a field every type has (vCPUs, memory, network) is missing or malformed.
    """
    name = info.get("InstanceType")
    if not isinstance(name, str) or "." not in name:
        raise InputError.at(origin, f"InstanceType {name!r} is not an instance type name")
    arches = [a for a in (_get(info, "ProcessorInfo", "SupportedArchitectures") or []) if a in _ARCH]
    if not arches:
        return None  # i386-only, mac: not a Kubernetes node Karpenter launches
    arch = _ARCH[arches[0]]
    vcpu, memory, eni_pods, ipv4_per_eni = _sizes(info, name, origin)
    values = _label_values(info, name, vcpu, memory)
    extended = _devices(info, name, values)
    labels, absent = aws_labels(name=name, arch=arch, os="linux", values=values)
    storage = info.get("InstanceStorageInfo")
    local_gb = _int(storage.get("TotalSizeInGB")) if isinstance(storage, Mapping) else None
    shape = InstanceShape(vcpu=vcpu, memory_mib=memory, arch=arch, eni_pods=eni_pods, local_storage_gb=local_gb or 0,
                          ipv4_per_eni=ipv4_per_eni)
    usage = tuple(
        u for u in (info.get("SupportedUsageClasses") or [ON_DEMAND, SPOT]) if u in (ON_DEMAND, SPOT)
    )
    return Ec2Type(name, arch, shape, labels, absent, extended, usage, origin)


def _sizes(info: Mapping[str, Any], name: str, origin: Origin) -> tuple[int, int, int, int]:
    """vCPUs, memory (MiB), the ENI-limited pod count (of the default network card's interfaces) and the IPv4
    addresses per interface; every type has them, so InputError when one is missing or not an integer."""
    vcpu = _int(_get(info, "VCpuInfo", "DefaultVCpus"))
    memory = _int(_get(info, "MemoryInfo", "SizeInMiB"))
    ips = _int(_get(info, "NetworkInfo", "Ipv4AddressesPerInterface"))
    card = _int(_get(info, "NetworkInfo", "DefaultNetworkCardIndex")) or 0
    cards = _get(info, "NetworkInfo", "NetworkCards") or []
    default_card = next(
        (c for c in cards if isinstance(c, Mapping) and c.get("NetworkCardIndex") == card), None
    )
    enis = _int((default_card or {}).get("MaximumNetworkInterfaces"))
    if enis is None:
        enis = _int(_get(info, "NetworkInfo", "MaximumNetworkInterfaces"))
    missing = [
        label
        for label, value in (
            ("VCpuInfo.DefaultVCpus", vcpu),
            ("MemoryInfo.SizeInMiB", memory),
            ("NetworkInfo.MaximumNetworkInterfaces", enis),
            ("NetworkInfo.Ipv4AddressesPerInterface", ips),
        )
        if value is None
    ]
    if missing or vcpu is None or memory is None or enis is None or ips is None:
        raise InputError.at(origin, f"{name}: missing or non-integer {', '.join(missing)}")
    return vcpu, memory, allocatable.eni_limited_pods(enis, ips), ips


def _label_values(info: Mapping[str, Any], name: str, vcpu: int, memory: int) -> dict[str, object | None]:
    """The values of the `karpenter.k8s.aws/instance-*` labels that every type has (category, family, size,
    CPU, memory, bandwidths, hypervisor, local NVMe); the devices' labels are `_devices`'."""
    family, size = name.split(".", 1)
    match = _CATEGORY_GENERATION.match(name)
    manufacturer = str(_get(info, "ProcessorInfo", "Manufacturer") or "")
    values: dict[str, object | None] = {
        "instance-category": match.group(1) if match else None,
        "instance-generation": match.group(3) if match else None,
        "instance-family": family,
        "instance-size": size,
        "instance-cpu": vcpu,
        "instance-cpu-manufacturer": _CPU_MANUFACTURER.get(manufacturer.lower(), lower_kabob(manufacturer)),
        "instance-memory": memory,
        "instance-ebs-bandwidth": _int(_get(info, "EbsInfo", "EbsOptimizedInfo", "MaximumBandwidthInMbps")),
        "instance-network-bandwidth": _network_mbps(name, _get(info, "NetworkInfo", "NetworkCards") or []),
        "instance-hypervisor": info.get("Hypervisor") or None,
    }
    storage = info.get("InstanceStorageInfo")
    if isinstance(storage, Mapping) and storage.get("NvmeSupport") != "unsupported":
        values["instance-local-nvme"] = _int(storage.get("TotalSizeInGB"))
    return values


def _devices(info: Mapping[str, Any], name: str, values: dict[str, object | None]) -> dict[str, int]:
    """The type's extended resources (GPUs, Neuron devices and cores, EFA, branch ENIs), with the GPU and
    accelerator labels added to `values` where the type has one kind of each."""
    extended: dict[str, int] = {}
    gpus = _get(info, "GpuInfo", "Gpus") or []
    for gpu in gpus:
        maker = lower_kabob(str(gpu.get("Manufacturer", "")))
        count = _int(gpu.get("Count")) or 0
        resource = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu", "habana": "habana.ai/gaudi"}.get(maker)
        if resource and count:
            extended[resource] = extended.get(resource, 0) + count
    if len(gpus) == 1:
        gpu = gpus[0]
        values["instance-gpu-name"] = lower_kabob(str(gpu.get("Name", ""))) or None
        values["instance-gpu-manufacturer"] = lower_kabob(str(gpu.get("Manufacturer", ""))) or None
        values["instance-gpu-count"] = _int(gpu.get("Count"))
        values["instance-gpu-memory"] = _int(_get(gpu, "MemoryInfo", "SizeInMiB"))
    accelerators = _get(info, "InferenceAcceleratorInfo", "Accelerators") or []
    if len(accelerators) == 1:
        acc = accelerators[0]
        values["instance-accelerator-name"] = lower_kabob(str(acc.get("Name", ""))) or None
        values["instance-accelerator-manufacturer"] = lower_kabob(str(acc.get("Manufacturer", ""))) or None
        values["instance-accelerator-count"] = _int(acc.get("Count"))
    devices = _get(info, "NeuronInfo", "NeuronDevices") or []
    if len(devices) == 1:
        device = devices[0]
        count = _int(device.get("Count")) or 0
        values["instance-accelerator-name"] = lower_kabob(str(device.get("Name", ""))) or None
        values["instance-accelerator-manufacturer"] = "aws"
        values["instance-accelerator-count"] = count
        if count:
            extended["aws.amazon.com/neuron"] = count
            cores = _int(_get(device, "CoreInfo", "Count")) or 0
            if cores:
                extended["aws.amazon.com/neuroncore"] = count * cores
    if _get(info, "NetworkInfo", "EfaSupported"):
        efa = _int(_get(info, "NetworkInfo", "EfaInfo", "MaximumEfaInterfaces"))
        if efa:
            extended["vpc.amazonaws.com/efa"] = efa
    # Branch ENIs (security groups for pods) come from the VPC resource controller's table, not EC2.
    pod_eni = _embedded_extended(name).get("vpc.amazonaws.com/pod-eni")
    if pod_eni:
        extended["vpc.amazonaws.com/pod-eni"] = pod_eni
    return extended


def _network_mbps(name: str, cards: Sequence[Any]) -> int | None:
    """Baseline bandwidth over all network cards (EC2's BaselineBandwidthInGbps), else the embedded figure."""
    total = 0.0
    for card in cards:
        baseline = card.get("BaselineBandwidthInGbps") if isinstance(card, Mapping) else None
        if isinstance(baseline, int | float) and not isinstance(baseline, bool):
            total += float(baseline)
    if total:
        return round(total * 1000)
    known = _embedded_types().get(name)
    value = known.labels.get("karpenter.k8s.aws/instance-network-bandwidth") if known else None
    return int(value) if value else None


@functools.cache
def _embedded_types() -> dict[str, InstanceType]:
    """The embedded catalog's types by name, for figures the EC2 API does not give."""
    data = embedded_data()
    return {
        base.name: InstanceType(base.name, base.labels, base.capacity, base.allocatable, (), base.shape)
        for base in data.types
    }


def _embedded_extended(name: str) -> dict[str, int]:
    known = _embedded_types().get(name)
    if known is None:
        return {}
    return {k: v for k, v in known.capacity.items() if k not in allocatable.CORE_RESOURCES}


# ------------------------------------------------------------------------------------------ assembling
@dataclass
class ImportInputs:
    """Everything read from the user's files (or from the AWS APIs), before it becomes a catalog."""

    types: dict[str, Ec2Type] = field(default_factory=dict)
    offerings: dict[str, set[str]] = field(default_factory=dict)  # type -> zones
    prices: list[PriceRow] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def add_instance_types(self, entries: Iterable[Any], origin: Origin) -> None:
        problems: list[InputProblem] = []
        for entry in entries:
            where = origin_of(origin, entry)
            if not isinstance(entry, Mapping):
                problems.append(InputProblem(where, "InstanceTypes entries must be objects"))
                continue
            try:
                converted = ec2_type(entry, where)
            except InputError as exc:
                problems.extend(exc.problems)
                continue
            if converted is None:
                self.skipped.append(str(entry.get("InstanceType")))
            else:
                self.types[converted.name] = converted
        if problems:
            raise InputError(problems)

    def add_offerings(self, entries: Iterable[Any], origin: Origin) -> None:
        for entry in entries:
            where = origin_of(origin, entry)
            if not isinstance(entry, Mapping) or not entry.get("InstanceType") or not entry.get("Location"):
                raise InputError.at(where, "InstanceTypeOfferings entries need InstanceType and Location")
            location_type = entry.get("LocationType", "availability-zone")
            if location_type != "availability-zone":
                raise InputError.at(
                    where,
                    f"offerings by {location_type} do not name zones; run describe-instance-type-offerings "
                    "with --location-type availability-zone",
                )
            self.offerings.setdefault(str(entry["InstanceType"]), set()).add(str(entry["Location"]))

    def add_spot_history(self, entries: Iterable[Any], origin: Origin) -> None:
        """Latest Linux/UNIX spot price per (type, zone) from DescribeSpotPriceHistory."""
        latest: dict[tuple[str, str], tuple[str, float]] = {}
        for entry in entries:
            where = origin_of(origin, entry)
            if not isinstance(entry, Mapping):
                raise InputError.at(where, "SpotPriceHistory entries must be objects")
            if entry.get("ProductDescription", "Linux/UNIX") not in ("Linux/UNIX", "Linux/UNIX (Amazon VPC)"):
                continue
            name, zone = entry.get("InstanceType"), entry.get("AvailabilityZone")
            if not name or not zone:
                raise InputError.at(where, "SpotPriceHistory entries need InstanceType and AvailabilityZone")
            price = parse_price(entry.get("SpotPrice"), where)
            stamp = str(entry.get("Timestamp", ""))
            key = (str(name), str(zone))
            if key not in latest or stamp > latest[key][0]:
                latest[key] = (stamp, price)
        for (name, zone), (_, price) in latest.items():
            self.prices.append(PriceRow(_region_of(zone), name, price, SPOT, zone, origin))


def _region_of(zone: str) -> str:
    """us-east-1a → us-east-1 (zone names are the region plus one letter)."""
    return zone[:-1] if zone and zone[-1].isalpha() else zone


def read_import_files(paths: Sequence[str]) -> ImportInputs:
    """Read every file, recognising its kind; all problems are reported together."""
    inputs = ImportInputs()
    problems: list[InputProblem] = []
    for path in paths:
        try:
            _read_one(path, inputs)
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return inputs


def _read_one(path: str, inputs: ImportInputs) -> None:
    if path.lower().endswith(".csv"):
        inputs.prices.extend(read_price_csv(path))
        inputs.sources.append(f"prices: {path}")
        return
    for doc in load_documents([path]):
        body = doc.body
        recognised = False
        if isinstance(body.get("InstanceTypes"), list):
            inputs.add_instance_types(body["InstanceTypes"], doc.origin)
            inputs.sources.append(f"describe-instance-types: {path}")
            recognised = True
        if isinstance(body.get("InstanceTypeOfferings"), list):
            inputs.add_offerings(body["InstanceTypeOfferings"], doc.origin)
            inputs.sources.append(f"describe-instance-type-offerings: {path}")
            recognised = True
        if is_pricing_document(body):
            inputs.prices.extend(pricing_products(body, doc.origin))
            inputs.sources.append(f"pricing get-products: {path}")
            recognised = True
        if isinstance(body.get("SpotPriceHistory"), list):
            inputs.add_spot_history(body["SpotPriceHistory"], doc.origin)
            inputs.sources.append(f"describe-spot-price-history: {path}")
            recognised = True
        if not recognised:
            raise InputError.at(
                doc.origin,
                "not a recognised AWS output: expected InstanceTypes, InstanceTypeOfferings, PriceList or "
                "SpotPriceHistory (or a .csv price list)",
            )


def read_spot_price_file(path: str) -> list[PriceRow]:
    """`--spot-prices FILE`: `aws ec2 describe-spot-price-history` output (JSON or YAML, the latest Linux/UNIX
    price per type and zone) or a price CSV whose rows default to spot. Raises InputError (file:line)."""
    if path.lower().endswith(".csv"):
        return read_price_csv(path, default_capacity_type=SPOT)
    inputs = ImportInputs()
    for doc in load_documents([path]):
        history = doc.body.get("SpotPriceHistory")
        if not isinstance(history, list):
            raise InputError.at(doc.origin, "not a spot price list: expected the JSON of `aws ec2 "
                                "describe-spot-price-history` (SpotPriceHistory) or a .csv price list")
        inputs.add_spot_history(history, doc.origin)
    return inputs.prices


def build_catalog(
    inputs: ImportInputs,
    *,
    region: str | None = None,
    name: str | None = None,
    spot_factor: float = DEFAULT_SPOT_FACTOR,
) -> tuple[Catalog, list[str]]:
    """The InstanceCatalog for one region, and notes about what was left out or estimated.

    - zones: from the offerings; without an offerings file, the embedded catalog's zones for the region.
    - on-demand price: the supplied price list; else the embedded price for the region.
      A type with neither is left out (noted).
    - spot: supplied spot prices per zone; else `spot_factor` × on-demand, marked estimated, for types
      whose SupportedUsageClasses include spot.
    """
    if not inputs.types:
        raise InputError.at(Origin("catalog import"), "no describe-instance-types output among the inputs")
    region, zones = _region_and_zones(inputs, region)
    on_demand, spot = listed_prices(inputs.prices, region)
    embedded_prices = embedded_data().prices.get(region, {})
    unpriced: list[str] = []
    from_embedded = 0
    types: list[InstanceType] = []
    for it in sorted(inputs.types.values(), key=lambda t: t.name):
        type_zones = [z for z in zones if not inputs.offerings or z in inputs.offerings.get(it.name, set())]
        if not type_zones:
            continue
        price = on_demand.get(it.name)
        if price is None and it.name in embedded_prices:
            price = embedded_prices[it.name][0]
            from_embedded += 1
        offerings = _offerings(it, type_zones, price, spot.get(it.name), spot_factor)
        if not offerings:
            unpriced.append(it.name)
            continue
        node = allocatable.compute(it.shape, None, None, it.extended)
        types.append(
            InstanceType(
                name=it.name,
                labels=dict(sorted(it.labels.items())),
                capacity=node.capacity,
                allocatable=node.allocatable,
                offerings=tuple(offerings),
                shape=it.shape,
                absent_label_keys=it.absent,
            )
        )
    notes = _import_notes(inputs, region, from_embedded, unpriced, bool(spot), spot_factor)
    catalog = Catalog(
        name=name or f"aws-{region}-import",
        region=region,
        zones=zones,
        instance_types=tuple(types),
        sources={f"input {i + 1}": s for i, s in enumerate(inputs.sources)},
        estimated_prices=any(o.estimated for it in types for o in it.offerings),
        embedded=False,
    )
    return catalog, notes


def _region_and_zones(inputs: ImportInputs, region: str | None) -> tuple[str, tuple[str, ...]]:
    """The catalog's region (`--region`, else the offerings' zones') and its zones: the offerings', else
    the embedded catalog's for the region. InputError when neither is known."""
    region = region or _guess_region(inputs)
    if region is None:
        raise InputError.at(
            Origin("catalog import"),
            "cannot tell the region: give --region or offerings by availability zone",
        )
    data = embedded_data()
    region_zones = {z for zones in inputs.offerings.values() for z in zones if _region_of(z) == region}
    if not inputs.offerings:
        if region not in data.regions:
            raise InputError.at(
                Origin("catalog import"),
                f"no describe-instance-type-offerings output and no zones known for {region}",
            )
        region_zones = set(data.regions[region])
    return region, tuple(sorted(region_zones))


def _offerings(it: Ec2Type, zones: Sequence[str], price: float | None, listed_spot: ZonePrices | None,
               spot_factor: float) -> list[Offering]:
    """A type's offerings in its zones, each only where its usage classes allow: on-demand at `price`, spot
    as `spot_offerings` prices it."""
    offerings: list[Offering] = []
    if price is not None and ON_DEMAND in it.usage_classes:
        offerings.extend(Offering(z, ON_DEMAND, price) for z in zones)
    if SPOT in it.usage_classes:
        offerings.extend(spot_offerings(zones, listed_spot, price, spot_factor))
    return offerings


def _import_notes(inputs: ImportInputs, region: str, from_embedded: int, unpriced: Sequence[str], real_spot: bool,
                  spot_factor: float) -> list[str]:
    """What the import left out or estimated, in plain words."""
    notes: list[str] = []
    if from_embedded:
        notes.append(f"{from_embedded} on-demand prices taken from the embedded catalog ({region})")
    if unpriced:
        shown = ", ".join(unpriced[:10]) + (f" and {len(unpriced) - 10} more" if len(unpriced) > 10 else "")
        notes.append(f"{len(unpriced)} types left out: no price in {region} ({shown})")
    if inputs.skipped:
        notes.append(f"{len(inputs.skipped)} types skipped: no amd64/arm64 architecture")
    if not real_spot:
        notes.append(f"spot prices estimated at {spot_factor:g} × on-demand (marked estimated)")
    return notes


def _guess_region(inputs: ImportInputs) -> str | None:
    regions = {_region_of(z) for zones in inputs.offerings.values() for z in zones}
    if not regions:
        regions = {row.region for row in inputs.prices}
    return regions.pop() if len(regions) == 1 else None
