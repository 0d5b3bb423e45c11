"""The label-requirements algebra: set semantics, intersection laws, Karpenter's Intersects/Compatible."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karpplan.model.requirements import Requirement, Requirements, parse_int

KEYS = ("a", "b")
VALUES = ("x", "y", "1", "2", "5", "07", "-3")
# Every value the strategies can produce, plus some they cannot (to probe complements and bounds).
UNIVERSE = (*VALUES, "z", "0", "3", "4", "6", "100", "")


@st.composite
def requirements_for(draw: st.DrawFn, key: str) -> Requirement:
    operator = draw(st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")))
    if operator in ("Gt", "Lt", "Gte", "Lte"):
        return Requirement.of(key, operator, [str(draw(st.integers(-4, 8)))])
    if operator in ("Exists", "DoesNotExist"):
        return Requirement.of(key, operator)
    return Requirement.of(key, operator, draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3)))


def requirement() -> st.SearchStrategy[Requirement]:
    return requirements_for("a")


def requirement_sets() -> st.SearchStrategy[Requirements]:
    return st.lists(st.sampled_from(KEYS).flatmap(requirements_for), max_size=4).map(Requirements)


def label_maps() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(st.sampled_from(KEYS), st.sampled_from(UNIVERSE), max_size=2)


def outcomes(req: Requirement) -> tuple[bool, ...]:
    """What the requirement says about every probe value and about absence."""
    return (req.matches({}), *(req.matches({req.key: v}) for v in UNIVERSE))


# ------------------------------------------------------------------------------------------ operators
@pytest.mark.parametrize(
    ("operator", "values", "present", "absent"),
    [
        ("In", ["x"], {"x"}, False),
        ("NotIn", ["x"], set(UNIVERSE) - {"x"}, True),  # a missing key matches NotIn
        ("Exists", [], set(UNIVERSE), False),
        ("DoesNotExist", [], set(), True),
        ("Gt", ["2"], {"5", "07", "3", "4", "6", "100"}, False),  # "07" parses as 7
        ("Lt", ["2"], {"1", "-3", "0"}, False),
        ("Gte", ["5"], {"5", "07", "6", "100"}, False),
        ("Lte", ["1"], {"1", "-3", "0"}, False),
    ],
)
def test_operator_semantics(operator: str, values: list[str], present: set[str], absent: bool) -> None:
    req = Requirement.of("a", operator, values)
    assert {v for v in UNIVERSE if req.matches({"a": v})} == present
    assert req.matches({}) is absent


def test_bounded_operators_need_one_integer() -> None:
    with pytest.raises(ValueError):
        Requirement.of("a", "Gt", ["1.5"])
    with pytest.raises(ValueError):
        Requirement.of("a", "Lt", ["1", "2"])
    with pytest.raises(ValueError):
        Requirement.of("a", "Foo", ["1"])


def test_parse_int_is_go_parse_int() -> None:
    assert parse_int("0206") == 206
    assert parse_int("+5") == 5
    assert parse_int("1.0") is None
    assert parse_int(str(2**63)) is None


# ------------------------------------------------------------------------------------------ laws
@given(requirement(), requirement())
def test_intersection_is_commutative(a: Requirement, b: Requirement) -> None:
    assert a & b == b & a


@given(requirement(), requirement(), requirement())
def test_intersection_is_associative(a: Requirement, b: Requirement, c: Requirement) -> None:
    assert (a & b) & c == a & (b & c)


@given(requirement())
def test_intersection_is_idempotent(a: Requirement) -> None:
    assert a & a == a


@given(requirement(), requirement(), st.sampled_from((None, *UNIVERSE)))
def test_intersection_matches_iff_both_match(a: Requirement, b: Requirement, value: str | None) -> None:
    labels = {} if value is None else {"a": value}
    assert (a & b).matches(labels) == (a.matches(labels) and b.matches(labels))


@given(requirement())
def test_unrestricted_is_the_identity(a: Requirement) -> None:
    assert outcomes(a & Requirement.any("a")) == outcomes(a)


@given(requirement(), requirement())
def test_empty_means_nothing_matches(a: Requirement, b: Requirement) -> None:
    both = a & b
    if both.is_empty():
        assert not any(outcomes(both))
    elif both.allows_values():
        witness = both.any_value()
        assert witness is not None and both.has(witness)
    else:
        assert both.matches({})


@given(requirement_sets(), requirement_sets())
def test_requirements_intersection_is_commutative(a: Requirements, b: Requirements) -> None:
    assert a & b == b & a


@given(requirement_sets(), requirement_sets(), requirement_sets())
@settings(max_examples=200)
def test_requirements_intersection_is_associative(a: Requirements, b: Requirements, c: Requirements) -> None:
    assert (a & b) & c == a & (b & c)


@given(requirement_sets())
def test_requirements_intersection_is_idempotent(a: Requirements) -> None:
    assert a & a == a


@given(requirement_sets(), requirement_sets(), label_maps())
def test_requirements_intersection_matches_iff_both_match(
    a: Requirements, b: Requirements, labels: dict[str, str]
) -> None:
    assert (a & b).matches(labels) == (a.matches(labels) and b.matches(labels))


# ------------------------------------------------------------------------------------------ Karpenter rules
def test_intersects_ignores_keys_on_one_side_only() -> None:
    pool = Requirements([Requirement.of("a", "In", ["x"])])
    pod = Requirements([Requirement.of("b", "In", ["y"])])
    assert pool.intersects(pod)


def test_notin_against_notin_always_intersects() -> None:
    left = Requirements([Requirement.of("a", "NotIn", ["x"])])
    right = Requirements([Requirement.of("a", "DoesNotExist")])
    assert left.intersects(right)


def test_disjoint_in_sets_conflict() -> None:
    left = Requirements([Requirement.of("a", "In", ["x"])])
    right = Requirements([Requirement.of("a", "In", ["y"])])
    assert left.conflicts(right) == [(left["a"], right["a"])]


def test_custom_keys_must_be_defined_by_the_pool_unless_absence_is_allowed() -> None:
    pool = Requirements([Requirement.of("kubernetes.io/arch", "In", ["amd64"])])
    pod = Requirements(
        [
            Requirement.of("team", "In", ["a"]),
            Requirement.of("other", "NotIn", ["b"]),
            Requirement.of("gone", "DoesNotExist"),
            Requirement.of("kubernetes.io/os", "In", ["linux"]),
        ]
    )
    well_known = frozenset({"kubernetes.io/arch", "kubernetes.io/os"})
    assert pod.undefined_custom_keys(pool, well_known) == ["team"]
    assert not pod.compatible(pool, well_known)


def test_string_form_is_karpenters() -> None:
    assert str(Requirement.of("a", "In", ["y", "x"])) == "a In [x y]"
    assert str(Requirement.of("a", "Exists")) == "a Exists"
    assert str(Requirement.of("a", "Gt", ["5"])) == "a Exists >=6"
