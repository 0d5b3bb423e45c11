"""The zone-indexed instance of the configuration LP (see `zone_lp.py`): pod classes split by zone, the
shapes of each zone, and the rows that link the zones (the workload's zonal rules, as valid implied bounds).

A *zone class* is a pod class (as in `instance.pod_classes`, also told apart by the zone-spread rules that
count or own its groups) restricted to one zone: it may use the class's options in that zone and its usable
existing nodes there. Its `demand` in the `Instance` is the most pods of it one node may hold (the class's
demand); how many pods go to each zone is the LP's choice, under these rows (all `>=`):

* cover: for every class, its zone classes together place its demand;
* zone spread (every hard, self-matching spread constraint on the zone key, groups with equal signatures
  sharing one rule `r`, domains D, maxSkew s, O owner pods that must be placed, base counts b): with m the
  minimum over D of the counts (`count[d] = b[d] + pending pods counted in d`), a domain receiving an owner
  holds at most m + s. For any d0 the owners in d0 number at most count[d0] and those in every other
  receiving domain at most m + s <= count[d0] + s, so `O <= count[d0] + (|D| - 1) (count[d0] + s)`, i.e.
  every domain holds `count[d] >= L = ceil((O - s (|D| - 1)) / |D|)`: the rows `pending in d >= L - b[d]`.
  With a variable m >= 0 (a column of the LP, cost 0): `m - owners in d >= -s` (a receiving domain holds
  at most m + s pods, owners among them; an empty one holds none) and `pending counted in d - m >= -b[d]`.
  Counting every pod of a counted class in d (also on nodes the rule's inclusion policies leave out) only
  relaxes these rows. Owners never go to a zone outside D (the engines ban it), so their zone classes
  there are dropped.
* zone spread with fewer domains than minDomains: the minimum is 0, so a domain receiving an owner holds
  at most s matching pods, its b[d] among them (owners are always counted where they run): every domain
  holds at most `room[d] = max(s - b[d], 0)` owners, `- owners in d >= -room[d]`, so at least
  `O - (sum of room[d'] over the other domains)`, `owners in d >= O - sum_{d' != d} room[d']` when that is
  positive. When O exceeds the sum of room[d] no plan places every owner and the instance is not built.
* nodes: a zone where some rule needs at least one pod (`L - b[d] >= 1`, or the owners a rule without
  its minimum needs there) holds at least one node (new or existing), whatever the LP's fractions say:
  `sum of the patterns in the zone >= 1`. Each pattern of the zone, even an empty one, counts there.

Zone self-affinity (a group in one zone, chosen by the plan) adds nothing to an LP: choosing a zone with
variables zeta[z] (sum 1, pods in z <= size * zeta[z]) is met by zeta[z] = pods in z / size. It is left out.

This LP is never below the global configuration LP (summing its zones gives a point of that one). When the
zones are interchangeable (every zone offers the same shapes at the same prices to the same classes, no
existing node, every rule's domains are all the zones, at least its minDomains of them, and no base counts),
averaging an optimum of the global configuration LP over the zones is a point of this LP too: the cover rows
hold, the spread rows hold (`N / |D| >= L` for the N >= O pods a rule counts, as `L <= floor(O / |D|)` when
s >= 1; m = N / |D| meets the up and min rows), and the node rows hold when the global point has at least
|Z| patterns in all, which it has when some cap set of P pods, at most c per node, has `P >= |Z| c` (every
point has at least P / c patterns: fractional, not ceil(P / c)). Then both LPs have the same optimum and the
zone LP is not needed: `interchangeable`. Otherwise it may be stronger, and it runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from karpplan.constraints.spread_counts import Skew, least_domain_count, minimum_pinned, skew_limit
from karpplan.engines.bound import _usable_existing, cap_sets, distinct_rows
from karpplan.engines.patterns.instance import BoolArray, FloatArray, Instance, IntArray, caps_and_dims
from karpplan.model.labels import ZONE
from karpplan.model.selectors import SelectorIndex
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import SpreadRule


@dataclass
class ZoneRows:
    """The LP's rows: `sum_c coef * x_c (+ node counts) (+ m columns) >= rhs`."""

    rhs: list[float] = field(default_factory=list)
    of_class: list[list[tuple[int, float]]] = field(default_factory=list)  # [zone classes] (row, coef)
    of_m: list[list[tuple[int, float]]] = field(default_factory=list)  # [m columns] (row, coef)
    node_row: dict[str, int] = field(default_factory=dict)  # zone -> its node row
    kinds: list[str] = field(default_factory=list)  # "cover", "low", "up", "min", "node"

    def add(self, rhs: float, kind: str) -> int:
        self.rhs.append(float(rhs))
        self.kinds.append(kind)
        return len(self.rhs) - 1


@dataclass
class ZoneInstance:
    inst: Instance  # the zone classes, shapes and existing nodes, for the pricing code
    rows: ZoneRows
    shape_zone: list[str]  # [K] the zone of each new shape
    old_zone: list[str]  # [E] the zone of each existing shape
    zones: int
    spread_rules: int
    cover: list[tuple[int, list[int]]] = field(default_factory=list)  # per class: its cover row, its groups

    def node_const(self, tau: FloatArray, existing: bool) -> FloatArray:
        """[shapes] the value tau gives every pattern of each shape by its zone's node row."""
        zones = self.old_zone if existing else self.shape_zone
        out = np.zeros(len(zones))
        for i, z in enumerate(zones):
            r = self.rows.node_row.get(z)
            if r is not None:
                out[i] = tau[r]
        return out

    def class_values(self, tau: FloatArray) -> FloatArray:
        """[zone classes] the value of one pod of each zone class under the row duals tau."""
        return np.array([sum(tau[r] * a for r, a in rs) for rs in self.rows.of_class], dtype=np.float64)


# Zone classes x options beyond which the instance is not built: building it is numpy work over this
# many cells (a bound phase's seconds at 10,000 Deployments in 20 NodePools, where the global LP is as good).
MAX_ZONE_ENTRIES = 4_000_000

_Key = tuple[frozenset[int], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


@dataclass
class _Rule:
    domains: frozenset[str]
    spread: Skew  # how the rule counts (`constraints/spread_counts.py`)
    base: dict[str, int]
    counted: set[int] = field(default_factory=set)  # group indices
    owners: set[int] = field(default_factory=set)


def _zone_rules(problem: Problem, groups: Sequence[GroupInfo]) -> list[_Rule]:
    """The hard, self-matching zone-spread rules of the groups, one per signature."""
    out: dict[tuple[object, ...], _Rule] = {}
    index: SelectorIndex[tuple[SpreadRule, _Rule]] = SelectorIndex()  # the rules that may count a template
    for g in groups:
        for rule in problem.topology.rules_for(g.template):
            if rule.key != ZONE or not rule.hard or not rule.self_match:
                continue
            sig = rule.signature()
            r = out.get(sig)
            if r is None:
                r = out[sig] = _Rule(rule.static_domains(), rule, dict(rule.base_counts))
                index.add((rule, r), rule.owner.namespace, rule.selector)
            r.owners.add(g.index)
    for h in groups:
        for rule, r in index.candidates(h.template.namespace, h.template.labels):
            if _counts(rule, h):
                r.counted.add(h.index)
    return list(out.values())


def _counts(rule: SpreadRule, h: GroupInfo) -> bool:
    return rule.counts(h.template.namespace, h.template.labels)


def _zone(labels: Mapping[str, str]) -> str:
    return labels.get(ZONE, "")


def zone_instance(problem: Problem, groups: Sequence[GroupInfo], demand: Mapping[int, int],
                  force: bool = False) -> ZoneInstance | None:
    """The zone-indexed instance, or None when it cannot help or be built (a class with nowhere to go, a free
    option, no zone-spread rule, or more than `MAX_ZONE_ENTRIES` cells unless `force`)."""
    rules = _zone_rules(problem, groups)
    if not rules:
        return None
    build = _ZoneBuild(problem, groups, demand, rules)
    build.classes()
    build.zone_classes()
    if build.n_zc * len(build.used) > MAX_ZONE_ENTRIES and not force:
        return None  # too large to build in the time a bound has (and the global LP's bound still holds)
    if not build.new_shapes():
        return None  # a free option: the bound of `instance.pod_classes` handles it
    build.old_shapes()
    if not build.reachable():
        return None  # some pods can go nowhere: no plan places them
    inst = build.instance()
    rows = build.rule_rows()
    if rows is None:
        return None  # no plan places every owner: nothing to bound
    return ZoneInstance(inst, rows, build.shape_zone, [build.old_zone_of[k] for k in build.old_keys],
                        len(set(build.shape_zone)), len(rules), list(zip(build.cover, build.class_members, strict=True)))


class _ZoneBuild:
    """The zone-indexed instance built in named steps: pod classes, their zone classes, new and existing
    shapes, the cap sets, and each zone rule's linking rows."""

    def __init__(self, problem: Problem, groups: Sequence[GroupInfo], demand: Mapping[int, int],
                 rules: list[_Rule]) -> None:
        self.problem, self.groups, self.demand, self.rules = problem, groups, demand, rules
        self.caps, self.caps_of, self.dims = caps_and_dims(problem, groups)
        self.existing = problem.existing

    def classes(self) -> None:
        """Pod classes, told apart by the rules that count and own them too."""
        problem, rules, dims = self.problem, self.rules, self.dims
        self.class_index: dict[_Key, int] = {}
        self.class_demand: list[int] = []
        self.class_group: list[GroupInfo] = []
        self.class_members: list[list[int]] = []
        self.class_rules: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        counted_by: dict[int, list[int]] = defaultdict(list)  # group index -> the rules counting / owned by it
        owned_by: dict[int, list[int]] = defaultdict(list)
        for i, zone_rule in enumerate(rules):
            for h in sorted(zone_rule.counted):
                counted_by[h].append(i)
            for h in sorted(zone_rule.owners):
                owned_by[h].append(i)
        for g in self.groups:
            counted = tuple(counted_by.get(g.index, ()))
            owned = tuple(owned_by.get(g.index, ()))
            options = g.option_ids or frozenset(o.index for o in g.options)
            key: _Key = (options, _usable_existing(problem, g), tuple(self.caps_of.get(g.index, ())),
                         tuple(g.template.requests.get(d) for d in dims), counted, owned)
            c = self.class_index.setdefault(key, len(self.class_demand))
            if c == len(self.class_demand):
                self.class_demand.append(0)
                self.class_group.append(g)
                self.class_members.append([])
                self.class_rules.append((counted, owned))
            self.class_demand[c] += self.demand[g.index]
            self.class_members[c].append(g.index)

    def zone_classes(self) -> None:
        """Each class in each zone it may use (owners never leave their rule's domains)."""
        problem, existing = self.problem, self.existing
        self.zc_index: dict[tuple[int, str], int] = {}
        self.zc_of: list[tuple[int, str]] = []
        self.key_of_class = list(self.class_index)
        zones_of_options: dict[frozenset[int], set[str]] = {}  # classes share option sets (one per pool, a few more)
        for c, key in enumerate(self.key_of_class):
            owned = self.class_rules[c][1]
            option_zones = zones_of_options.get(key[0])
            if option_zones is None:
                option_zones = zones_of_options[key[0]] = {_zone(problem.options[k].labels) for k in key[0]}
            zones = option_zones | {_zone(existing[e].node.labels) for e in key[1]}
            for z in sorted(zones):
                if any(z not in self.rules[i].domains for i in owned):
                    continue  # owners never leave their rule's domains
                self.zc_index[(c, z)] = len(self.zc_of)
                self.zc_of.append((c, z))
        self.n_zc = n_zc = len(self.zc_of)
        self.req = np.array([[float(self.class_group[c].template.requests.get(d)) for d in self.dims]
                             for c, _ in self.zc_of], dtype=np.float64).reshape(n_zc, len(self.dims))
        self.zc_demand = np.array([float(self.class_demand[c]) for c, _ in self.zc_of], dtype=np.float64)
        self.used = sorted({k for key in self.key_of_class for k in key[0]})

    def new_shapes(self) -> bool:
        """New shapes: one row per option, the zone classes it may hold, the dominated ones dropped within
        each zone. False when an option is free."""
        problem, used, dims = self.problem, self.used, self.dims
        pos = {k: i for i, k in enumerate(used)}
        option_zone = [_zone(problem.options[k].labels) for k in used]
        by_set: dict[frozenset[int], dict[str, list[int]]] = {}
        may = np.zeros((len(used), self.n_zc), dtype=np.bool_)
        for c, key in enumerate(self.key_of_class):
            split = by_set.get(key[0])
            if split is None:
                split = by_set[key[0]] = defaultdict(list)
                for k in key[0]:
                    split[option_zone[pos[k]]].append(pos[k])
            for z, rows_z in split.items():
                zc = self.zc_index.get((c, z))
                if zc is not None:
                    may[rows_z, zc] = True
        free_all = np.array([[max(problem.options[k].free.get(d), 0) for d in dims] for k in used],
                            dtype=np.float64).reshape(len(used), len(dims))
        price_all = np.array([problem.options[k].price for k in used], dtype=np.float64)
        may &= (self.req[None, :, :] <= free_all[:, None, :]).all(axis=2)
        if (may[price_all <= 0].any()):
            return False
        shape_of: dict[tuple[bytes, float, bytes], int] = {}
        for r in np.nonzero(may.any(axis=1))[0].tolist():
            shape_of.setdefault((free_all[r].tobytes(), float(price_all[r]), may[r].tobytes()), r)
        reps = np.array(sorted(shape_of.values()), dtype=np.int64)
        self.free, self.price, self.allowed = free_all[reps], price_all[reps], may[reps]
        # Shapes of different zones hold different zone classes: dominance is a matter within each zone.
        rep_zone = [option_zone[int(r)] for r in reps]
        self.alive = np.zeros(len(reps), dtype=np.bool_)
        for z in sorted(set(rep_zone)):
            in_zone = np.array([i for i, zz in enumerate(rep_zone) if zz == z], dtype=np.int64)
            self.alive[in_zone] = _frontier(self.free[in_zone], self.price[in_zone], self.allowed[in_zone])
        self.shape_zone = [z for z, a in zip(rep_zone, self.alive.tolist(), strict=True) if a]
        return True

    def old_shapes(self) -> None:
        """Existing nodes, one shape per (room, zone classes)."""
        existing, dims = self.existing, self.dims
        self.old: dict[tuple[tuple[float, ...], tuple[int, ...]], int] = defaultdict(int)  # (room, zcs) -> nodes
        self.old_zone_of: dict[tuple[tuple[float, ...], tuple[int, ...]], str] = {}
        users: dict[int, list[int]] = defaultdict(list)
        for c, key in enumerate(self.key_of_class):
            for e in key[1]:
                zc = self.zc_index.get((c, _zone(existing[e].node.labels)))
                if zc is not None:
                    users[e].append(zc)
        for e, who in sorted(users.items()):
            room = tuple(float(max(existing[e].free.get(d), 0)) for d in dims)
            ok = tuple(zc for zc in who if all(r <= f for r, f in zip(self.req[zc], room, strict=True)))
            if ok:
                self.old[(room, ok)] += 1
                self.old_zone_of[(room, ok)] = _zone(existing[e].node.labels)
        self.old_keys = list(self.old)
        self.old_allowed = np.zeros((len(self.old_keys), self.n_zc), dtype=np.bool_)
        for i, (_, ok) in enumerate(self.old_keys):
            self.old_allowed[i, list(ok)] = True

    def reachable(self) -> bool:
        """Can every class go somewhere (a new shape or an existing node)?"""
        reachable = np.asarray(self.allowed[self.alive].any(axis=0) | self.old_allowed.any(axis=0),
                               dtype=np.bool_).tolist()
        return {c for zc, (c, _) in enumerate(self.zc_of) if reachable[zc]} == set(range(len(self.class_demand)))

    def instance(self) -> Instance:
        """The LP instance over zone classes, with the cap sets."""
        cap_list: list[tuple[IntArray, int, bool]] = []
        zcs_in_cap: list[list[int]] = [[] for _ in self.caps]
        for zc, (c, _) in enumerate(self.zc_of):
            for i in self.key_of_class[c][2]:
                zcs_in_cap[i].append(zc)
        for i, cs in enumerate(self.caps):
            in_cap = zcs_in_cap[i]
            if in_cap:
                cap_list.append((np.array(in_cap, dtype=np.int64), cs.per_node, cs.existing))
        alive, old_keys, dims = self.alive, self.old_keys, self.dims
        return Instance(dims, self.req, self.zc_demand, cap_list, self.free[alive], self.price[alive],
                        self.allowed[alive],
                        np.array([k[0] for k in old_keys], dtype=np.float64).reshape(len(old_keys), len(dims)),
                        np.array([self.old[k] for k in old_keys], dtype=np.float64), self.old_allowed)

    def rule_rows(self) -> ZoneRows | None:
        """The cover rows, and each zone rule's rows linking its domains' counts (None: no plan places every
        owner of a rule)."""
        zc_of, class_demand = self.zc_of, self.class_demand
        rows = ZoneRows(of_class=[[] for _ in range(self.n_zc)])
        self.cover = [rows.add(d, "cover") for d in class_demand]
        for zc, (c, _) in enumerate(zc_of):
            rows.of_class[zc].append((self.cover[c], 1.0))
        need: dict[str, float] = defaultdict(float)
        # Per rule: the demand of its owners, and the zone classes it counts and that own it (in zc order).
        owner_demand = [0] * len(self.rules)
        for c, (_, owned) in enumerate(self.class_rules):
            for i in owned:
                owner_demand[i] += class_demand[c]
        counted_zcs: list[list[int]] = [[] for _ in self.rules]
        owning_zcs: list[list[int]] = [[] for _ in self.rules]
        for zc, (c, _) in enumerate(zc_of):
            for i in self.class_rules[c][0]:
                counted_zcs[i].append(zc)
            for i in self.class_rules[c][1]:
                owning_zcs[i].append(zc)
        for i, rule in enumerate(self.rules):
            owners = owner_demand[i]
            n_dom = len(rule.domains)
            if not n_dom or not owners:
                continue
            if minimum_pinned(rule.spread, n_dom):
                if not _rows_without_minimum(rule, owners, rows, zc_of, owning_zcs[i], need):
                    return None
                continue
            _rows_with_minimum(rule, owners, rows, zc_of, counted_zcs[i], owning_zcs[i], need)
        for z, n in sorted(need.items()):
            if n >= 1:
                rows.node_row[z] = rows.add(1.0, "node")
        return rows


def _rows_with_minimum(rule: _Rule, owners: int, rows: ZoneRows, zc_of: Sequence[tuple[int, str]],
                       counted_zc: Sequence[int], owning: Sequence[int], need: dict[str, float]) -> None:
    """The rows of a rule with its minDomains met: every domain at least the floor `least_domain_count`
    forces, a domain holding owners at most the minimum plus maxSkew (the minimum a column of its own)."""
    low = least_domain_count(rule.spread, owners, len(rule.domains))
    m_col = len(rows.of_m)
    rows.of_m.append([])
    for d in sorted(rule.domains):
        base = rule.base.get(d, 0)
        here = [zc for zc in counted_zc if zc_of[zc][1] == d]
        mine = [zc for zc in owning if zc_of[zc][1] == d]
        if low - base > 0:
            r = rows.add(low - base, "low")
            for zc in here:
                rows.of_class[zc].append((r, 1.0))
            need[d] = max(need[d], low - base)
        if mine:
            r = rows.add(-skew_limit(rule.spread, 0), "up")
            for zc in mine:
                rows.of_class[zc].append((r, -1.0))
            rows.of_m[m_col].append((r, 1.0))
        r = rows.add(-base, "min")
        for zc in here:
            rows.of_class[zc].append((r, 1.0))
        rows.of_m[m_col].append((r, -1.0))


def _rows_without_minimum(rule: _Rule, owners: int, rows: ZoneRows, zc_of: Sequence[tuple[int, str]],
                          owning: Sequence[int], need: dict[str, float]) -> bool:
    """The rows of a rule with fewer domains than its minDomains (see the module docstring), added to `rows`
    (and the pods each domain needs to `need`); False when no plan places every owner."""
    room = {d: max(skew_limit(rule.spread, 0) - rule.base.get(d, 0), 0) for d in rule.domains}
    total = sum(room.values())
    if owners > total:
        return False
    for d in sorted(rule.domains):
        mine = [zc for zc in owning if zc_of[zc][1] == d]
        low = owners - (total - room[d])
        if low > 0:
            r = rows.add(low, "low")
            for zc in mine:
                rows.of_class[zc].append((r, 1.0))
            need[d] = max(need[d], low)
        if mine:
            r = rows.add(-room[d], "up")
            for zc in mine:
                rows.of_class[zc].append((r, -1.0))
    return True


def _frontier(free: FloatArray, price: FloatArray, allowed: BoolArray) -> BoolArray:
    """Shapes no other shape dominates (allows every class it allows, at least its room in every dimension,
    no dearer; the inputs are distinct). Swept cheapest first, so a shape is only compared with the kept
    ones: one dominated by a dropped shape is dominated by the kept shape that dominates that one."""
    m = len(price)
    # Shapes share their class sets: the subset test is made once per pair of distinct sets.
    pattern_of, packed = distinct_rows(allowed)
    within = np.zeros((len(packed), len(packed)), dtype=np.bool_)
    for lo in range(0, len(packed), 64):
        within[lo:lo + 64] = ((packed[lo:lo + 64, None, :] & ~packed[None, :, :]) == 0).all(axis=2)
    order = np.lexsort((-allowed.sum(axis=1), -free.sum(axis=1), price))
    keep = np.zeros(m, dtype=np.bool_)
    kept: list[int] = []
    for k in order.tolist():
        if kept:
            idx = np.array(kept, dtype=np.int64)
            dom = ((free[idx] >= free[k]).all(axis=1) & (price[idx] <= price[k])
                   & within[pattern_of[k], pattern_of[idx]])
            if dom.any():
                continue
        kept.append(k)
        keep[k] = True
    return keep


def interchangeable(problem: Problem, groups: Sequence[GroupInfo], demand: Mapping[int, int]) -> bool:
    """The zone-indexed LP provably has the global configuration LP's optimum (see the module docstring):
    no group may use an existing node, every rule spreads over every zone (at least its minDomains) without
    base counts, every zone offers the same shapes (room, price, and the sets of options each group may use
    among them: options equal in these are one shape of the LP) and the per-node caps alone force at least
    one node per zone in every point of the global LP (P pods at most c per node: P >= zones x c). Checked
    on the problem, before the instance is built; False whenever the zone LP might be stronger."""
    if any(g.existing_ok for g in groups):
        return False
    sets = sorted({g.option_ids or frozenset(o.index for o in g.options) for g in groups}, key=sorted)
    member: dict[int, list[int]] = defaultdict(list)
    for i, ids in enumerate(sets):
        for k in ids:
            member[k].append(i)
    per_zone: dict[str, set[tuple[object, ...]]] = defaultdict(set)
    for k, which in member.items():
        o = problem.options[k]
        per_zone[_zone(o.labels)].add((o.price, tuple(sorted(o.free.items())), tuple(which)))
    zones = sorted(per_zone)
    if len(zones) < 2 or "" in zones or any(per_zone[z] != per_zone[zones[0]] for z in zones[1:]):
        return False
    if any(set(r.domains) != set(zones) or any(r.base.values()) or minimum_pinned(r.spread, len(zones))
           for r in _zone_rules(problem, groups)):
        return False
    # The LP's node counts are fractional: a cap set of P pods, at most c per node, forces P / c nodes, not
    # ceil(P / c).
    return any(sum(demand.get(m, 0) for m in c.members) >= len(zones) * max(c.per_node, 1)
               for c in cap_sets(problem, groups))


__all__ = ["ZoneInstance", "ZoneRows", "interchangeable", "zone_instance"]
