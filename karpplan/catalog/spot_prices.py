"""Where a plan's spot prices come from, and when an estimate, not a published price, decided a type.

The embedded catalog (and `catalog import` without spot history) estimates a type's spot price as
`DEFAULT_SPOT_FACTOR` x on-demand, marked estimated (`prices.spot_offerings`); `--spot-prices FILE` gives
published ones for the types it names. The plan's summary says which (`spot_price_source`), and a plan that
launches spot types priced by estimate beside types with published prices says so in a warning
(`estimated_spot_note`): the estimate may be why those types were chosen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from karpplan.catalog.embedded import DEFAULT_SPOT_FACTOR
from karpplan.catalog.types import SPOT, Catalog


class LaunchedNode(Protocol):
    """A node of a plan, as far as its price matters here (`plan.PlanNode`)."""

    @property
    def new(self) -> bool: ...
    @property
    def instance_type(self) -> str | None: ...
    @property
    def capacity_type(self) -> str | None: ...
    @property
    def price_estimated(self) -> bool: ...


def spot_price_source(catalog: Catalog, spot_prices_file: str | None) -> str:
    """Where the plan's spot prices come from, in plain words (`summary.spotPrices`)."""
    estimated = any(o.capacity_type == SPOT and o.estimated for it in catalog.instance_types for o in it.offerings)
    if spot_prices_file:
        others = f"; types it does not name estimated: {DEFAULT_SPOT_FACTOR:g} x on-demand" if estimated else ""
        return f"file:{spot_prices_file}{others}"
    if catalog.embedded or estimated:
        return f"estimated: {DEFAULT_SPOT_FACTOR:g} x on-demand"
    return f"catalog:{catalog.name}"


def estimated_spot_note(catalog: Catalog, nodes: Iterable[LaunchedNode], spot_prices_file: str | None) -> list[str]:
    """The plan's warning when an estimated spot price chose a type over types with published ones (none else).

    A spot price estimated from on-demand is a guess; when the price list (`--spot-prices`, else the catalog)
    publishes spot prices for some types and the plan launches spot nodes of types it does not price, an
    estimate, not a published price, decided the type: said, never silent."""
    real = {it.name for it in catalog.instance_types
            if any(o.capacity_type == SPOT and not o.estimated for o in it.offerings)}
    guessed = Counter(n.instance_type for n in nodes
                      if n.new and n.instance_type and n.capacity_type == SPOT and n.price_estimated
                      and n.instance_type not in real)
    if not real or not guessed:
        return []
    source = spot_prices_file or f"the catalog ({catalog.name})"
    types = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in sorted(guessed.items()))
    count = sum(guessed.values())
    return [f"{count} new spot node{'s' if count != 1 else ''} ({types}) {'are' if count != 1 else 'is'} priced by "
            f"estimate ({DEFAULT_SPOT_FACTOR:g} x on-demand): {source} gives published spot prices for {len(real)} "
            f"other type{'s' if len(real) != 1 else ''} but not for these, so an estimate, not a published price, "
            f"chose them over those types; add their spot prices to {source}, or leave them out of the NodePool, "
            "to plan on published prices only"]
