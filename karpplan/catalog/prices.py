"""Price lists the user supplies: a simple CSV, or `aws pricing get-products` output.

CSV columns (header required, any order, extra columns ignored):

    region,instance_type,usd_per_hour[,capacity_type][,zone]

`capacity_type` is `on-demand` or `spot` (default: whatever the caller says the file holds);
`zone` narrows a row to one availability zone (default: every zone of the region).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from karpplan.catalog.types import ON_DEMAND, RESERVED, SPOT, Offering
from karpplan.errors import InputError, InputProblem, Origin

CAPACITY_TYPES = (ON_DEMAND, SPOT, RESERVED)
_REQUIRED = ("region", "instance_type", "usd_per_hour")


@dataclass(frozen=True)
class PriceRow:
    region: str
    instance_type: str
    price: float
    capacity_type: str = ON_DEMAND
    zone: str | None = None
    origin: Origin = field(default=Origin("<prices>"), compare=False)


def parse_price(raw: object, origin: Origin) -> float:
    """A non-negative, finite USD/hour figure."""
    try:
        value = float(str(raw).strip()) if not isinstance(raw, bool) else math.nan
    except ValueError:
        value = math.nan
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise InputError.at(origin, f"price must be a non-negative number, got {raw!r}")
    return value


def read_price_csv(
    path: str, *, default_capacity_type: str = ON_DEMAND, text: str | None = None
) -> list[PriceRow]:
    """Read a price CSV; every malformed row is reported with its line."""
    if text is None:
        try:
            with open(path, newline="", encoding="utf-8-sig") as fh:
                text = fh.read()
        except OSError as exc:
            raise InputError.at(Origin(path), f"cannot read price list: {exc.strerror or exc}") from exc
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise InputError.at(
            Origin(path, 1), f"price CSV needs columns {', '.join(_REQUIRED)}; missing {', '.join(missing)}"
        )
    rows: list[PriceRow] = []
    problems: list[InputProblem] = []
    for record in reader:
        origin = Origin(path, reader.line_num)
        if not any((v or "").strip() for v in record.values() if isinstance(v, str)):
            continue  # blank line
        try:
            rows.append(_row(record, origin, default_capacity_type))
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return rows


def _row(record: Mapping[str, str | None], origin: Origin, default_capacity_type: str) -> PriceRow:
    region = (record.get("region") or "").strip()
    name = (record.get("instance_type") or "").strip()
    if not region or not name:
        raise InputError.at(origin, "region and instance_type must not be empty")
    capacity_type = (record.get("capacity_type") or "").strip() or default_capacity_type
    if capacity_type not in CAPACITY_TYPES:
        raise InputError.at(
            origin, f"capacity_type must be one of {', '.join(CAPACITY_TYPES)}, got {capacity_type!r}"
        )
    zone = (record.get("zone") or "").strip() or None
    return PriceRow(
        region, name, parse_price(record.get("usd_per_hour"), origin), capacity_type, zone, origin
    )


# ------------------------------------------------------------------------------ aws pricing get-products
_REGION_BY_LOCATION = {
    "US East (N. Virginia)": "us-east-1",
    "US East (Ohio)": "us-east-2",
    "US West (N. California)": "us-west-1",
    "US West (Oregon)": "us-west-2",
    "EU (Ireland)": "eu-west-1",
    "Europe (Ireland)": "eu-west-1",
    "EU (Frankfurt)": "eu-central-1",
    "Europe (Frankfurt)": "eu-central-1",
    "EU (London)": "eu-west-2",
    "Asia Pacific (Seoul)": "ap-northeast-2",
    "Asia Pacific (Tokyo)": "ap-northeast-1",
    "Asia Pacific (Singapore)": "ap-southeast-1",
    "Asia Pacific (Sydney)": "ap-southeast-2",
    "Asia Pacific (Mumbai)": "ap-south-1",
    "Canada (Central)": "ca-central-1",
    "South America (Sao Paulo)": "sa-east-1",
}


def is_pricing_document(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(doc.get("PriceList"), list)


def pricing_products(doc: Mapping[str, Any], origin: Origin) -> list[PriceRow]:
    """On-demand Linux shared-tenancy prices from `aws pricing get-products --service-code AmazonEC2`.

    Each `PriceList` entry is a JSON string (or, from boto3 users, already an object) with
    `product.attributes` and `terms.OnDemand.*.priceDimensions.*.pricePerUnit.USD`. Entries that are not
    Linux/Shared/no-preinstalled-software/Used compute instances are skipped, as Karpenter's pricing
    provider filters them in its query.
    """
    rows: list[PriceRow] = []
    for index, entry in enumerate(doc.get("PriceList") or []):
        where = Origin(origin.file, origin.line)
        try:
            product = json.loads(entry) if isinstance(entry, str) else entry
        except json.JSONDecodeError as exc:
            raise InputError.at(where, f"PriceList[{index}] is not JSON: {exc.msg}") from exc
        if not isinstance(product, Mapping):
            raise InputError.at(where, f"PriceList[{index}] is not an object")
        row = _product_row(product, where)
        if row is not None:
            rows.append(row)
    return rows


def _product_row(product: Mapping[str, Any], origin: Origin) -> PriceRow | None:
    attrs = (product.get("product") or {}).get("attributes") or {}
    if not isinstance(attrs, Mapping):
        return None
    name = attrs.get("instanceType")
    if not name:
        return None
    wanted = {
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
    }
    for key, value in wanted.items():
        if key in attrs and attrs[key] != value:
            return None
    region = attrs.get("regionCode") or _REGION_BY_LOCATION.get(str(attrs.get("location", "")))
    if not region:
        return None
    price = _on_demand_usd(product.get("terms") or {})
    if price is None:
        return None
    return PriceRow(str(region), str(name), parse_price(price, origin), ON_DEMAND, None, origin)


def _on_demand_usd(terms: Mapping[str, Any]) -> str | None:
    for term in (terms.get("OnDemand") or {}).values():
        for dimension in (term.get("priceDimensions") or {}).values():
            usd = (dimension.get("pricePerUnit") or {}).get("USD")
            if usd is not None and dimension.get("unit", "Hrs") in ("Hrs", "Hours", "hours"):
                return str(usd)
    return None


def index_prices(rows: Iterable[PriceRow]) -> dict[tuple[str, str], list[PriceRow]]:
    """Rows by (region, instance type), later rows first so they override earlier ones."""
    out: dict[tuple[str, str], list[PriceRow]] = {}
    for row in rows:
        out.setdefault((row.region, row.instance_type), []).insert(0, row)
    return out


ZonePrices = Mapping[str | None, float]  # a type's prices by zone; None: every zone of the region


def listed_prices(rows: Iterable[PriceRow], region: str) -> tuple[dict[str, float], dict[str, dict[str | None, float]]]:
    """A price list's figures for one region: on-demand by type (a later row wins), spot by type and zone."""
    on_demand: dict[str, float] = {}
    spot: dict[str, dict[str | None, float]] = {}
    for row in rows:
        if row.region != region:
            continue
        if row.capacity_type == ON_DEMAND:
            on_demand[row.instance_type] = row.price
        elif row.capacity_type == SPOT:
            spot.setdefault(row.instance_type, {})[row.zone] = row.price
    return on_demand, spot


def zone_price(prices: ZonePrices, zone: str) -> float | None:
    """The price of `zone`, else the price for every zone, else None."""
    return prices.get(zone, prices.get(None))


def spot_offerings(zones: Iterable[str], listed: ZonePrices | None, on_demand: float | None,
                   spot_factor: float) -> list[Offering]:
    """A type's spot offerings: the listed prices where the price list names the type (in the zones it
    prices), else `spot_factor` x on-demand in every zone, marked estimated (none without either)."""
    if listed is not None:
        return [Offering(z, SPOT, price, False) for z in zones if (price := zone_price(listed, z)) is not None]
    if on_demand is None:
        return []
    return [Offering(z, SPOT, round(on_demand * spot_factor, 6), True) for z in zones]

