"""The cluster's zones: which of the catalog's zones new nodes may launch in, and where that was read.

Karpenter launches only in the zones of its EC2NodeClass's subnets (the AWS provider's instance-type
offerings are narrowed to them), and counts as the domains of a zone spread the zones its NodePools'
requirements and those offerings allow (`scheduling/topology.py`). A catalog holds every zone of its
region; narrowing its offerings to the cluster's zones gives both. The zones are, first that says:

1. `--zones a,b,c` (each must be a zone of the catalog, else bad input naming the catalog's zones);
2. an eksctl ClusterConfig's `availabilityZones`, its existing VPC's subnets' zones (`vpc.subnets`) and its
   node groups' `availabilityZones` (a zone outside the region is bad input at its line);
3. the `status.subnets[].zone` of the input's EC2NodeClasses (what Karpenter resolved its
   subnetSelectorTerms to; the selector terms alone cannot give zones offline);
4. the zones of existing Nodes, with those pending pods require (their volumes' zones, their own node
   affinity) and those NodePools name in their requirements, as nodes show where the cluster runs, not
   every zone it has (embedded catalog only: a user's InstanceCatalog lists its own zones);
5. else every zone of the catalog: for the embedded catalog an assumption, which the plan says.

A NodePool's zone requirement narrows what that pool launches; it is not the cluster's zones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from karpplan.catalog.types import ZONES_ASSUMED, Catalog
from karpplan.errors import InputError, InputProblem, Origin
from karpplan.inputs.placeholders import placeholder_in
from karpplan.model import labels as L
from karpplan.model.inventory import Inventory
from karpplan.model.pods import PodTemplate

ZONES_FLAG = "--zones"


@dataclass(frozen=True)
class ClusterZones:
    zones: tuple[str, ...]
    source: str  # see Catalog.zones_source


def parse_zones(values: Iterable[str] | None) -> tuple[str, ...]:
    """`--zones a,b --zones c`: the zones named, in order, once each (empty: the option was not given)."""
    zones = (z.strip() for v in values or () for z in v.split(","))
    return tuple(dict.fromkeys(z for z in zones if z))


def _where(catalog: Catalog) -> str:
    return f"region {catalog.region}" if catalog.embedded or not catalog.name else f"catalog {catalog.name}"


def _rendered(zones: Iterable[str]) -> list[str]:
    """The zones without unrendered placeholders (`${AZ_1}`): those name no zone; lint reports them
    (unrendered-placeholder) and here they are read as if they were not written."""
    return [z for z in zones if placeholder_in(z) is None]


def _outside(zones: Sequence[str], catalog: Catalog, origin: Origin, what: str) -> InputProblem | None:
    bad = [z for z in _rendered(zones) if z not in catalog.zones]
    if not bad:
        return None
    names = ", ".join(bad)
    return InputProblem(origin, f"{what}{names} {'is not a zone' if len(bad) == 1 else 'are not zones'} of "
                                f"{_where(catalog)}; its zones are {', '.join(catalog.zones)}")


def cluster_zones(inventory: Inventory, catalog: Catalog, flag: Sequence[str] = ()) -> ClusterZones:
    """The cluster's zones (see the module docstring). Raises InputError for a zone outside the catalog."""
    ordered = catalog.zones
    if flag:
        problem = _outside(flag, catalog, Origin(ZONES_FLAG), "")
        if problem is not None:
            raise InputError(problem)
        return ClusterZones(tuple(z for z in ordered if z in flag), ZONES_FLAG)
    for cluster in inventory.clusters:
        problems = [_outside(cluster.availability_zones, catalog, cluster.zones_origin, "availabilityZones: ")]
        problems += [_outside(g.availability_zones, catalog, g.zones_origin, "availabilityZones: ")
                     for g in cluster.node_groups]
        found = [p for p in problems if p is not None]
        if found:
            raise InputError(found)
        named = set(_rendered(cluster.availability_zones)) | {z for g in cluster.node_groups
                                                              for z in _rendered(g.availability_zones)}
        subnets = {z for z in cluster.subnet_zones if z in ordered}  # keys that are no zone name: eksctl's to resolve
        if named or subnets:
            where = (str(cluster.zones_origin) if cluster.availability_zones
                     else f"{cluster.subnets_origin} (vpc.subnets)" if subnets
                     else f"{cluster.origin} (its node groups' availabilityZones)")
            named |= subnets
            return ClusterZones(tuple(z for z in ordered if z in named), f"ClusterConfig {where}")
    subnets = {z for nc in inventory.nodeclasses for z in nc.zones if z in ordered}
    if subnets:
        first = next(nc for nc in inventory.nodeclasses if subnets.intersection(nc.zones))
        return ClusterZones(tuple(z for z in ordered if z in subnets), f"EC2NodeClass {first.origin}")
    if catalog.embedded:
        seen = {n.labels.get(L.ZONE) for n in inventory.nodes}
        if seen & set(ordered):
            # Nodes show where the cluster runs now, not every zone it has: a zone a pending pod requires (its
            # bound volume's, its own affinity's) is one too, rather than a pod left out on a guess, and so is
            # a zone a NodePool names (Karpenter launches there only where the cluster has a subnet).
            extra = (_required_zones(inventory) | _pool_zones(inventory)) & set(ordered) - seen
            source = "existing nodes" + (" and the zones pending pods and NodePools name" if extra else "")
            return ClusterZones(tuple(z for z in ordered if z in seen or z in extra), source)
        return ClusterZones(ordered, f"{ZONES_ASSUMED}: every zone of {catalog.region}")
    return ClusterZones(ordered, f"catalog {catalog.name}" if catalog.name else "catalog")


def _pool_zones(inventory: Inventory) -> set[str]:
    """Zones some NodePool's requirements name (`topology.kubernetes.io/zone In [...]`)."""
    zones: set[str] = set()
    for pool in inventory.nodepools:
        requirement = pool.requirements.get(L.ZONE)
        zones |= (requirement.finite_values() or set()) if requirement is not None else set()
    return zones


def _required_zones(inventory: Inventory) -> set[str]:
    """Zones some pending pod's required node affinity (volumes' zones included) names."""
    zones: set[str] = set()
    templates = {id(p.template): p.template for p in inventory.pending}
    for template in templates.values():
        for alternative in template.affinity.strict_alternatives():
            requirement = alternative.get(L.ZONE)
            zones |= (requirement.finite_values() or set()) if requirement is not None else set()
    return zones


_narrowed: dict[tuple[int, tuple[str, ...], str], tuple[Catalog, Catalog]] = {}


def narrowed(catalog: Catalog, zones: ClusterZones) -> Catalog:
    """The catalog with offerings in the cluster's zones only (types keep their place, perhaps with none)."""
    key = (id(catalog), zones.zones, zones.source)
    hit = _narrowed.get(key)
    if hit is not None and hit[0] is catalog:
        return hit[1]
    keep = frozenset(zones.zones)
    if keep == frozenset(catalog.zones):
        out = dataclasses.replace(catalog, zones_source=zones.source)
    else:
        types = tuple(
            it if all(o.zone in keep for o in it.offerings)
            else dataclasses.replace(it, offerings=tuple(o for o in it.offerings if o.zone in keep))
            for it in catalog.instance_types)
        out = dataclasses.replace(catalog, zones=zones.zones, instance_types=types, zones_source=zones.source)
    if len(_narrowed) >= 16:
        _narrowed.clear()
    _narrowed[key] = (catalog, out)
    return out


def with_cluster_zones(catalog: Catalog, inventory: Inventory, flag: Sequence[str] = ()) -> Catalog:
    """`catalog` narrowed to the cluster's zones, `zones_source` saying where they came from."""
    return narrowed(catalog, cluster_zones(inventory, catalog, flag))


def outside_zones_reason(template: PodTemplate, catalog: Catalog) -> str | None:
    """Why a pod whose required zones are all outside the cluster's cannot run, in plain words (else None)."""
    if not catalog.zones_source:
        return None
    wanted: set[str] = set()
    for alternative in template.affinity.strict_alternatives():
        requirement = alternative.get(L.ZONE)
        values = requirement.finite_values() if requirement is not None else None
        if values is None:
            return None
        wanted |= values
    # A placeholder (`<<AVAILABILITY_ZONE>>`) is no zone anywhere: the reason that leads the list says so
    # (`plan_reasons.with_placeholders_said`); saying it is not one of the cluster's too makes the point twice.
    wanted = {zone for zone in wanted if placeholder_in(zone) is None}
    if not wanted or wanted & set(catalog.zones):
        return None
    source = "assumed" if catalog.zones_assumed else f"from {catalog.zones_source}"
    return (f"the pod requires zone {', '.join(sorted(wanted))}, which is not one of the cluster's zones "
            f"({', '.join(catalog.zones)}; {source})")


def zones_warning(catalog: Catalog) -> str | None:
    """One line when the zones were assumed: what was assumed and how to narrow it."""
    if not catalog.zones_assumed:
        return None
    example = ",".join(catalog.zones[:3])
    return (f"zones: nothing in the input says which zones the cluster has, so karpplan assumed every zone of "
            f"{catalog.region} ({', '.join(catalog.zones)}); if the cluster's subnets are in fewer, say which "
            f"with {ZONES_FLAG} {example} (or an eksctl ClusterConfig's availabilityZones)")
