"""`karpplan catalog refresh --region R`: build an InstanceCatalog from the live AWS APIs (boto3).

Optional (`pip install karpplan[aws]`), never implicit: it runs only when the user asks, with the user's
own credentials and boto3's usual configuration. It calls
- EC2 DescribeInstanceTypes and DescribeInstanceTypeOfferings (location type availability-zone),
- EC2 DescribeSpotPriceHistory (Linux/UNIX, latest price per type and zone),
- the Pricing API GetProducts (AmazonEC2, Linux, shared tenancy, no pre-installed software, Used),
and converts the answers with the same code as `catalog import`.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable
from typing import Any

from karpplan.catalog.aws_import import ImportInputs, build_catalog
from karpplan.catalog.prices import pricing_products
from karpplan.catalog.types import Catalog
from karpplan.errors import InputError, Origin

# The Pricing API is served from a few regions only; us-east-1 answers for every region.
PRICING_REGION = "us-east-1"
_ORIGIN = Origin("aws")


def _session(profile: str | None) -> Any:
    try:
        import boto3  # lazy: an optional extra (karpplan[aws]), needed by `catalog refresh` only
    except ImportError as exc:  # the optional extra is not installed
        raise InputError.at(
            Origin("catalog refresh"), "boto3 is not installed; install it with: pip install 'karpplan[aws]'"
        ) from exc
    return boto3.Session(profile_name=profile) if profile else boto3.Session()


def _pages(call: Any, key: str, **params: Any) -> list[Any]:
    """Every item under `key` across NextToken pages."""
    items: list[Any] = []
    token: str | None = None
    while True:
        response = call(**params, **({"NextToken": token} if token else {}))
        items.extend(response.get(key) or [])
        token = response.get("NextToken")
        if not token:
            return items


def refresh_catalog(
    region: str,
    *,
    ec2: Any = None,
    pricing: Any = None,
    profile: str | None = None,
    now: datetime.datetime | None = None,
) -> tuple[Catalog, list[str]]:
    """Query AWS for `region` and build the catalog. Clients may be injected (tests use botocore's Stubber).

    AWS errors (no credentials, access denied, throttling) become an InputError naming the failed call.
    """
    if ec2 is None or pricing is None:
        session = _session(profile)
        ec2 = ec2 or session.client("ec2", region_name=region)
        pricing = pricing or session.client("pricing", region_name=PRICING_REGION)
    now = now or datetime.datetime.now(datetime.UTC)
    inputs = _query(ec2, pricing, region, now)
    inputs.sources.extend(
        [
            f"EC2 DescribeInstanceTypes/DescribeInstanceTypeOfferings/DescribeSpotPriceHistory in {region}",
            "Pricing GetProducts (AmazonEC2)",
        ]
    )
    catalog, notes = build_catalog(inputs, region=region, name=f"aws-{region}")
    sources = {**catalog.sources, "refreshed": now.strftime("%Y-%m-%dT%H:%M:%SZ")}
    return dataclasses.replace(catalog, sources=sources, embedded=False), notes


def _query(ec2: Any, pricing: Any, region: str, now: datetime.datetime) -> ImportInputs:
    """What `catalog import` reads from files, asked of EC2 and the Pricing API: instance types, their
    offerings by zone, spot price history and Linux on-demand prices. An AWS error (no credentials, access
    denied, throttling) becomes an InputError naming the call that failed."""
    inputs = ImportInputs()
    filters = [
        {"Type": "TERM_MATCH", "Field": field, "Value": value}
        for field, value in (
            ("regionCode", region),
            ("operatingSystem", "Linux"),
            ("tenancy", "Shared"),
            ("preInstalledSw", "NA"),
            ("capacitystatus", "Used"),
        )
    ]
    calls: tuple[tuple[str, Callable[[], None]], ...] = (
        ("DescribeInstanceTypes", lambda: inputs.add_instance_types(
            _pages(ec2.describe_instance_types, "InstanceTypes"), _ORIGIN)),
        ("DescribeInstanceTypeOfferings", lambda: inputs.add_offerings(
            _pages(ec2.describe_instance_type_offerings, "InstanceTypeOfferings", LocationType="availability-zone"),
            _ORIGIN)),
        ("DescribeSpotPriceHistory", lambda: inputs.add_spot_history(
            _pages(ec2.describe_spot_price_history, "SpotPriceHistory", ProductDescriptions=["Linux/UNIX"],
                   StartTime=now), _ORIGIN)),
        ("GetProducts", lambda: inputs.prices.extend(pricing_products({"PriceList": _pages(
            pricing.get_products, "PriceList", ServiceCode="AmazonEC2", Filters=filters, FormatVersion="aws_v1",
        )}, _ORIGIN))),
    )
    for step, call in calls:
        try:
            call()
        except InputError:
            raise
        except Exception as exc:  # botocore ClientError, NoCredentialsError, EndpointConnectionError, ...
            raise InputError.at(Origin(f"aws {step}"), f"{type(exc).__name__}: {exc}") from exc
    return inputs
