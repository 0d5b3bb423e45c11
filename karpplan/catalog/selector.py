"""`karpplan catalog`'s instance selection: which types a NodePool allows and a pod of a given size fits.

A small, self-contained version of Karpenter's instance-type filter (karpenter-scheduler.md §4, §7):
1. the type's requirements (labels, absent keys as DoesNotExist, OS) intersect the pool's requirements;
2. it keeps the offerings whose zone and capacity type the pool allows (none left: not launchable);
3. `pod + daemon overhead <= allocatable`, where the overhead sums the DaemonSets that would run on
   such a node: their pod tolerates the pool's taints (PreferNoSchedule aside) and one of their strict
   node-affinity alternatives is compatible with the pool and intersects the type.
Results are sorted cheapest first (by the cheapest allowed offering), then by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from karpplan.catalog.nodelabels import instance_requirements
from karpplan.catalog.types import Catalog, InstanceType, Offering
from karpplan.model.labels import CAPACITY_TYPE, WELL_KNOWN, ZONE
from karpplan.model.pods import DaemonSet
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirements
from karpplan.model.resources import PODS, Resources
from karpplan.model.taints import NO_EXECUTE, NO_SCHEDULE, untolerated


@dataclass(frozen=True)
class Selection:
    instance_type: InstanceType
    offerings: tuple[Offering, ...]  # the offerings the pool allows
    daemon_overhead: Resources
    daemonsets: tuple[str, ...]  # "namespace/name" of the DaemonSets counted

    @property
    def price(self) -> float:
        return min((o.price for o in self.offerings), default=float("inf"))

    @property
    def estimated(self) -> bool:
        """True when the cheapest allowed offering's price is an estimate."""
        cheapest = min(self.offerings, key=lambda o: (o.price, o.estimated), default=None)
        return cheapest is not None and cheapest.estimated


def daemonset_runs_on(
    ds: DaemonSet,
    pool: NodePool | None,
    type_requirements: Requirements,
    well_known: frozenset[str],
) -> bool:
    """Would this DaemonSet's pod land on a node of `pool` (None: an untainted, unconstrained pool)
    with these instance-type requirements?"""
    if pool is not None and untolerated(ds.template.tolerations, pool.taints, (NO_SCHEDULE, NO_EXECUTE)):
        return False
    pool_requirements = pool.requirements if pool is not None else Requirements()
    return any(
        alternative.compatible(pool_requirements, well_known) and alternative.intersects(type_requirements)
        for alternative in ds.template.affinity.strict_alternatives()
    )


def select(
    catalog: Catalog,
    instance_types: Sequence[InstanceType],
    *,
    pool: NodePool | None = None,
    daemonsets: Sequence[DaemonSet] = (),
    request: Resources | None = None,
) -> list[Selection]:
    """The launchable types, cheapest first.

    `instance_types` are the catalog's types as the pool's node class sees them (see
    `instance_types_for`). `request` is one pod's requests; `pods: 1` is added when missing. Without a
    request every allowed type is listed (DaemonSets must still fit).
    """
    pod = request if request is not None else Resources()
    if pod and PODS not in pod:
        pod = pod + {PODS: 1}
    well_known = WELL_KNOWN | catalog.label_keys()
    out: list[Selection] = []
    for it in instance_types:
        type_reqs = instance_requirements(
            it, auto_mode=pool.auto_mode if pool else False, with_offerings=False
        )
        if pool is not None and not type_reqs.intersects(pool.requirements):
            continue
        offerings = _allowed_offerings(it, pool.requirements if pool else Requirements())
        if not offerings:
            continue
        counted = [ds for ds in daemonsets if daemonset_runs_on(ds, pool, type_reqs, well_known)]
        overhead = Resources()
        for ds in counted:
            overhead = overhead + ds.template.requests
        if not (pod + overhead).fits_in(it.allocatable):
            continue
        out.append(Selection(it, offerings, overhead, tuple(f"{ds.namespace}/{ds.name}" for ds in counted)))
    out.sort(key=lambda s: (s.price, s.instance_type.name))
    return out


def _allowed_offerings(it: InstanceType, requirements: Requirements) -> tuple[Offering, ...]:
    zone = requirements.get_or_any(ZONE)
    capacity_type = requirements.get_or_any(CAPACITY_TYPE)
    return tuple(o for o in it.offerings if zone.has(o.zone) and capacity_type.has(o.capacity_type))
