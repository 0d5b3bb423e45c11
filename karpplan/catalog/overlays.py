"""NodeOverlays applied to a catalog: the prices and extended capacity Karpenter's simulation would use."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from karpplan.catalog.types import Catalog, InstanceType, Offering
from karpplan.model.labels import CAPACITY_TYPE, ZONE
from karpplan.model.overlays import NodeOverlay, precedence
from karpplan.model.resources import Resources


def _offering_labels(it: InstanceType, offering: Offering) -> dict[str, str]:
    return {**it.labels, ZONE: offering.zone, CAPACITY_TYPE: offering.capacity_type}


def _overlaid(it: InstanceType, overlays: Sequence[NodeOverlay], touched: dict[str, int],
              types_matched: dict[str, int]) -> InstanceType:
    offerings: list[Offering] = []
    matched_any: list[NodeOverlay] = []
    for offering in it.offerings:
        labels = _offering_labels(it, offering)
        matching = [o for o in overlays if o.requirements.matches(labels)]
        for overlay in matching:
            if overlay not in matched_any:
                matched_any.append(overlay)
        pricing = next((o for o in matching if o.sets_price), None)
        if pricing is None:
            offerings.append(offering)
            continue
        touched[pricing.name] = touched.get(pricing.name, 0) + 1
        offerings.append(dataclasses.replace(offering, price=round(pricing.priced(offering.price), 6)))
    for overlay in matched_any:
        types_matched[overlay.name] = types_matched.get(overlay.name, 0) + 1
    extra: dict[str, int] = {}
    for overlay in matched_any:  # in precedence order: the first to name a resource decides it
        for name, amount in overlay.capacity.items():
            extra.setdefault(name, amount)
    if not extra and offerings == list(it.offerings):
        return it
    capacity = Resources({**it.capacity, **extra}) if extra else it.capacity
    allocatable = Resources({**it.allocatable, **extra}) if extra else it.allocatable
    return dataclasses.replace(it, capacity=capacity, allocatable=allocatable, offerings=tuple(offerings))


def apply_node_overlays(catalog: Catalog, overlays: Sequence[NodeOverlay]) -> tuple[Catalog, list[str]]:
    """The catalog as the overlays change it, and one note per overlay saying what it changed."""
    if not overlays:
        return catalog, []
    ordered = precedence(list(overlays))
    touched: dict[str, int] = {}  # overlay -> offerings it prices
    types_matched: dict[str, int] = {}  # overlay -> instance types it matches
    types = tuple(_overlaid(it, ordered, touched, types_matched) for it in catalog.instance_types)
    notes: list[str] = []
    for overlay in ordered:
        matched = types_matched.get(overlay.name, 0)
        what = []
        if overlay.sets_price:
            change = f"price {overlay.price}" if overlay.price is not None else f"priceAdjustment {overlay.price_adjustment}"
            what.append(f"{change} on {touched.get(overlay.name, 0)} offering(s)")
        if overlay.capacity:
            what.append("capacity " + ", ".join(f"{k}={v}" for k, v in sorted(overlay.capacity.items())))
        summary = "; ".join(what) or "nothing to change"
        notes.append(
            f"{overlay.origin}: NodeOverlay {overlay.name} (weight {overlay.weight}) matches {matched} instance "
            f"type(s): {summary}; the plan's prices and capacity include it, as Karpenter's simulation does "
            "(overlay prices are not what AWS bills)"
        )
    return dataclasses.replace(catalog, instance_types=types), notes
