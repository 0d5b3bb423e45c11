"""After the log is read: what the instance-type catalog adds to each item's wording.

The catalog is loaded only when some item needs it (a "no instance type" reason with its resources), for
the region the user named, else the region the reason's zones belong to, else the default region.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from karpplan.catalog.types import Catalog
from karpplan.errors import InputError
from karpplan.explain.advice import ZONE, advise
from karpplan.explain.report import Explanation
from karpplan.explain.structure import NO_INSTANCE_TYPE, Item, PoolReasons, Reason
from karpplan.explain.wording import capital, fields_of, item_plain, no_type_plain

CatalogFor = Callable[[str | None], Catalog | None]


def catalog_loader(region: str | None, catalog_file: str | None) -> CatalogFor:
    """A loader: the user's catalog, else the embedded one of `region`, else of the zones' region."""
    @lru_cache(maxsize=8)
    def load(zone_region: str | None) -> Catalog | None:
        from karpplan.catalog import load_catalog
        from karpplan.catalog.embedded import regions

        if catalog_file is None and region is None and zone_region is not None and zone_region not in regions():
            zone_region = None
        try:
            return load_catalog(region or zone_region, catalog_file)
        except InputError:
            return None
    return load


def _zone_region(reason: Reason) -> str | None:
    for q in reason.requirements:
        if q.key == ZONE and q.values:
            zone = q.values[0]
            return zone[:-1] if zone[-1:].isalpha() and zone[-2:-1].isdigit() else None
    return None


def _without_foreign_zones(reason: Reason, catalog: Catalog) -> Reason:
    """Zones the catalog does not know (another region, a fake provider) are not judged."""
    reqs = tuple(q for q in reason.requirements
                 if q.key != ZONE or q.operator != "In" or all(z in catalog.zones for z in q.values))
    return replace(reason, requirements=reqs) if len(reqs) != len(reason.requirements) else reason


def _advised(reason: Reason, pool: PoolReasons | None, dialect: str | None, load: CatalogFor) -> Reason:
    if reason.kind != NO_INSTANCE_TYPE or not reason.resources:
        return reason
    catalog = load(_zone_region(reason))
    if catalog is None:
        return reason
    f = fields_of(pool, dialect)
    advice = advise(_without_foreign_zones(reason, catalog), catalog, f.requirements, f.limits)
    return replace(reason, plain=capital(no_type_plain(reason, pool, f, tuple(advice)))) if advice else reason


def enrich_item(item: Item, load: CatalogFor) -> None:
    p = item.parsed
    pools = tuple(replace(pool, reasons=tuple(_advised(r, pool, p.dialect, load) for r in pool.reasons))
                  for pool in p.pools)
    reasons = tuple(_advised(r, None, p.dialect, load) for r in p.reasons)
    if pools != p.pools or reasons != p.reasons:
        item.parsed = replace(p, pools=pools, reasons=reasons)
        item.plain = item_plain(item)


def enrich(explanation: Explanation, load: CatalogFor) -> None:
    for item in explanation.item_list():
        enrich_item(item, load)
