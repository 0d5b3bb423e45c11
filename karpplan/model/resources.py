"""Resource vectors in karpplan's integer units.

CPU is held in millicores (kube-scheduler compares `MilliValue()`), every other resource in whole base
units (`Value()`: bytes for memory, ephemeral-storage and hugepages; counts for `pods` and extended
resources). Integers keep arithmetic exact and make CP-SAT coefficients direct.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from karpplan.model.quantity import Quantity, format_resource, parse_quantity

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL = "ephemeral-storage"


def amount_of(name: str, quantity: Quantity) -> int:
    """The integer amount of a quantity for a resource name."""
    return quantity.milli() if name == CPU else quantity.value()


class Resources(Mapping[str, int]):
    """An immutable, hashable map from resource name to integer amount (zeros are dropped)."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[str, int] | Iterable[tuple[str, int]] = ()) -> None:
        source = items.items() if isinstance(items, Mapping) else items
        merged: dict[str, int] = {}
        for key, value in source:
            merged[key] = merged.get(key, 0) + int(value)
        self._items: dict[str, int] = {k: v for k, v in sorted(merged.items()) if v != 0}
        self._hash: int | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, object]) -> Resources:
        """From a Kubernetes resource list (`{cpu: 500m, memory: 1Gi}`); raises QuantityError."""
        return cls({name: amount_of(name, parse_quantity(value)) for name, value in raw.items()})

    def __getitem__(self, key: str) -> int:
        return self._items[key]

    def get(self, key: str, default: int = 0) -> int:  # type: ignore[override]
        return self._items.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self._items.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Resources):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == {k: v for k, v in other.items() if v != 0}
        return NotImplemented

    def __repr__(self) -> str:
        return f"Resources({self._items!r})"

    def __add__(self, other: Mapping[str, int]) -> Resources:
        out = dict(self._items)
        for key, value in other.items():
            out[key] = out.get(key, 0) + value
        return Resources(out)

    def __sub__(self, other: Mapping[str, int]) -> Resources:
        out = dict(self._items)
        for key, value in other.items():
            out[key] = out.get(key, 0) - value
        return Resources(out)

    def scaled(self, factor: int) -> Resources:
        return Resources({k: v * factor for k, v in self._items.items()})

    def maximum(self, other: Mapping[str, int]) -> Resources:
        """Per-resource maximum."""
        keys = set(self._items) | set(other)
        return Resources({k: max(self.get(k), other.get(k, 0)) for k in keys})

    def fits_in(self, capacity: Mapping[str, int]) -> bool:
        """True when every requested amount is available (absent capacity counts as 0)."""
        return all(value <= capacity.get(key, 0) for key, value in self._items.items() if value > 0)

    def shortfalls(self, capacity: Mapping[str, int]) -> list[str]:
        """The resources whose request exceeds capacity, sorted (for `Insufficient <name>`)."""
        return sorted(k for k, v in self._items.items() if v > 0 and v > capacity.get(k, 0))

    def clamp_nonnegative(self) -> Resources:
        return Resources({k: max(v, 0) for k, v in self._items.items()})

    def as_dict(self) -> dict[str, int]:
        return dict(self._items)

    def formatted(self) -> dict[str, str]:
        """Kubernetes quantity strings (`{"cpu": "1930m", "memory": "6903Mi"}`)."""
        return {k: format_resource(k, v) for k, v in self._items.items()}

    def __str__(self) -> str:
        """Karpenter's `resources.String` shape: a compact JSON object."""
        inner = ",".join(f'"{k}":"{v}"' for k, v in self.formatted().items())
        return "{" + inner + "}"


class LimitVector(Resources):
    """Resources that keep zero entries: a NodePool limit of 0 still limits."""

    def __init__(self, items: Mapping[str, int]) -> None:
        super().__init__({})
        self._items = {k: int(v) for k, v in sorted(items.items())}


EMPTY = Resources()
