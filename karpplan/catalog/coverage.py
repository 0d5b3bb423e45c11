"""What a region's embedded catalog lacks: the instance types karpplan knows but has no price for there, and how
to say so wherever an answer depends on one.

The embedded data knows the specs of every type Karpenter lists (region-independent), but prices outside us-east-1
come from older, smaller public lists (shared/data/README.md, "Known gaps"): a type with no price in the region is
not in its catalog. An answer that depends on such a type (a NodePool that allows only them, a listing that finds
none) must say the catalog lacks it, not that nothing exists, and name the remedy (`remedy`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from karpplan.catalog.embedded import FAMILY_DERIVED, embedded_data
from karpplan.catalog.nodelabels import instance_requirements
from karpplan.catalog.types import Catalog
from karpplan.model.labels import CAPACITY_TYPE, OS, WINDOWS_BUILD, ZONE
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import Resources

FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
SHOWN = 8  # names quoted before "and N more"


@dataclass(frozen=True)
class Coverage:
    """How much of the known instance types one region's embedded catalog prices, and as of when."""

    region: str
    known: int  # instance types whose specs the embedded data holds (every region)
    listed: int  # priced in the region by a public price list
    derived: int  # priced from the listed sizes of their family in the region (estimated)
    missing_families: tuple[str, ...]  # families with no type priced in the region
    as_of: str  # the dates of the region's price lists, oldest first

    @property
    def priced(self) -> int:
        return self.listed + self.derived

    @property
    def complete(self) -> bool:
        return self.priced >= self.known

    def describe(self) -> str:
        """One line: how many types are priced, since when, and which families are missing."""
        text = f"{self.priced} of {self.known} known instance types priced in {self.region}"
        if self.derived:
            text += f" ({self.listed} listed, {self.derived} derived from their family's listed sizes)"
        text += f", prices as of {self.as_of}"
        if self.missing_families:
            text += (f"; no price for any size of {len(self.missing_families)} families "
                     f"({names_text(self.missing_families)})")
        return text


@functools.cache
def region_coverage(region: str) -> Coverage:
    """The embedded catalog's coverage of `region` (a region the embedded data lists)."""
    data = embedded_data()
    regional = data.prices.get(region, {})
    families: dict[str, bool] = {}
    for base in data.types:
        family = base.labels.get(FAMILY_LABEL, base.name.split(".")[0])
        families[family] = families.get(family, False) or base.name in regional
    derived = sum(1 for _, source in regional.values() if source == FAMILY_DERIVED)
    known = {base.name for base in data.types}
    dates = sorted({d for key, d in data.price_sources.get(region, {}).items()
                    if key != FAMILY_DERIVED and d[:1].isdigit()})
    dates += [f"{key} {d}" for key, d in sorted(data.price_sources.get(region, {}).items())
              if key != FAMILY_DERIVED and not d[:1].isdigit()]
    return Coverage(region, len(known), sum(1 for name in regional if name in known) - derived, derived,
                    tuple(sorted(f for f, priced in families.items() if not priced)), " and ".join(dates) or "?")


def names_text(names: Iterable[str], shown: int = SHOWN) -> str:
    """`a, b, c and 4 more`."""
    items = list(names)
    if len(items) <= shown:
        return ", ".join(items)
    return f"{', '.join(items[:shown])} and {len(items) - shown} more"


def lacking_types(catalog: Catalog, requirements: Requirements | None = None, fits: Resources | None = None) -> list[str]:
    """The instance types karpplan knows, that `requirements` allow (zone, capacity type and OS aside) and whose
    allocatable holds `fits`, but that this embedded catalog lacks (no price in its region). Empty for a user's
    catalog: its author chose its types."""
    if not catalog.embedded:
        return []
    have = {it.name for it in catalog.instance_types}
    wanted = (requirements or Requirements()).without(ZONE, CAPACITY_TYPE, OS, WINDOWS_BUILD)
    out: list[str] = []
    for index, base in enumerate(embedded_data().types):
        if base.name in have or (fits is not None and not fits.fits_in(base.allocatable)):
            continue
        if wanted.intersects(_own_requirements(index)):
            out.append(base.name)
    return out


@functools.cache
def _own_requirements(index: int) -> Requirements:
    """The labels a node of the embedded data's `index`-th type carries, as requirements (built once: a plan asks
    `lacking_types` for every unschedulable group and pool)."""
    base = embedded_data().types[index]
    return Requirements([*(Requirement(k, frozenset([v])) for k, v in base.labels.items()),
                         *(Requirement.of(k, "DoesNotExist") for k in base.absent)])


COVERAGE_SAID_BELOW = 0.95  # us-east-1's current list misses a few new types: not worth a line in every plan


def plan_coverage(catalog: Catalog, pools: Iterable[NodePool] = ()) -> str:
    """An embedded catalog that prices only part of the types karpplan knows: how much, since when, and the
    families the NodePools allow that have no price here. Both the plan and its Karpenter baseline choose without
    those, where the real Karpenter would not: a saving quoted against that baseline is among the priced types only.
    '' for a catalog that prices (nearly) every type, or a user's own."""
    if not catalog.embedded or catalog.estimated_prices:
        return ""
    coverage = region_coverage(catalog.region)
    if coverage.priced >= COVERAGE_SAID_BELOW * coverage.known:
        return ""
    text = f"{coverage.priced} of {coverage.known} known types priced, as of {coverage.as_of}"
    missing = set(coverage.missing_families)
    allowed = sorted({name.split(".")[0] for pool in pools for name in lacking_types(catalog, pool.requirements)}
                     & missing)
    if allowed:
        text += (f"; the NodePools also allow {len(allowed)} families unpriced here ({names_text(allowed)}), which "
                 "this plan and its Karpenter baseline both leave out, though Karpenter may launch them")
    return text + "; --allow-estimated-prices or --catalog FILE for the rest"


def pool_lacking_warning(pool: NodePool, catalog: Catalog) -> str | None:
    """The plan's warning for a NodePool that launches nothing because every instance type its requirements
    allow is one this region's embedded catalog lacks (None when the catalog has one of them, or lacks none)."""
    catalog = catalog.for_pool(pool.name)
    wanted = pool.requirements.without(ZONE, CAPACITY_TYPE, OS, WINDOWS_BUILD)
    if any(wanted.intersects(instance_requirements(it, auto_mode=False, with_offerings=False).without(OS))
           for it in catalog.instance_types):
        return None
    lacking = lacking_types(catalog, pool.requirements)
    if not lacking:
        return None
    return (f"{pool.origin}: NodePool {pool.name} launches nothing in this plan: its requirements allow only "
            f"{lacking_text(catalog, lacking)}, so pods only it can take are reported unschedulable here, though "
            f"the region may well offer these types: {remedy(catalog)}")


def remedy(catalog: Catalog) -> str:
    """How to plan with the types a region's embedded catalog lacks."""
    region = catalog.region
    text = (f"give a current catalog with --catalog FILE (`karpplan catalog refresh --region {region}` writes one "
            f"from AWS, `karpplan catalog import` from AWS CLI output)")
    if not catalog.estimated_prices and region != embedded_data().base_region:
        text += ", or pass --allow-estimated-prices (us-east-1 prices scaled to the region)"
    return text


def lacking_text(catalog: Catalog, names: list[str]) -> str:
    """`g6e.8xlarge, which the embedded us-west-2 catalog lacks (why)`; `remedy` says what to do."""
    region = catalog.region
    coverage = region_coverage(region)
    one = len(names) == 1
    families = sorted({name.split(".")[0] for name in names})
    listed = names_text(names) if len(names) <= SHOWN or len(families) == 1 else \
        f"{len(names)} types of {len(families)} families ({names_text(families)})"
    return (f"{listed}, which the embedded {region} catalog lacks (karpplan knows "
            f"{'the type' if one else 'these types'} but has no {region} price for {'it' if one else 'them'}: "
            f"its {region} prices cover {coverage.priced} of {coverage.known} types, as of {coverage.as_of})")
