"""What can be launched: one `LaunchOption` per (NodePool, instance type, zone, capacity type).

A launch option carries the labels and taints the node would have, its allocatable minus the DaemonSet
overhead Karpenter reserves for that (pool, instance type), the capacity NodePool limits count, and the
hourly price. `PoolCheck` says, for one pod template and one pool, the first Karpenter filter that rules
the pool out (taints, requirements, resources, offerings, limits), so engines and explanations agree.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from karpplan.catalog.nodelabels import absent_keys as absent_for
from karpplan.catalog.types import Catalog, InstanceType
from karpplan.model import labels as L
from karpplan.model.pods import DaemonSet, HostPort, Pod, PodTemplate
from karpplan.model.pools import NodeClass, NodePool, auto_mode_storage
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import Resources
from karpplan.model.selectors import NodeAffinity, NodeSelectorTerm
from karpplan.model.taints import (
    SCHEDULING_EFFECTS,
    Taint,
    Toleration,
    untolerated,
)
from karpplan.scheduling.custom_labels import custom_label_values, pod_requirement_values, provider_keys
from karpplan.scheduling.daemon_ports import (
    DaemonPort,
    clashing,
    daemon_port_failure,
)
from karpplan.scheduling.label_values import by_label_values
from karpplan.scheduling.launch_daemons import PoolDaemons, held_ports, total_requests
from karpplan.scheduling.pool_admission import cache_key, pool_admission
from karpplan.scheduling.shortfall_hints import offered_nowhere, os_nowhere

IndexArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class LaunchOption:
    """A node Karpenter could launch, with everything the planner needs to place pods on it."""

    index: int
    pool: NodePool
    instance_type: InstanceType
    zone: str
    capacity_type: str
    price: float
    price_estimated: bool
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    allocatable: Resources  # instance allocatable (what the node reports)
    daemon_overhead: Resources  # requests of DaemonSets that would run there
    capacity: Resources  # what NodePool limits count
    free: Resources = Resources()  # room for pending pods once DaemonSets are placed (see room_for_pods)
    daemon_ports: tuple[DaemonPort, ...] = ()  # host ports the DaemonSets that would run there hold

    def __hash__(self) -> int:
        return self.index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LaunchOption) and other.index == self.index

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.pool.name, self.instance_type.name, self.zone, self.capacity_type)


def _pool_node_class(pool: NodePool, classes: Sequence[NodeClass]) -> NodeClass | None:
    if pool.node_class_ref is None:
        return None
    for nc in classes:
        if nc.name == pool.node_class_ref.name:
            return nc
    return None


def daemon_overhead(daemonsets: Sequence[DaemonSet], labels: Mapping[str, str], taints: Sequence[Taint],
                    node_name: str = "") -> Resources:
    """Requests of the DaemonSets that would run on a node with these labels and taints.

    A DaemonSet runs where its pod tolerates the node's NoSchedule/NoExecute taints (PreferNoSchedule is
    tolerated automatically, as Karpenter does) and its node selector / required affinity matches.
    """
    return total_requests([ds for ds in daemonsets if not untolerated(ds.template.tolerations, taints,
                                                                      SCHEDULING_EFFECTS)
                           and ds.template.affinity.matches(labels, node_name)])


def build_launch_options(
    pools: Sequence[NodePool],
    node_classes: Sequence[NodeClass],
    catalog: Catalog,
    daemonsets: Sequence[DaemonSet],
    pending: Sequence[Pod],
    instance_types_for: object,
    node_labels: object,
    *, static: bool = False,
) -> list[LaunchOption]:
    """Every (pool, instance type, offering) the dynamic (or, `static`, static) pools allow, priced and labelled."""
    types_for: Callable[..., tuple[InstanceType, ...]] = instance_types_for  # type: ignore[assignment]
    labels_for: Callable[..., dict[str, str]] = node_labels  # type: ignore[assignment]
    pod_values = pod_requirement_values(pending)
    provided = catalog.label_keys()  # the instance types' own labels: never a pool's invented custom value
    options: list[LaunchOption] = []
    for pool in pools:
        if pool.static != static:
            continue  # Karpenter never provisions a static NodePool for pending pods
        node_class = _pool_node_class(pool, node_classes)
        kubelet = pool.kubelet
        if node_class is not None and node_class.kubelet is not None:
            kubelet = node_class.kubelet.merged(pool.kubelet) if pool.kubelet else node_class.kubelet
        ami_family = node_class.ami_family if node_class is not None else None
        storage = node_class.storage if node_class is not None else auto_mode_storage() if pool.auto_mode else None
        types = types_for(catalog.for_pool(pool.name), kubelet, ami_family, storage)  # its NodeOverlays
        _pool_options(pool, types, labels_for, catalog.region, custom_label_values(pool, pod_values, provided), daemonsets,
                      options, provided)
    return options


def _pool_options(pool: NodePool, types: Sequence[InstanceType], labels_for: Callable[..., dict[str, str]],
                  region: str | None, variants: Sequence[Mapping[str, str]], daemonsets: Sequence[DaemonSet],
                  options: list[LaunchOption], provided: frozenset[str] = frozenset()) -> None:
    """The pool's launch options, appended to `options`: one per instance type, offering, OS and variant of
    the custom label values pods ask for, that the pool's requirements allow."""

    # Requirements on keys an offering does not set can be checked once per instance type.
    per_offering = {L.OS, L.ZONE, L.CAPACITY_TYPE, pool.pool_label_key, L.REGION, L.COMPUTE_TYPE,
                    L.EC2NODECLASS, *pool.labels, *(k for v in variants for k in v)}
    per_type = [(k, r) for k, r in pool.requirements.items() if k not in per_offering]
    offering_reqs = [(k, r) for k, r in pool.requirements.items() if k in per_offering]
    room: dict[tuple[int, Resources], Resources] = {}
    daemons = PoolDaemons(pool, daemonsets, provided)  # Karpenter counts them per (pool, instance type)
    for it in types:
        base = dict(labels_for(it, auto_mode=pool.auto_mode))
        absent = absent_for(it, auto_mode=pool.auto_mode)
        if not _allows(per_type, base, absent):
            continue
        running = daemons.running(it)
        overhead, ports = total_requests(running), held_ports(running)
        for offering in it.offerings:
            for os_value in it.os_values if not pool.auto_mode else ("linux",):
                for variant in variants:
                    labels = _offering_labels(pool, base, os_value, offering.zone, offering.capacity_type, region,
                                              variant)
                    if not _allows(offering_reqs, labels, absent):  # per_type passed above
                        continue
                    free = room.get((id(it), overhead))
                    if free is None:
                        free = room[(id(it), overhead)] = room_for_pods(it.allocatable, overhead)
                    options.append(LaunchOption(
                        index=len(options), pool=pool, instance_type=it, zone=offering.zone,
                        capacity_type=offering.capacity_type, price=offering.price,
                        price_estimated=offering.estimated, labels=labels, taints=pool.taints,
                        allocatable=it.allocatable, daemon_overhead=overhead, capacity=it.capacity, free=free,
                        daemon_ports=ports))


def _offering_labels(pool: NodePool, base: Mapping[str, str], os_value: str, zone: str, capacity_type: str,
                     region: str | None, variant: Mapping[str, str]) -> dict[str, str]:
    """The labels a node of this offering gets: the instance type's, its OS, zone, capacity type, pool, region,
    node class, then the pool's own labels and the variant's."""
    labels = dict(base)
    if not pool.auto_mode:
        labels[L.OS] = os_value
    labels.update({
        L.ZONE: zone,
        L.CAPACITY_TYPE: capacity_type,
        pool.pool_label_key: pool.name,
    })
    if region:
        labels[L.REGION] = region
    if pool.auto_mode:
        labels[L.COMPUTE_TYPE] = "auto"
    if pool.node_class_ref is not None and not pool.auto_mode and pool.kind == "NodePool":
        labels[L.EC2NODECLASS] = pool.node_class_ref.name
    labels.update(pool.labels)
    labels.update(variant)
    return labels


def room_for_pods(allocatable: Resources, overhead: Resources) -> Resources:
    """Allocatable minus DaemonSet overhead; nothing at all when the DaemonSets alone do not fit.

    Karpenter checks `pods + daemon overhead <= allocatable` for every resource, so an instance type whose
    DaemonSets overflow it takes no pod, whatever the pod requests.
    """
    if not overhead.fits_in(allocatable):
        return Resources()
    return allocatable - overhead


def pool_allows(requirements: Requirements, labels: Mapping[str, str], absent: frozenset[str]) -> bool:
    """The pool's requirements admit a node with these labels (Karpenter's Intersects).

    `absent` are keys the instance type defines as DoesNotExist (an AWS type without a GPU has no GPU
    labels); a requirement on them must allow absence. Keys the instance type leaves undefined are
    ignored, as Karpenter ignores keys present on one side only (fake and user catalogs).
    """
    return _allows(requirements.items(), labels, absent)


def _allows(requirements: Iterable[tuple[str, Requirement]], labels: Mapping[str, str],
            absent: frozenset[str]) -> bool:
    for key, req in requirements:
        value = labels.get(key)
        if value is None:
            if key in absent and not req.absent_ok:
                return False
            continue
        if not req.has(value):
            return False
    return True


# ------------------------------------------------------------------------------------ option table
def int_column(values: Sequence[int]) -> npt.NDArray[Any]:
    """Exact integers: int64 when every value fits, Python integers (object array) otherwise."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)


class OptionTable:
    """Launch options as columns, so filters over thousands of them are vectorised.

    Row i is `options[i]`. Masks are boolean arrays over rows; index arrays hold rows in ascending order,
    so filtering one keeps the options' order (every list of options in the planner is in that order).
    Columns (free room and limit capacity per resource, label values per key, ranks) and masks (node
    affinity, tolerations, limits) are computed on first use and cached: they depend only on the options.
    """

    def __init__(self, options: Sequence[LaunchOption]) -> None:
        self._source = options
        self._alias: Sequence[LaunchOption] | None = None  # the last other list found to hold the same options
        self.options: tuple[LaunchOption, ...] = tuple(options)
        self.size = len(self.options)
        self._ids = tuple(map(id, self.options))  # the table keeps the options alive, so ids are unique
        self.all: IndexArray = np.arange(self.size, dtype=np.intp)
        self.prices: npt.NDArray[np.float64] = np.array([o.price for o in self.options], dtype=np.float64)
        self._row_of: dict[int, int] | None = None
        self._provider_keys: frozenset[str] | None = None
        if any(o.index != i for i, o in enumerate(self.options)):
            self._row_of = {o.index: i for i, o in enumerate(self.options)}
        self._columns: dict[tuple[str, str], npt.NDArray[Any]] = {}
        self._pools: dict[int, tuple[NodePool, IndexArray]] = {}
        self._masks: dict[tuple[str, Hashable], tuple[object, BoolArray]] = {}
        self._labels: dict[str, tuple[npt.NDArray[np.int32], list[str], dict[str, int]]] = {}
        self._ranks: dict[str, IndexArray] = {}
        self._row_sets: dict[bytes, tuple[LaunchOption, ...]] = {}

    def __reduce__(self) -> tuple[type[OptionTable], tuple[tuple[LaunchOption, ...]]]:
        # Pickled as its options alone: its caches are keyed by the ids of objects (pools, affinities) that a loaded
        # copy holds at other addresses.
        return (OptionTable, (self.options,))

    @property
    def provider_keys(self) -> frozenset[str]:
        """The label keys the options' instance types resolve themselves, beyond the well-known ones: for a user
        catalog, the keys Karpenter's cloud provider would register as well-known (the fake's `size`)."""
        if self._provider_keys is None:
            types = {id(o.instance_type): o.instance_type for o in self.options}.values()
            self._provider_keys = provider_keys(types)
        return self._provider_keys

    def same_options(self, options: Sequence[LaunchOption]) -> bool:
        """The very same option objects (`LaunchOption` equality compares only indices)."""
        if len(options) != self.size:
            return False
        if options is self._source or options is self._alias:
            return True  # a list the table was built from or matched, same length (option lists are never edited)
        if tuple(map(id, options)) != self._ids:
            return False
        # A copy of the list (the launch memo hands out copies): the next call with it is an identity test, not
        # 10,000 ids compared again (a problem's build asks once per pod group and pool).
        self._alias = options
        return True

    # ---------------------------------------------------------------------------- rows
    def rows(self, ix: IndexArray) -> list[LaunchOption]:
        """The options at these rows, in row order."""
        return list(map(self.options.__getitem__, ix.tolist()))

    def shared_rows(self, ix: IndexArray) -> list[LaunchOption]:
        """`rows`, from a cache of the row sets asked for before (templates often share one)."""
        key = ix.tobytes()
        cached = self._row_sets.get(key)
        if cached is None:
            cached = self._row_sets[key] = tuple(self.rows(ix))
        return list(cached)

    def indices(self, options: Sequence[LaunchOption]) -> IndexArray:
        """The rows of these options (which must be the table's), ascending when the options are."""
        if self._row_of is None:
            return np.fromiter((o.index for o in options), dtype=np.intp, count=len(options))
        row_of = self._row_of
        return np.fromiter((row_of[o.index] for o in options), dtype=np.intp, count=len(options))

    def rows_of(self, indices: Sequence[int] | frozenset[int]) -> IndexArray:
        """The rows of these `LaunchOption.index` values (in the order given)."""
        if self._row_of is None:
            return np.fromiter(indices, dtype=np.intp, count=len(indices))
        row_of = self._row_of
        return np.fromiter((row_of[i] for i in indices), dtype=np.intp, count=len(indices))

    def pool_rows(self, pool: NodePool) -> IndexArray:
        cached = self._pools.get(id(pool))
        if cached is None:
            rows = np.fromiter((i for i, o in enumerate(self.options) if o.pool is pool), dtype=np.intp)
            cached = self._pools[id(pool)] = (pool, rows)
        return cached[1]

    # ---------------------------------------------------------------------------- columns
    def column(self, kind: str, key: str) -> npt.NDArray[Any]:
        """`free` (room for pods) or `capacity` (what limits count) of one resource, per row."""
        col = self._columns.get((kind, key))
        if col is None:
            if kind == "free":
                col = int_column([o.free.get(key) for o in self.options])
            else:
                col = int_column([o.capacity.get(key) for o in self.options])
            self._columns[(kind, key)] = col
        return col

    def labels(self, key: str) -> tuple[npt.NDArray[np.int32], list[str], dict[str, int]]:
        """Per row the code of the option's value for `key` (-1 when absent), the values, and their codes."""
        cached = self._labels.get(key)
        if cached is None:
            values: list[str] = []
            code_of: dict[str, int] = {}
            codes = np.full(self.size, -1, dtype=np.int32)
            for i, o in enumerate(self.options):
                value = o.labels.get(key)
                if value is None:
                    continue
                code = code_of.get(value)
                if code is None:
                    code = code_of[value] = len(values)
                    values.append(value)
                codes[i] = code
            cached = self._labels[key] = (codes, values, code_of)
        return cached

    def rank(self, order: str) -> IndexArray:
        """Per row its position when sorted by `cheapest` (price, type, zone, capacity type) or `smallest`
        (capacity cpu, memory, price); ties by row, as `min` over a list in row order."""
        cached = self._ranks.get(order)
        if cached is None:
            opts = self.options
            if order == "cheapest":
                keys: list[npt.NDArray[Any]] = [
                    self.prices, np.array([o.instance_type.name for o in opts], dtype=np.str_),
                    np.array([o.zone for o in opts], dtype=np.str_),
                    np.array([o.capacity_type for o in opts], dtype=np.str_)]
            else:
                keys = [self.column("capacity", "cpu"), self.column("capacity", "memory"), self.prices]
            if any(k.dtype == object for k in keys):  # Python integers beyond int64: sort in Python
                ordered = np.array(sorted(range(self.size), key=lambda i: (*(k[i] for k in keys), i)), dtype=np.intp)
            else:
                ordered = np.lexsort((self.all, *reversed(keys))).astype(np.intp)
            ranks = np.empty(self.size, dtype=np.intp)
            ranks[ordered] = np.arange(self.size, dtype=np.intp)
            cached = self._ranks[order] = ranks
        return cached

    # ---------------------------------------------------------------------------- masks
    def _mask(self, kind: str, obj: object, build: Any) -> BoolArray:
        key = (kind, cache_key(obj))
        cached = self._masks.get(key)
        if cached is None:
            cached = self._masks[key] = (obj, np.array(build(), dtype=np.bool_).reshape(self.size))
        return cached[1]

    def ports_free(self, ports: tuple[HostPort, ...]) -> BoolArray:
        """Rows whose DaemonSets hold none of these host ports (`daemon_ports.py`)."""
        return self._mask("ports", ports, lambda: [not clashing(ports, o.daemon_ports) for o in self.options])

    def affinity_mask(self, affinity: NodeAffinity) -> BoolArray:
        """Rows whose labels the pod's node selector and required node affinity admit."""
        if affinity.required is None and not affinity.node_selector:
            return self._mask("all", None, lambda: np.ones(self.size, dtype=np.bool_))  # admits every option
        return self._mask("affinity", affinity, lambda: by_label_values(self, affinity))

    def term_mask(self, term: NodeSelectorTerm) -> BoolArray:
        """Rows matching one node selector term (a preferred affinity enforced as a requirement)."""
        return self._mask("term", term, lambda: [term.matches(o.labels, "") for o in self.options])

    def tolerated_mask(self, tolerations: Sequence[Toleration]) -> BoolArray:
        """Rows whose NoSchedule/NoExecute taints these tolerations tolerate."""
        def build() -> list[bool]:
            by_taints: dict[tuple[Taint, ...], bool] = {}
            out = []
            for o in self.options:
                ok = by_taints.get(o.taints)
                if ok is None:
                    ok = by_taints[o.taints] = not untolerated(tolerations, o.taints, SCHEDULING_EFFECTS)
                out.append(ok)
            return out
        return self._mask("tolerated", tuple(tolerations), build)

    def present_mask(self, key: str) -> BoolArray:
        """Rows whose labels carry `key`."""
        return self._mask("present", key, lambda: self.labels(key)[0] >= 0)

    def within_limits(self, remaining: Resources) -> BoolArray:
        """Rows whose capacity fits the limits left (`constraints/pool_headroom.capacity_fits`)."""
        items = tuple(remaining.items())

        def build() -> BoolArray:
            mask = np.ones(self.size, dtype=np.bool_)
            for key, value in items:
                mask &= self.column("capacity", key) <= value
            return mask
        return self._mask("limits", items, build)

    def within_rows(self, remaining: Resources, ix: IndexArray) -> BoolArray:
        """Per row of `ix`: does the option's capacity fit the limits left (uncached `within_limits`)?"""
        mask = np.ones(len(ix), dtype=np.bool_)
        for key, value in remaining.items():
            mask &= self.column("capacity", key)[ix] <= value
        return mask

    def fits(self, requests: Mapping[str, int], ix: IndexArray) -> BoolArray:
        """Per row of `ix`: do these requests fit the option's free room (`Resources.fits_in`)?"""
        mask = np.ones(len(ix), dtype=np.bool_)
        for key, value in requests.items():
            if value > 0:
                mask &= self.column("free", key)[ix] >= value
        return mask


_TABLES: list[OptionTable] = []


def option_table(options: Sequence[LaunchOption]) -> OptionTable:
    """The table of these options (the last one built is reused while the options are the same)."""
    if _TABLES and _TABLES[0].same_options(options):
        return _TABLES[0]
    table = OptionTable(options)
    _TABLES[:] = [table]
    return table


# ------------------------------------------------------------------------------------ pod vs pool
@dataclass
class PoolVerdict:
    """Why a pod can or cannot use a pool (first failing Karpenter filter), for reasons and engines."""

    pool: NodePool
    ok: bool
    reason: str = ""
    kind: str = ""  # taint | requirements | resources | offering | limits | daemonset
    prefer_no_schedule: bool = False  # only PreferNoSchedule taints are untolerated
    options: list[LaunchOption] = field(default_factory=list)
    # `options` as rows of `table` (set by check_pool; engines fall back to looking them up)
    rows: IndexArray | None = field(default=None, repr=False, compare=False)
    table: OptionTable | None = field(default=None, repr=False, compare=False)

    def rows_in(self, table: OptionTable) -> IndexArray:
        """The options as rows of `table`."""
        if self.table is table and self.rows is not None and len(self.rows) == len(self.options):
            return self.rows
        return table.indices(self.options)


def pod_pool_requirements(template: PodTemplate) -> list[Requirements]:
    """The pod's strict node requirements, one per required node-affinity term (ORed)."""
    return [r for r in template.affinity.strict_alternatives()]


def template_fits_option(template: PodTemplate, option: LaunchOption) -> bool:
    """Labels, taints (NoSchedule/NoExecute and PreferNoSchedule) and resources, ignoring topology."""
    if not template.affinity.matches(option.labels):
        return False
    if untolerated(template.tolerations, option.taints, SCHEDULING_EFFECTS):
        return False
    return template.requests.fits_in(option.free)


def check_pool(template: PodTemplate, pool: NodePool, options: Sequence[LaunchOption],
               remaining: Resources | None, nodes_left: int | None) -> PoolVerdict:
    """Karpenter's per-NodePool checks, in its order, for one pod template."""
    table = option_table(options)
    reason, kind, prefer_no_schedule = pool_admission(template, pool, table.provider_keys)
    if reason:
        return PoolVerdict(pool, False, reason, kind)
    if nodes_left is not None and nodes_left <= 0:
        return PoolVerdict(pool, False, f"node limits have been exhausted for nodepool (NodePool={pool.name})", "limits")
    pool_rows = table.pool_rows(pool)
    matching = pool_rows[table.affinity_mask(template.affinity)[pool_rows]]
    fitting = matching[table.fits(template.requests, matching)]
    if not len(matching) or not len(fitting):
        why = instance_type_failure(template, pool, table.rows(pool_rows), table.rows(matching), table.rows(fitting))
        return PoolVerdict(pool, False, why, "resources")
    if template.host_ports:
        free = fitting[table.ports_free(template.host_ports)[fitting]]
        if not len(free):  # every option the pod fits runs a DaemonSet holding its port: name them
            clashes = [c for o in table.rows(fitting) for c in clashing(template.host_ports, o.daemon_ports)]
            return PoolVerdict(pool, False, daemon_port_failure(clashes), "daemonset")
        fitting = free
    verdict = PoolVerdict(pool, True, options=table.shared_rows(fitting), prefer_no_schedule=prefer_no_schedule, rows=fitting,
                          table=table)
    return verdict if remaining is None else within_pool_limits(verdict, remaining)


def within_pool_limits(verdict: PoolVerdict, remaining: Resources) -> PoolVerdict:
    """`check_pool`'s last check, on its verdict without limits: the options within the limits left."""
    if not verdict.ok:
        return verdict
    assert verdict.table is not None and verdict.rows is not None
    table, fitting = verdict.table, verdict.rows
    within = fitting[table.within_limits(remaining)[fitting]]
    if not len(within):
        return PoolVerdict(verdict.pool, False,
                           f"all available instance types exceed limits for nodepool (NodePool={verdict.pool.name})",
                           "limits")
    return PoolVerdict(verdict.pool, True, options=table.shared_rows(within),
                       prefer_no_schedule=verdict.prefer_no_schedule, rows=within, table=table)


def instance_type_failure(template: PodTemplate, pool: NodePool, pool_options: Sequence[LaunchOption],
                          matching: Sequence[LaunchOption], fitting: Sequence[LaunchOption]) -> str:
    """Karpenter's InstanceTypeFilterError wording, plus the largest candidate for the resources case."""
    reqs = template.affinity.strict_alternatives()[0] & pool.requirements if template.affinity.strict_alternatives() else pool.requirements
    total = template.requests
    if not pool_options:
        return f"no instance type met the scheduling requirements or had enough resources or had a required offering, requirements={reqs}, resources={total}"
    if not matching:
        return (f"no instance type met all requirements, requirements={reqs}, resources={total}"
                + os_nowhere(reqs.get(L.OS), (o.labels.get(L.OS, "linux") for o in pool_options)))
    largest = max(matching, key=lambda o: (o.free.get("cpu"), o.free.get("memory")))
    short = template.requests.shortfalls(largest.free)
    overhead = largest.daemon_overhead
    detail = f"no instance type has enough resources, requirements={reqs}, resources={total + overhead}"
    hint = f" (largest candidate {largest.instance_type.name} has {largest.free} free"
    if len(overhead) > 1 or overhead.get("cpu") or overhead.get("memory"):
        hint += f" after daemonset overhead={overhead}"
    hint += f"; short of {', '.join(short)})" if short else ")"
    # A resource (a GPU, a Neuron core, EFA, huge pages...) that no instance type of the pool has at all is the
    # answer, whatever the sizes: name it.
    hint += offered_nowhere(template.requests, [o.free for o in matching])
    return detail + hint


