"""NodeOverlays changed by a change, and what that means for its cost.

A NodeOverlay's `price` or `priceAdjustment` changes the prices Karpenter's scheduling simulation ranks instance
types by (`concepts/nodeoverlays.md`: it "injects alternative instance type information"); AWS bills each instance at
its own price. Both sides' plans price the offerings an overlay matches as Karpenter's simulation does (so they
choose what Karpenter would), which puts the adjustment into each side's cost: a change to an overlay alone moves
the diff's cost without changing any bill. Each added, removed or changed overlay is named, with what changed and
that part of the change in cost may be the overlay's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpplan.diff.fields import changed_fields

PRICE_FIELDS = ("price", "priceAdjustment")


def overlay_notes(base: Mapping[str, Mapping[str, Any]], head: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """One note per NodeOverlay HEAD adds, removes or changes."""
    notes = []
    for name in sorted(base.keys() | head.keys()):
        before, after = base.get(name), head.get(name)
        if before == after:
            continue
        if before is None or after is None:
            what = "added" if before is None else "removed"
            spec = (after or before or {}).get("spec")
            prices = isinstance(spec, Mapping) and any(k in spec for k in PRICE_FIELDS)
        else:
            what = f"changed ({'; '.join(changed_fields([before], [after]))})"
            prices = any(_price(before, k) != _price(after, k) for k in PRICE_FIELDS)
        note = f"NodeOverlay {name} {what}"
        if prices:
            note += (": the plans price the offerings it matches as Karpenter's simulation does (an overlay's price "
                     "steers which instance types Karpenter chooses; AWS bills each instance at its own price), so "
                     "part of the change in cost may be the overlay's, not a bill")
        notes.append(note)
    return tuple(notes)


def _price(body: Mapping[str, Any], key: str) -> object:
    spec = body.get("spec")
    return spec.get(key) if isinstance(spec, Mapping) else None


__all__ = ["overlay_notes"]
