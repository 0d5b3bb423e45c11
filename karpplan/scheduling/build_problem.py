"""Building the scheduling `Problem` from the inventory and the catalog: existing nodes with what they hold,
launch options, each group's static verdicts (the registry's filters and option tests), pool headroom, topology.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

from karpplan.catalog.types import Catalog, InstanceType
from karpplan.constraints.pool_headroom import pool_headroom
from karpplan.model.inventory import Inventory
from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import DaemonSet, Pod, PodGroup, PodTemplate
from karpplan.model.pools import NodePool, order_by_weight
from karpplan.model.resources import Resources
from karpplan.model.taints import SCHEDULING_EFFECTS, untolerated
from karpplan.scheduling.candidates import LaunchOption, PoolVerdict, check_pool
from karpplan.scheduling.daemon_ports import daemonset_key
from karpplan.scheduling.existing_nodes import ExistingNodeInfo
from karpplan.scheduling.filters import static_reasons
from karpplan.scheduling.launch_memo import launch_options as memo_launch_options
from karpplan.scheduling.problem import PREFER_NO_SCHEDULE_TIER, GroupInfo, Problem
from karpplan.scheduling.static_pools import static_pools
from karpplan.scheduling.topology import EligibleCache, build_topology

if TYPE_CHECKING:
    from karpplan.constraints.base import ConstraintKind


def _existing_infos(inventory: Inventory, nodes: Sequence[ExistingNode],
                    daemonsets: Sequence[DaemonSet]) -> list[ExistingNodeInfo]:
    infos = {n.name: ExistingNodeInfo(n) for n in nodes}
    ds_on_node: dict[str, set[str]] = {}
    for pod in inventory.pods:
        if pod.node_name is None or pod.node_name not in infos:
            continue
        info = infos[pod.node_name]
        info.bound.append(pod)
        daemon = f"{pod.namespace}/{pod.owner.split('/', 1)[1]}" if pod.owner and pod.owner.startswith("DaemonSet/") else None
        if pod.occupies_resources:
            info.used = info.used + pod.requests
            info.host_ports.extend(pod.template.host_ports)
            if daemon is not None:
                info.daemon_ports.extend((daemon, port) for port in pod.template.host_ports)
        if daemon is not None:
            ds_on_node.setdefault(pod.node_name, set()).add(daemon)
    for info in infos.values():
        node = info.node
        present = ds_on_node.get(node.name, set())
        for ds in daemonsets:
            if f"{ds.namespace}/{ds.name}" in present:
                continue
            if untolerated(ds.template.tolerations, node.taints, SCHEDULING_EFFECTS):
                continue
            if not ds.template.affinity.matches(node.labels, node.name) or node.is_fargate:
                continue
            info.used = info.used + ds.template.requests
            # The DaemonSet pod still to come holds its host ports there too (kube-scheduler's NodePorts).
            info.host_ports.extend(ds.template.host_ports)
            info.daemon_ports.extend((daemonset_key(ds), port) for port in ds.template.host_ports)
    return list(infos.values())


def _registry() -> tuple[ConstraintKind, ...]:
    # Imported when a problem is built: the kinds bring OR-Tools, which commands that never solve (explain,
    # inventory) should not pay for at start-up.
    from karpplan.constraints.registry import REGISTRY

    return REGISTRY


_INDEX = operator.attrgetter("index")
_Usable = tuple[list[LaunchOption], dict[int, int], frozenset[int]]
OptionTest = Callable[[Mapping[str, str]], str | None]
PoolCheck = Callable[[PodTemplate, NodePool, Sequence[LaunchOption], Resources | None, int | None], PoolVerdict]


class _Shared:
    """One object for equal allowed verdicts, and one (options, tier, option ids) for groups whose allowed
    verdicts are the same objects at the same tiers: a repository's thousands of pod groups mostly use a
    handful of pools in a handful of ways, and each usable set spans thousands of launch options."""

    def __init__(self) -> None:
        self._verdicts: dict[tuple[int, bool, int, bytes], PoolVerdict] = {}
        self._usable: dict[Hashable, _Usable] = {}

    def verdict(self, v: PoolVerdict) -> PoolVerdict:
        """An allowed verdict equal to `v` (same pool, same rows of the same table) seen before, else `v`."""
        if not v.ok or v.rows is None:
            return v
        return self._verdicts.setdefault((id(v.pool), v.prefer_no_schedule, id(v.table), v.rows.tobytes()), v)

    def usable(self, verdicts: Sequence[PoolVerdict], option_tests: Sequence[OptionTest],
               tests_key: Hashable = None) -> _Usable:
        """The options a group with these verdicts may use, their tiers and their indices. `tests_key`: what
        the option tests read of the group's template (equal keys: equal tests), None when unknown."""
        allowed = [v for v in verdicts if v.ok]
        # Karpenter tolerates PreferNoSchedule pool taints only as its last relaxation: such pools are
        # used only when no other pool fits, so they sit in a tier of their own behind every other.
        last_resort = any(not v.prefer_no_schedule for v in allowed)
        tiers = sorted({v.pool.weight for v in allowed}, reverse=True)
        tier_of = {w: t for t, w in enumerate(tiers)}
        levels = [tier_of[v.pool.weight] + (PREFER_NO_SCHEDULE_TIER if v.prefer_no_schedule and last_resort else 0)
                  for v in allowed]
        key: Hashable = tuple((id(v), level) for v, level in zip(allowed, levels, strict=True))
        cached = not option_tests or tests_key is not None
        if option_tests:
            key = (key, tests_key)
        if cached and key in self._usable:  # the verdicts are kept alive in _verdicts
            return self._usable[key]
        group_options: list[LaunchOption] = []
        tier: dict[int, int] = {}
        for v, level in zip(allowed, levels, strict=True):
            kept = v.options
            if option_tests:
                kept = [o for o in kept if not any(test(o.labels) is not None for test in option_tests)]
            group_options.extend(kept)
            tier.update(dict.fromkeys(map(_INDEX, kept), level))  # C loops: thousands of options per group
        usable = group_options, tier, frozenset(map(_INDEX, group_options))
        if cached:
            self._usable[key] = usable
        return usable


SharedVerdicts = _Shared  # kept by a caller across problems over the same options (`build_problem(shared=)`)


def build_problem(
    inventory: Inventory,
    catalog: Catalog,
    groups: Sequence[PodGroup],
    instance_types_for: Callable[..., tuple[InstanceType, ...]],
    node_labels: Callable[..., dict[str, str]],
    *,
    launch_options: list[LaunchOption] | None = None,
    receivers: Collection[str] | None = None,
    static_filter: Callable[[PodTemplate, ExistingNodeInfo], list[str]] = static_reasons,
    static_filter_for: Callable[[PodTemplate], Callable[[ExistingNodeInfo], list[str]]] | None = None,
    eligible_cache: EligibleCache | None = None,
    pool_check: PoolCheck = check_pool,
    shared: SharedVerdicts | None = None,
    option_tests_key: Callable[[PodTemplate], Hashable] | None = None,
) -> Problem:
    """The problem of placing `groups`. `launch_options`: options built before for these pools (every
    pod's custom label values included), reused as they are; `receivers`: the only existing nodes pods may
    be placed on (the others still count for topology and limits), None for all; `static_filter`:
    `static_reasons` or a caller's cache of it (`static_filter_for`: one per template, instead);
    `eligible_cache`: a caller's cache of spread domains;
    `pool_check`: `check_pool` or a caller's cache of it; `shared`: a caller's `SharedVerdicts`, kept across
    problems over the very same options; `option_tests_key`: what the registry's option filters read of a
    template (lets `shared` keep the options of groups with option tests too)."""
    pools = order_by_weight([p for p in inventory.nodepools if not p.not_ready])  # Karpenter's NewScheduler
    pending: list[Pod] = [p for g in groups for p in g.pods]
    options = launch_options if launch_options is not None else memo_launch_options(
        pools, inventory.nodeclasses, catalog, inventory.daemonsets, pending, instance_types_for, node_labels)
    static = static_pools(pools, inventory.nodeclasses, catalog, inventory.daemonsets, inventory.nodes,
                          instance_types_for, node_labels)
    nodes = [*inventory.nodes, *(n for s in static for n in s.nodes)]
    existing = _existing_infos(inventory, nodes if receivers is None else
                               [n for n in nodes if n.name in receivers], inventory.daemonsets)
    headroom = {p.name: pool_headroom(p, nodes) for p in pools}
    fargate = [info.node.is_fargate for info in existing]
    infos: list[GroupInfo] = []
    shared = shared if shared is not None else _Shared()
    for index, group in enumerate(groups):
        pod_template = group.template
        ok: list[int] = []
        reasons: dict[str, list[str]] = {}
        on_node = static_filter_for(pod_template) if static_filter_for is not None else None
        for i, info in enumerate(existing):
            if fargate[i]:
                reasons[info.node.name] = ["node(s) are Fargate nodes, which run only their own pod"]
                continue
            r = on_node(info) if on_node is not None else static_filter(pod_template, info)
            if r:
                reasons[info.node.name] = r
            else:
                ok.append(i)
        verdicts = [shared.verdict(pool_check(pod_template, p, options, *headroom[p.name])) for p in pools]
        option_tests = [test for kind in _registry() if (test := kind.option_filter(pod_template)) is not None]
        tests_key = option_tests_key(pod_template) if option_tests and option_tests_key is not None else None
        infos.append(GroupInfo(index, group, ok, reasons, verdicts, *shared.usable(verdicts, option_tests, tests_key)))
    topology = build_topology([g.template for g in groups], nodes, inventory.bound, options,
                              inventory.namespace_labels, eligible_cache)
    return Problem(inventory, catalog, pools, infos, existing, options, headroom, topology, inventory.namespace_labels,
                   static, existing_last=frozenset(n.name for n in nodes if n.starting))  # initialized ones first
