#!/usr/bin/env python3
"""Build karpplan's embedded AWS catalog from the public figures in ../shared/data.

    python scripts/build_catalog.py [--data DIR] [--out FILE] [--check]

Reads `ec2-instance-types.csv` and `ec2-prices-ondemand.csv` and writes
`karpplan/catalog/data/aws-catalog.json.gz`: one compact row per instance type (the EC2 facts
allocatable is computed from, and the values of the labels a node carries), on-demand prices per region
with their source, the median regional price ratio used for estimates, and the dates of every source.
The output is deterministic (sorted keys, gzip mtime 0) so a rebuild without new data changes nothing;
`--check` exits 1 when the checked-in file differs from what the data would produce.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"
DEFAULT_OUT = ROOT / "karpplan" / "catalog" / "data" / "aws-catalog.json.gz"
FORMAT_VERSION = 1

# The regions karpplan ships and their availability zones: every commercial region the price data
# covers (GovCloud is another partition with its own accounts; it is not embedded). The data has no
# per-zone availability, so every priced type is offered in every zone listed here. Zone names are the
# usual ones for new accounts (AWS maps names to zone ids per account): us-west-1 has two zones,
# ap-northeast-1 offers a/c/d and ca-central-1 a/b/d.
def _zones(region: str, letters: str) -> list[str]:
    return [f"{region}{letter}" for letter in letters]


REGIONS: dict[str, list[str]] = {
    "af-south-1": _zones("af-south-1", "abc"),
    "ap-east-1": _zones("ap-east-1", "abc"),
    "ap-northeast-1": _zones("ap-northeast-1", "acd"),
    "ap-northeast-2": _zones("ap-northeast-2", "abcd"),
    "ap-northeast-3": _zones("ap-northeast-3", "abc"),
    "ap-south-1": _zones("ap-south-1", "abc"),
    "ap-southeast-1": _zones("ap-southeast-1", "abc"),
    "ap-southeast-2": _zones("ap-southeast-2", "abc"),
    "ca-central-1": _zones("ca-central-1", "abd"),
    "eu-central-1": _zones("eu-central-1", "abc"),
    "eu-north-1": _zones("eu-north-1", "abc"),
    "eu-south-1": _zones("eu-south-1", "abc"),
    "eu-west-1": _zones("eu-west-1", "abc"),
    "eu-west-2": _zones("eu-west-2", "abc"),
    "eu-west-3": _zones("eu-west-3", "abc"),
    "me-south-1": _zones("me-south-1", "abc"),
    "sa-east-1": _zones("sa-east-1", "abc"),
    "us-east-1": _zones("us-east-1", "abcdef"),
    "us-east-2": _zones("us-east-2", "abc"),
    "us-west-1": _zones("us-west-1", "ac"),
    "us-west-2": _zones("us-west-2", "abcd"),
}
BASE_REGION = "us-east-1"
# The price source of a type the region's price list lacks while other sizes of its family are listed there:
# priced as its us-east-1 price × the median (region / us-east-1) ratio of those listed sizes, since AWS prices
# are linear within a family and region (shared/data/README.md, "Known gaps" 1). Offered as estimated prices.
DERIVED = "family-derived"

# Source provenance, transcribed from shared/data/README.md (the CSVs carry only the price dates).
SOURCES: dict[str, str] = {
    "instance types": "aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md "
    "@ 692ccdd0629e (2026-07-11, Karpenter v1.14.0; read at 1d927085dd81, 2026-08-21)",
    "max pods (ENI)": "awslabs/amazon-eks-ami eni-max-pods.txt @ 2377b69aaeb8 (2026-02-27) and "
    "nodeadm instance-info.jsonl @ 4d63a3bc2d86 (2026-07-01)",
    "allocatable formula": "aws/karpenter-provider-aws pkg/providers/instancetype/types.go @ 7695b3c4 (2026-08-20)",
}
PRICE_SOURCE_NAMES: dict[str, str] = {
    "karpenter": "aws/karpenter-provider-aws zz_generated.pricing_aws.go",
    "cortex": "cortexlabs/cortex resource_metadata.go (AWS Pricing API)",
    "skypilot-catalog": "skypilot-org/skypilot-catalog catalogs/v7/aws/vms.csv",
    DERIVED: "priced as their us-east-1 price × their family's price ratio in the region (AWS prices are linear "
    "within a family and region, shared/data/README.md)",
}

# NeuronCores per Neuron device (EC2 NeuronInfo CoreInfo.Count), for aws.amazon.com/neuroncore.
NEURON_CORES_PER_DEVICE = {"inferentia": 4, "inferentia2": 2, "trainium": 2, "trainium2": 8}
ACCELERATOR_MANUFACTURER = {"qualcomm-ai100": "qualcomm"}  # Neuron devices are made by "aws"

# Row layout of the data file (a list per type keeps the file small; the loader zips it with COLUMNS).
COLUMNS = [
    "name", "family", "category", "generation", "size", "vcpu", "memory_mib", "arch", "eni_pods",
    "hypervisor", "cpu_manufacturer", "network_mbps", "ebs_bandwidth_mbps", "local_nvme_gb",
    "gpu_name", "gpu_manufacturer", "gpu_count", "gpu_memory_mib",
    "accelerator_name", "accelerator_manufacturer", "accelerator_count", "extended", "ipv4_per_eni",
]  # fmt: skip


def _int(text: str) -> int | None:
    return int(text) if text.strip() else None


def instance_row(r: dict[str, str]) -> list[Any]:
    extended: dict[str, int] = {}
    gpu_count = _int(r["gpu_count"]) or 0
    if r["gpu_manufacturer"] == "nvidia" and gpu_count:
        extended["nvidia.com/gpu"] = gpu_count
    if r["gpu_manufacturer"] == "amd" and gpu_count:
        extended["amd.com/gpu"] = gpu_count
    accel = r["accelerator_name"]
    accel_count = _int(r["accelerator_count"]) or 0
    if accel in NEURON_CORES_PER_DEVICE and accel_count:
        extended["aws.amazon.com/neuron"] = accel_count
        extended["aws.amazon.com/neuroncore"] = accel_count * NEURON_CORES_PER_DEVICE[accel]
    if _int(r["pod_eni"]):
        extended["vpc.amazonaws.com/pod-eni"] = int(r["pod_eni"])
    if _int(r["efa"]):
        extended["vpc.amazonaws.com/efa"] = int(r["efa"])
    accel_manufacturer = (ACCELERATOR_MANUFACTURER.get(accel, "aws")) if accel else ""
    return [
        r["name"], r["family"], r["category"], int(r["generation"]), r["size"], int(r["vcpu"]),
        int(r["memory_mib"]), r["arch"], int(r["max_pods_eni"]),
        r["hypervisor"], r["cpu_manufacturer"], _int(r["network_mbps"]), _int(r["ebs_bandwidth_mbps"]),
        _int(r["local_nvme_gb"]),
        r["gpu_name"], r["gpu_manufacturer"], _int(r["gpu_count"]), _int(r["gpu_memory_mib"]),
        accel, accel_manufacturer, _int(r["accelerator_count"]), extended, _int(r["ipv4_per_eni"]) or 0,
    ]  # fmt: skip


def derive_family_prices(type_rows: list[dict[str, str]], prices: dict[str, dict[str, list[Any]]],
                         price_sources: dict[str, dict[str, str]]) -> None:
    """Price, in each region, the types its list lacks whose family has listed sizes there (see `DERIVED`).

    The family's ratio is the median over its listed sizes other than `.metal` ones (metal prices were revised
    after 2022 and their older regional figures dropped); its date is the oldest date of those listed prices.
    """
    family_of = {r["name"]: r["family"] for r in type_rows}
    source_keys = sorted(PRICE_SOURCE_NAMES)
    base = prices[BASE_REGION]
    for region, by_name in prices.items():
        if region == BASE_REGION:
            continue
        ratios: dict[str, list[float]] = {}
        for name, (price, _) in by_name.items():
            if name in base and base[name][0] > 0 and "metal" not in name:
                ratios.setdefault(family_of[name], []).append(price / base[name][0])
        derived: dict[str, list[Any]] = {}
        for name in sorted(base):
            family = family_of[name]
            if name in by_name or family not in ratios:
                continue
            ratio = statistics.median(ratios[family])
            derived[name] = [round(base[name][0] * ratio, 6), source_keys.index(DERIVED)]
        if derived:
            by_name.update(derived)
            dates = [d for key, d in price_sources[region].items() if key != DERIVED and d[:1].isdigit()]
            price_sources[region][DERIVED] = min(dates, default="?")


def build(data_dir: Path) -> dict[str, Any]:
    with open(data_dir / "ec2-instance-types.csv", newline="") as fh:
        type_rows = list(csv.DictReader(fh))
    with open(data_dir / "ec2-prices-ondemand.csv", newline="") as fh:
        price_rows = list(csv.DictReader(fh))

    names = {r["name"] for r in type_rows}
    types = [instance_row(r) for r in sorted(type_rows, key=lambda r: r["name"])]

    price_sources: dict[str, dict[str, str]] = {region: {} for region in REGIONS}
    prices: dict[str, dict[str, list[Any]]] = {region: {} for region in REGIONS}
    for p in price_rows:
        region, name = p["region"], p["instance_type"]
        if region not in REGIONS or name not in names:
            continue  # retired/special types the instance list does not carry
        source_index = sorted(PRICE_SOURCE_NAMES).index(p["source"])
        prices[region][name] = [float(p["usd_per_hour"]), source_index]
        price_sources[region][p["source"]] = p["as_of"]

    derive_family_prices(type_rows, prices, price_sources)

    derived_index = sorted(PRICE_SOURCE_NAMES).index(DERIVED)
    # Median of (region price / us-east-1 price) over types priced in both: the estimate's scale factor.
    median_ratio: dict[str, float] = {}
    for region in REGIONS:
        ratios = [
            price / prices[BASE_REGION][name][0]
            for name, (price, source) in prices[region].items()
            if name in prices[BASE_REGION] and prices[BASE_REGION][name][0] > 0 and source != derived_index
        ]
        median_ratio[region] = round(statistics.median(ratios), 6) if ratios else 1.0

    return {
        "format": FORMAT_VERSION,
        "generated_by": "scripts/build_catalog.py",
        "sources": SOURCES,
        "price_source_names": [PRICE_SOURCE_NAMES[k] for k in sorted(PRICE_SOURCE_NAMES)],
        "price_source_keys": sorted(PRICE_SOURCE_NAMES),
        "price_sources": price_sources,
        "regions": REGIONS,
        "base_region": BASE_REGION,
        "median_ratio": median_ratio,
        "columns": COLUMNS,
        "types": types,
        "prices": {region: dict(sorted(by_name.items())) for region, by_name in prices.items()},
    }


def encode(document: dict[str, Any]) -> bytes:
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared/data directory")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output .json.gz")
    parser.add_argument("--check", action="store_true", help="fail if --out is not up to date")
    args = parser.parse_args(argv)
    payload = encode(build(args.data))
    if args.check:
        current = args.out.read_bytes() if args.out.exists() else b""
        if current != payload:
            print(f"{args.out} is out of date; run scripts/build_catalog.py", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(payload)
    print(f"wrote {args.out} ({len(payload):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
