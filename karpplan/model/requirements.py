"""The label-requirements algebra used everywhere: selectors, node affinity, NodePools, instance types.

A `Requirement` is the set of values a single label key may take, where "the label is absent" is one more
value (written ⊥ below). This makes Kubernetes' and Karpenter's rules exact set operations:

    In S          values S,            absent not allowed
    NotIn S       every value but S,   absent allowed      (kube: a missing key matches NotIn)
    Exists        every value,         absent not allowed
    DoesNotExist  no value,            absent allowed
    Gt n / Gte n  integers > n / >= n, absent not allowed  (values that are not base-10 integers never match)
    Lt n / Lte n  integers < n / <= n, absent not allowed

`Requirements` is a conjunction over keys. Intersection is the meet of those sets, so it is commutative,
associative and idempotent, and `a ∩ b` matches a label map iff both do. Karpenter's `Intersects` rule
("the value sets must overlap, except NotIn/DoesNotExist against NotIn/DoesNotExist") is precisely
"the intersection is not empty once ⊥ counts as a value", and `compatible` adds Karpenter's rule for
custom (not well-known) keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")
_INT = re.compile(r"^[+-]?[0-9]+$")
_MAX_INT = 2**63 - 1


def parse_int(value: str) -> int | None:
    """`strconv.ParseInt(v, 10, 64)`: base-10, optional sign, leading zeros allowed."""
    if not _INT.match(value):
        return None
    number = int(value)
    if number > _MAX_INT or number < -_MAX_INT - 1:
        return None
    return number


@dataclass(frozen=True)
class Requirement:
    """The allowed values of one key (see module docstring)."""

    key: str
    values: frozenset[str] = frozenset()
    complement: bool = False
    absent_ok: bool = False
    gte: int | None = None
    lte: int | None = None

    # -------------------------------------------------------------------------------- construction
    @classmethod
    def of(cls, key: str, operator: str, values: Iterable[object] = ()) -> Requirement:
        """From a Kubernetes/Karpenter expression; raises ValueError on an unknown operator or bad value."""
        vals = [str(v) for v in values]
        if operator == "In":
            return cls(key, frozenset(vals))
        if operator == "NotIn":
            return cls(key, frozenset(vals), complement=True, absent_ok=True)
        if operator == "Exists":
            return cls(key, complement=True)
        if operator == "DoesNotExist":
            return cls(key, absent_ok=True)
        if operator in ("Gt", "Lt", "Gte", "Lte"):
            if len(vals) != 1:
                raise ValueError(f"operator {operator} needs exactly one value")
            bound = parse_int(vals[0])
            if bound is None:
                raise ValueError(f"operator {operator} needs an integer value, not {vals[0]!r}")
            if operator == "Gt":
                return cls(key, complement=True, gte=bound + 1)
            if operator == "Gte":
                return cls(key, complement=True, gte=bound)
            if operator == "Lt":
                return cls(key, complement=True, lte=bound - 1)
            return cls(key, complement=True, lte=bound)
        raise ValueError(f"{operator!r} is not a valid selector operator")

    @classmethod
    def any(cls, key: str) -> Requirement:
        """No restriction at all (every value, or absent)."""
        return cls(key, complement=True, absent_ok=True)

    # -------------------------------------------------------------------------------- queries
    def _bounded(self) -> bool:
        return self.gte is not None or self.lte is not None

    def has(self, value: str) -> bool:
        """Does a present label with this value satisfy the requirement?"""
        if self._bounded():
            number = parse_int(value)
            if number is None:
                return False
            if self.gte is not None and number < self.gte:
                return False
            if self.lte is not None and number > self.lte:
                return False
        return (value not in self.values) if self.complement else (value in self.values)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """kube-scheduler's `Requirement.Matches` against a label map."""
        value = labels.get(self.key)
        return self.absent_ok if value is None else self.has(value)

    def allows_values(self) -> bool:
        """Could some present value satisfy this requirement?"""
        if not self.complement:
            return any(self.has(v) for v in self.values)
        if self._bounded():
            lo = self.gte if self.gte is not None else -_MAX_INT - 1
            hi = self.lte if self.lte is not None else _MAX_INT
            if lo > hi:
                return False
            # A bounded range holds more integers than any finite exclusion list, unless it is tiny.
            if hi - lo + 1 > len(self.values):
                return True
            return any(str(n) not in self.values for n in range(lo, hi + 1))
        return True

    def is_empty(self) -> bool:
        """Nothing (not even absence) satisfies it."""
        return not self.absent_ok and not self.allows_values()

    def is_unrestricted(self) -> bool:
        return self.complement and self.absent_ok and not self.values and not self._bounded()

    def finite_values(self) -> frozenset[str] | None:
        """The allowed present values when they are a finite set (In-like), else None."""
        if not self.complement:
            return frozenset(v for v in self.values if self.has(v))
        return None

    def any_value(self) -> str | None:
        """One allowed present value (the smallest finite one, or a synthesised one), None if none."""
        finite = self.finite_values()
        if finite is not None:
            return min(finite) if finite else None
        if self._bounded():
            # Walk away from the one bound we have (upward from gte, else downward from lte): among
            # len(values) + 1 consecutive integers at least one is not excluded.
            if self.gte is not None:
                hi = self.lte if self.lte is not None else _MAX_INT
                candidates = range(self.gte, min(hi, self.gte + len(self.values)) + 1)
            else:
                assert self.lte is not None
                candidates = range(self.lte, self.lte - len(self.values) - 1, -1)
            for n in candidates:
                if str(n) not in self.values:
                    return str(n)
            return None
        candidate = "karpplan"
        i = 0
        while candidate in self.values:
            i += 1
            candidate = f"karpplan-{i}"
        return candidate

    @property
    def operator(self) -> str:
        """The Kubernetes operator this requirement reads as (Karpenter's `Operator()`)."""
        if self.complement:
            if self._bounded():
                return "Gte" if self.gte is not None else "Lte"
            if self.values:
                return "NotIn"
            return "Exists" if not self.absent_ok else "NotIn"
        if not self.values:
            return "DoesNotExist" if self.absent_ok else "In"
        return "In"

    # -------------------------------------------------------------------------------- algebra
    def intersect(self, other: Requirement) -> Requirement:
        if other.key != self.key:
            raise ValueError(f"cannot intersect {self.key!r} with {other.key!r}")
        gte = _max_opt(self.gte, other.gte)
        lte = _min_opt(self.lte, other.lte)
        absent_ok = self.absent_ok and other.absent_ok
        if self.complement and other.complement:
            values, complement = self.values | other.values, True
        elif self.complement:
            values, complement = frozenset(v for v in other.values if v not in self.values), False
        elif other.complement:
            values, complement = frozenset(v for v in self.values if v not in other.values), False
        else:
            values, complement = self.values & other.values, False
        if not complement and (gte is not None or lte is not None):
            # Fold bounds into a finite set so equal sets compare equal.
            bounded = Requirement(self.key, values, False, absent_ok, gte, lte)
            values = frozenset(v for v in values if bounded.has(v))
            gte = lte = None
        return Requirement(self.key, values, complement, absent_ok, gte, lte)

    def __and__(self, other: Requirement) -> Requirement:
        return self.intersect(other)

    def __str__(self) -> str:
        """Karpenter's `Requirement.String()`: `key In [a b]`, `key Exists`, bounds as ` >=N`/` <=N`."""
        op = self.operator
        if op in ("Exists", "DoesNotExist"):
            text = f"{self.key} {op}"
        elif op in ("Gte", "Lte"):
            text = f"{self.key} Exists" if not self.values else f"{self.key} NotIn {_fmt_values(self.values)}"
        else:
            text = f"{self.key} {op} {_fmt_values(self.values)}"
        if self.gte is not None:
            text += f" >={self.gte}"
        if self.lte is not None:
            text += f" <={self.lte}"
        return text


def _fmt_values(values: Iterable[str]) -> str:
    ordered = sorted(values)
    if len(ordered) > 5:
        return "[" + " ".join(ordered[:5]) + f" and {len(ordered) - 5} others]"
    return "[" + " ".join(ordered) + "]"


def _max_opt(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _min_opt(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


class Requirements(Mapping[str, Requirement]):
    """An immutable conjunction of per-key requirements."""

    __slots__ = ("_by_key", "_hash")

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        by_key: dict[str, Requirement] = {}
        for req in requirements:
            prior = by_key.get(req.key)
            by_key[req.key] = req if prior is None else prior.intersect(req)
        self._by_key = dict(sorted(by_key.items()))
        self._hash: int | None = None

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> Requirements:
        """Each label as `key In [value]` (NodePool template labels, nodeSelector)."""
        return cls(Requirement(k, frozenset([str(v)])) for k, v in labels.items())

    @classmethod
    def from_expressions(cls, expressions: Iterable[tuple[str, str, Iterable[object]]]) -> Requirements:
        return cls(Requirement.of(k, op, vals) for k, op, vals in expressions)

    def __getitem__(self, key: str) -> Requirement:
        return self._by_key[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self._by_key.values()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Requirements) and self._by_key == other._by_key

    def __repr__(self) -> str:
        return f"Requirements({list(self._by_key.values())!r})"

    def get_or_any(self, key: str) -> Requirement:
        return self._by_key.get(key) or Requirement.any(key)

    def intersect(self, other: Requirements) -> Requirements:
        return Requirements([*self._by_key.values(), *other._by_key.values()])

    def __and__(self, other: Requirements) -> Requirements:
        return self.intersect(other)

    def with_requirement(self, req: Requirement) -> Requirements:
        return Requirements([*self._by_key.values(), req])

    def without(self, *keys: str) -> Requirements:
        return Requirements(r for k, r in self._by_key.items() if k not in keys)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Every requirement matches the label map (kube semantics)."""
        return all(req.matches(labels) for req in self._by_key.values())

    def conflicts(self, other: Requirements) -> list[tuple[Requirement, Requirement]]:
        """Keys on both sides whose intersection is empty (⊥ counting as a value): Karpenter's Intersects."""
        out = []
        for key, mine in self._by_key.items():
            theirs = other._by_key.get(key)
            if theirs is not None and mine.intersect(theirs).is_empty():
                out.append((mine, theirs))
        return out

    def intersects(self, other: Requirements) -> bool:
        return not self.conflicts(other)

    def undefined_custom_keys(self, node_side: Requirements, well_known: frozenset[str]) -> list[str]:
        """Karpenter's `Compatible` extra rule: custom keys this (pod) side needs but the node side never defines.

        A key that is not well-known must be defined by the NodePool unless the pod's operator is NotIn or
        DoesNotExist, i.e. unless the pod side allows the label to be absent.
        """
        return [
            key
            for key, req in self._by_key.items()
            if key not in well_known and key not in node_side._by_key and not req.absent_ok
        ]

    def compatible(self, node_side: Requirements, well_known: frozenset[str]) -> bool:
        return self.intersects(node_side) and not self.undefined_custom_keys(node_side, well_known)

    def __str__(self) -> str:
        return ", ".join(str(r) for r in self._by_key.values())


EVERYTHING = Requirements()
