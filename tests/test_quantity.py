"""Quantity parsing exactly as resource.ParseQuantity (kube-scheduler.md §8)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpplan.inputs.origins import SourceFloat
from karpplan.model.quantity import (
    QUANTITY_REGEX,
    QuantityError,
    format_bytes,
    format_cpu,
    parse_quantity,
    scalar_text,
)

REGEX_MESSAGE = f"quantities must match the regular expression '{QUANTITY_REGEX}'"


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("1E", Fraction(10**18)),
        ("1E3", Fraction(1000)),
        ("1e3", Fraction(1000)),
        ("12E-3", Fraction(12, 1000)),
        ("129e6", Fraction(129_000_000)),
        ("129M", Fraction(129_000_000)),
        ("123Mi", Fraction(128_974_848)),
        ("1.5Gi", Fraction(1_610_612_736)),
        ("0.5Ki", Fraction(512)),
        (".5", Fraction(1, 2)),
        ("1.", Fraction(1)),
        ("+1", Fraction(1)),
        ("100m", Fraction(1, 10)),
        ("0.1n", Fraction(1, 10**9)),  # rounded up to nano precision at parse time
        ("1k", Fraction(1000)),
    ],
)
def test_documented_examples(text: str, amount: Fraction) -> None:
    assert parse_quantity(text).amount == amount


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1K", "unable to parse quantity's suffix"),
        ("1ki", "unable to parse quantity's suffix"),
        ("1Kb", REGEX_MESSAGE),  # b is not in the suffix character class
        ("1MB", REGEX_MESSAGE),
        ("1e", "unable to parse quantity's suffix"),
        ("abc", REGEX_MESSAGE),
        ("", REGEX_MESSAGE),
        ("1 Gi", REGEX_MESSAGE),
        ("1.2.3", "unable to parse numeric part of quantity"),
        (".", "unable to parse numeric part of quantity"),
    ],
)
def test_refused_with_kubernetes_message(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value) == message


def test_accessors_round_up() -> None:
    assert parse_quantity("0.0001").milli() == 1  # CPU 0.0001 -> 1m
    assert parse_quantity("0.5").value() == 1  # memory 0.5 -> 1 byte
    assert parse_quantity("1.5").value() == 2
    assert parse_quantity("1.5").milli() == 1500


def test_magnitude_is_capped() -> None:
    assert parse_quantity("9Ei").value() == 2**63 - 1


def test_yaml_scalars_keep_their_text() -> None:
    assert scalar_text(SourceFloat(0.1, "0.10")) == "0.10"
    assert parse_quantity(SourceFloat(0.5, "0.5")).milli() == 500
    assert parse_quantity(2).value() == 2
    assert parse_quantity(0.25).milli() == 250
    with pytest.raises(QuantityError):
        parse_quantity(True)
    with pytest.raises(QuantityError):
        parse_quantity(float("nan"))


_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_DECIMAL = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


@given(st.integers(0, 10**6), st.sampled_from(sorted(_BINARY)))
def test_binary_suffixes_multiply(n: int, suffix: str) -> None:
    assert parse_quantity(f"{n}{suffix}").value() == n * _BINARY[suffix]


@given(st.integers(0, 10**6), st.sampled_from(sorted(_DECIMAL)))
def test_decimal_suffixes_multiply(n: int, suffix: str) -> None:
    assert parse_quantity(f"{n}{suffix}").value() == n * _DECIMAL[suffix]


@given(st.integers(0, 10**9))
def test_millicores_round_trip(millis: int) -> None:
    assert parse_quantity(f"{millis}m").milli() == millis
    assert parse_quantity(format_cpu(millis)).milli() == millis


@given(st.integers(0, 2**50))
def test_bytes_round_trip_through_canonical_text(amount: int) -> None:
    text = format_bytes(amount)
    assert parse_quantity(text).value() == amount
    assert len(text) <= len(str(amount))


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(1, 6))
def test_decimal_fractions_round_up_like_milli_value(whole: int, fraction: int, digits: int) -> None:
    frac_text = str(fraction).zfill(digits)[:digits]
    text = f"{whole}.{frac_text}"
    exact = Fraction(text)
    nano = Fraction(math.ceil(exact * 10**9), 10**9)
    assert parse_quantity(text).milli() == math.ceil(nano * 1000)
    assert parse_quantity(text).value() == math.ceil(nano)


@given(st.integers(-(10**6), 10**6))
def test_sign_is_symmetric(n: int) -> None:
    assert parse_quantity(str(n)).amount == -parse_quantity(str(-n)).amount
