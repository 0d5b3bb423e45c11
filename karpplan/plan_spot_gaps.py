"""When a `--spot-prices` file is why a pod cannot be placed: the file replaces the spot offerings of every type
it names with the zones it prices (`catalog/prices.py` `spot_offerings`), so a type it names but leaves out of a
zone cannot launch as spot there, though AWS sells it (the type has an on-demand offering there) and Karpenter
would launch it. A reason that says only "no instance type met all requirements" hides that; this names the file,
the types and the zones it has no spot price for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from karpplan.catalog.coverage import names_text
from karpplan.catalog.nodelabels import instance_requirements
from karpplan.catalog.types import ON_DEMAND, SPOT, Catalog
from karpplan.model.labels import CAPACITY_TYPE, OS, WINDOWS_BUILD, ZONE
from karpplan.model.requirements import Requirements
from karpplan.model.resources import Resources

# `catalog/embedded.py` notes a price list's spot prices as `FILE for N types; others ...`, `apply_price_rows`
# a user catalog's as `FILE (N types)`.
_EMBEDDED_NOTE = re.compile(r"^(?P<file>.*) for \d+ types")
_USER_NOTE = re.compile(r"^(?P<file>.*) \(\d+ types\)$")


def spot_file(catalog: Catalog) -> str:
    """The `--spot-prices` file the catalog's spot prices came from, as the user named it."""
    for key, pattern in (("spot prices", _EMBEDDED_NOTE), ("price list", _USER_NOTE)):
        found = pattern.match(catalog.sources.get(key, ""))
        if found:
            return found["file"]
    return "the --spot-prices file"


def spot_file_gaps(catalog: Catalog, wanted: Requirements, requests: Resources) -> dict[str, list[str]]:
    """Instance type -> the zones `wanted` allows where the type is sold (on-demand offering) and would hold
    `requests`, but the price file it is named in gives no spot price, when `wanted` allows spot. Types with
    estimated spot prices are not the file's (it does not name them): they are offered in every zone."""
    capacity = wanted.get(CAPACITY_TYPE)
    if capacity is not None and not capacity.has(SPOT):
        return {}
    zone = wanted.get(ZONE)
    shape = wanted.without(ZONE, CAPACITY_TYPE, OS, WINDOWS_BUILD)
    gaps: dict[str, list[str]] = {}
    for it in catalog.instance_types:
        spot = [o for o in it.offerings if o.capacity_type == SPOT]
        if not spot or any(o.estimated for o in spot) or not requests.fits_in(it.allocatable):
            continue
        priced = {o.zone for o in spot}
        sold = {o.zone for o in it.offerings if o.capacity_type == ON_DEMAND}
        missing = [z for z in catalog.zones if z in sold and z not in priced and (zone is None or zone.has(z))]
        if missing and shape.intersects(instance_requirements(it, auto_mode=False, with_offerings=False).without(OS)):
            gaps[it.name] = missing
    return gaps


def spot_file_reason(catalog: Catalog, gaps: Mapping[str, set[str] | list[str]]) -> str:
    """The reason said first: which file, which types in which zones, and the remedy."""
    where = names_text(f"{name} in {', '.join(sorted(zones))}" for name, zones in sorted(gaps.items()))
    them = "it" if len(gaps) == 1 else "them"
    file = spot_file(catalog)
    return (f"the spot prices file {file} has no spot price for {where}, which the pod would fit as spot: a type "
            f"it names is planned as spot only in the zones it prices, so {them} cannot launch there here, though "
            f"Karpenter would launch {them}; add {'its' if len(gaps) == 1 else 'their'} spot price there to {file}, "
            "or plan without --spot-prices")
