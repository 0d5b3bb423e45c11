"""Karpenter NodeOverlays (karpenter.sh/v1alpha1): price and extended-capacity overrides of instance types.

An overlay whose `requirements` match an offering (the instance type's labels plus the offering's zone and
capacity type) sets its price (`price`), or moves it (`priceAdjustment`: `+0.5`, `-10%`), and adds extended
resources (`capacity`) to the instance type. Overlays apply by weight (higher first), ties by name; the
first overlay with a price field decides the price, and capacity merges, the first overlay to name a
resource deciding its amount (karpenter.sh/docs/concepts/nodeoverlays, "Conflict Resolution"). They apply per
NodePool (`catalog/overlays.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.requirements import Requirements
from karpplan.model.resources import Resources

PRICE = re.compile(r"^\d+(\.\d+)?$")
PRICE_ADJUSTMENT = re.compile(r"^[+-]\d+(\.\d+)?%?$")


@dataclass(frozen=True)
class PriceAdjustment:
    """`+0.50`, `-2`, `+15%`, `-10%`."""

    amount: Decimal
    percent: bool

    @classmethod
    def parse(cls, text: str) -> PriceAdjustment:
        percent = text.endswith("%")
        return cls(Decimal(text.rstrip("%")), percent)

    def apply(self, price: float) -> float:
        moved = price * (1 + float(self.amount) / 100) if self.percent else price + float(self.amount)
        return max(moved, 0.0)

    def __str__(self) -> str:
        sign = "+" if self.amount >= 0 else ""
        return f"{sign}{self.amount}{'%' if self.percent else ''}"


@dataclass(frozen=True)
class NodeOverlay:
    name: str
    requirements: Requirements
    weight: int = 0
    price: float | None = None
    price_adjustment: PriceAdjustment | None = None
    capacity: Resources = field(default_factory=Resources)
    origin: Origin = field(default=UNKNOWN, compare=False)

    @property
    def sets_price(self) -> bool:
        return self.price is not None or self.price_adjustment is not None

    def priced(self, price: float) -> float:
        if self.price is not None:
            return self.price
        assert self.price_adjustment is not None
        return self.price_adjustment.apply(price)


def precedence(overlays: tuple[NodeOverlay, ...] | list[NodeOverlay]) -> list[NodeOverlay]:
    """Karpenter's `OrderByWeight`: higher weight first, ties the name later in the alphabet first."""
    return sorted(sorted(overlays, key=lambda o: o.name, reverse=True), key=lambda o: -o.weight)
