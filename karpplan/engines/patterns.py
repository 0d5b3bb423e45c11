"""A pattern (configuration) LP lower bound on the hourly cost of the new nodes, by column generation.

The fluid LP (`bound.py`) routes each resource of a pod on its own and counts nodes continuously, so it
never sees that a node holds whole pods whose CPU *and* memory fit. This bound does: a *pattern* is one
node of one launch option holding whole pods, and the configuration LP

    min sum_p price_p y_p   s.t.  sum_p a[c, p] y_p >= d_c  (every pod class c),   y >= 0

buys patterns until every class is covered. Existing nodes give patterns of price 0, each node at most
once. Every plan is a point of this LP (its nodes are patterns; a node holding more pods of a class than
the class must place is trimmed, which keeps it a pattern), so its optimum bounds every plan's cost.

What is relaxed (dropping constraints keeps the bound valid): zonal rules, pod affinity, preferences, pool
weights and **NodePool limits** (a plan that keeps the limits is still a point of the LP). What is kept:
per-node resources in every requested dimension, the classes each option allows, and the per-node caps
of `bound.cap_sets` (hostname anti-affinity cliques: one pod per node, on new and existing nodes;
hostname spread: maxSkew pods per new node).

* Pod classes: groups with the same usable options, usable existing nodes, cap sets and request vector
  (`_classes`). Demand d_c: the pods of the class that must be placed (`required`, as in the fluid LP).
  A class that fits an option of price 0 is free (unbounded free nodes hold it) and is dropped.
* Shapes: options with the same room, price and (fitting) classes are priced once; a shape that another
  one beats (room at least as large in every dimension, every class it allows, no dearer) is dropped: its
  patterns are patterns of the other at no lower price.

**The bound is certified, never read off the LP.** For duals pi >= 0 of the class rows, let P_k(pi) be the
best value sum_c pi_c x_c of a pattern x on shape k (and P_e(pi) on existing node e), and P̄ >= P any
upper bound. With theta = max_k P̄_k(pi) / price_k, the vector pi / theta with mu_e = P̄_e(pi) / theta is
a feasible dual solution of the configuration LP, so by weak duality

    LB(pi) = (sum_c d_c pi_c - sum_e P̄_e(pi)) / theta

bounds its optimum, whatever pi is and however well the LP was solved (Farley's bound). The bound
reported is the best LB over the duals tried, times (1 - MARGIN); theta gets a relative 1e-9 on top.

Upper bounds P̄ (all valid for every pattern, so any mix of them is):

* Screening (every shape, every time): for multipliers lam >= 0 on the dimensions, a pattern is worth at
  most lam . room + sum_c x_c (pi_c - lam . req_c)^+, with x_c at most what fits (and what the class must
  place), and a cap group of s pods per node contributing at most s times its best member.
* Tables (dynamic programming): a table over a few dimensions (CPU first, then memory, then any other
  that fits) holds, in cell (i, j, ...), the best value of a pattern using at most i cells of the
  first dimension, j of the second... for every cell at once, so one table prices every shape it covers.
  Requests are rounded *down* to the table's grid and rooms too (floor(sum w) <= floor(room) holds for
  every real pattern), dimensions outside the table are priced by Lagrange multipliers (values
  pi_c - lam . req_c, plus lam . room), disjoint cap sets of a few pods per node are choose-one groups,
  other caps and the class demands bound the pod counts. Small shapes share tables by profile; large
  ones share tables over the first dimension, one row (with its own multipliers) per profile.
* Tables of their own, and CP-SAT's proven bound (rounding of the scaled values added back), for the
  shapes that decide theta at the end.

Column generation (GLOP master) runs on an *aggregated* master: classes that differ only by their cap sets
share a row and every cap set has a row (a relaxation: its duals, spread over the classes, are the pi
certified above, so nothing is lost but the duals' freedom). It starts from fluid-like duals (one price
per dimension and per cap set, as large as every shape's price allows) with Wentges smoothing towards
them early on; columns are the tables' best patterns at each shape's cell, repaired to fit the real
room and caps, greedy ones for the shapes without a table this time, then those of tables of their own and
of CP-SAT when the shared tables find nothing. It stops at `time_limit` on the work clock (`effort.py`:
every table, simplex solve and CP-SAT solve is charged its modelled time, so the bound is the same on every
run), keeping a share of it to certify the last duals with tables of their own per shape and CP-SAT.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from ortools.linear_solver import pywraplp
from ortools.sat.python import cp_model

from karpplan.engines.bound import MARGIN, FluidBound, _required, _usable_existing, cap_sets
from karpplan.engines.effort import (
    PRICING_WALL_PER_DETERMINISTIC,
    WorkClock,
    column_seconds,
    pricing_seconds,
    screen_seconds,
    simplex_seconds,
    table_seconds,
)
from karpplan.model.resources import CPU, MEMORY, PODS
from karpplan.scheduling.problem import GroupInfo, Problem

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

CELLS = 1 << 14  # cells of a table shared by small shapes
REFINE = 1 << 16  # cells of a table of its own for a shape that decides the bound
ROW = 1 << 13  # cells of one row of a table over the first dimension (large shapes)
SMALL = 256  # shapes with at most this many cells of the first dimension get multi-dimensional tables
STACK = 4.0  # largest ratio between the first dimension of large shapes in one table
REPEAT = 4  # a cap set of at most this many pods per node is a choose-one group, repeated, in the tables
SCREEN = (0.0, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)  # screening multipliers, times the fluid prices
BATCH = 8  # tables built per iteration once some have room for a column (the most promising first)
LIMIT = 60  # columns offered to the master per iteration
START = 150  # columns at the fluid duals that make the first master
SMOOTH = 0.6  # weight of the fluid duals in the prices, to the power of the iteration
TAIL = 3  # iterations over which the master must improve by GAP, or tables of their own are tried
REFINED = 6  # shapes that get tables of their own per pass
PASSES = 8  # passes over the tables of their own when certifying the last duals
EXACT = 24  # shapes solved by CP-SAT, at most, to certify the last duals
EXACT_LOOP = 3  # shapes solved by CP-SAT, at most, when the tables find no more columns
EXACT_SECONDS = 0.2  # CP-SAT's time per shape
RESERVE = 0.15  # share of the time limit kept for certifying the last duals
GAP = 5e-5  # relative gap between the certified bound and the master at which the search stops
TOL = 1e-9
NEG = -1e30  # the value of a class a table row may not use


@dataclass(frozen=True)
class PatternBound:
    cost: float  # $/h lower bound on the new nodes' cost (certified; callers take the larger of it and the fluid)
    lp_value: float  # the last master's value (inf if none): an upper estimate of the LP the bound certifies
    classes: int  # pod classes
    shapes: int  # distinct launch-option shapes priced
    columns: int  # patterns in the master
    iterations: int  # master solves
    seconds: float


@dataclass
class _Instance:
    dims: list[str]
    req: FloatArray  # [C, D] requests per class
    demand: FloatArray  # [C]
    caps: list[tuple[IntArray, int, bool]]  # (classes, pods per node, applies to existing nodes)
    free: FloatArray  # [K, D] shapes of new nodes
    price: FloatArray  # [K]
    allowed: BoolArray  # [K, C]
    old_free: FloatArray  # [E, D] shapes of existing nodes
    old_count: FloatArray  # [E]
    old_allowed: BoolArray  # [E, C]


def _classes(problem: Problem, groups: Sequence[GroupInfo], demand: Mapping[int, int]) -> _Instance | None:
    caps = cap_sets(problem, groups)
    caps_of: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(caps):
        for m in c.members:
            caps_of[m].append(i)
    present = {d for g in groups for d, v in g.template.requests.items() if v > 0}
    dims = [d for d in (CPU, MEMORY, PODS) if d in present] + sorted(present - {CPU, MEMORY, PODS})
    index: dict[tuple[object, ...], int] = {}
    keys: list[tuple[frozenset[int], tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = []
    amounts: list[int] = []
    for g in groups:
        options = g.option_ids or frozenset(o.index for o in g.options)
        key = (options, _usable_existing(problem, g), tuple(caps_of.get(g.index, ())),
               tuple(g.template.requests.get(d) for d in dims))
        i = index.setdefault(key, len(keys))
        if i == len(keys):
            keys.append(key)
            amounts.append(0)
        amounts[i] += demand[g.index]
    n_classes = len(keys)
    req = np.array([k[3] for k in keys], dtype=np.float64).reshape(n_classes, len(dims))
    # New-node options: one row per option any class may use.
    used = sorted({k for key in keys for k in key[0]})
    opt_pos = {k: i for i, k in enumerate(used)}
    may = np.zeros((len(used), n_classes), dtype=np.bool_)
    for ci, key in enumerate(keys):
        may[[opt_pos[k] for k in key[0]], ci] = True
    opt_free = np.array([[max(problem.options[k].free.get(d), 0) for d in dims] for k in used],
                        dtype=np.float64).reshape(len(used), len(dims))
    opt_price = np.array([problem.options[k].price for k in used], dtype=np.float64)
    fits = (req[None, :, :] <= opt_free[:, None, :]).all(axis=2)
    may &= fits
    # A class that fits an option of price 0 costs nothing: unbounded free nodes hold it.
    free_classes = np.asarray(may[opt_price <= 0].any(axis=0), dtype=np.bool_)
    keep = np.logical_not(free_classes)
    # Existing nodes.
    users: dict[int, list[int]] = defaultdict(list)
    for ci, key in enumerate(keys):
        for e in key[1]:
            users[e].append(ci)
    old: dict[tuple[tuple[float, ...], tuple[int, ...]], int] = defaultdict(int)
    for e, who in users.items():
        room = tuple(float(max(problem.existing[e].free.get(d), 0)) for d in dims)
        ok = tuple(c for c in who if keep[c] and all(r <= f for r, f in zip(req[c], room, strict=True)))
        if ok:
            old[(room, ok)] += 1
    kept = np.nonzero(keep)[0]
    remap = np.full(n_classes, -1, dtype=np.int64)
    remap[kept] = np.arange(len(kept))
    reachable = np.asarray(may[:, kept].any(axis=0), dtype=np.bool_)
    for (_, ok) in old:
        reachable[remap[list(ok)]] = True
    if not reachable.all():
        return None  # some pods can go nowhere: no plan places them
    # Shapes: identical (room, price, classes) options priced once, dominated ones dropped.
    rows = np.nonzero((opt_price > 0) & may[:, kept].any(axis=1))[0]
    shape_of: dict[tuple[bytes, float, bytes], int] = {}
    for r in rows:
        shape_of.setdefault((opt_free[r].tobytes(), float(opt_price[r]), may[r, kept].tobytes()), int(r))
    reps = np.array(sorted(shape_of.values()), dtype=np.int64)
    free = opt_free[reps]
    price = opt_price[reps]
    allowed = may[reps][:, kept]
    alive = _undominated(free, price, allowed)
    cap_list: list[tuple[IntArray, int, bool]] = []
    for i, c in enumerate(caps):
        members = remap[[ci for ci, key in enumerate(keys) if i in key[2] and keep[ci]]]
        if len(members):
            cap_list.append((np.array(sorted(members), dtype=np.int64), c.per_node, c.existing))
    old_keys = list(old)
    n_kept = len(kept)
    old_allowed = np.zeros((len(old_keys), n_kept), dtype=np.bool_)
    for i, (_, ok) in enumerate(old_keys):
        old_allowed[i, remap[list(ok)]] = True
    return _Instance(
        dims, req[kept], np.array(amounts, dtype=np.float64)[kept], cap_list,
        free[alive], price[alive], allowed[alive],
        np.array([k[0] for k in old_keys], dtype=np.float64).reshape(len(old_keys), len(dims)),
        np.array([old[k] for k in old_keys], dtype=np.float64), old_allowed)


def _undominated(free: FloatArray, price: FloatArray, allowed: BoolArray) -> BoolArray:
    """Shapes no other shape beats: k2 dominates k when it allows every class k allows, has at least k's
    room in every dimension and costs no more (ties: the first one stays)."""
    m = len(price)
    packed = np.packbits(allowed, axis=1)
    alive = np.ones(m, dtype=np.bool_)
    order = np.arange(m)
    for lo in range(0, m, 64):
        hi = min(lo + 64, m)
        sub = ((packed[lo:hi, None, :] & ~packed[None, :, :]) == 0).all(axis=2)
        room = (free[lo:hi, None, :] <= free[None, :, :]).all(axis=2)
        cheaper = (price[None, :] < price[lo:hi, None]) | (
            (price[None, :] == price[lo:hi, None]) & (
                ~(free[lo:hi, None, :] == free[None, :, :]).all(axis=2) | (order[None, :] < order[lo:hi, None])
                | ~(packed[lo:hi, None, :] == packed[None, :, :]).all(axis=2)))
        dom = sub & room & cheaper
        dom[np.arange(hi - lo), np.arange(lo, hi)] = False
        alive[lo:hi] = ~dom.any(axis=1)
    return alive


# ---------------------------------------------------------------------------------------- pricing tables
@dataclass
class _Bucket:
    """Shapes priced by one table. A table has rows (each with its own classes and multipliers, shared by
    the shapes of one profile); within a row, cell (i1, i2, ...) holds the best value of a pattern using at
    most i_t cells of table dimension t, so every shape reads its own cell of its row."""

    shapes: IntArray  # rows of the instance's new (or existing) shapes
    existing: bool
    classes: IntArray  # classes some shape of the bucket may hold
    allowed: BoolArray  # [rows, classes] the classes each row may use
    dims: tuple[int, ...]  # table dimensions (indices into the instance's dims)
    grids: tuple[float, ...]  # amount per cell, per table dimension
    exact: BoolArray  # [D] the table holds this dimension exactly (or nothing asks for it)
    held: BoolArray  # [D] the table holds this dimension, maybe on a coarser grid (or nothing asks for it)
    cells: IntArray  # [shapes, table dims] each shape's cell
    row_of: IntArray  # [shapes] the table row each shape reads
    rep: IntArray  # [rows] the shape (position in `shapes`) whose pattern steers each row's multipliers
    lam: FloatArray  # [rows, D] Lagrange multipliers of the dimensions the table does not hold exactly
    step: FloatArray  # [rows, D] the multipliers' step factors (Rprop)
    sign: FloatArray  # [rows, D] the last direction of each multiplier


def _gcd(values: FloatArray) -> int:
    ints = [int(v) for v in values if v > 0]
    return math.gcd(*ints) if ints else 1


class _Pricer:
    """Upper bounds on the pricing problem (the best value of a pattern on a shape) and patterns near the
    best, from dynamic-programming tables over a few dimensions, the other ones priced by Lagrange
    multipliers (see the module docstring)."""

    def __init__(self, inst: _Instance, clock: WorkClock) -> None:
        self.inst = inst
        self.clock = clock  # charged for every table, screening, CP-SAT solve and column
        n_classes = len(inst.demand)
        self.req_rows = [tuple(float(v) for v in row) for row in inst.req]
        self.demand_int = [int(v) for v in inst.demand]
        self.caps_new = self._family(list(inst.caps))
        self.caps_old = self._family([c for c in inst.caps if c[2]])
        self.caps_all_new = [(m, s) for m, s, _ in inst.caps]
        self.caps_all_old = [(m, s) for m, s, e in inst.caps if e]
        self.class_caps_new: list[list[int]] = [[] for _ in range(n_classes)]
        for i, (m, _) in enumerate(self.caps_all_new):
            for c in m:
                self.class_caps_new[int(c)].append(i)
        self.class_caps_old: list[list[int]] = [[] for _ in range(n_classes)]
        for i, (m, _) in enumerate(self.caps_all_old):
            for c in m:
                self.class_caps_old[int(c)].append(i)
        self.loose_new = np.full(n_classes, np.inf)
        self.loose_old = np.full(n_classes, np.inf)
        for members, per_node, existing in inst.caps:
            self.loose_new[members] = np.minimum(self.loose_new[members], per_node)
            if existing:
                self.loose_old[members] = np.minimum(self.loose_old[members], per_node)
        self.group_new = np.full(n_classes, -1, dtype=np.int64)
        for i, (m, _) in enumerate(self.caps_new):
            self.group_new[m] = i
        self.group_old = np.full(n_classes, -1, dtype=np.int64)
        for i, (m, _) in enumerate(self.caps_old):
            self.group_old[m] = i
        self.buckets = self._buckets(inst.free, inst.allowed, False) + self._buckets(
            inst.old_free, inst.old_allowed, True)
        self.u_new: FloatArray | None = None
        self.u_old: FloatArray | None = None
        self.best_t: list[FloatArray] = []  # the best screening multiple of sigma, per shape (new, existing)

    @staticmethod
    def _family(caps: list[tuple[IntArray, int, bool]]) -> list[tuple[IntArray, int]]:
        """Disjoint cap sets for the tables (a subset of a cap set keeps its cap)."""
        covered: set[int] = set()
        out: list[tuple[IntArray, int]] = []
        for members, per_node, _ in sorted(caps, key=lambda c: (c[1], -len(c[0]))):
            if per_node > REPEAT:
                continue
            rest = np.array([c for c in members if int(c) not in covered], dtype=np.int64)
            if len(rest):
                out.append((rest, per_node))
                covered.update(int(c) for c in rest)
        return out

    # ------------------------------------------------------------------------------------ buckets
    def _buckets(self, free: FloatArray, allowed: BoolArray, existing: bool) -> list[_Bucket]:
        """Small shapes of one profile (the same classes up to fit, similar ratios between dimensions) share
        tables over two or more dimensions, in runs of growing size; large shapes are stacked, in runs of
        similar size, in tables over the first dimension."""
        inst = self.inst
        if not len(free):
            return []
        req = inst.req
        n_dims = len(inst.dims)
        used = allowed.any(axis=0)
        gcds = [_gcd(req[used, d]) if (req[used, d] > 0).any() else 0 for d in range(n_dims)]
        order = [d for d in range(n_dims) if gcds[d] > 0]
        out: list[_Bucket] = []
        if not order:
            rows = np.arange(len(free), dtype=np.int64)
            out.append(self._bucket(rows, free, allowed, existing, gcds, (), (), np.zeros(len(rows), dtype=np.int64)))
            return out
        first = order[0]
        cells_first = free[:, first] // gcds[first] + 1
        small = np.nonzero(cells_first <= SMALL)[0]
        large = np.nonzero(cells_first > SMALL)[0]
        fits = (req[None, :, :] <= free[:, None, :]).all(axis=2)
        loose = allowed | ~fits
        with np.errstate(divide="ignore"):
            ratio = np.log2((free + 1.0) / (free[:, first:first + 1] + 1.0))
        profile = np.round(2 * ratio).astype(np.int64)
        groups: dict[tuple[bytes, bytes], list[int]] = defaultdict(list)
        for k in small.tolist():
            groups[(loose[k].tobytes(), profile[k].tobytes())].append(k)
        for members in groups.values():
            shapes = sorted(members, key=lambda k: tuple(free[k]))
            start = 0
            while start < len(shapes):
                end = start + 1
                top = free[shapes[start]].copy()
                while end < len(shapes):
                    nxt = np.maximum(top, free[shapes[end]])
                    if len(order) > 1 and not self._exact_fit(nxt, gcds, order) and \
                            nxt[order[1]] > 2 * max(free[shapes[start], order[1]], 1.0):
                        break
                    top = nxt
                    end += 1
                dims, grids = self._small_grid(top, gcds, order)
                rows = np.array(shapes[start:end], dtype=np.int64)
                out.append(self._bucket(rows, free, allowed, existing, gcds, dims, grids,
                                        np.zeros(len(rows), dtype=np.int64)))
                start = end
        ordered = large[np.argsort(free[large, first], kind="stable")].tolist()
        start = 0
        while start < len(ordered):
            end = start + 1
            while end < len(ordered) and free[ordered[end], first] <= STACK * free[ordered[start], first]:
                end += 1
            rows = np.array(ordered[start:end], dtype=np.int64)
            top = float(free[rows, first].max())
            grid = float(gcds[first] * max(1, math.ceil(top / gcds[first] / (ROW - 1))))
            keys = [(loose[k].tobytes(), profile[k].tobytes()) for k in rows.tolist()]
            ids: dict[tuple[bytes, bytes], int] = {}
            row_of = np.array([ids.setdefault(key, len(ids)) for key in keys], dtype=np.int64)
            out.append(self._bucket(rows, free, allowed, existing, gcds, (first,), (grid,), row_of))
            start = end
        return out

    @staticmethod
    def _exact_fit(top: FloatArray, gcds: list[int], order: list[int]) -> bool:
        return int(top[order[0]] // gcds[order[0]] + 1) * int(top[order[1]] // gcds[order[1]] + 1) <= CELLS

    @staticmethod
    def _small_grid(top: FloatArray, gcds: list[int], order: list[int], budget: int | None = None
                    ) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """The first requested dimension exactly, the second exactly or on a coarser grid, then every other
        one whose exact cells still fit the table."""
        budget = CELLS if budget is None else budget
        first = order[0]
        dims, grids, size = [first], [float(gcds[first])], int(top[first] // gcds[first]) + 1
        for pos, d in enumerate(order[1:]):
            n = int(top[d] // gcds[d]) + 1
            if size * n <= budget:
                dims.append(d)
                grids.append(float(gcds[d]))
                size *= n
            elif pos == 0:
                cells = max(budget // size, 2)
                dims.append(d)
                grids.append(max(float(gcds[d]), float(top[d]) / (cells - 1)))
                size *= cells
        return tuple(dims), tuple(grids)

    def solo(self, shapes: list[int], existing: bool, lam: FloatArray) -> list[_Bucket]:
        """Tables for single shapes (those that decide the bound), each with its own multipliers (lam, per
        shape): small ones on their own grids of up to REFINE cells, large ones stacked one row each over
        the first dimension."""
        inst = self.inst
        free, allowed = (inst.old_free, inst.old_allowed) if existing else (inst.free, inst.allowed)
        req = inst.req
        used = allowed[shapes].any(axis=0)
        gcds = [_gcd(req[used, d]) if (req[used, d] > 0).any() else 0 for d in range(len(inst.dims))]
        order = [d for d in range(len(inst.dims)) if gcds[d] > 0]
        out: list[_Bucket] = []
        if not order:
            return out
        first = order[0]
        large: list[int] = []
        for k in shapes:
            if free[k, first] // gcds[first] + 1 > SMALL:
                large.append(k)
                continue
            dims, grids = self._small_grid(free[k], gcds, order, REFINE)
            b = self._bucket(np.array([k], dtype=np.int64), free, allowed, existing, gcds, dims, grids,
                             np.zeros(1, dtype=np.int64))
            b.lam[0] = np.where(b.held, 0.0, lam[shapes.index(k)])
            out.append(b)
        if large:
            rows = np.array(large, dtype=np.int64)
            top = float(free[rows, first].max())
            grid = float(gcds[first] * max(1, math.ceil(top / gcds[first] / (ROW - 1))))
            b = self._bucket(rows, free, allowed, existing, gcds, (first,), (grid,),
                             np.arange(len(rows), dtype=np.int64))
            b.lam[:] = np.where(b.held[None, :], 0.0, np.array([lam[shapes.index(k)] for k in large]))
            out.append(b)
        return out

    def _bucket(self, rows: IntArray, free: FloatArray, allowed: BoolArray, existing: bool, gcds: list[int],
                dims: tuple[int, ...], grids: tuple[float, ...], row_of: IntArray) -> _Bucket:
        exact = np.array([g == 0 for g in gcds], dtype=np.bool_)
        held = exact.copy()
        for d, g in zip(dims, grids, strict=True):
            exact[d] = g == gcds[d]
            held[d] = True
        if dims:
            cells = np.stack([np.floor(free[rows, d] / g) for d, g in zip(dims, grids, strict=True)],
                             axis=1).astype(np.int64)
        else:
            cells = np.zeros((len(rows), 0), dtype=np.int64)
        classes = np.nonzero(allowed[rows].any(axis=0))[0]
        n_rows = int(row_of.max()) + 1
        row_allowed = np.zeros((n_rows, len(classes)), dtype=np.bool_)
        rep = np.zeros(n_rows, dtype=np.int64)
        size = free[rows, dims[0]] if dims else np.zeros(len(rows))
        for r in range(n_rows):
            mine = np.nonzero(row_of == r)[0]
            row_allowed[r] = allowed[rows[mine]][:, classes].any(axis=0)
            rep[r] = mine[int(np.argmax(size[mine]))]
        lam = np.zeros((n_rows, len(gcds)), dtype=np.float64)
        return _Bucket(rows, existing, classes, row_allowed, dims, grids, exact, held, cells, row_of, rep, lam,
                       np.full_like(lam, 1.5), np.zeros_like(lam))

    # ------------------------------------------------------------------------------------ screening
    def _bounds_per_shape(self, free: FloatArray, allowed: BoolArray, loose: FloatArray) -> FloatArray:
        """[shapes, classes]: most pods of a class one node of the shape can hold."""
        req = self.inst.req
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(req[None, :, :] > 0, np.floor(free[:, None, :] / np.where(req > 0, req, 1.0)[None, :, :]),
                           np.inf).min(axis=2)
        out = np.minimum(np.minimum(fit, self.inst.demand[None, :]), loose[None, :])
        return np.where(allowed, out, 0.0)

    def screen(self, pi: FloatArray, sigma: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Cheap upper bounds on every shape's pricing problem: for multipliers lam >= 0 (multiples of the
        fluid prices sigma), a pattern x is worth at most lam . room + sum_c x_c (pi_c - lam . req_c)^+, with
        x_c at most what fits and at most per_node pods of a cap set group."""
        inst = self.inst
        self.clock.charge(screen_seconds((len(inst.price) + len(inst.old_count)) * len(inst.demand) * len(SCREEN)))
        if self.u_new is None:
            self.u_new = self._bounds_per_shape(inst.free, inst.allowed, self.loose_new)
            self.u_old = self._bounds_per_shape(inst.old_free, inst.old_allowed, self.loose_old)
        assert self.u_old is not None
        out = []
        for free, u, groups in ((inst.free, self.u_new, self.caps_new), (inst.old_free, self.u_old, self.caps_old)):
            best = np.full(len(free), np.inf)
            if not len(free):
                out.append(best)
                continue
            free_u = u.copy()
            for members, _ in groups:
                free_u[:, members] = 0.0
            best_t = np.ones(len(free))
            for t in SCREEN:
                lam = t * sigma
                v = np.maximum(pi - inst.req @ lam, 0.0)
                total = free @ lam + free_u @ v
                for members, per_node in groups:
                    total += per_node * ((u[:, members] > 0) * v[members][None, :]).max(axis=1)
                best_t = np.where(total < best, t, best_t)
                best = np.minimum(best, total)
            out.append(best)
            self.best_t.append(best_t)
        self.best_t = self.best_t[-2:]
        return out[0], out[1]

    # ------------------------------------------------------------------------------------ exact
    def exact(self, k: int, existing: bool, pi: FloatArray, seconds: float) -> tuple[float, dict[int, int]]:
        """The pricing problem of one shape solved by CP-SAT within `seconds`: (an upper bound on its best
        value, the best pattern found). Values are scaled to integers; the bound adds back the most the
        rounding can hide (half a unit per pod)."""
        inst = self.inst
        free, allowed = (inst.old_free[k], inst.old_allowed[k]) if existing else (inst.free[k], inst.allowed[k])
        caps = self.caps_all_old if existing else self.caps_all_new
        cand = [int(c) for c in np.nonzero(allowed & (pi > 0))[0]]
        u = self.u_old if existing else self.u_new
        if u is None or not cand:
            return 0.0, {}
        top = float(pi[cand].max())
        unit = top / 1e6
        model = cp_model.CpModel()
        xs: dict[int, cp_model.IntVar] = {}
        for c in cand:
            n = int(u[k, c])
            if n > 0:
                xs[c] = model.new_int_var(0, n, "")
        if not xs:
            return 0.0, {}
        for d in range(len(inst.dims)):
            terms = [(int(inst.req[c, d]), x) for c, x in xs.items() if inst.req[c, d] > 0]
            if terms:
                model.add(sum(w * x for w, x in terms) <= int(free[d]))
        for members, per_node in caps:
            inside = [xs[int(c)] for c in members if int(c) in xs]
            if len(inside) > 1:
                model.add(sum(inside) <= per_node)
        model.maximize(sum(int(round(pi[c] / unit)) * x for c, x in xs.items()))
        solver = cp_model.CpSolver()
        solver.parameters.max_deterministic_time = max(seconds / PRICING_WALL_PER_DETERMINISTIC, 0.005)
        guard = self.clock.wall_left()
        if guard != math.inf:
            solver.parameters.max_time_in_seconds = max(guard, 0.01)
        solver.parameters.num_workers = 1
        status = solver.Solve(model)
        self.clock.charge(pricing_seconds(solver.response_proto.deterministic_time))
        self.clock.record_stop(status == cp_model.OPTIMAL, solver.wall_time, solver.parameters.max_time_in_seconds)
        slack = 0.5 * sum(int(u[k, c]) for c in xs) * unit
        if status == cp_model.OPTIMAL:
            bound = solver.ObjectiveValue() * unit + slack
        elif status == cp_model.FEASIBLE:
            bound = solver.BestObjectiveBound() * unit + slack
        else:
            return math.inf, {}
        x = {c: int(solver.Value(v)) for c, v in xs.items() if solver.Value(v) > 0}
        return bound, x

    # ------------------------------------------------------------------------------------ tables
    def table(self, b: _Bucket, pi: FloatArray, keep: bool) -> tuple[FloatArray, list[_Stage]]:
        """The table of bucket b for the values pi - lam . request, lam the rows' multipliers."""
        inst = self.inst
        req = inst.req
        extent = tuple(int(n) + 1 for n in b.cells.max(axis=0)) if len(b.shapes) else ()
        f = np.zeros((len(b.rep), *extent), dtype=np.float64)
        cls = b.classes
        values = np.where(b.allowed, pi[cls][None, :] - b.lam @ req[cls].T, NEG)
        use = (values > 0).any(axis=0)
        cls, values = cls[use], values[:, use]
        if not len(cls):
            return f, []
        rq = req[cls]
        free = inst.old_free if b.existing else inst.free
        top = free[b.shapes].max(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(rq > 0, np.floor(top[None, :] / np.where(rq > 0, rq, 1.0)), np.inf).min(axis=1)
        loose = self.loose_old if b.existing else self.loose_new
        bound = np.minimum(np.minimum(inst.demand[cls], fit), loose[cls])
        if b.dims:
            weights = np.stack([np.floor(rq[:, d] / g) for d, g in zip(b.dims, b.grids, strict=True)],
                               axis=1).astype(np.int64)
        else:
            weights = np.zeros((len(cls), 0), dtype=np.int64)
        group_of = self.group_old if b.existing else self.group_new
        families = self.caps_old if b.existing else self.caps_new
        stages: list[_Stage] = []
        members: dict[int, list[tuple[int, tuple[int, ...], FloatArray]]] = defaultdict(list)
        for i, c in enumerate(cls.tolist()):
            n = int(bound[i])
            w = tuple(int(v) for v in weights[i])
            if n <= 0 or any(v >= m for v, m in zip(w, extent, strict=True)):
                continue
            grp = int(group_of[c])
            if grp >= 0:
                members[grp].append((c, w, values[:, i]))
                continue
            chunk = 1
            while n > 0:
                take = min(chunk, n)
                n -= take
                chunk *= 2
                stages.append(_item(f, c, take, tuple(v * take for v in w), values[:, i] * take, keep))
        for grp, items in members.items():
            items = _undominated_members(items)
            for _ in range(families[grp][1]):
                stage, f = _group(f, items, keep)
                stages.append(stage)
        self.clock.charge(table_seconds(f.size, len(stages), sum(max(len(st.members), 1) for st in stages)))
        return f, stages

    def read(self, b: _Bucket, f: FloatArray) -> FloatArray:
        """Upper bounds on the best pattern value of every shape of the bucket."""
        free = self.inst.old_free if b.existing else self.inst.free
        rows = b.row_of
        index = (rows, *b.cells.T)
        out: FloatArray = f[index] + (b.lam[rows] * free[b.shapes]).sum(axis=1)
        return out

    @staticmethod
    def backtrack(stages: list[_Stage], row: int, cell: tuple[int, ...]) -> dict[int, int]:
        """The pattern behind one cell of a table built with keep=True."""
        at = [row, *cell]
        x: dict[int, int] = defaultdict(int)
        for st in reversed(stages):
            if st.choice is not None:
                idx = int(st.choice[tuple(at)])
                if idx >= 0:
                    c, w = st.members[idx]
                    x[c] += 1
                    at = [at[0], *(a - v for a, v in zip(at[1:], w, strict=True))]
            elif st.mask is None:
                if st.always is not None and st.always[row]:
                    x[st.c] += st.count
            elif st.mask[tuple(at)]:
                x[st.c] += st.count
                at = [at[0], *(a - v for a, v in zip(at[1:], st.w, strict=True))]
        return dict(x)

    def steer(self, b: _Bucket, stages: list[_Stage], scale: FloatArray) -> None:
        """Move every row's multipliers (the soft dimensions only) against the subgradient of the bound at
        the row's shape: up where the table's best pattern overfills the shape, down where it leaves room;
        the step grows while the direction holds and shrinks when it turns (Rprop)."""
        free = self.inst.old_free if b.existing else self.inst.free
        soft = ~b.exact
        if not soft.any():
            return
        req = self.inst.req
        for r, i in enumerate(b.rep.tolist()):
            x = self.backtrack(stages, r, tuple(int(v) for v in b.cells[i]))
            use = np.zeros(len(soft))
            for c, n in x.items():
                use += n * req[c]
            room = free[b.shapes[i]]
            sign = np.where(use > room * (1 + 1e-9), 1.0, -1.0)
            same = sign == b.sign[r]
            b.step[r] = np.where(same, np.minimum(b.step[r] * 1.3, 4.0), np.maximum(1 + (b.step[r] - 1) / 2, 1.02))
            b.sign[r] = sign
            lam = b.lam[r]
            up = np.maximum(lam * b.step[r], 0.02 * scale)
            down = np.where(lam / b.step[r] < 1e-3 * scale, 0.0, lam / b.step[r])
            lam[:] = np.where(soft, np.where(sign > 0, up, down), 0.0)

    # ------------------------------------------------------------------------------------ columns
    def column(self, x: Mapping[int, int], room: FloatArray, allowed: BoolArray, existing: bool,
               pi: FloatArray) -> dict[int, int]:
        """A real pattern near x: classes the shape may not hold dropped, caps and room enforced by removing
        the least valuable pods, then the room left filled greedily (best value per room first)."""
        self.clock.charge(column_seconds(len(x)))
        rows, demand = self.req_rows, self.demand_int
        caps = self.caps_all_old if existing else self.caps_all_new
        class_caps = self.class_caps_old if existing else self.class_caps_new
        out = {c: min(n, demand[c]) for c, n in x.items() if n > 0 and allowed[c]}
        n_dims = len(room)
        left = [float(v) for v in room]
        for c, n in out.items():
            r = rows[c]
            for d in range(n_dims):
                left[d] -= n * r[d]
        cap_left = {s: caps[s][1] for c in out for s in class_caps[c]}
        for c, n in out.items():
            for s in class_caps[c]:
                cap_left[s] -= n
        # Caps, then room: drop the pod of least value (per unit of the dimension that overflows).
        for s, v in list(cap_left.items()):
            while v < 0:
                c = min((c for c in out if s in class_caps[c]), key=lambda c: pi[c])
                self._drop(out, c, min(out[c], -v), left, cap_left, class_caps)
                v = cap_left[s]
        for _ in range(4 * n_dims):
            worst, d_worst = 0.0, -1
            for d in range(n_dims):
                if left[d] < 0:
                    over = -left[d] / max(float(room[d]), 1.0)
                    if over > worst:
                        worst, d_worst = over, d
            if d_worst < 0:
                break
            # Drop the pods of least value per unit of the dimension that overflows most, in bulk.
            for c in sorted((c for c in out if rows[c][d_worst] > 0), key=lambda c: pi[c] / rows[c][d_worst]):
                if left[d_worst] >= 0:
                    break
                n = min(out[c], math.ceil(-left[d_worst] / rows[c][d_worst]))
                self._drop(out, c, n, left, cap_left, class_caps)
        cand = np.nonzero(allowed & (pi > TOL))[0]
        if not len(cand):
            return out
        safe = np.where(room > 0, room, 1.0)
        req = self.inst.req
        size = (req[cand] / safe).max(axis=1)
        order = cand[np.argsort(-pi[cand] / np.maximum(size, 1e-12), kind="stable")]
        # Below the least request of every class still to come in some dimension, nothing fits: stop there.
        floor = np.minimum.accumulate(np.where(req[order] > 0, req[order], np.inf)[::-1], axis=0)[::-1]
        floor_rows = floor.tolist()
        for pos, c in enumerate(order.tolist()):
            low = floor_rows[pos]
            if (left[0] < low[0] or left[-1] < low[-1]) and any(left[d] < low[d] for d in range(n_dims)):
                break
            r = rows[c]
            n = demand[c] - out.get(c, 0)
            for d in range(n_dims):
                if r[d] > 0:
                    n = min(n, int(left[d] // r[d]))
            if n <= 0:
                continue
            for s in class_caps[c]:
                n = min(n, cap_left.get(s, caps[s][1]))
            if n <= 0:
                continue
            out[c] = out.get(c, 0) + n
            for d in range(n_dims):
                left[d] -= n * r[d]
            for s in class_caps[c]:
                cap_left[s] = cap_left.get(s, caps[s][1]) - n
        return out

    def _drop(self, out: dict[int, int], c: int, n: int, left: list[float], cap_left: dict[int, int],
              class_caps: list[list[int]]) -> None:
        out[c] -= n
        if out[c] == 0:
            del out[c]
        r = self.req_rows[c]
        for d in range(len(left)):
            left[d] += n * r[d]
        for s in class_caps[c]:
            cap_left[s] += n


@dataclass
class _Stage:
    """One step of a table: an item (`count` pods of class c, weight w) or a choice of at most one pod of
    a group of classes."""

    c: int
    count: int
    w: tuple[int, ...]
    always: BoolArray | None  # a weightless item: taken in the rows where it is worth something
    mask: BoolArray | None  # cells where the item was taken
    choice: npt.NDArray[np.int16] | None  # cells' chosen member of a group (-1: none)
    members: list[tuple[int, tuple[int, ...]]]


def _expand(v: FloatArray, ndim: int) -> FloatArray:
    return v.reshape((len(v),) + (1,) * (ndim - 1))


def _item(f: FloatArray, c: int, count: int, w: tuple[int, ...], v: FloatArray, keep: bool) -> _Stage:
    if not any(w):
        gain = np.maximum(v, 0.0)
        f += _expand(gain, f.ndim)
        return _Stage(c, count, w, gain > 0, None, None, [])
    at = (slice(None), *(slice(x, None) for x in w))
    dst = f[at]
    src = f[(slice(None), *(slice(0, n - x) for n, x in zip(f.shape[1:], w, strict=True)))] + _expand(v, f.ndim)
    mask = None
    if keep:
        mask = np.zeros(f.shape, dtype=np.bool_)
        np.greater(src, dst, out=mask[at])
    np.maximum(dst, src, out=dst)
    return _Stage(c, count, w, None, mask, None, [])


def _undominated_members(items: list[tuple[int, tuple[int, ...], FloatArray]]
                         ) -> list[tuple[int, tuple[int, ...], FloatArray]]:
    """Members of a choose-one group that no other member beats: at most its weight in every table
    dimension and at least its value in every row (ties: the first stays)."""
    if len(items) < 2:
        return items
    w = np.array([it[1] for it in items], dtype=np.int64).reshape(len(items), -1)
    v = np.stack([it[2] for it in items], axis=0)
    lighter = (w[:, None, :] <= w[None, :, :]).all(axis=2)  # [a, b]: a weighs at most b
    richer = (v[:, None, :] >= v[None, :, :]).all(axis=2)
    equal = (w[:, None, :] == w[None, :, :]).all(axis=2) & (v[:, None, :] == v[None, :, :]).all(axis=2)
    order = np.arange(len(items))
    beats = lighter & richer & (~equal | (order[:, None] < order[None, :]))
    np.fill_diagonal(beats, False)
    keep = ~beats.any(axis=0)
    return [it for it, k in zip(items, keep.tolist(), strict=True) if k]


def _group(f: FloatArray, items: list[tuple[int, tuple[int, ...], FloatArray]], keep: bool
           ) -> tuple[_Stage, FloatArray]:
    g = f.copy()
    choice = np.full(f.shape, -1, dtype=np.int16) if keep else None
    for idx, (_, w, v) in enumerate(items):
        at = (slice(None), *(slice(x, None) for x in w))
        src = f[(slice(None), *(slice(0, n - x) for n, x in zip(f.shape[1:], w, strict=True)))] + _expand(v, f.ndim)
        dst = g[at]
        if choice is not None:
            better = src > dst
            np.copyto(dst, src, where=better)
            np.copyto(choice[at], np.int16(idx), where=better)
        else:
            np.maximum(dst, src, out=dst)
    return _Stage(-1, 1, (), None, None, choice, [(c, w) for c, w, _ in items]), g


# ---------------------------------------------------------------------------------------- the master LP
class _Master:
    """min sum price * y + big * sum buy  s.t.  for every row r (a set of classes):
    sum_p (pods of r in p) y_p + buy_r >= demand of r;  the patterns of an existing shape <= its node count.
    The artificial columns `buy` keep it feasible from the start."""

    def __init__(self, inst: _Instance, rows_of: list[list[int]], n_rows: int, clock: WorkClock) -> None:
        self.inst = inst
        self.rows_of = rows_of
        self.clock = clock
        solver = pywraplp.Solver.CreateSolver("GLOP")
        if solver is None:
            raise RuntimeError("GLOP is not available")
        self.solver = solver
        inf = solver.infinity()
        amount = np.zeros(n_rows)
        for c, rs in enumerate(rows_of):
            for r in rs:
                amount[r] += inst.demand[c]
        self.rows = [solver.Constraint(float(d), inf) for d in amount]
        self.old_rows = [solver.Constraint(-inf, float(n)) for n in inst.old_count]
        self.objective = solver.Objective()
        self.objective.SetMinimization()
        big = float(inst.price.max(initial=1.0)) * 1e3 + 1.0
        self.buy = [solver.NumVar(0.0, inf, "") for _ in range(n_rows)]
        for row, b in zip(self.rows, self.buy, strict=True):
            row.SetCoefficient(b, 1.0)
            self.objective.SetCoefficient(b, big)
        self.seen: set[tuple[int, bool, tuple[tuple[int, int], ...]]] = set()
        self.columns = 0

    def add(self, shape: int, existing: bool, x: Mapping[int, int]) -> bool:
        key = (shape, existing, tuple(sorted((c, n) for c, n in x.items() if n > 0)))
        if not key[2] or key in self.seen:
            return False
        self.seen.add(key)
        var = self.solver.NumVar(0.0, self.solver.infinity(), "")
        if existing:
            self.old_rows[shape].SetCoefficient(var, 1.0)
        else:
            self.objective.SetCoefficient(var, float(self.inst.price[shape]))
        coef: dict[int, int] = defaultdict(int)
        for c, n in key[2]:
            for r in self.rows_of[c]:
                coef[r] += n
        for r, n in coef.items():
            self.rows[r].SetCoefficient(var, float(n))
        self.columns += 1
        return True

    def solve(self) -> tuple[float, FloatArray, FloatArray, bool] | None:
        """(value, duals of the classes, duals of the existing rows, artificial columns used). Solved to
        optimality (a time limit would make the duals depend on the machine); the wall guard stops it."""
        guard = self.clock.wall_left()
        if guard != math.inf:
            self.solver.SetTimeLimit(max(math.ceil(guard * 1000), 1))
        began = time.monotonic()
        status = self.solver.Solve()
        self.clock.charge(simplex_seconds(self.solver.iterations(), len(self.rows) + len(self.old_rows)))
        self.clock.record_stop(status == pywraplp.Solver.OPTIMAL, time.monotonic() - began, guard)
        if status != pywraplp.Solver.OPTIMAL:
            return None
        tau = np.maximum(np.array([r.dual_value() for r in self.rows], dtype=np.float64), 0.0)
        mu = np.array([r.dual_value() for r in self.old_rows], dtype=np.float64)
        artificial = any(v.solution_value() > 1e-9 for v in self.buy)
        pi = np.array([sum(tau[r] for r in rs) for rs in self.rows_of], dtype=np.float64)
        return self.objective.Value(), pi, mu, artificial


def _dual_guess(inst: _Instance) -> tuple[FloatArray, FloatArray]:
    """Fluid duals with one price per dimension and per cap set for every shape: pi[c] = sigma . req[c] +
    the prices of c's cap sets, as large as every shape's price allows. Only a starting point."""
    solver = pywraplp.Solver.CreateSolver("GLOP")
    n_dims = len(inst.dims)
    caps = [(m, s) for m, s, _ in inst.caps]
    if solver is None:
        return np.zeros(len(inst.demand)), np.zeros(len(inst.dims))
    sigma = [solver.NumVar(0.0, solver.infinity(), "") for _ in range(n_dims)]
    rho = [solver.NumVar(0.0, solver.infinity(), "") for _ in caps]
    for k in range(len(inst.price)):
        row = solver.Constraint(-solver.infinity(), float(inst.price[k]))
        for d in range(n_dims):
            row.SetCoefficient(sigma[d], float(inst.free[k, d]))
        for (members, per_node), r in zip(caps, rho, strict=True):
            if inst.allowed[k, members].any():
                row.SetCoefficient(r, float(per_node))
    obj = solver.Objective()
    weight = inst.demand @ inst.req
    for d in range(n_dims):
        obj.SetCoefficient(sigma[d], float(weight[d]))
    for (members, _), r in zip(caps, rho, strict=True):
        obj.SetCoefficient(r, float(inst.demand[members].sum()))
    obj.SetMaximization()
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return np.zeros(len(inst.demand)), np.zeros(n_dims)
    prices = np.array([v.solution_value() for v in sigma], dtype=np.float64)
    pi = inst.req @ prices
    for (members, _), r in zip(caps, rho, strict=True):
        pi[members] += r.solution_value()
    return np.maximum(pi, 0.0), np.maximum(prices, 0.0)


class _Generation:
    """Column generation on the aggregated master; every pricing pass certifies a bound."""

    def __init__(self, inst: _Instance, clock: WorkClock, deadline: float,
                 progress: Callable[[str], None] | None) -> None:
        self.inst = inst
        self.clock = clock
        self.deadline = deadline  # on the work clock
        self.stop = deadline - RESERVE * (deadline - clock.now())  # column generation ends here
        self.progress = progress
        self.pricer = _Pricer(inst, clock)
        n = len(inst.demand)
        # Rows: classes that differ only by their cap sets share a row; every cap set has its own row.
        keys: dict[bytes, int] = {}
        rows_of = []
        for c in range(n):
            key = inst.req[c].tobytes() + inst.allowed[:, c].tobytes() + inst.old_allowed[:, c].tobytes()
            rows_of.append([keys.setdefault(key, len(keys))])
        for i, (members, _, _) in enumerate(inst.caps):
            for c in members:
                rows_of[int(c)].append(len(keys) + i)
        self.master = _Master(inst, rows_of, len(keys) + len(inst.caps), clock)
        self.best = -math.inf
        self.value = math.inf
        self.iterations = 0
        self.pass_seconds = 0.0
        self.last_pi: FloatArray | None = None
        self.guess = np.zeros(n)
        self.sigma = np.zeros(len(inst.dims))
        for c in range(n):
            ks = np.nonzero(inst.allowed[:, c])[0]
            if len(ks):
                self.master.add(int(ks[np.argmin(inst.price[ks])]), False, {c: 1})
            for e in np.nonzero(inst.old_allowed[:, c])[0]:
                self.master.add(int(e), True, {c: 1})

    def scale(self, pi: FloatArray) -> FloatArray:
        """A typical value per unit of every dimension (the scale of the multipliers)."""
        inst = self.inst
        used = inst.demand @ inst.req
        worth = float(inst.demand @ pi)
        return np.where(used > 0, worth / np.maximum(used, 1e-300), 0.0)

    def bounds(self, pi: FloatArray, mu: FloatArray | None, keep: bool, steer: bool, columns: bool
               ) -> tuple[FloatArray, FloatArray, list[list[_Stage]]]:
        """Upper bounds on the shapes' pricing problems at pi, and the tables built. Every shape starts
        from the cheap screening bound; a bucket gets a table when a shape of it may yield a column
        (columns=True) or may raise the certified theta above what the tables already built show."""
        inst, pricer = self.inst, self.pricer
        ub_new, ub_old = pricer.screen(pi, self.sigma)
        tables: list[list[_Stage]] = [[] for _ in pricer.buckets]
        scale = self.scale(pi)
        cost_old = -np.minimum(mu, 0.0) if mu is not None else np.zeros(len(inst.old_count))
        promise = []
        for bi, b in enumerate(pricer.buckets):
            if b.existing:
                promise.append((math.inf, bi))
            else:
                promise.append((float(np.max(ub_new[b.shapes] / inst.price[b.shapes])), bi))
        promise.sort(reverse=True)
        running = 0.0
        built = 0
        found = False
        for head, bi in promise:
            b = pricer.buckets[bi]
            if b.existing:
                if columns and not (ub_old[b.shapes] > cost_old[b.shapes] + TOL).any():
                    continue
            elif head <= (1 + 1e-9 if columns else running * (1 + 1e-12)):
                if columns:
                    continue
                break
            if columns and built >= BATCH and found:
                break  # enough tables with room for a column this time: the others wait
            f, stages = pricer.table(b, pi, keep=keep or steer)
            built += 1
            values = pricer.read(b, f)
            if b.existing:
                ub_old[b.shapes] = np.minimum(ub_old[b.shapes], values)
                found = found or bool((ub_old[b.shapes] > cost_old[b.shapes] + TOL).any())
            else:
                ub_new[b.shapes] = np.minimum(ub_new[b.shapes], values)
                running = max(running, float(np.max(ub_new[b.shapes] / inst.price[b.shapes])))
                found = found or running > 1 + 1e-9
            tables[bi] = stages
            if steer:
                pricer.steer(b, stages, scale)
        return ub_new, ub_old, tables

    def certify(self, pi: FloatArray, ub_new: FloatArray, ub_old: FloatArray) -> tuple[float, float]:
        """(bound, theta): pi / theta is a dual solution of the configuration LP (see the module docstring)."""
        inst = self.inst
        theta = float(np.max(ub_new / inst.price)) if len(inst.price) else 0.0
        theta *= 1 + 1e-9
        total = float(pi @ inst.demand) - float(inst.old_count @ np.maximum(ub_old, 0.0))
        if theta <= 0:
            return (0.0 if total <= 0 else -math.inf), theta
        return total / theta, theta

    def columns(self, pi: FloatArray, pi_m: FloatArray, mu: FloatArray, ub_new: FloatArray, ub_old: FloatArray,
                tables: list[list[_Stage]], limit: int, any_gain: bool = False) -> int:
        """Patterns of the shapes whose bound at pi leaves most room (the best of every bucket at least),
        added when the master's duals (pi_m, mu) value them above their cost (or always, with any_gain)."""
        inst, pricer = self.inst, self.pricer
        picks: list[tuple[float, int, int]] = []
        for bi, b in enumerate(pricer.buckets):
            if not tables[bi]:
                continue
            cost = -np.minimum(mu[b.shapes], 0.0) if b.existing else inst.price[b.shapes]
            ub = ub_old[b.shapes] if b.existing else ub_new[b.shapes]
            ratio = (ub - cost) / np.maximum(cost, 1e-9)
            order = np.argsort(-ratio)
            for rank, i in enumerate(order[:limit].tolist()):
                if ratio[i] <= 1e-9 and not any_gain:
                    break
                picks.append((float(ratio[i]) if rank else math.inf, bi, i))
        picks.sort(reverse=True)
        added = 0
        for _, bi, i in picks[:limit]:
            b = pricer.buckets[bi]
            k = int(b.shapes[i])
            free = inst.old_free if b.existing else inst.free
            allowed = inst.old_allowed if b.existing else inst.allowed
            x = pricer.backtrack(tables[bi], int(b.row_of[i]), tuple(int(v) for v in b.cells[i]))
            col = pricer.column(x, free[k], allowed[k], b.existing, pi)
            gain = sum(pi_m[c] * n for c, n in col.items())
            limit_k = -min(float(mu[k]), 0.0) if b.existing else float(inst.price[k])
            if (any_gain or gain > limit_k * (1 + 1e-9) + TOL) and self.master.add(k, b.existing, col):
                added += 1
        return added

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    def now(self) -> float:
        """The work clock, or infinity once the wall-clock guard has passed (every phase then ends)."""
        return math.inf if self.clock.past_wall() else self.clock.now()

    def start(self) -> None:
        """Multipliers from the fluid prices, then the tables' patterns at the fluid duals (a good first
        master) and their certified bound."""
        inst = self.inst
        guess, sigma = _dual_guess(inst)
        self.guess, self.sigma = guess, sigma
        for b in self.pricer.buckets:
            b.lam[:] = np.where(b.held, 0.0, sigma)[None, :]
        screened = self.pricer.screen(guess, sigma)
        self.best = max(self.best, self.certify(guess, *screened)[0])
        # Every class alone, as many pods as fit, on the shape where its pods cost least.
        u = self.pricer.u_new
        if u is not None and len(inst.price):
            per_pod = np.where(u > 0, inst.price[:, None] / np.maximum(u, 1.0), np.inf)
            for c, k in enumerate(np.argmin(per_pod, axis=0).tolist()):
                if u[k, c] > 0:
                    self.master.add(k, False, {c: int(u[k, c])})
        if self.now() >= self.deadline:
            return
        t0 = self.now()
        ub_new, ub_old, tables = self.bounds(guess, None, keep=True, steer=False, columns=False)
        self.best = max(self.best, self.certify(guess, ub_new, ub_old)[0])
        self.columns(guess, guess, np.zeros(len(inst.old_count)), ub_new, ub_old, tables, START, any_gain=True)
        self.pass_seconds = self.now() - t0

    def run(self, fluid: float | None) -> None:
        """Column generation until the certified bound meets the master, nothing improves the master, the
        master cannot beat the fluid bound, or the time kept for certifying is reached."""
        self.start()
        history: list[float] = []
        while self.now() + 2 * self.pass_seconds < self.stop:
            solved = self.master.solve()
            if solved is None:
                return
            value, pi_m, mu, artificial = solved
            self.iterations += 1
            if not artificial:
                self.value = min(self.value, value)
                if fluid is not None and value <= fluid * (1 + 1e-9):
                    return  # the configuration LP is no stronger than the fluid one here
            history.append(value)
            if self.best >= self.value * (1 - GAP):
                return
            tailing = len(history) > TAIL and history[-TAIL - 1] - value <= GAP * abs(value)
            # Early on, price between the master's duals and the fluid duals (Wentges smoothing).
            alpha = SMOOTH ** self.iterations
            pi = alpha * self.guess + (1 - alpha) * pi_m
            self.last_pi = pi_m
            t0 = self.now()
            ub_new, ub_old, tables = self.bounds(pi, mu, keep=True, steer=False, columns=True)
            added = self.columns(pi, pi_m, mu, ub_new, ub_old, tables, LIMIT)
            added += self.greedy(pi, pi_m, ub_new, tables)
            bound, theta = self.certify(pi, ub_new, ub_old)
            self.best = max(self.best, bound)
            self.pass_seconds = max(0.5 * self.pass_seconds, self.now() - t0)
            self.say(f"pattern LP {self.iterations}: master {value:.4f}, bound {bound:.4f} (best {self.best:.4f}, "
                     f"theta {theta:.4f}), {added} columns")
            if (not added or tailing) and alpha < 1e-3:
                # The shared tables found nothing (or nothing that moves the master): tables of their own,
                # then CP-SAT, for the shapes whose bound still leaves room, may.
                added = 0
                history.clear()
                solo: list[_Bucket] = []
                chosen: set[int] = set()
                for _ in range(2):
                    added += self.refine(pi_m, ub_new, theta, solo, chosen, pi_m)
                    if added:
                        break
                if not added:
                    added = self.solve_exactly(pi_m, ub_new, EXACT_LOOP, self.stop, pi_m)
                self.say(f"pattern LP: tables of their own / CP-SAT for {len(chosen)} shapes, {added} columns")
                if not added:
                    return

    def greedy(self, pi: FloatArray, pi_m: FloatArray, ub_new: FloatArray, tables: list[list[_Stage]]) -> int:
        """Greedy patterns (best value per room first) for the new shapes whose bound leaves room but whose
        tables were not built this time: cheap columns while the duals are far from settled."""
        inst = self.inst
        skip: set[int] = set()
        for b, stages in zip(self.pricer.buckets, tables, strict=True):
            if stages and not b.existing:
                skip.update(b.shapes.tolist())
        ratio = ub_new / inst.price
        added = 0
        for k in np.argsort(-ratio)[:LIMIT].tolist():
            if ratio[k] <= 1 + 1e-9:
                break
            if k not in skip:
                added += self.offer(k, {}, pi, pi_m)
        return added

    def refine(self, pi: FloatArray, ub_new: FloatArray, theta: float, solo: list[_Bucket], chosen: set[int],
               pi_m: FloatArray | None = None) -> int:
        """One pass over tables of their own for the shapes that decide theta (the REFINED highest ratios
        not chosen yet join `solo`): bounds into ub_new, multipliers steered; with pi_m, the tables' patterns
        are offered to the master. Returns the columns added."""
        inst, pricer = self.inst, self.pricer
        ratio = ub_new / inst.price
        floor = max(ratio.max() * (1 - 0.5 * (theta - 1)), 1.0 if pi_m is not None else 0.0)
        top = [int(k) for k in np.argsort(-ratio)[:REFINED] if int(k) not in chosen and ratio[k] >= floor]
        if top:
            t_best = pricer.best_t[0] if pricer.best_t else np.ones(len(inst.price))
            solo += pricer.solo(top, False, np.array([t_best[k] * self.sigma for k in top]))
            chosen.update(top)
        scale = self.scale(pi)
        added = 0
        for b in solo:
            f, stages = pricer.table(b, pi, keep=True)
            ub_new[b.shapes] = np.minimum(ub_new[b.shapes], pricer.read(b, f))
            if pi_m is not None:
                for i, k in enumerate(b.shapes.tolist()):
                    x = pricer.backtrack(stages, int(b.row_of[i]), tuple(int(v) for v in b.cells[i]))
                    added += self.offer(k, x, pi, pi_m)
            pricer.steer(b, stages, scale)
        return added

    def offer(self, k: int, x: Mapping[int, int], pi: FloatArray, pi_m: FloatArray) -> int:
        """Repair x into a pattern of new shape k and add it if the master's duals value it above its price."""
        inst = self.inst
        col = self.pricer.column(x, inst.free[k], inst.allowed[k], False, pi)
        gain = sum(pi_m[c] * n for c, n in col.items())
        return int(gain > inst.price[k] * (1 + 1e-9) + TOL and self.master.add(k, False, col))

    def solve_exactly(self, pi: FloatArray, ub_new: FloatArray, limit: int, deadline: float,
                      pi_m: FloatArray | None = None) -> int:
        """CP-SAT on the shapes with the highest bounds, one at a time while the highest is not solved yet:
        their bounds into ub_new and, with pi_m, their best patterns offered to the master."""
        inst, pricer = self.inst, self.pricer
        added = 0
        done: set[int] = set()
        while len(done) < limit:
            ratio = ub_new / inst.price
            k = int(np.argmax(ratio))
            left = deadline - self.now()
            if k in done or left < 0.05 or (pi_m is not None and ratio[k] <= 1 + 1e-9):
                break
            done.add(k)
            bound, x = pricer.exact(k, False, pi, min(EXACT_SECONDS, left / 3))
            ub_new[k] = min(ub_new[k], bound)
            if pi_m is not None and x:
                added += self.offer(k, x, pi, pi_m)
        return added

    def finish(self) -> None:
        """Certify the last duals: every table the bound needs, then tables of their own for the shapes that
        decide theta, their multipliers moving between passes while the bound rises, then CP-SAT."""
        pi = self.last_pi
        if pi is None or self.now() >= self.deadline:
            return
        ub_new, ub_old, _ = self.bounds(pi, None, keep=False, steer=False, columns=False)
        bound, theta = self.certify(pi, ub_new, ub_old)
        self.best = max(self.best, bound)
        solo: list[_Bucket] = []
        chosen: set[int] = set()
        stale = 0
        for _ in range(PASSES):
            if self.best >= self.value * (1 - GAP) or self.now() + self.pass_seconds >= self.deadline:
                break
            t0 = self.now()
            self.refine(pi, ub_new, theta, solo, chosen)
            self.pass_seconds = max(self.pass_seconds, self.now() - t0)
            before = self.best
            bound, theta = self.certify(pi, ub_new, ub_old)
            self.best = max(self.best, bound)
            stale = stale + 1 if self.best <= before + GAP * abs(self.best) else 0
            if stale >= 2:
                break
        if self.best < self.value * (1 - GAP):
            self.solve_exactly(pi, ub_new, EXACT, self.deadline)
            bound, theta = self.certify(pi, ub_new, ub_old)
            self.best = max(self.best, bound)
        self.say(f"pattern LP: certified {self.best:.4f} (theta {theta:.4f}) against a master of {self.value:.4f}")


def pattern_lower_bound(problem: Problem, required: Mapping[int, int] | None = None,
                        time_limit: float = 5.0, fluid: FluidBound | None = None, *,
                        progress: Callable[[str], None] | None = None,
                        clock: WorkClock | None = None) -> PatternBound | None:
    """A lower bound on the hourly cost of the new nodes of every plan placing the required pods, from
    the configuration LP (see the module docstring). required: group index -> pods of that group that
    must be placed (default: every pod of every group with a usable existing node or launch option), as
    in `fluid_lower_bound`. fluid: the fluid bound, if the caller has it; the search stops once it is
    clear that this bound cannot beat it. NodePool limits are relaxed. None when no valid bound was found
    in time (or no plan can place the required pods); callers take the larger of this and the fluid bound.
    time_limit is in modelled seconds on `clock` (default: a fresh clock whose wall guard is the same
    number of real seconds away), so the bound does not depend on the machine's speed or load.
    """
    start = time.monotonic()
    if clock is None:
        clock = WorkClock(wall_deadline=start + time_limit)
    deadline = clock.now() + time_limit
    demand = _required(problem, required)
    groups = [g for g in problem.groups if demand.get(g.index, 0) > 0]
    if not groups:
        return PatternBound(0.0, 0.0, 0, 0, 0, 0, time.monotonic() - start)
    inst = _classes(problem, groups, demand)
    if inst is None:
        return None
    if not len(inst.demand) or not len(inst.price):
        # Nothing to buy (every class is free, or may only use existing nodes): 0 bounds every plan.
        return PatternBound(0.0, math.inf, len(inst.demand), len(inst.price), 0, 0, time.monotonic() - start)
    gen = _Generation(inst, clock, deadline, progress)
    gen.run(fluid.cost if fluid is not None else None)
    gen.finish()
    if not math.isfinite(gen.best):
        return None
    best = max(gen.best, 0.0)
    cost = max(best - MARGIN * abs(best), 0.0)
    return PatternBound(cost, gen.value, len(inst.demand), len(inst.price), gen.master.columns, gen.iterations,
                        time.monotonic() - start)


__all__ = ["PatternBound", "pattern_lower_bound"]
