"""The simulated cluster between commands: its nodes, the pods bound to each, the pods still pending.

A command removes its candidates' nodes, binds each moved pod where the simulation placed it (a node left,
or the replacement it launches, which joins the cluster under a name of its own and may itself be
consolidated later); a bare pod (no controller) is evicted and never comes back, and the command says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime

import numpy as np
import numpy.typing as npt

from karpplan.catalog import instance_types_for, node_labels
from karpplan.catalog.types import Catalog
from karpplan.consolidate.budgets import Disruption
from karpplan.consolidate.candidates import Candidate
from karpplan.consolidate.pdb import Budget, Limits
from karpplan.consolidate.relevance import BoundIndex
from karpplan.consolidate.snapshot import SimNode, Snapshot
from karpplan.model import labels as L
from karpplan.model.inventory import Inventory
from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import Pod, PodTemplate
from karpplan.model.pools import NodePool, order_by_weight
from karpplan.model.resources import Resources
from karpplan.scheduling.build_problem import SharedVerdicts
from karpplan.scheduling.candidates import (
    LaunchOption,
    PoolVerdict,
    check_pool,
    within_pool_limits,
)
from karpplan.scheduling.existing_nodes import ExistingNodeInfo
from karpplan.scheduling.launch_memo import launch_options as memo_launch_options
from karpplan.scheduling.topology import EligibleCache


def _counted(node: SimNode) -> bool:
    """The node counts in its NodePool's budget: initialized, its instance not already terminating."""
    return not node.uninitialized and not node.instance_terminating


def is_bare(pod: Pod) -> bool:
    """No controller owns it: evicted, nothing recreates it."""
    return pod.owner is None


def shape_text(template: PodTemplate) -> str:
    """The template's content, everything but where it was read."""
    return repr([(f.name, getattr(template, f.name)) for f in fields(template) if f.name != "origin"])


def filter_shape(template: PodTemplate) -> str:
    """What kube-scheduler's static filters (`constraints.registry.STATIC_FILTERS`' `filter_node`) read of a
    template: its tolerations (taints), node affinity, requests (resources), host ports, the topology keys of
    its hard spread constraints and of its required pod-affinity terms (all the registry's `option_filter`s
    read too). Templates alike in these, whatever
    their labels and selectors, get the same verdict on a node (Deployments of one size and placement)."""
    return repr((template.tolerations, template.affinity, template.requests, template.host_ports,
                 tuple(c.topology_key for c in template.hard_spread),
                 tuple(t.topology_key for t in template.pod_affinity.required)))


def share_templates(pods_on: Mapping[str, list[Pod]], pending: list[Pod]) -> tuple[dict[str, list[Pod]], list[Pod]]:
    """The pods again, the replicas of one controller (ownerReference) and one shape sharing one template (a snapshot lists its pods
    one by one, each with a template of its own). The scheduling problem groups pods by template, so a
    simulation's work per group (static filters, topology rules, pool verdicts) is done once per shape, not
    once per moving pod."""
    seen: dict[tuple[str, str], PodTemplate] = {}

    def one(pod: Pod) -> Pod:
        template = seen.setdefault((pod.owner or pod.key, shape_text(pod.template)), pod.template)
        return pod if template is pod.template else replace(pod, template=template)

    return {name: [one(p) for p in ps] for name, ps in pods_on.items()}, [one(p) for p in pending]


@dataclass(frozen=True)
class Rooms:
    """The nodes' rooms as a matrix: row i is node `names[i]`, column `columns[k]` resource k."""

    names: list[str]
    schedulable: npt.NDArray[np.bool_]  # not cordoned
    columns: dict[str, int]
    matrix: npt.NDArray[np.int64]

    def with_room_for(self, requests: Iterable[Resources]) -> npt.NDArray[np.bool_]:
        """Per node: schedulable, and some of `requests` fits its room (`Resources.fits_in`)."""
        fits = np.zeros(len(self.names), dtype=np.bool_)
        for wanted in requests:
            mask = self.schedulable.copy()
            for key, value in wanted.items():
                if value <= 0:
                    continue
                column = self.columns.get(key)
                if column is None:  # no node has any: absent counts as 0
                    mask[:] = False
                    break
                mask &= self.matrix[:, column] >= value
            fits |= mask
        return fits


@dataclass
class ClusterState:
    inventory: Inventory
    catalog: Catalog
    nodes: list[SimNode]
    pods_on: dict[str, list[Pod]]
    pending: list[Pod]
    pools: Mapping[str, NodePool]
    disruption: Mapping[str, Disruption]
    pdbs: list[Budget]
    now: datetime | None = None  # the time budgets' schedules are evaluated at (None: unknown, assumed active)
    launched: int = 0
    gone: list[Pod] = field(default_factory=list)  # bare pods evicted for good
    _options: list[LaunchOption] | None = None
    _used: dict[str, Resources] = field(default_factory=dict)
    _versions: dict[str, int] = field(default_factory=dict)  # node -> times its pods changed
    # shape -> node -> (its version, the static filters' reasons, those of its labels and taints per filter)
    _static: dict[str, dict[str, tuple[int, list[str], list[list[str]]]]] = field(default_factory=dict)
    _shapes: dict[int, tuple[PodTemplate, str]] = field(default_factory=dict)
    _filter_shapes: dict[int, tuple[PodTemplate, str]] = field(default_factory=dict)
    _room: dict[tuple[str, int], Resources] = field(default_factory=dict)
    # the pool and options are kept with the verdict, so their ids are never reused while remembered
    _pool_verdicts: dict[tuple[str, int, int, int | None],
                         tuple[NodePool, Sequence[LaunchOption], PoolVerdict]] = field(default_factory=dict)
    _index: BoundIndex | None = None  # the bound pods indexed, until a command changes them
    _rooms: Rooms | None = None  # every node's room as a matrix, until a command changes them
    _bare: list[ExistingNode] | None = None  # every node folded by all its bound pods, until a command
    _folded: dict[tuple[str, int, tuple[int, ...]], ExistingNode] = field(default_factory=dict)
    eligible: EligibleCache = field(default_factory=EligibleCache)  # spread domains (a node's labels never change)
    # pool verdicts and the options of groups, shared by every problem over `launch_options()` (`build_problem`)
    shared: SharedVerdicts = field(default_factory=SharedVerdicts)
    # node -> ((its version, the PDBs' allowed disruptions), its candidacy): kept by `loop.candidates_of`
    candidacy: dict[str, tuple[tuple[int, tuple[tuple[str, int], ...]], Candidate | str]] = field(default_factory=dict)

    def __repr__(self) -> str:  # the dataclass's would print every cache (gigabytes at scale)
        return f"ClusterState({len(self.nodes)} nodes, {len(self.pending)} pending pods)"

    def version(self, name: str) -> int:
        """How many times the node's pods changed (a node's pods only change by a command)."""
        return self._versions.get(name, 0)

    def bound_index(self) -> BoundIndex:
        """Every bound pod indexed for `relevance` (rebuilt after a command)."""
        if self._index is None:
            self._index = BoundIndex([p for ps in self.pods_on.values() for p in ps])
        return self._index

    def folded(self, sim: SimNode, kept: list[Pod]) -> ExistingNode:
        """The node shrunk by its bound pods but `kept` (those a simulation sees one by one)."""
        key = (sim.name, self._versions.get(sim.name, 0), tuple(id(p) for p in kept))
        found = self._folded.get(key)
        if found is None:
            folded = self.used(sim.name)
            for p in kept:
                if p.occupies_resources:
                    folded = folded - p.requests
            found = replace(sim.node, allocatable=sim.node.allocatable - folded) if any(folded.values()) else sim.node
            self._folded[key] = found
        return found

    def folded_all(self) -> list[ExistingNode]:
        """`folded(node, [])` of every node, in node order (kept until a command changes the cluster)."""
        if self._bare is None:
            self._bare = [self.folded(n, []) for n in self.nodes]
        return self._bare

    def shape(self, template: PodTemplate) -> str:
        """The template's content, everything but where it was read (a snapshot's pods each have a template
        of their own; replicas of one workload have the same shape). The template is kept with it, so its id
        is never reused while remembered."""
        found = self._shapes.get(id(template))
        if found is None:
            found = self._shapes[id(template)] = (template, shape_text(template))
        return found[1]

    def filter_shape(self, template: PodTemplate) -> str:
        """What the static filters read of the template (`filter_shape`), kept per template (kept with it)."""
        found = self._filter_shapes.get(id(template))
        if found is None:
            found = self._filter_shapes[id(template)] = (template, filter_shape(template))
        return found[1]

    def static_filter(self, template: PodTemplate) -> Callable[[ExistingNodeInfo], list[str]]:
        """kube-scheduler's static filters of the template, node by node: kept until the node's pods change,
        shared by templates of one shape. Sound because a simulation keeps every bound pod the template's own
        rules match (`relevance.py`)."""
        # Imported here, as build_problem does: the kinds bring OR-Tools, which explain should not pay for.
        from karpplan.constraints.host_ports import HOST_PORTS
        from karpplan.constraints.registry import STATIC_FILTERS
        from karpplan.constraints.resources import RESOURCES

        of_pods = (RESOURCES, HOST_PORTS)  # the filters that read the pods bound to the node
        known = self._static.setdefault(self.filter_shape(template), {})
        versions = self._versions

        def reasons(info: ExistingNodeInfo) -> list[str]:
            name = info.node.name
            version = versions.get(name, 0)
            found = known.get(name)
            if found is not None and found[0] == version:
                return found[1]
            # The filters of the node's labels and taints never change under its name: kept for the run.
            fixed = found[2] if found is not None else [
                [] if kind in of_pods else kind.filter_node(template, info) for kind in STATIC_FILTERS]
            out = [r for kind, rs in zip(STATIC_FILTERS, fixed, strict=True)
                   for r in (kind.filter_node(template, info) if kind in of_pods else rs)]
            known[name] = (version, out, fixed)
            return out

        return reasons

    def pool_verdict(self, template: PodTemplate, pool: NodePool, options: Sequence[LaunchOption],
                     remaining: Resources | None, nodes_left: int | None) -> PoolVerdict:
        """`check_pool`, shared by templates of one shape and kept for the run but for the resource limits
        (it reads the template's content, the pool, the options and `limits.nodes` left, all in the key);
        the limits left, which change with the nodes a simulation removes, are applied last, as it does."""
        key = (self.shape(template), id(pool), id(options), nodes_left)
        found = self._pool_verdicts.get(key)
        if found is None:
            found = self._pool_verdicts[key] = (pool, options, check_pool(template, pool, options, None, nodes_left))
        return found[2] if remaining is None else within_pool_limits(found[2], remaining)

    def used(self, name: str) -> Resources:
        """Requests of the pods bound to the node (kept until its pods change)."""
        if name not in self._used:
            total = Resources()
            for p in self.pods_on.get(name, []):
                if p.occupies_resources:
                    total = total + p.requests
            self._used[name] = total
        return self._used[name]

    def room(self, sim: SimNode) -> Resources:
        """The node's allocatable less its bound pods' requests (kept until its pods change)."""
        key = (sim.name, self._versions.get(sim.name, 0))
        found = self._room.get(key)
        if found is None:
            found = self._room[key] = sim.node.allocatable - self.used(sim.name)
        return found

    def rooms(self) -> Rooms | None:
        """Every node's room (`room`) as one integer matrix, kept until a command changes the cluster; None
        when an amount exceeds 64 bits (then ask `room` node by node)."""
        if self._rooms is None:
            rooms = [self.room(n) for n in self.nodes]
            keys = sorted({k for r in rooms for k in r})
            matrix = np.zeros((len(rooms), len(keys)), dtype=np.int64)
            try:
                for i, r in enumerate(rooms):
                    matrix[i] = [r.get(k) for k in keys]
            except OverflowError:
                return None
            self._rooms = Rooms([n.name for n in self.nodes], np.array([not n.node.unschedulable for n in self.nodes]),
                                {k: i for i, k in enumerate(keys)}, matrix)
        return self._rooms

    def launch_options(self) -> list[LaunchOption]:
        """Every NodePool's launch options, built once (with every pod's custom label values) for all runs."""
        if self._options is None:

            pods = [p for ps in self.pods_on.values() for p in ps] + self.pending
            self._options = memo_launch_options(order_by_weight(list(self.inventory.nodepools)),
                                                self.inventory.nodeclasses, self.catalog, self.inventory.daemonsets,
                                                pods, instance_types_for, node_labels)
        return self._options

    @classmethod
    def of(cls, snapshot: Snapshot, catalog: Catalog) -> ClusterState:
        pools = {p.name: p for p in snapshot.inventory.nodepools}
        pods_on, pending = share_templates(snapshot.pods_on, snapshot.pending)
        return cls(snapshot.inventory, catalog, list(snapshot.nodes), pods_on, pending, pools,
                   snapshot.disruption, snapshot.pdbs, snapshot.clock.now)

    def node(self, name: str) -> SimNode:
        return next(n for n in self.nodes if n.name == name)

    def pool_size(self, pool: str) -> int:
        """The NodePool's initialized nodes (what budget percentages are taken of: `BuildDisruptionBudgetMapping`
        leaves out nodes not yet initialized)."""
        return sum(1 for n in self.nodes if n.pool == pool and _counted(n))

    def disrupting(self, pool: str) -> list[str]:
        """The NodePool's initialized nodes already being disrupted or deleted, or NotReady: each uses up one of
        the pool's allowed disruptions (`BuildDisruptionBudgetMapping`)."""
        return [n.name for n in self.nodes if n.pool == pool and _counted(n) and (n.deleting or n.not_ready)]

    def pdb_limits(self) -> Limits:
        bound = [p for ps in self.pods_on.values() for p in ps]
        return Limits(self.pdbs, bound + self.pending)

    @property
    def cost(self) -> float:
        return sum(n.cost for n in self.nodes)

    def launch(self, option: LaunchOption) -> SimNode:
        """A replacement node for `option`, named like `plan`'s new nodes, joining the cluster."""
        self.launched += 1
        it = option.instance_type.name.replace(".", "-")
        name = f"{option.pool.name}-{it}-{option.zone}-{self.launched}".lower()
        labels = dict(option.labels)
        labels[L.HOSTNAME] = name
        labels.setdefault(L.INSTANCE_TYPE, option.instance_type.name)
        node = ExistingNode(name, labels, option.taints, allocatable=option.allocatable, capacity=option.capacity,
                            hourly_price=option.price, capacity_type=option.capacity_type)
        sim = SimNode(node, {}, option.price, replacement=True)
        self.nodes.append(sim)
        self.pods_on[name] = []
        self._index = None
        self._rooms = None
        self._bare = None
        return sim

    def remove(self, names: set[str], placed: Mapping[str, str], moving: list[Pod]) -> list[Pod]:
        """Remove nodes; bind the moving pods where `placed` says (pod key -> node); the bare pods evicted."""
        evicted = [p for p in moving if is_bare(p)]
        self.nodes = [n for n in self.nodes if n.name not in names]
        for name in names:
            self.pods_on.pop(name, None)
        for pod in moving:
            if is_bare(pod):
                continue
            dest = placed.get(pod.key)
            if dest is None or dest not in self.pods_on:
                continue
            self.pods_on[dest].append(replace(pod, node_name=dest))
            self._used.pop(dest, None)
            self._versions[dest] = self._versions.get(dest, 0) + 1
        self.gone.extend(evicted)
        self._index = None
        self._rooms = None
        self._bare = None
        return evicted
