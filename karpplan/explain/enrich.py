"""After the log is read: what the instance-type catalog adds to each item's wording.

The catalog is loaded only when some item needs it (a "no instance type" reason with its resources), for
the region the user named, else the region the reason's zones belong to, else the default region.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache

from karpplan.catalog import load_catalog
from karpplan.catalog.embedded import regions
from karpplan.catalog.types import Catalog
from karpplan.errors import InputError
from karpplan.explain.advice import advise
from karpplan.explain.dialects import azure
from karpplan.explain.dialects import karpenter as K
from karpplan.explain.related import link_node_classes, link_nominations, link_scheduled, merge_pod_names
from karpplan.explain.report import Explanation
from karpplan.explain.structure import NO_INSTANCE_TYPE, REQUIREMENT_CONFLICT, Item, PoolReasons, Reason
from karpplan.explain.wording import capital, fields_of, item_plain, no_type_plain
from karpplan.model.aws_zones import region_of_zone
from karpplan.model.labels import ARCH, OS, ZONE
from karpplan.model.requirements import Requirement

CatalogFor = Callable[[str | None], Catalog | None]


def catalog_loader(region: str | None, catalog_file: str | None, *, allow_estimated_prices: bool = False) -> CatalogFor:
    """A loader: the user's catalog, else the embedded one of `region`, else of the zones' region."""
    @lru_cache(maxsize=8)
    def load(zone_region: str | None) -> Catalog | None:
        if catalog_file is None and region is None and zone_region is not None and zone_region not in regions():
            zone_region = None
        try:
            return load_catalog(region or zone_region, catalog_file, allow_estimated_prices=allow_estimated_prices)
        except InputError:
            return None
    return load


def _zone_region(reason: Reason) -> str | None:
    for q in reason.requirements:
        if q.key == ZONE and q.values:
            return region_of_zone(q.values[0])
    return None


def _without_foreign_zones(reason: Reason, catalog: Catalog) -> Reason:
    """Zones of another region or a fake provider are not judged; an unknown zone of the catalog's region is."""
    def foreign(zone: str) -> bool:
        return zone not in catalog.zones and not zone.startswith(catalog.region)

    reqs = tuple(q for q in reason.requirements
                 if q.key != ZONE or q.operator != "In" or not any(foreign(z) for z in q.values))
    return replace(reason, requirements=reqs) if len(reqs) != len(reason.requirements) else reason


Advised = dict[tuple[object, ...], Reason | PoolReasons]


_IN = re.compile(r"^(?P<key>\S+) In \[(?P<values>[^\]]*)\]$")


def pod_platform(reasons: Sequence[Reason]) -> tuple[Requirement, ...]:
    """The architecture and OS the pod requires, as a pool's requirement conflict quotes the pod's side
    (`kubernetes.io/arch In [amd64] not in kubernetes.io/arch In [arm64]`): the pod's whatever pool it meets."""
    found: dict[str, Requirement] = {}
    for r in reasons:
        m = _IN.match(r.pod_side or "") if r.kind == REQUIREMENT_CONFLICT and r.key in (ARCH, OS) else None
        if m is not None and m["values"].split():
            found.setdefault(m["key"], Requirement(m["key"], frozenset(m["values"].split())))
    return tuple(found[k] for k in sorted(found))


def _advised(reason: Reason, pool: PoolReasons | None, dialect: str | None, load: CatalogFor,
             done: Advised, platform: tuple[Requirement, ...] = ()) -> Reason:
    if reason.kind != NO_INSTANCE_TYPE or not reason.resources:
        return reason
    # thousands of items of a long log repeat a handful of reasons: judge each once
    key = (reason.text, pool.name if pool else None, pool.kind if pool else None, dialect, platform)
    found = done.get(key)
    if not isinstance(found, Reason):
        found = done[key] = _judge(reason, pool, dialect, load, platform)
    return found


def _judge(reason: Reason, pool: PoolReasons | None, dialect: str | None, load: CatalogFor,
           platform: tuple[Requirement, ...] = ()) -> Reason:
    if azure.on_azure(q.key for q in reason.requirements):
        return _azure_judged(reason, pool, dialect)  # Azure VM sizes: the EC2 catalog has nothing to say
    catalog = load(_zone_region(reason))
    if catalog is None:
        return reason
    f = fields_of(pool, dialect, reason)
    advice, cause = advise(_without_foreign_zones(reason, catalog), catalog, f.requirements, f.limits, platform)
    if _zone_region(reason) is None and any("/h)" in a for a in advice):  # the region is not the log's: say whose
        advice = [*advice, f"(Prices are {catalog.region}'s; explain --region names your region.)"]
    return replace(reason, plain=capital(no_type_plain(reason, pool, f, tuple(advice), only=cause))) if advice else reason


def _azure_judged(reason: Reason, pool: PoolReasons | None, dialect: str | None) -> Reason:
    f = fields_of(pool, dialect, reason)
    zones = next((tuple(q.values) for q in reason.requirements if q.key == ZONE and q.operator == "In"), None)
    advice = azure.no_type_advice(zones)
    if K.offering_only(reason.cause):
        return replace(reason, plain=capital(no_type_plain(reason, pool, f)) + " " + advice)
    return replace(reason, plain=capital(no_type_plain(reason, pool, f, (advice,))))


def _advised_pool(pool: PoolReasons, dialect: str | None, load: CatalogFor, done: Advised,
                  platform: tuple[Requirement, ...] = ()) -> PoolReasons:
    """Items share their pools (report.Explanation._share): each shared pool is re-worded once."""
    key = ("pool", id(pool), dialect, platform)
    found = done.get(key)
    if not isinstance(found, PoolReasons):
        reasons = tuple(_advised(r, pool, dialect, load, done, platform) for r in pool.reasons)
        found = done[key] = pool if reasons == pool.reasons else replace(pool, reasons=reasons)
    return found


def enrich_item(item: Item, load: CatalogFor, done: Advised | None = None) -> None:
    p = item.parsed
    done = {} if done is None else done
    if not any(r.kind == NO_INSTANCE_TYPE for r in item.all_reasons()):
        return
    platform = pod_platform(item.all_reasons())
    pools = tuple(_advised_pool(pool, p.dialect, load, done, platform) for pool in p.pools)
    reasons = tuple(_advised(r, None, p.dialect, load, done, platform) for r in p.reasons)
    if pools != p.pools or reasons != p.reasons:
        item.parsed = replace(p, pools=pools, reasons=reasons)
        item.plain = item_plain(item)


def enrich(explanation: Explanation, load: CatalogFor) -> None:
    merge_pod_names(explanation)
    link_node_classes(explanation)
    link_nominations(explanation)
    link_scheduled(explanation)
    done: Advised = {}
    for item in explanation.item_list():
        enrich_item(item, load, done)
