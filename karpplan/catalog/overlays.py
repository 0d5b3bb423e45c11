"""NodeOverlays applied per NodePool: the prices and extended capacity Karpenter's simulation would use.

Karpenter (kubernetes-sigs/karpenter pkg/controllers/nodeoverlay) evaluates every overlay against each
NodePool's instance types: an overlay applies to an offering when its requirements match the instance
type's labels, the offering's zone and capacity type, the pool's name (`karpenter.sh/nodepool`) and the
labels of the pool's template. So an overlay selecting `karpenter.sh/nodepool: a` changes pool a's
offerings and no other pool's. Overlays are taken by weight, higher first, ties the name later in the
alphabet first; the first to price an offering decides its price, and capacity merges, the first to name a
resource deciding its amount. An overlay that would price an offering, or set a resource, that an overlay
of the same weight already does conflicts: Karpenter marks it `ValidationSucceeded=False` (Conflict) and
applies none of it, on any pool. Huge pages an overlay adds (`hugepages-2Mi: 1Gi`) are taken from the
type's allocatable memory, as Karpenter's `computeAllocatable` (pkg/cloudprovider/types.go, v1.7+) takes them.

The catalog returned is the one no pool's name or labels select (existing nodes, the catalog listing);
each pool whose overlays differ gets its own (`Catalog.for_pool`), which its launch options are built from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from karpplan.catalog.coverage import lacking_text, lacking_types
from karpplan.catalog.types import Catalog, InstanceType, Offering
from karpplan.model.labels import CAPACITY_TYPE, ZONE
from karpplan.model.overlays import NodeOverlay, precedence
from karpplan.model.pools import NodePool
from karpplan.model.quantity import format_resource
from karpplan.model.resources import MEMORY, Resources

HUGEPAGES_PREFIX = "hugepages-"
_Context = tuple[str | None, Mapping[str, str]]  # (pool name, the labels its nodes carry beyond the type's), None: no pool


@dataclass
class _Updates:
    """One pool's (or no pool's) overlay updates, per instance type: as Karpenter's instance type store."""

    # (type, zone, capacity type) -> (the overlay deciding the price, the lowest weight so far, its overlay)
    prices: dict[tuple[str, str, str], tuple[NodeOverlay, int, str]] = field(default_factory=dict)
    capacity: dict[str, dict[str, int]] = field(default_factory=dict)  # type -> resource -> amount
    # type -> (the lowest weight so far, the resources that overlay names, its name)
    capacity_weight: dict[str, tuple[int, frozenset[str], str]] = field(default_factory=dict)

    def conflict(self, it: InstanceType, offerings: Sequence[Offering], overlay: NodeOverlay) -> str | None:
        """The overlay of the same weight this one conflicts with on this type, None when none."""
        if overlay.sets_price:
            for o in offerings:
                held = self.prices.get((it.name, o.zone, o.capacity_type))
                if held is not None and held[1] == overlay.weight:
                    return held[2]
        lowest = self.capacity_weight.get(it.name)
        if overlay.capacity and lowest is not None and lowest[0] == overlay.weight and lowest[1] & set(overlay.capacity):
            return lowest[2]
        return None

    def store(self, it: InstanceType, offerings: Sequence[Offering], overlay: NodeOverlay) -> None:
        if overlay.sets_price:
            for o in offerings:
                key = (it.name, o.zone, o.capacity_type)
                held = self.prices.get(key)
                self.prices[key] = (overlay if held is None else held[0], overlay.weight, overlay.name)
        if overlay.capacity:
            merged = self.capacity.setdefault(it.name, {})
            for name, amount in overlay.capacity.items():
                merged.setdefault(name, amount)
            self.capacity_weight[it.name] = (overlay.weight, frozenset(overlay.capacity), overlay.name)


def _matched(it: InstanceType, overlay: NodeOverlay, extra: Mapping[str, str]) -> list[Offering]:
    """The instance type's offerings the overlay's requirements match, with the pool's labels (the type's own
    keys checked once, the offering's zone and capacity type per offering)."""
    labels = {**it.labels, **extra}
    per_offering = []
    for key, requirement in overlay.requirements.items():
        if key in (ZONE, CAPACITY_TYPE):
            per_offering.append(requirement)
        elif not requirement.matches(labels):
            return []
    return [o for o in it.offerings
            if all(r.matches({ZONE: o.zone, CAPACITY_TYPE: o.capacity_type}) for r in per_offering)]


def _contexts(pools: Sequence[NodePool]) -> list[_Context]:
    return [(None, {}), *((p.name, {**p.labels, p.pool_label_key: p.name}) for p in pools)]


def _overlaid(it: InstanceType, updates: _Updates) -> InstanceType:
    offerings = tuple(
        dataclasses.replace(o, price=round(held[0].priced(o.price), 6))
        if (held := updates.prices.get((it.name, o.zone, o.capacity_type))) is not None else o
        for o in it.offerings)
    extra = updates.capacity.get(it.name, {})
    if not extra and offerings == it.offerings:
        return it
    capacity = Resources({**it.capacity, **extra}) if extra else it.capacity
    allocatable = Resources({**it.allocatable, **extra}) if extra else it.allocatable
    huge_pages = sum(amount for name, amount in capacity.items() if name.startswith(HUGEPAGES_PREFIX))
    if huge_pages:
        # Pre-allocated huge pages are memory no pod may request as memory (`computeAllocatable`, v1.7+).
        allocatable = Resources({**allocatable, MEMORY: max(allocatable.get(MEMORY) - huge_pages, 0)})
    return dataclasses.replace(it, capacity=capacity, allocatable=allocatable, offerings=offerings)


def apply_node_overlays(catalog: Catalog, overlays: Sequence[NodeOverlay], pools: Sequence[NodePool] = ()
                        ) -> tuple[Catalog, list[str]]:
    """The catalog as the overlays change it (per pool, see the module docstring), and one note per overlay
    saying what it changed, on which pools, or why it changed nothing."""
    if not overlays:
        return catalog, []
    contexts = _contexts(pools)
    updates = [_Updates() for _ in contexts]
    notes: list[str] = []
    for overlay in precedence(list(overlays)):
        matched = [[(it, offerings) for it in catalog.instance_types if (offerings := _matched(it, overlay, extra))]
                   for _, extra in contexts]
        # Karpenter judges conflicts over the pools it evaluates; without pools, over the catalog itself.
        judged = range(1, len(contexts)) if pools else range(1)
        other = next((name for i in judged for it, offerings in matched[i]
                      if (name := updates[i].conflict(it, offerings, overlay)) is not None), None)
        if other is not None:
            notes.append(f"{overlay.origin}: NodeOverlay {overlay.name} (weight {overlay.weight}) conflicts with "
                         f"NodeOverlay {other}, of the same weight, on the same offerings or resources: Karpenter "
                         "takes the name later in the alphabet first, marks this one ValidationSucceeded=False "
                         "(Conflict) and applies none of it, nor does the plan; give one of them another weight")
            continue
        for i, found in enumerate(matched):
            for it, offerings in found:
                updates[i].store(it, offerings, overlay)
        notes.append(_note(overlay, contexts, matched, catalog if pools else None))
    shared = dataclasses.replace(catalog, instance_types=tuple(_overlaid(it, updates[0]) for it in catalog.instance_types))
    per_pool: dict[str, Catalog] = {}
    for (name, _), pool_updates in zip(contexts[1:], updates[1:], strict=True):
        if name is not None and (pool_updates.prices, pool_updates.capacity) != (updates[0].prices, updates[0].capacity):
            per_pool[name] = dataclasses.replace(
                catalog, instance_types=tuple(_overlaid(it, pool_updates) for it in catalog.instance_types))
    return dataclasses.replace(shared, pool_catalogs=per_pool), notes


def _note(overlay: NodeOverlay, contexts: Sequence[_Context], matched: Sequence[Sequence[tuple[InstanceType,
          Sequence[Offering]]]], pooled: Catalog | None) -> str:
    """What one applied overlay changes: how many instance types (and offerings priced), on which pools (`pooled`:
    the catalog, when the overlays were applied for pools; where the overlay changes nothing, the types its
    requirements select that the region's embedded catalog lacks are named)."""
    with_pools = pooled is not None
    found = [(name, m) for (name, _), m in zip(contexts, matched, strict=True) if m and (name is not None or not with_pools)]
    what = []
    if overlay.sets_price:
        change = f"price {overlay.price}" if overlay.price is not None else f"priceAdjustment {overlay.price_adjustment}"
        offerings = max((sum(len(o) for _, o in m) for _, m in found), default=0)
        what.append(f"{change} on {offerings} offering(s)")
    if overlay.capacity:
        what.append("capacity " + ", ".join(f"{k}={format_resource(k, v)}" for k, v in sorted(overlay.capacity.items())))
        if any(k.startswith(HUGEPAGES_PREFIX) for k in overlay.capacity):
            what.append("its huge pages come out of the nodes' allocatable memory")
    summary = "; ".join(what) or "nothing to change"
    types = max((len(m) for _, m in found), default=0)
    head = f"{overlay.origin}: NodeOverlay {overlay.name} (weight {overlay.weight}) matches {types} instance type(s)"
    if with_pools:
        applied = [name for name, _ in found if name is not None]
        lacking = lacking_types(pooled, overlay.requirements) if not applied and pooled is not None else []
        if lacking and pooled is not None:
            return (f"{head} of no NodePool: its requirements select {lacking_text(pooled, lacking)}, so it changes "
                    "nothing in the plan "
                    "(karpplan cannot add offerings for a type its catalog lacks, even at an overlay's price)")
        if not applied:
            return (f"{head} of no NodePool: its requirements select no pool's instance types (by name, "
                    "template labels or instance-type labels), so it changes nothing in the plan")
        shown = ", ".join(applied[:5]) + (f" and {len(applied) - 5} more" if len(applied) > 5 else "")
        head += f" of NodePool(s) {shown}" + (" only" if len(applied) < len(contexts) - 1 else "")
    if not overlay.sets_price:
        return f"{head}: {summary}; the plan's capacity includes it, as Karpenter's simulation does"
    return (f"{head}: {summary}; the plan's prices and capacity include it, as Karpenter's simulation does "
            "(overlay prices are not what AWS bills)")
