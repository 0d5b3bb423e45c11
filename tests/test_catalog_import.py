"""`karpplan catalog import`: AWS CLI outputs and price lists into an InstanceCatalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpplan.catalog import load_catalog
from karpplan.catalog.aws_import import build_catalog, read_import_files
from karpplan.catalog.embedded import embedded_catalog
from karpplan.catalog.prices import read_price_csv
from karpplan.catalog.types import ON_DEMAND, SPOT, InstanceType
from karpplan.errors import InputError

DATA = Path(__file__).parent / "data" / "catalog"
TYPES = str(DATA / "describe-instance-types.json")
OFFERINGS = str(DATA / "describe-instance-type-offerings.json")
PRICES = str(DATA / "prices.csv")
PRICING = str(DATA / "pricing-get-products.json")
SPOT_HISTORY = str(DATA / "describe-spot-price-history.json")


def _offers(it: InstanceType, capacity_type: str) -> dict[str, tuple[float, bool]]:
    return {o.zone: (o.price, o.estimated) for o in it.offerings if o.capacity_type == capacity_type}


def test_imported_types_match_the_embedded_catalog() -> None:
    catalog, notes = build_catalog(read_import_files([TYPES, OFFERINGS, PRICES, PRICING]))
    assert catalog.region == "us-east-1"
    assert catalog.zones == ("us-east-1a", "us-east-1b", "us-east-1c")
    reference = embedded_catalog("us-east-1").by_name()
    names = [it.name for it in catalog.instance_types]
    assert names == ["g4dn.xlarge", "inf2.xlarge", "m5.large", "m5.metal", "m7g.large"]  # mac2.metal skipped
    for it in catalog.instance_types:
        ref = reference[it.name]
        assert it.labels == ref.labels, it.name
        assert it.absent_label_keys == ref.absent_label_keys, it.name
        assert it.capacity == ref.capacity, it.name
        assert it.allocatable == ref.allocatable, it.name
    assert any("skipped" in note for note in notes)


def test_offerings_and_prices() -> None:
    catalog, _ = build_catalog(read_import_files([TYPES, OFFERINGS, PRICES, PRICING]))
    types = catalog.by_name()
    assert _offers(types["g4dn.xlarge"], ON_DEMAND) == {"us-east-1b": (0.526, False), "us-east-1c": (0.526, False)}
    # inf2.xlarge is priced only by the get-products output: the Linux, Used, no-software row.
    assert _offers(types["inf2.xlarge"], ON_DEMAND) == {"us-east-1c": (0.7582, False)}
    spot = _offers(types["m5.large"], SPOT)
    assert set(spot) == {"us-east-1a", "us-east-1b", "us-east-1c"}
    assert all(estimated for _, estimated in spot.values())


def test_real_spot_prices_from_history_and_csv() -> None:
    catalog, _ = build_catalog(read_import_files([TYPES, OFFERINGS, PRICES, SPOT_HISTORY]))
    types = catalog.by_name()
    # The newest Linux/UNIX price per zone wins; Windows rows are ignored; zones without a price sell no spot.
    assert _offers(types["m5.large"], SPOT) == {"us-east-1a": (0.0342, False), "us-east-1b": (0.0361, False)}
    assert _offers(types["m7g.large"], SPOT) == {"us-east-1a": (0.0315, False)}
    assert all(est for _, est in _offers(types["g4dn.xlarge"], SPOT).values())


def test_without_offerings_the_embedded_zones_and_prices_are_used() -> None:
    catalog, notes = build_catalog(read_import_files([TYPES]), region="ap-northeast-2")
    assert catalog.zones == tuple(f"ap-northeast-2{z}" for z in "abcd")
    m5 = catalog.by_name()["m5.large"]
    assert {p for p, _ in _offers(m5, ON_DEMAND).values()} == {0.118}
    assert "inf2.xlarge" not in catalog.by_name()  # no Seoul price anywhere
    assert any("left out" in note and "inf2.xlarge" in note for note in notes)
    assert any("embedded catalog" in note for note in notes)


def test_imported_catalog_round_trips_through_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from karpplan.cli.main import app

    out = tmp_path / "catalog.yaml"
    result = CliRunner().invoke(app, ["catalog", "import", TYPES, OFFERINGS, PRICES, PRICING, "-o", str(out)])
    assert result.exit_code == 0, result.output
    loaded = load_catalog(None, str(out))
    direct, _ = build_catalog(read_import_files([TYPES, OFFERINGS, PRICES, PRICING]))
    assert [it.name for it in loaded.instance_types] == [it.name for it in direct.instance_types]
    for a, b in zip(loaded.instance_types, direct.instance_types, strict=True):
        assert (a.capacity, a.allocatable, a.labels, a.offerings, a.shape) == (
            b.capacity,
            b.allocatable,
            b.labels,
            b.offerings,
            b.shape,
        )


def test_region_offerings_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "offerings.json"
    path.write_text(
        json.dumps({"InstanceTypeOfferings": [{"InstanceType": "m5.large", "LocationType": "region", "Location": "us-east-1"}]})
    )
    with pytest.raises(InputError, match="availability-zone"):
        read_import_files([str(path)])


def test_unrecognised_and_malformed_files(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"Reservations": []}')
    with pytest.raises(InputError, match="not a recognised AWS output"):
        read_import_files([str(other)])
    broken = tmp_path / "types.yaml"
    broken.write_text(
        "InstanceTypes:\n  - InstanceType: m5.large\n    ProcessorInfo: {SupportedArchitectures: [x86_64]}\n"
        "    VCpuInfo: {DefaultVCpus: two}\n"
    )
    with pytest.raises(InputError) as info:
        read_import_files([str(broken)])
    assert str(info.value.problems[0]).startswith(f"{broken}:2: m5.large: missing or non-integer VCpuInfo.DefaultVCpus")


def test_price_csv_with_a_missing_column(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text("region,instance_type,price\nus-east-1,m5.large,0.096\n")
    with pytest.raises(InputError, match=r"prices.csv:1: price CSV needs columns"):
        read_import_files([str(path)])


def test_region_cannot_be_guessed_from_mixed_prices() -> None:
    with pytest.raises(InputError, match="cannot tell the region"):
        build_catalog(read_import_files([TYPES, PRICES]))


_NAME = st.from_regex(r"[a-z][a-z0-9]{0,5}\.[a-z0-9]{1,8}", fullmatch=True)
_ROW = st.tuples(
    st.sampled_from(["us-east-1", "eu-west-1"]),
    _NAME,
    st.decimals(min_value=0, max_value=1000, places=4, allow_nan=False),
    st.sampled_from(["", "on-demand", "spot"]),
    st.sampled_from(["", "us-east-1a"]),
)


@given(rows=st.lists(_ROW, max_size=20))
def test_price_csv_reads_back_what_was_written(rows: list[tuple[str, str, object, str, str]]) -> None:
    text = "region,instance_type,usd_per_hour,capacity_type,zone\n" + "".join(
        f"{r},{n},{p},{c},{z}\n" for r, n, p, c, z in rows
    )
    parsed = read_price_csv("p.csv", default_capacity_type="spot", text=text)
    assert [(p.region, p.instance_type, p.price, p.capacity_type, p.zone) for p in parsed] == [
        (r, n, float(str(p)), c or "spot", z or None) for r, n, p, c, z in rows
    ]
    assert [p.origin.line for p in parsed] == list(range(2, 2 + len(rows)))
