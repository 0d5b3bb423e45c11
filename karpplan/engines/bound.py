"""A fluid lower bound on the hourly cost of the new nodes: a linear-programming relaxation solved by GLOP.

The CP-SAT optimiser's own bound is weak on large problems; this one scales to thousands of pod groups
and launch options because its size depends on *classes* of pods and on the launch options that survive
an exact dominance test, never on pods. Every step below only enlarges the set of feasible points, so
any plan the engines may produce maps to a feasible LP point of no greater cost:

* Pod classes. Groups with the same usable launch options, usable existing nodes and per-node cap sets
  form one class. Each resource dimension of a class is routed independently (`z[C,k,d]` units of
  dimension d on new nodes of option k, `w[C,b,d]` on existing nodes), so merging groups loses nothing
  the decoupled relaxation had not already given up. For a dimension without per-node caps, classes with
  the same usable options and existing nodes are merged into one flow (an exact reformulation).
* New nodes: `sum_C z[C,k,d] <= free[k,d] * n[k]` with `n[k] >= 0` continuous.
* Existing nodes with the same users are aggregated into one bin whose room is their sum (exact for the
  resource rows of the decoupled relaxation; a relaxation of the per-node cap rows).
* Per-node caps on the pod count: a set S of groups that all own an equal required hostname
  anti-affinity term matching every group of S holds at most one pod of S per node (new or existing);
  a set S of groups that all own the same hard hostname topology spread constraint (namespace,
  selector, maxSkew) and all match its selector holds at most maxSkew pods of S per new node (on a new
  node the global minimum is 0, as in Karpenter and the CP-SAT model).
* NodePool limits: remaining resources against the options' capacity, `limits.nodes` against `sum n`.
* Zonal rules, pod affinity, preferences and pool weights are relaxed away.
* Objective: `sum_k price[k] * n[k]`.

A launch option k is dropped when another option k2 dominates it in the LP: k2 may be used by every
class that may use k, it is in a pool without limits or in k's pool, and some t >= 0 has
`t*price[k2] <= price[k]`, `t*free[k2] >= free[k]` in every dimension, `t*capacity[k2] <= capacity[k]` for
the pool's limited resources (same pool), `t >= 1` when a capped class may use k and `t <= 1` when k's pool
limits nodes and k2 shares it. Then `t*n[k]` nodes of k2 replace `n[k]` nodes of k in any LP solution.
Domination composes, so removing options one at a time against the ones still kept is exact.

The value reported is not GLOP's objective but a bound certified from its dual values by weak duality
over the box every real plan lies in (`0 <= n[k] <= pods`, flows at most their demand), minus a small
relative margin, so neither solver tolerances nor rounding can lift it above the true optimum.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from ortools.linear_solver import pywraplp

from karpplan.constraints.pool_headroom import UNLIMITED
from karpplan.constraints.spread_counts import node_cap
from karpplan.engines.effort import WorkClock, simplex_seconds
from karpplan.model.labels import HOSTNAME
from karpplan.model.resources import PODS
from karpplan.model.selectors import LabelSelector
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import AffinityTerm

COUNT = "#pods"  # the pod count, when some request does not name `pods: 1`
MARGIN = 1e-6  # relative margin taken off the certified value
_CHUNK = 64  # rows of the dominance matrix computed at once

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class FluidBound:
    cost: float  # $/h lower bound on the new nodes' cost
    nodes: float  # LP node count (for information)
    classes: int  # pod classes in the LP
    columns: int  # LP variables
    seconds: float


@dataclass(frozen=True)
class _CapSet:
    """At most `per_node` pods of `members` (group indices) on one new node (and existing ones if `existing`)."""

    members: frozenset[int]
    per_node: int
    existing: bool


@dataclass
class _Class:
    options: frozenset[int]
    existing: tuple[int, ...]
    caps: tuple[int, ...]
    groups: list[GroupInfo] = field(default_factory=list)


@dataclass
class _Flow:
    """The amount of one dimension that some classes (same options and existing nodes) must place."""

    dim: str
    options: frozenset[int]
    bins: tuple[int, ...]
    caps: tuple[int, ...]
    amount: float = 0.0


def fluid_lower_bound(problem: Problem, required: Mapping[int, int] | None = None,
                      time_limit: float = 5.0, clock: WorkClock | None = None) -> FluidBound | None:
    """required: group index -> pods of that group that must be placed (default: every pod of every
    group that has at least one usable existing node or launch option). None when GLOP does not
    prove optimality within the time limit (no bound is better than a wrong one). The LP is solved to
    optimality, so the time limit is only a guard; `clock` is charged the solve's modelled time and
    told when the guard stopped it."""
    start = time.monotonic()
    demand = _required(problem, required)
    groups = [g for g in problem.groups if demand.get(g.index, 0) > 0]
    if not groups:
        return FluidBound(0.0, 0.0, 0, 0, time.monotonic() - start)
    lp = _FluidLP(problem, groups, demand)
    lp.build()
    return lp.solve(time_limit, start, clock)


def _required(problem: Problem, required: Mapping[int, int] | None) -> dict[int, int]:
    if required is None:
        return {g.index: g.size for g in problem.groups if g.size > 0 and (g.options or g.existing_ok)}
    sizes = {g.index: g.size for g in problem.groups}
    # More pods than a group has cannot be placed by any plan: cap at the group's size (stays valid).
    return {g: min(int(c), sizes[g]) for g, c in required.items() if c > 0 and g in sizes}


def cap_sets(problem: Problem, groups: Sequence[GroupInfo]) -> list[_CapSet]:
    """Sets of groups with a per-node cap on their pods (see the module docstring for the conditions)."""
    topo = problem.topology
    ns_labels = problem.namespace_labels
    out: dict[tuple[frozenset[int], int, bool], None] = {}
    anti: dict[object, tuple[AffinityTerm, list[GroupInfo]]] = {}
    for g in groups:
        rule = topo.anti_affinity.get(id(g.template))
        if rule is None:
            continue
        for t in rule.terms:
            if t.key != HOSTNAME or t.selector is None:
                continue
            key = (t.selector, t.term.namespaces, t.term.namespace_selector, t.owner_namespace)
            anti.setdefault(key, (t, []))[1].append(g)
    for term, owners in anti.values():
        members = frozenset(g.index for g in owners
                            if term.matches(g.template.namespace, g.template.labels, ns_labels))
        if members:
            out[(members, 1, True)] = None
    spread: dict[tuple[str, LabelSelector, int], set[int]] = defaultdict(set)
    for g in groups:
        for r in topo.rules_for(g.template):
            if r.hard and r.hostname and r.selector is not None and r.selector.matches(g.template.labels):
                spread[(g.template.namespace, r.selector, node_cap(r))].add(g.index)
    for (_, _, skew), owners_ in spread.items():
        if skew > 0:
            out[(frozenset(owners_), skew, False)] = None
    return [_CapSet(m, c, e) for m, c, e in out]


def _usable_existing(problem: Problem, g: GroupInfo) -> tuple[int, ...]:
    """Existing nodes that pass the static filters and, for each hard spread rule, are its domains."""
    hard = [r for r in problem.topology.rules_for(g.template) if r.hard]
    if not hard:
        return tuple(g.existing_ok)
    existing = problem.existing
    return tuple(e for e in g.existing_ok if all(existing[e].node.name in r.existing_domains for r in hard))


class _FluidLP:
    def __init__(self, problem: Problem, groups: list[GroupInfo], demand: dict[int, int]) -> None:
        self.problem = problem
        self.groups = groups
        self.demand = demand
        self.caps = cap_sets(problem, groups)
        self.resource_dims = sorted({d for g in groups for d, v in g.template.requests.items() if v > 0})
        if all(g.template.requests.get(PODS) == 1 for g in groups):
            self.count_dim = PODS
        else:
            self.count_dim = COUNT
        self.scale: dict[str, float] = {COUNT: 1.0}
        for d in self.resource_dims:
            biggest = max(g.template.requests.get(d) for g in groups)
            self.scale[d] = 2.0 ** round(math.log2(biggest))
        self.classes: list[_Class] = []
        self.flows: list[_Flow] = []
        self.kept: list[int] = []
        # LP in triplets; rows are `>= lo` (demand) or `<= hi` (everything else).
        self.obj: list[float] = []
        self.upper: list[float] = []
        self.row_lo: list[float] = []
        self.row_hi: list[float] = []
        self.a_row: list[int] = []
        self.a_col: list[int] = []
        self.a_val: list[float] = []
        self.n_col: dict[int, int] = {}

    # ------------------------------------------------------------------------------------ classes
    def make_classes(self) -> None:
        caps_of: dict[int, list[int]] = defaultdict(list)
        for i, c in enumerate(self.caps):
            for member in c.members:
                caps_of[member].append(i)
        by_key: dict[tuple[frozenset[int], tuple[int, ...], tuple[int, ...]], _Class] = {}
        for g in self.groups:
            options = g.option_ids or frozenset(o.index for o in g.options)
            key = (options, _usable_existing(self.problem, g), tuple(caps_of.get(g.index, ())))
            cls = by_key.get(key)
            if cls is None:
                cls = by_key[key] = _Class(*key)
            cls.groups.append(g)
        self.classes = list(by_key.values())

    def make_flows(self) -> None:
        # Existing nodes with the same users form one bin.
        users: dict[int, list[int]] = defaultdict(list)
        for ci, cls in enumerate(self.classes):
            for e in cls.existing:
                users[e].append(ci)
        bin_of_key: dict[tuple[int, ...], int] = {}
        self.bin_of: dict[int, int] = {}
        self.bin_nodes: list[list[int]] = []
        for e, who in users.items():
            b = bin_of_key.setdefault(tuple(who), len(bin_of_key))
            if b == len(self.bin_nodes):
                self.bin_nodes.append([])
            self.bin_nodes[b].append(e)
            self.bin_of[e] = b
        any_caps = bool(self.caps)
        flows: dict[tuple[object, ...], _Flow] = {}
        dims = list(self.resource_dims)
        if self.count_dim == COUNT and any_caps:
            dims.append(COUNT)
        for cls in self.classes:
            bins = tuple(sorted({self.bin_of[e] for e in cls.existing}))
            for d in dims:
                if d == self.count_dim:
                    if d == COUNT and not cls.caps:
                        continue
                    key: tuple[object, ...] = (d, cls.options, bins, cls.caps)
                    caps = cls.caps
                else:
                    key, caps = (d, cls.options, bins), ()
                amount = sum(self.demand[g.index] * (1 if d == COUNT else g.template.requests.get(d))
                             for g in cls.groups) / self.scale[d]
                if amount <= 0:
                    continue
                flow = flows.get(key)
                if flow is None:
                    flow = flows[key] = _Flow(d, cls.options, bins, caps)
                flow.amount += amount
        self.flows = list(flows.values())

    # ------------------------------------------------------------------------------------ options
    def prune_options(self) -> None:
        """Keep one option per set of identical ones, then drop those another kept option dominates."""
        problem = self.problem
        users: dict[int, list[int]] = defaultdict(list)
        for ci, cls in enumerate(self.classes):
            for k in cls.options:
                users[k].append(ci)
        capped_class = [bool(cls.caps) for cls in self.classes]
        dims = self.resource_dims
        reps: dict[tuple[object, ...], int] = {}
        for k, who in users.items():
            o = problem.options[k]
            remaining, nodes_left = problem.headroom.get(o.pool.name, UNLIMITED)
            limited = remaining is not None or nodes_left is not None
            key = (tuple(who), o.price, tuple(o.free.get(d) for d in dims),
                   o.pool.name if limited else None,
                   tuple(o.capacity.get(r) for r in remaining) if remaining is not None else ())
            reps.setdefault(key, k)
        candidates = sorted(reps.values())
        m = len(candidates)
        if m <= 1:
            self.kept = candidates
            return
        opts = [problem.options[k] for k in candidates]
        n_classes = len(self.classes)
        member = np.zeros((m, n_classes), dtype=np.bool_)
        for i, k in enumerate(candidates):
            member[i, users[k]] = True
        capped = np.array([any(capped_class[c] for c in users[k]) for k in candidates], dtype=np.bool_)
        free = np.array([[float(o.free.get(d)) for d in dims] for o in opts], dtype=np.float64).reshape(m, len(dims))
        price = np.array([o.price for o in opts], dtype=np.float64)
        pools = sorted({o.pool.name for o in opts})
        limited_res = sorted({r for p in pools for r in (problem.headroom.get(p, UNLIMITED).resources or {})})
        pool_id = np.full(m, -1, dtype=np.int64)
        node_limited = np.zeros(m, dtype=np.bool_)
        capacity = np.zeros((m, len(limited_res)), dtype=np.float64)
        res_limited = np.zeros((m, len(limited_res)), dtype=np.bool_)
        for i, o in enumerate(opts):
            remaining, nodes_left = problem.headroom.get(o.pool.name, UNLIMITED)
            if remaining is None and nodes_left is None:
                continue
            pool_id[i] = pools.index(o.pool.name)
            node_limited[i] = nodes_left is not None
            for j, r in enumerate(limited_res):
                capacity[i, j] = float(o.capacity.get(r))
                res_limited[i, j] = remaining is not None and r in remaining
        # Options share their class sets (one per pool and few more): the subset test runs on distinct sets.
        # Only an option whose classes include all of another's can dominate it, so options are compared
        # block by block: those of one class set against those of its supersets.
        dominated_by = np.zeros((m, m), dtype=np.bool_)
        for rows, cols in superset_blocks(member)[1]:
            for lo in range(0, len(rows), _CHUNK):
                chunk = rows[lo:lo + _CHUNK]
                dominated_by[np.ix_(chunk, cols)] = _dominance(
                    chunk, cols, capped, free, price, pool_id, node_limited, capacity, res_limited)
        kept = np.ones(m, dtype=np.bool_)
        for i in range(m):
            if (dominated_by[i] & kept).any():
                kept[i] = False
        self.kept = [candidates[i] for i in range(m) if kept[i]]

    # ------------------------------------------------------------------------------------ the LP
    def _col(self, cost: float, upper: float) -> int:
        self.obj.append(cost)
        self.upper.append(upper)
        return len(self.obj) - 1

    def _row(self, lo: float, hi: float, entries: Sequence[tuple[int, float]]) -> None:
        r = len(self.row_lo)
        self.row_lo.append(lo)
        self.row_hi.append(hi)
        for c, v in entries:
            self.a_row.append(r)
            self.a_col.append(c)
            self.a_val.append(v)

    def build(self) -> None:
        self.make_classes()
        self.make_flows()
        self.prune_options()
        problem = self.problem
        inf = math.inf
        kept = self.kept
        kept_set = set(kept)
        options: dict[int, LaunchOption] = {k: problem.options[k] for k in kept}
        for k in kept:
            self.n_col[k] = self._col(options[k].price, math.inf)  # bounded when certifying
        free_new = {k: {d: o.free.get(d) / self.scale[d] for d in self.resource_dims} for k, o in options.items()}
        bin_free: list[dict[str, float]] = []
        for nodes in self.bin_nodes:
            bin_free.append({d: sum(max(problem.existing[e].free.get(d), 0) for e in nodes) / self.scale[d]
                             for d in self.resource_dims})
        new_rows: dict[tuple[int, str], list[tuple[int, float]]] = defaultdict(list)
        cap_rows: dict[tuple[int, int], list[tuple[int, float]]] = defaultdict(list)
        old_rows: dict[tuple[int, str], list[tuple[int, float]]] = defaultdict(list)
        old_cap_rows: dict[tuple[int, int], list[tuple[int, float]]] = defaultdict(list)
        for flow in self.flows:
            d = flow.dim
            counted = d == self.count_dim
            entries: list[tuple[int, float]] = []
            usable = [k for k in flow.options if k in kept_set] if len(flow.options) > len(kept) else \
                [k for k in kept if k in flow.options]
            for k in usable:
                if d != COUNT and free_new[k][d] <= 0:
                    continue
                c = self._col(0.0, flow.amount)
                entries.append((c, 1.0))
                if d != COUNT:
                    new_rows[(k, d)].append((c, 1.0))
                if counted:
                    for s in flow.caps:
                        cap_rows[(s, k)].append((c, 1.0))
            for b in flow.bins:
                if d != COUNT and bin_free[b][d] <= 0:
                    continue
                c = self._col(0.0, flow.amount)
                entries.append((c, 1.0))
                if d != COUNT:
                    old_rows[(b, d)].append((c, 1.0))
                if counted:
                    for s in flow.caps:
                        if self.caps[s].existing:
                            old_cap_rows[(s, b)].append((c, 1.0))
            self._row(flow.amount, inf, entries)
        for (k, d), entries in new_rows.items():
            self._row(-inf, 0.0, [*entries, (self.n_col[k], -free_new[k][d])])
        for (s, k), entries in cap_rows.items():
            self._row(-inf, 0.0, [*entries, (self.n_col[k], -float(self.caps[s].per_node))])
        for (b, d), entries in old_rows.items():
            self._row(-inf, bin_free[b][d], entries)
        for (_, b), entries in old_cap_rows.items():
            self._row(-inf, float(len(self.bin_nodes[b])), entries)
        self._limit_rows(options)

    def _limit_rows(self, options: Mapping[int, LaunchOption]) -> None:
        """NodePool limits: per pool, its headroom's `limits.nodes` over the node counts and each limited
        resource over the nodes' capacity (scaled to the largest option's)."""
        inf = math.inf
        by_pool: dict[str, list[int]] = defaultdict(list)
        for k in self.kept:
            by_pool[options[k].pool.name].append(k)
        for pool, ks in by_pool.items():
            remaining, nodes_left = self.problem.headroom.get(pool, UNLIMITED)
            if nodes_left is not None:
                self._row(-inf, float(max(nodes_left, 0)), [(self.n_col[k], 1.0) for k in ks])
            if remaining is not None:
                for r, left in remaining.items():
                    amounts = [(self.n_col[k], float(options[k].capacity.get(r))) for k in ks]
                    unit = max(v for _, v in amounts)
                    if unit <= 0:
                        continue
                    self._row(-inf, max(left, 0) / unit, [(c, v / unit) for c, v in amounts if v > 0])

    def solve(self, time_limit: float, start: float, clock: WorkClock | None = None) -> FluidBound | None:
        solver = pywraplp.Solver.CreateSolver("GLOP")
        if solver is None:
            return None
        inf = solver.infinity()
        xs = [solver.NumVar(0.0, inf, "") for _ in self.obj]
        objective = solver.Objective()
        for c in self.n_col.values():
            objective.SetCoefficient(xs[c], self.obj[c])
        objective.SetMinimization()
        rows = [solver.RowConstraint(-inf if lo == -math.inf else lo, inf if hi == math.inf else hi, "")
                for lo, hi in zip(self.row_lo, self.row_hi, strict=True)]
        for r, c, v in zip(self.a_row, self.a_col, self.a_val, strict=True):
            rows[r].SetCoefficient(xs[c], v)
        if math.isfinite(time_limit):
            solver.SetTimeLimit(max(math.ceil(time_limit * 1000), 1))
        began = time.monotonic()
        status = solver.Solve()
        if clock is not None:
            clock.charge(simplex_seconds(solver.iterations(), len(rows)))
            clock.record_stop(status == pywraplp.Solver.OPTIMAL, time.monotonic() - began, time_limit)
        if status != pywraplp.Solver.OPTIMAL:
            return None
        duals = np.array([r.dual_value() for r in rows], dtype=np.float64)
        value = max(objective.Value(), 0.0)
        certified = min(self._certify(duals, value), value)
        if not math.isfinite(certified):
            return None
        cost = max(certified - MARGIN * abs(certified), 0.0)
        nodes = sum(xs[c].solution_value() for c in self.n_col.values())
        return FluidBound(cost, nodes, len(self.classes), len(self.obj), time.monotonic() - start)

    def _certify(self, duals: FloatArray, value: float) -> float:
        """Every plan costs at least min(value, this), whatever the dual vector (its signs are enforced).

        A plan cheaper than `value` maps (dominated options replaced) to an LP point no dearer than the plan
        with `n[k] < value / price[k]` and every flow variable at most its flow's amount; weak duality over
        that box bounds the cost of every such point.
        """
        lo = np.array(self.row_lo, dtype=np.float64)
        hi = np.array(self.row_hi, dtype=np.float64)
        geq = np.isfinite(lo)
        y = np.where(geq, np.maximum(duals, 0.0), np.minimum(duals, 0.0))
        rhs = np.where(geq, lo, hi)
        rows = np.array(self.a_row, dtype=np.int64)
        cols = np.array(self.a_col, dtype=np.int64)
        vals = np.array(self.a_val, dtype=np.float64)
        reduced = np.array(self.obj, dtype=np.float64) - np.bincount(
            cols, weights=vals * y[rows], minlength=len(self.obj))
        upper = np.array(self.upper, dtype=np.float64)
        for k, c in self.n_col.items():
            price = self.problem.options[k].price
            upper[c] = value / price if price > 0 else math.inf
        with np.errstate(invalid="ignore"):
            loss = np.where(reduced < 0, reduced * upper, 0.0)
        return float(np.dot(y, rhs) + loss.sum())


def distinct_rows(rows: BoolArray) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.uint8]]:
    """The distinct rows of a boolean matrix, bit-packed in order of first appearance, and the index of
    each row among them (hashing packed rows: `np.unique(axis=0)` sorts column by column, which takes
    seconds on thousands of columns)."""
    packed = np.packbits(rows, axis=1)
    index: dict[bytes, int] = {}
    pattern_of = np.fromiter((index.setdefault(row.tobytes(), len(index)) for row in packed), dtype=np.intp,
                             count=len(packed))
    firsts = np.zeros(len(index), dtype=np.intp)
    firsts[pattern_of[::-1]] = np.arange(len(packed) - 1, -1, -1, dtype=np.intp)
    return pattern_of, packed[firsts]


def superset_blocks(member: BoolArray) -> tuple[npt.NDArray[np.intp],
                                                list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]]]:
    """The distinct rows of `member` (options x classes): the index of each option's row among them, and
    for each distinct row (the options with that row, the options whose row includes it). Options share their class sets (one per pool and few more), so comparing
    options only within these blocks skips the pairs no dominance test could pass."""
    pattern_of, packed = distinct_rows(member)
    order = np.argsort(pattern_of, kind="stable")
    members = np.split(order, np.cumsum(np.bincount(pattern_of, minlength=len(packed)))[:-1])
    blocks = []
    for a in range(len(packed)):
        within = np.nonzero(((packed[a][None, :] & ~packed) == 0).all(axis=1))[0]
        blocks.append((members[a], np.sort(np.concatenate([members[b] for b in within]))))
    return pattern_of, blocks


def _dominance(rows: npt.NDArray[np.intp], cols: npt.NDArray[np.intp], capped: BoolArray, free: FloatArray,
               price: FloatArray, pool_id: npt.NDArray[np.int64], node_limited: BoolArray, capacity: FloatArray,
               res_limited: BoolArray) -> BoolArray:
    """dominated_by[i, j] for i in rows, j in cols: option j dominates option i (see the module docstring);
    every class that may use i may use each j (`superset_blocks`)."""
    fi = free[rows][:, None, :]
    fj = free[cols][None, :, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(fi > 0, np.where(fj > 0, fi / fj, np.inf), 0.0)
        t_lo = ratio.max(axis=2) if free.shape[1] else np.zeros((len(rows), len(cols)))
        t_lo = np.maximum(t_lo, np.where(capped[rows], 1.0, 0.0)[:, None])
        pi = price[rows][:, None]
        pj = price[cols][None, :]
        t_hi = np.where(pj > 0, pi / np.where(pj > 0, pj, 1.0), np.inf)
        pool_i = pool_id[rows][:, None]
        pool_j = pool_id[cols][None, :]
        same = (pool_i == pool_j) & (pool_i >= 0)
        allowed = (pool_j < 0) | same
        if capacity.shape[1]:
            ci = capacity[rows][:, None, :]
            cj = capacity[cols][None, :, :]
            cap_ratio = np.where(res_limited[rows][:, None, :],
                                 np.where(cj > 0, ci / np.where(cj > 0, cj, 1.0), np.inf), np.inf).min(axis=2)
            t_hi = np.where(same, np.minimum(t_hi, cap_ratio), t_hi)
        t_hi = np.where(same & node_limited[rows][:, None], np.minimum(t_hi, 1.0), t_hi)
    out: BoolArray = allowed & np.isfinite(t_lo) & (t_lo <= t_hi)
    out &= rows[:, None] != cols[None, :]
    return out


__all__ = ["FluidBound", "cap_sets", "fluid_lower_bound"]
