"""A combinatorial lower bound the LPs miss: whole nodes in every zone, and in every domain of any spread's key (issue 29).

The fluid and configuration LPs buy fractions of nodes and ignore zones; by symmetry the zone-indexed LP
buys the same fractions, spread over the zones. A real plan buys whole nodes in each zone, and zone spreads
(maxSkew, minDomains) force pods into several zones, so each zone's demand is rounded up to whole nodes on
its own. This module bounds that:

* Components. Groups that may share a launch option are joined (transitively); nodes of one component's
  options only ever hold that component's pods, so the plan's cost is the sum of its components' costs
  and a bound per component adds up. A component some of whose pods may go to existing nodes is left out
  (those pods need not buy anything).
* Per zone. Pods of a group g with a hard, self-matching zone spread (domains D, maxSkew s, T pods that may
  match in all, base counts b) hold in zone z at most `floor(T/|D|) + s - b[z]` (the global minimum is at
  most the average; `s - b[z]` when fewer domains than minDomains pin it at 0) and nothing outside D or
  outside the zones of g's options; when only g's pods match, at least `least_domain_count` less b[z]
  (`constraints/spread_counts.py`); with its own required zone anti-affinity, at most one, and none where
  a matching pod runs already. So in each dimension d the component's demand in zone z lies in [L_z, U_z].
* Whole nodes. In dimension d, with a grain u, a zone's nodes hold at most `sum n_k ceil(free_k/u)` units,
  which must reach `ceil(D_z/u)`: F_z(y), the least cost of whole nodes of the zone's options covering y
  units, is an unbounded covering knapsack (dynamic programming). The cheapest split of the component's
  demand over the zones within [L_z, U_z] (a second dynamic programme over the zones) bounds the
  component's cost in dimension d; the bound is the largest over the dimensions.
* Counted nodes. A cap set (`bound.cap_sets`: hostname anti-affinity, hostname spread) holds at most
  `per_node` of its pods on a node, so the component buys at least N = max ceil(pods / per_node) nodes.
  In dimension d, the least cost of at least N whole nodes (any zone) holding the whole demand, on a grain
  fine enough that N nodes' rounding stays within 0.1% of it (N whole nodes of the shapes a catalog sells
  cannot hold an arbitrary fraction: with 10 nodes and 4-vCPU steps, 67 vCPU cost 72 vCPU's price), is
  another bound of the component: G_n(y), n nodes covering y units, one layer per node up to N, the rest
  the unbounded covering above.

* Any topology key. Zones are one key; a hard self-matching spread (or own required anti-affinity) over any
  other key but the hostname, a custom label whose values come from pools' requirements or nodes' labels
  (Karpenter's domains, `SpreadRule.static_domains`), cuts the launch options by that label's value the same
  way (`domain_of`: an option without the label is in no domain and holds none of the rule's pods, as
  kube-scheduler's filter rejects a node missing the key and the engines ban such options,
  `TopologySpreadKind.exclude`):
  the same ranges per domain (`least_domain_count` and `skew_limit` of `constraints/spread_counts.py`) and
  the same programmes over the domains instead of the zones. Each key's programmes bound the component, so
  the largest is kept (`domain_keys`: the zone, then the component's other keys).

Everything above only relaxes (pools' limits, pod affinity, hostname rules beyond the count of nodes and the coupling of dimensions
are dropped), so the value is at most the cost of any plan placing the required pods. `with_lp_shares`
adds it to the configuration LP's: the LP's certified duals price each component's pods (a valid bound of
that component's cost), and a component whose combinatorial bound is higher raises the LP's bound by the
difference.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from karpplan.constraints.spread_counts import least_domain_count, minimum_pinned, skew_limit
from karpplan.engines.bound import MARGIN, _required, cap_sets
from karpplan.engines.effort import WorkClock
from karpplan.model.labels import HOSTNAME, ZONE
from karpplan.model.selectors import SelectorIndex
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import SpreadRule

FloatArray = npt.NDArray[np.float64]
MAX_PODS = 5000  # larger plans skip the bound (`worth_rounding`)
GRAIN = 1000  # units a component's demand is cut into, per dimension
GROUP_ZONE_SECONDS = 3e-6  # the work clock's model: per (group, zone, dimension)
OPTION_SECONDS = 4e-6  # ... per (launch option, dimension)
TABLE_SECONDS = 3e-3  # ... per (options list, zone, dimension): one covering table and one step of the split
_EPS = 1e-9
MAX_COUNTED_NODES = 64  # nodes counted one layer at a time at most (a layer is one pass over the table)
COUNTED_LAYER_SECONDS = 1e-4  # the work clock's model: per layer of a node-counting programme
COUNTED_GRAIN = 1000  # units per counted node ...
MAX_COUNTED_CELLS = 400_000  # ... within this many cells of all the layers together
NO_DOMAIN = "\x00"  # an option without a key's label: no domain of a rule over that key (no label value is this)


@dataclass(frozen=True)
class ComponentBound:
    groups: frozenset[int]  # group indices
    cost: float  # $/h lower bound on the cost of the nodes of the component's options


@dataclass(frozen=True)
class CombinatorialBound:
    cost: float  # $/h: the sum over the components
    components: tuple[ComponentBound, ...]
    demand: Mapping[int, int]  # group index -> pods that must be placed (as bounded)
    seconds: float


def zone_integer_bound(problem: Problem, required: Mapping[int, int] | None = None,
                       clock: WorkClock | None = None) -> CombinatorialBound:
    """The bound of the module docstring for every plan placing `required` (as in `fluid_lower_bound`);
    `clock` is charged its modelled time."""
    start = time.monotonic()
    demand = _required(problem, required)
    groups = [g for g in problem.groups if demand.get(g.index, 0) > 0]
    spans = SpansByKey(problem)
    out: list[ComponentBound] = []
    counted = 0  # layers of the node-counting programmes
    keys: set[str] = {ZONE}
    for members in components(groups):
        if any(g.existing_ok or not g.options for g in members):
            continue
        mine = domain_keys(problem, members)
        keys.update(mine)
        cost, layers = _component_cost(problem, members, demand, [spans.get(k) for k in mine])
        counted += layers
        out.append(ComponentBound(frozenset(g.index for g in members), cost))
    if clock is not None:
        clock.charge(modelled_seconds(problem, groups, sorted(keys)) + COUNTED_LAYER_SECONDS * counted)
    total = sum(c.cost for c in out)
    return CombinatorialBound(total, tuple(out), demand, time.monotonic() - start)


def integer_bound_seconds(problem: Problem, required: Mapping[int, int] | None = None) -> float:
    """What `zone_integer_bound` will charge the work clock (its node-counting layers aside), known before it
    runs: a caller that may do without it can ask first."""
    demand = _required(problem, required)
    groups = [g for g in problem.groups if demand.get(g.index, 0) > 0]
    keys: set[str] = {ZONE}
    for members in components(groups):
        if not any(g.existing_ok or not g.options for g in members):
            keys.update(domain_keys(problem, members))
    return modelled_seconds(problem, groups, sorted(keys))


def worth_rounding(problem: Problem) -> bool:
    """Whether whole nodes per zone may still show in the bound: up to `MAX_PODS` pending pods (at 20,000 pods
    of the bench's many-deployments row the rounding was far below the LP's price of every component, and
    the dynamic programmes took seconds)."""
    return problem.pending_count <= MAX_PODS


def modelled_seconds(problem: Problem, groups: Sequence[GroupInfo], keys: Sequence[str] = (ZONE,)) -> float:
    """The work clock's model of the bound's time: per group and domain, per option, per dynamic programme
    (the domains of every key bounded: `domain_keys`)."""
    zones = sum(len({domain_of(o, k) for o in problem.options}) for k in keys) or 1
    dims = len({d for g in groups for d, v in g.template.requests.items() if v > 0}) or 1
    return dims * (GROUP_ZONE_SECONDS * len(groups) * zones + OPTION_SECONDS * len(problem.options)
                   + TABLE_SECONDS * zones * max(len({id(g.options) for g in groups}), 1))


def with_lp_shares(lp_cost: float, duals: Mapping[int, float], bound: CombinatorialBound,
                   floors: Sequence[float] | None = None) -> float:
    """The configuration LP's bound raised where a component's combinatorial bound (or its `floors` entry,
    another valid bound of that component's nodes alone, such as its own fluid LP's) beats the LP's price of
    that component's pods (`duals`: group -> certified dual value per pod, `PatternBound.duals`)."""
    extra = 0.0
    for i, comp in enumerate(bound.components):
        share = sum(bound.demand.get(g, 0) * max(duals.get(g, 0.0), 0.0) for g in comp.groups)
        best = max(comp.cost, floors[i] if floors is not None else 0.0)
        extra += max(best - share, 0.0)
    return lp_cost + extra


def components(groups: Sequence[GroupInfo]) -> list[list[GroupInfo]]:
    """The groups joined by shared launch options (groups sharing one options list are joined at once)."""
    parent: dict[int, int] = {}

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    by_list: dict[int, list[GroupInfo]] = defaultdict(list)
    for g in groups:
        by_list[id(g.options)].append(g)
    owner: dict[int, int] = {}  # option index -> a list id
    for lid, members in by_list.items():
        parent.setdefault(lid, lid)
        for o in members[0].options:
            other = owner.setdefault(o.index, lid)
            if other != lid:
                ra, rb = find(lid), find(other)
                if ra != rb:
                    parent[ra] = rb
    joined: dict[int, list[GroupInfo]] = defaultdict(list)
    for lid, members in by_list.items():
        joined[find(lid)].extend(members)
    return [sorted(m, key=lambda g: g.index) for m in joined.values()]


def domain_of(option: LaunchOption, key: str) -> str:
    """The domain of a node of this option for a rule over `key`: its label's value (`NO_DOMAIN` without one)."""
    return option.zone if key == ZONE else option.labels.get(key, NO_DOMAIN)


def domain_keys(problem: Problem, members: Sequence[GroupInfo]) -> list[str]:
    """The keys whose domains the component's bound is cut by: the zone, then every other key (not the hostname,
    which the cap sets count) of a hard self-matching spread or an own required anti-affinity term of its groups."""
    topo = problem.topology
    keys: set[str] = set()
    for g in members:
        for rule in topo.rules_for(g.template):
            if rule.hard and rule.self_match and not rule.hostname:
                keys.add(rule.key)
        anti = topo.anti_affinity.get(id(g.template))
        for term in anti.terms if anti is not None else ():
            if term.key != HOSTNAME and term.matches(g.template.namespace, g.template.labels, topo.namespace_labels):
                keys.add(term.key)
    keys.discard(ZONE)
    return [ZONE, *sorted(keys)]


class _Spans:
    """Per hard self-matching rule over `key`: how many pods it may count in all, and whether only its owner's match."""

    def __init__(self, problem: Problem, key: str = ZONE) -> None:
        self.problem = problem
        self.key = key
        self.rules: dict[int, SpreadRule] = {}
        index: SelectorIndex[SpreadRule] = SelectorIndex()
        for g in problem.groups:
            for rule in problem.topology.rules_for(g.template):
                if rule.key == key and not rule.hostname and rule.hard and rule.self_match and rule.uid not in self.rules:
                    self.rules[rule.uid] = rule
                    index.add(rule, rule.owner.namespace, rule.selector)
        self.total: dict[int, int] = {uid: sum(r.base_counts.values()) for uid, r in self.rules.items()}
        self.matching: dict[int, set[int]] = defaultdict(set)
        for h in problem.groups:
            for rule in index.candidates(h.template.namespace, h.template.labels):
                if rule.counts(h.template.namespace, h.template.labels):
                    self.total[rule.uid] += h.size
                    self.matching[rule.uid].add(h.index)


class SpansByKey:
    """`_Spans` of each key, built when first asked."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self._by_key: dict[str, _Spans] = {}

    def get(self, key: str) -> _Spans:
        spans = self._by_key.get(key)
        if spans is None:
            spans = self._by_key[key] = _Spans(self.problem, key)
        return spans


def _zone_range(g: GroupInfo, pods: int, zones: Sequence[str], own: frozenset[str],
                spans: _Spans) -> tuple[list[int], list[int]] | None:
    """(least, most) pods of g in each domain of `spans.key` (`zones`; the zones for the zone key; `own`: the
    domains of g's options); None when no plan places them."""
    low = [0] * len(zones)
    high = [pods if z in own else 0 for z in zones]
    for rule in spans.problem.topology.rules_for(g.template):
        if rule.uid not in spans.rules:
            continue
        domains = rule.static_domains()
        n = len(domains)
        pinned = minimum_pinned(rule, n)
        total = spans.total[rule.uid]
        only_owner = spans.matching[rule.uid] == {g.index}
        base = sum(rule.base_counts.values())
        floor = 0 if pinned or not only_owner else least_domain_count(rule, pods + base, n)
        for i, z in enumerate(zones):
            if z not in domains:
                high[i] = 0
                continue
            b = rule.base_counts.get(z, 0)
            # a domain receiving a pod holds at most the minimum (0 pinned, at most the mean) plus maxSkew
            most = skew_limit(rule, 0 if pinned else total // n) - b
            high[i] = min(high[i], max(most, 0))
            low[i] = max(low[i], floor - b)
    topo = spans.problem.topology
    anti = topo.anti_affinity.get(id(g.template))
    for t, term in enumerate(anti.terms if anti is not None else ()):
        # Its own required anti-affinity on the key: one pod of g per domain, none where a matching pod runs
        # already (a node without the key's label is in no domain: the term does not limit it).
        if term.key == spans.key and term.matches(g.template.namespace, g.template.labels, topo.namespace_labels):
            taken = anti.existing[t] if anti is not None and t < len(anti.existing) else {}
            for i, z in enumerate(zones):
                if z != NO_DOMAIN:
                    high[i] = min(high[i], 0 if taken.get(z, 0) else 1)
    if any(lo > hi for lo, hi in zip(low, high, strict=True)) or sum(high) < pods:
        return None
    return low, high


def _component_cost(problem: Problem, members: Sequence[GroupInfo], demand: Mapping[int, int],
                    by_key: Sequence[_Spans]) -> tuple[float, int]:
    """The component's bound (the largest over the keys of `by_key`, and the counted nodes'), and the layers its
    node-counting programmes took (for the work clock)."""
    options: dict[int, LaunchOption] = {o.index: o for g in members for o in g.options}
    opts = list(options.values())
    price = np.array([o.price for o in opts], dtype=np.float64)
    pods = np.array([demand[g.index] for g in members], dtype=np.float64)
    dims = sorted({d for g in members for d, v in g.template.requests.items() if v > 0})
    req = {d: np.array([float(g.template.requests.get(d)) for g in members], dtype=np.float64) for d in dims}
    room = {d: np.array([float(o.free.get(d)) for o in opts], dtype=np.float64) for d in dims}
    nodes = least_nodes(problem, members, demand)
    best = 0.0
    for d in dims:
        best = max(best, _counted_cost(float(req[d] @ pods), nodes, price, room[d]))
    for spans in by_key:
        split = _domain_split(members, demand, opts, spans)
        if split is None:
            return 0.0, 0  # no plan: nothing to bound (the other bounds say what they say)
        zone_of, low, high = split
        for d in dims:
            best = max(best, _dimension_cost(float(req[d] @ pods), req[d] @ low, req[d] @ high, zone_of, price,
                                             room[d]))
    return max(best - MARGIN * best, 0.0), (nodes * len(dims) if nodes > 1 else 0)


def _domain_split(members: Sequence[GroupInfo], demand: Mapping[int, int], opts: Sequence[LaunchOption],
                  spans: _Spans) -> tuple[npt.NDArray[np.int64], FloatArray, FloatArray] | None:
    """Per option its domain's index, and per group and domain the least and most pods (`_zone_range`) over the
    domains of `spans.key`; None when no plan places the pods."""
    own = {id(g.options): frozenset(domain_of(o, spans.key) for o in g.options) for g in members}
    domains = sorted(frozenset().union(*own.values()))
    ranges = []
    for g in members:
        r = _zone_range(g, demand[g.index], domains, own[id(g.options)], spans)
        if r is None:
            return None
        ranges.append(r)
    where = {z: i for i, z in enumerate(domains)}
    zone_of = np.array([where[domain_of(o, spans.key)] for o in opts], dtype=np.int64)
    low = np.array([lo for lo, _ in ranges], dtype=np.float64).reshape(len(members), len(domains))
    high = np.array([hi for _, hi in ranges], dtype=np.float64).reshape(len(members), len(domains))
    return zone_of, low, high


def least_nodes(problem: Problem, members: Sequence[GroupInfo], demand: Mapping[int, int]) -> int:
    """Nodes any plan buys for the component: a cap set (`bound.cap_sets`: hostname anti-affinity, hostname
    spread) holds at most `per_node` of its pods on a node, and the component's nodes hold only its pods."""
    inside = {g.index for g in members}
    most = 0
    for cap in cap_sets(problem, members):
        pods = sum(demand.get(i, 0) for i in cap.members if i in inside)
        most = max(most, -(-pods // cap.per_node))
    return min(most, MAX_COUNTED_NODES)


def _counted_cost(total: float, nodes: int, price: FloatArray, room: FloatArray) -> float:
    """The least cost of at least `nodes` whole nodes (any zone) covering `total` in one dimension (units and
    rounding as `_dimension_cost`): G_n(y), n nodes covering y, layer by layer up to `nodes`, the rest an
    unbounded covering. 0 when it says nothing the whole-node cover alone does not."""
    if total <= 0 or nodes <= 1:
        return 0.0
    # Each node's room is rounded up by less than a unit, so n nodes may gain n units: a grain of 1,000 units
    # per node keeps that within 0.1% of the demand (as far as the cells allow).
    unit = total / max(min(COUNTED_GRAIN * nodes, MAX_COUNTED_CELLS // nodes), GRAIN)
    need = math.ceil(total / unit - 1e-6)
    useful = room > 0
    if not useful.any():
        return 0.0
    units = np.ceil(room[useful] / unit * (1 + _EPS) + _EPS).astype(np.int64)
    cells: dict[int, float] = {}
    for u, p in zip(units.tolist(), price[useful].tolist(), strict=True):
        if p < cells.get(u, math.inf):
            cells[u] = p
    frontier: list[tuple[int, float]] = []  # no other node at least as large and no dearer
    for u, p in sorted(cells.items(), key=lambda c: (-c[0], c[1])):
        if not frontier or p < frontier[-1][1]:
            frontier.append((u, p))
    ys = np.arange(need + 1)
    layer = np.where(ys == 0, 0.0, math.inf)  # G_0
    for _ in range(nodes):
        layer = np.min([p + layer[np.maximum(ys - u, 0)] for u, p in frontier], axis=0)
    cover = _cover_costs(tuple(sorted(cells.items())), need)
    # at least `nodes` nodes: `nodes` of them cover y, the others the rest
    value = float(np.min(layer + cover[need - ys]))
    return value if math.isfinite(value) else 0.0


def _dimension_cost(total: float, lows: FloatArray, highs: FloatArray, zone_of: npt.NDArray[np.int64],
                    price: FloatArray, room: FloatArray) -> float:
    """The least cost of whole nodes (each zone's options: `zone_of`, `price`, `room`) covering `total` split
    over the zones within [lows, highs] (0 when no split exists: no bound from here)."""
    if total <= 0:
        return 0.0
    unit = total / GRAIN
    need = math.ceil(total / unit - 1e-6)  # at most ceil(total / unit)
    useful = room > 0
    # rounded up: never less room than the node has
    units = np.ceil(np.where(useful, room, 0.0) / unit * (1 + _EPS) + _EPS).astype(np.int64)
    reach = np.full(need + 1, math.inf)
    reach[0] = 0.0
    for i in range(len(lows)):
        lo = max(math.ceil(float(lows[i]) / unit - 1e-6), 0)
        hi = min(math.ceil(float(highs[i]) / unit * (1 + _EPS) + _EPS), need)
        here = np.nonzero(useful & (zone_of == i))[0]
        if not len(here):
            if lo > 0:
                return 0.0
            continue
        cells: dict[int, float] = {}
        for u, p in zip(units[here].tolist(), price[here].tolist(), strict=True):
            if p < cells.get(u, math.inf):
                cells[u] = p
        cover = _cover_costs(tuple(sorted(cells.items())), need)
        reach = _add_zone(reach, cover, lo, hi, need)
    value = float(reach[need])
    return value if math.isfinite(value) else 0.0


_COVER_CACHE: dict[tuple[tuple[tuple[int, float], ...], int], FloatArray] = {}


def _cover_costs(cells: tuple[tuple[int, float], ...], need: int) -> FloatArray:
    """F(y) for y = 0..need: the least cost of whole nodes (units, price) holding at least y units."""
    key = (cells, need)
    cached = _COVER_CACHE.get(key)
    if cached is not None:
        return cached
    frontier: list[tuple[int, float]] = []  # no other node at least as large and no dearer
    for units, price in sorted(cells, key=lambda c: (-c[0], c[1])):
        if not frontier or price < frontier[-1][1]:
            frontier.append((units, price))
    cost = np.zeros(need + 1)
    step = min(u for u, _ in frontier)  # every y of a block [lo, lo + step) reads only below lo
    for lo in range(1, need + 1, step):
        ys = np.arange(lo, min(lo + step, need + 1))
        cost[ys] = np.min([p + cost[np.maximum(ys - u, 0)] for u, p in frontier], axis=0)
    if len(_COVER_CACHE) > 256:
        _COVER_CACHE.clear()
    _COVER_CACHE[key] = cost
    return cost


def _add_zone(reach: FloatArray, cover: FloatArray, lo: int, hi: int, need: int) -> FloatArray:
    """The cheapest cost of covering min(s, need) units after one more zone holding y in [lo, hi] units."""
    out = np.full(need + 1, math.inf)
    if lo > hi:
        return out
    for y in range(lo, hi + 1):
        if y < hi and cover[y + 1] <= cover[y]:
            continue  # the largest y of each cost level is enough (F never falls)
        f = float(cover[y])
        if y == 0:
            np.minimum(out, reach + f, out=out)
            continue
        if y < need:
            np.minimum(out[y:], reach[:need + 1 - y] + f, out=out[y:])
        tail = float(np.min(reach[max(need - y, 0):])) + f
        out[need] = min(out[need], tail)
    return out


__all__ = ["NO_DOMAIN", "CombinatorialBound", "ComponentBound", "SpansByKey", "components", "domain_keys", "domain_of",
           "with_lp_shares", "worth_rounding", "zone_integer_bound"]
