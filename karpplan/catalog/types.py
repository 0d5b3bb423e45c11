"""The catalog's data: `InstanceType`s with their `InstanceShape` (the EC2 facts) and `Offering`s (zone, capacity
type, price), and the `Catalog` that holds them with where its figures come from."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from karpplan.model.fargate_prices import FargatePrice
from karpplan.model.resources import Resources

ON_DEMAND = "on-demand"
SPOT = "spot"
RESERVED = "reserved"


ZONES_ASSUMED = "assumed"  # how `Catalog.zones_source` starts when no input said which zones the cluster has


def zones_assumed(source: str) -> bool:
    """Does this zones source (`Catalog.zones_source`, `summary.zonesSource`) say the zones were assumed?"""
    return source.startswith(ZONES_ASSUMED)


@dataclass(frozen=True)
class Offering:
    """Where and how an instance type can be bought, and at what hourly price (USD)."""

    zone: str
    capacity_type: str
    price: float
    estimated: bool = False  # price derived, not read from a price list


@dataclass(frozen=True)
class InstanceShape:
    """The EC2 facts allocatable is computed from (absent for user catalogs that give allocatable)."""

    vcpu: int
    memory_mib: int
    arch: str
    eni_pods: int  # ENI-limited max pods with 0 reserved ENIs
    ephemeral_gib: int = 20
    local_storage_gb: int = 0  # total instance-store (NVMe) size in GB, for instanceStorePolicy RAID0
    ipv4_per_eni: int = 0  # IPv4 addresses per network interface (0: unknown); a Windows node offers one less


@dataclass(frozen=True)
class InstanceType:
    """One instance type as a node would see it.

    `labels` are the concrete labels every node of this type carries (instance-type, arch, os and the
    provider's `karpenter.k8s.aws/*` labels); zone and capacity type come from the chosen offering.
    Extended resources (nvidia.com/gpu, ...) are part of `capacity` and `allocatable`.
    """

    name: str
    labels: Mapping[str, str]
    capacity: Resources
    allocatable: Resources
    offerings: tuple[Offering, ...]
    shape: InstanceShape | None = None
    os_values: tuple[str, ...] = ("linux",)  # fake catalogs may offer several OSes per type
    # Label keys the catalog knows but this type lacks (a metal type's hypervisor, a CPU type's GPU
    # labels): a requirement on them sees `DoesNotExist`, as Karpenter's instance-type requirements do.
    absent_label_keys: frozenset[str] = frozenset()
    # True when karpplan derived allocatable from capacity (a user catalog that gave capacity only), so
    # kubelet settings may recompute it; False when it was given or computed from EC2 facts (`shape`).
    allocatable_derived: bool = False

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, InstanceType)
            and other.name == self.name
            and other.allocatable == self.allocatable
        )

    @property
    def cheapest_price(self) -> float:
        return min((o.price for o in self.offerings), default=float("inf"))


def label_keys_of(types: Iterable[InstanceType]) -> frozenset[str]:
    """Every label key some of these instance types define (present or known-absent)."""
    keys: set[str] = set()
    for it in types:
        keys.update(it.labels)
        keys.update(it.absent_label_keys)
    return frozenset(keys)


@dataclass(frozen=True)
class Catalog:
    name: str
    region: str
    zones: tuple[str, ...]
    instance_types: tuple[InstanceType, ...]
    # Where the figures came from and how old they are (shown by `karpplan catalog --info`).
    sources: Mapping[str, str] = field(default_factory=dict)
    estimated_prices: bool = False
    embedded: bool = True  # False for a user's InstanceCatalog (--catalog)
    # Where `zones` came from when narrowed to the cluster's (`catalog/zones.py`): "--zones", "ClusterConfig
    # file:line", "EC2NodeClass file:line", "existing nodes", or "assumed: every zone of <region>".
    zones_source: str = ""
    # `--fargate-prices`: the Fargate rate to plan with instead of the region's (model/fargate_prices.py)
    fargate_price: FargatePrice | None = None
    # NodeOverlays select per NodePool (catalog/overlays.py): a pool's own catalog where its overlays differ
    pool_catalogs: Mapping[str, Catalog] = field(default_factory=dict, compare=False, repr=False)
    # `label_keys()`, read once (not an init field: `dataclasses.replace` with other types never carries it over)
    _label_keys: frozenset[str] | None = field(default=None, init=False, compare=False, repr=False)

    def for_pool(self, name: str) -> Catalog:
        """The catalog the pool's launch options are built from: with the NodeOverlays that select it."""
        return self.pool_catalogs.get(name, self)

    @property
    def zones_assumed(self) -> bool:
        """Nothing in the input said which zones the cluster has: every zone of the region was assumed."""
        return zones_assumed(self.zones_source)

    def by_name(self) -> dict[str, InstanceType]:
        return {it.name: it for it in self.instance_types}

    def label_keys(self) -> frozenset[str]:
        """Every label key some instance type of this catalog defines (present or known-absent), read once.

        Karpenter treats the labels its cloud provider resolves as well-known; for a user catalog these
        keys play that role (the fake provider's `size`, `special`, `integer`).
        """
        if self._label_keys is None:
            object.__setattr__(self, "_label_keys", label_keys_of(self.instance_types))
        assert self._label_keys is not None
        return self._label_keys
