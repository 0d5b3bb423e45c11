"""`karpplan catalog refresh`: the AWS calls, answered by botocore's Stubber (never the network)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from karpplan.catalog.embedded import embedded_catalog
from karpplan.catalog.refresh import refresh_catalog
from karpplan.catalog.types import ON_DEMAND, SPOT
from karpplan.errors import InputError

boto3 = pytest.importorskip("boto3")
stub = pytest.importorskip("botocore.stub")

DATA = Path(__file__).parent / "data" / "catalog"
NOW = datetime.datetime(2026, 8, 21, 12, 0, tzinfo=datetime.UTC)
FILTERS = [
    {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"},
    {"Type": "TERM_MATCH", "Field": "operatingSystem", "Value": "Linux"},
    {"Type": "TERM_MATCH", "Field": "tenancy", "Value": "Shared"},
    {"Type": "TERM_MATCH", "Field": "preInstalledSw", "Value": "NA"},
    {"Type": "TERM_MATCH", "Field": "capacitystatus", "Value": "Used"},
]


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def _clients() -> tuple[Any, Any]:
    credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    ec2 = boto3.client("ec2", region_name="us-east-1", **credentials)
    pricing = boto3.client("pricing", region_name="us-east-1", **credentials)
    return ec2, pricing


def _spot_history() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = _load("describe-spot-price-history.json")["SpotPriceHistory"]
    for entry in entries:
        entry["Timestamp"] = datetime.datetime.fromisoformat(entry["Timestamp"])
    return entries


def test_refresh_builds_the_catalog_from_the_apis() -> None:
    ec2, pricing = _clients()
    types = _load("describe-instance-types.json")["InstanceTypes"]
    with stub.Stubber(ec2) as ec2_stub, stub.Stubber(pricing) as pricing_stub:
        # Two pages of instance types, to follow NextToken.
        ec2_stub.add_response("describe_instance_types", {"InstanceTypes": types[:3], "NextToken": "page-2"}, {})
        ec2_stub.add_response("describe_instance_types", {"InstanceTypes": types[3:]}, {"NextToken": "page-2"})
        ec2_stub.add_response(
            "describe_instance_type_offerings",
            _load("describe-instance-type-offerings.json"),
            {"LocationType": "availability-zone"},
        )
        ec2_stub.add_response(
            "describe_spot_price_history",
            {"SpotPriceHistory": _spot_history()},
            {"ProductDescriptions": ["Linux/UNIX"], "StartTime": NOW},
        )
        pricing_stub.add_response(
            "get_products",
            {"PriceList": _load("pricing-get-products.json")["PriceList"], "FormatVersion": "aws_v1"},
            {"ServiceCode": "AmazonEC2", "Filters": FILTERS, "FormatVersion": "aws_v1"},
        )
        catalog, notes = refresh_catalog("us-east-1", ec2=ec2, pricing=pricing, now=NOW)
        ec2_stub.assert_no_pending_responses()
        pricing_stub.assert_no_pending_responses()

    assert catalog.region == "us-east-1"
    assert catalog.sources["refreshed"] == "2026-08-21T12:00:00Z"
    types_by_name = catalog.by_name()
    reference = embedded_catalog("us-east-1").by_name()
    for name in ("m5.large", "m7g.large", "g4dn.xlarge", "inf2.xlarge", "m5.metal"):
        assert types_by_name[name].allocatable == reference[name].allocatable
    inf2 = types_by_name["inf2.xlarge"]
    assert {o.price for o in inf2.offerings if o.capacity_type == ON_DEMAND} == {0.7582}
    m5_spot = {o.zone: o.price for o in types_by_name["m5.large"].offerings if o.capacity_type == SPOT}
    assert m5_spot == {"us-east-1a": 0.0342, "us-east-1b": 0.0361}
    # m5.large has no on-demand price from the Pricing answer: the embedded price fills in (noted).
    assert {o.price for o in types_by_name["m5.large"].offerings if o.capacity_type == ON_DEMAND} == {0.096}
    assert any("embedded catalog" in note for note in notes)


def test_aws_errors_become_input_errors() -> None:
    ec2, pricing = _clients()
    with stub.Stubber(ec2) as ec2_stub:
        ec2_stub.add_client_error(
            "describe_instance_types", service_error_code="UnauthorizedOperation", service_message="denied"
        )
        with pytest.raises(InputError) as info:
            refresh_catalog("us-east-1", ec2=ec2, pricing=pricing, now=NOW)
    message = str(info.value.problems[0])
    assert message.startswith("aws DescribeInstanceTypes: ClientError")
    assert "UnauthorizedOperation" in message
