"""The zone-indexed configuration LP bound: the configuration LP of the package with pod classes split by
zone, patterns per (shape, zone), and the zonal rules as linking rows (`zone_instance.py`), by column generation.

    min sum_p price_p y_p   s.t.  sum_p A[r, p] y_p + sum_s B[r, s] m_s >= b_r  (every row r),
                                  y_p <= count_e (patterns of existing node shape e), y, m >= 0

where A[r, p] is what pattern p puts in row r (its pods' coefficients, plus 1 in its zone's node row) and
m are the spread rules' minimum columns (cost 0). Every plan that places exactly the required pods is a
point of it (its nodes are patterns; its zone counts obey the rows), so its optimum bounds the plan's cost.

**Certified as the package's bound is** (Farley): for row duals tau >= 0 with B^T tau <= 0 (enforced by
scaling down the rows that raise an m column), let P̄_k >= max_p A_p^T tau over the patterns of new shape k
(the pricing tables at the zone classes' values A^T tau, plus the zone's node-row dual) and P̄_e likewise
for existing shapes. With theta = max_k P̄_k / price_k, (tau, max(P̄_e, 0)) / theta is dual feasible, so

    LB(tau) = (b . tau - sum_e count_e max(P̄_e, 0)) / theta

bounds the LP's optimum, however well the master was solved. The best LB over the duals tried is reported,
times (1 - MARGIN). Time is the work clock's (`effort.py`): every master solve, table, screening and CP-SAT
pricing solve is charged its modelled time, so the bound is the same on every run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns.driver import GAP, BoundRun, ColumnGeneration, margined
from karpplan.engines.patterns.instance import TOL, FloatArray
from karpplan.engines.patterns.master import GlopMaster, dual_guess
from karpplan.engines.patterns.tables import Stage, backtrack
from karpplan.engines.patterns.zone_instance import ZoneInstance, interchangeable, zone_instance
from karpplan.scheduling.problem import Problem

SIZE_LIMIT = 150_000  # zone classes x new shapes beyond which the LP is not tried (see `zone_lower_bound`)
BATCH = 8  # tables built per iteration once some have room for a column (the most promising first)
LIMIT = 80  # columns offered to the master per iteration
START = 200  # columns at the fluid-like duals that make the first master
SMOOTH = 0.6  # weight of the fluid-like duals in the prices, to the power of the iteration
EXACT = 12  # shapes solved by CP-SAT, at most, to certify the last duals
RESERVE = 0.2  # share of the time limit kept for certifying the last duals


@dataclass(frozen=True)
class ZoneBound:
    cost: float  # $/h lower bound on the new nodes' cost (certified)
    lp_value: float  # the last master's value (inf if none)
    zone_classes: int
    shapes: int
    rows: int
    columns: int
    iterations: int
    seconds: float


class ZoneMaster(GlopMaster):
    """The restricted master (GLOP), kept feasible from the start by artificial columns on every row with a
    positive right-hand side."""

    def __init__(self, zi: ZoneInstance, clock: WorkClock) -> None:
        self.zi = zi
        solver = self.open_glop(clock)
        inf = solver.infinity()
        inst = zi.inst
        self.rows = [solver.Constraint(b, inf) for b in zi.rows.rhs]
        self.old_rows = [solver.Constraint(-inf, float(n)) for n in inst.old_count]
        self.objective = solver.Objective()
        self.objective.SetMinimization()
        big = float(inst.price.max(initial=1.0)) * 1e3 + 1.0
        self.buy = []
        for row, b in zip(self.rows, zi.rows.rhs, strict=True):
            if b > 0:
                v = solver.NumVar(0.0, inf, "")
                row.SetCoefficient(v, 1.0)
                self.objective.SetCoefficient(v, big)
                self.buy.append(v)
        for entries in zi.rows.of_m:
            v = solver.NumVar(0.0, inf, "")
            for r, a in entries:
                self.rows[r].SetCoefficient(v, a)
        self.seen: set[tuple[int, bool, tuple[tuple[int, int], ...]]] = set()
        self.columns = 0

    def add(self, shape: int, existing: bool, x: Mapping[int, int]) -> bool:
        key = (shape, existing, tuple(sorted((c, n) for c, n in x.items() if n > 0)))
        if key in self.seen:
            return False
        self.seen.add(key)
        zi = self.zi
        var = self.solver.NumVar(0.0, self.solver.infinity(), "")
        if existing:
            self.old_rows[shape].SetCoefficient(var, 1.0)
        else:
            self.objective.SetCoefficient(var, float(zi.inst.price[shape]))
        coef: dict[int, float] = {}
        for c, n in key[2]:
            for r, a in zi.rows.of_class[c]:
                coef[r] = coef.get(r, 0.0) + a * n
        zone = zi.old_zone[shape] if existing else zi.shape_zone[shape]
        node = zi.rows.node_row.get(zone)
        if node is not None:
            coef[node] = coef.get(node, 0.0) + 1.0
        for r, a in coef.items():
            if a:
                self.rows[r].SetCoefficient(var, a)
        self.columns += 1
        return True

    def solve(self) -> tuple[float, FloatArray, FloatArray, bool] | None:
        """(value, row duals, existing-shape duals, artificial columns used); solved to optimality (the
        wall guard stops it)."""
        return self.solve_optimally()


class ZoneGeneration(ColumnGeneration):
    """Column generation on the zone master; every pricing pass certifies a bound."""

    master: ZoneMaster

    def __init__(self, zi: ZoneInstance, clock: WorkClock, deadline: float,
                 progress: Callable[[str], None] | None, duals: Mapping[int, float] | None = None) -> None:
        super().__init__(zi.inst, clock, deadline, RESERVE, progress)
        self.zi = zi
        self.master = ZoneMaster(zi, clock)
        self.last_tau: FloatArray | None = None
        inst = self.inst
        # Multipliers for the dimensions the tables do not hold: the fluid prices (any lam >= 0 is valid).
        guess, self.sigma = dual_guess(inst)
        # Row duals to start from and smooth towards, the linking rows at 0: the global configuration LP's
        # dual solution when the caller has it (so the first bound certified is about the global one: its
        # patterns are the zone LP's, valued alike), else each class's cover row at its fluid value.
        self.guess_tau = np.zeros(len(zi.rows.rhs))
        if duals:
            for r, members in zi.cover:
                self.guess_tau[r] = max(min((duals.get(g, 0.0) for g in members), default=0.0), 0.0)
        else:
            for zc, rs in enumerate(zi.rows.of_class):
                for r, a in rs:
                    if zi.rows.kinds[r] == "cover":
                        self.guess_tau[r] = max(self.guess_tau[r], float(guess[zc]) * a)
        for b in self.pricer.buckets:
            b.lam[:] = np.where(b.held, 0.0, self.sigma)[None, :]
        self.add_single_class_columns()

    def project(self, tau: FloatArray) -> FloatArray:
        """tau with B^T tau <= 0: the rows that raise an m column scaled down to those that lower it."""
        out = tau.copy()
        for entries in self.zi.rows.of_m:
            up = [r for r, a in entries if a > 0]
            down = sum(out[r] for r, a in entries if a < 0)
            raised = sum(out[r] for r in up)
            if raised > down:
                scale = down / raised if raised > 0 else 0.0
                for r in up:
                    out[r] *= scale * (1 - 1e-12)
        return out

    def bounds(self, w: FloatArray, const_new: FloatArray, const_old: FloatArray, cost_old: FloatArray | None
               ) -> tuple[FloatArray, FloatArray, list[list[Stage]]]:
        """Upper bounds on every shape's best pattern value at the zone classes' values w (node-row duals
        included), and the tables built: every bucket whose screening bound leaves room for a column
        (cost_old given) or may raise theta above what the tables built show."""
        inst, pricer = self.inst, self.pricer
        ub_new, ub_old = pricer.screen(w, self.sigma)
        ub_new = ub_new + const_new
        ub_old = ub_old + const_old
        tables: list[list[Stage]] = [[] for _ in pricer.buckets]
        order = []
        for bi, b in enumerate(pricer.buckets):
            head = math.inf if b.existing else float(np.max(ub_new[b.shapes] / inst.price[b.shapes]))
            order.append((head, bi))
        order.sort(reverse=True)
        running = 0.0
        built = 0
        found = False
        for head, bi in order:
            b = pricer.buckets[bi]
            if b.existing:
                if cost_old is not None and not (ub_old[b.shapes] > cost_old[b.shapes] + TOL).any():
                    continue
            elif head <= (1 + 1e-9 if cost_old is not None else running * (1 + 1e-12)):
                if cost_old is not None:
                    continue
                break
            if cost_old is not None and built >= BATCH and found:
                break  # enough tables with room for a column this time: the others wait
            f, stages = pricer.table(b, w, keep=cost_old is not None)
            built += 1
            values = pricer.read(b, f)
            if b.existing:
                ub_old[b.shapes] = np.minimum(ub_old[b.shapes], values + const_old[b.shapes])
                found = found or bool((cost_old is not None) and (ub_old[b.shapes] > cost_old[b.shapes] + TOL).any())
            else:
                ub_new[b.shapes] = np.minimum(ub_new[b.shapes], values + const_new[b.shapes])
                running = max(running, float(np.max(ub_new[b.shapes] / inst.price[b.shapes])))
                found = found or running > 1 + 1e-9
            tables[bi] = stages
        return ub_new, ub_old, tables

    def certify(self, tau: FloatArray, ub_new: FloatArray, ub_old: FloatArray) -> float:
        inst = self.inst
        theta = float(np.max(ub_new / inst.price)) if len(inst.price) else 0.0
        theta *= 1 + 1e-9
        total = float(np.dot(tau, self.zi.rows.rhs)) - float(inst.old_count @ np.maximum(ub_old, 0.0))
        if theta <= 0:
            return 0.0 if total <= 0 else -math.inf
        return total / theta

    def columns(self, w: FloatArray, gains: tuple[FloatArray, FloatArray, FloatArray], mu: FloatArray,
                ub_new: FloatArray, ub_old: FloatArray, tables: list[list[Stage]], limit: int = 0,
                any_gain: bool = False) -> int:
        """The best pattern at w of each shape whose bound leaves room (tables' cells, repaired; greedy where
        no table was built), added when the master's duals (gains: the zone classes' values and the node rows'
        per new and existing shape) value it above its cost."""
        w_m, const_new, const_old = gains
        inst, pricer = self.inst, self.pricer
        picks: list[tuple[float, int, int, bool]] = []
        cost_old = -np.minimum(mu, 0.0)
        for k in np.nonzero((ub_new > inst.price * (1 + 1e-9) + TOL) | any_gain)[0].tolist():
            picks.append((float(ub_new[k] / inst.price[k]), -1, k, False))
        for e in np.nonzero((ub_old > cost_old + TOL) | any_gain)[0].tolist():
            picks.append((math.inf, -1, e, True))
        where: dict[tuple[bool, int], tuple[int, int]] = {}
        for bi, b in enumerate(pricer.buckets):
            if tables[bi]:
                for i, k in enumerate(b.shapes.tolist()):
                    where[(b.existing, k)] = (bi, i)
        picks.sort(reverse=True)
        added = 0
        for _, _, k, existing in picks[:limit or LIMIT]:
            x: dict[int, int] = {}
            at = where.get((existing, k))
            if at is not None:
                b = pricer.buckets[at[0]]
                x = backtrack(tables[at[0]], int(b.row_of[at[1]]), tuple(int(v) for v in b.cells[at[1]]))
            free = inst.old_free if existing else inst.free
            allowed = inst.old_allowed if existing else inst.allowed
            col = pricer.column(x, free[k], allowed[k], existing, w)
            gain = sum(w_m[c] * n for c, n in col.items()) + float((const_old if existing else const_new)[k])
            cost_k = float(cost_old[k]) if existing else float(inst.price[k])
            if (any_gain or gain > cost_k * (1 + 1e-9) + TOL) and col and self.master.add(k, existing, col):
                added += 1
        return added

    def start(self) -> float:
        """The tables' patterns at the fluid-like duals (a good first master) and their certified bound;
        returns the time the pass took."""
        t0 = self.now()
        tau = self.project(self.guess_tau)
        w = self.zi.class_values(tau)
        zeros_new, zeros_old = np.zeros(len(self.inst.price)), np.zeros(len(self.inst.old_count))
        const_new, const_old = self.zi.node_const(tau, False), self.zi.node_const(tau, True)
        ub_new, ub_old, _ = self.bounds(w, const_new, const_old, None)
        self.best = max(self.best, self.certify(tau, ub_new, ub_old))
        ub_new, ub_old, tables = self.bounds(w, zeros_new, zeros_old, zeros_old)
        self.columns(w, (w, zeros_new, zeros_old), zeros_old, ub_new, ub_old, tables, START, any_gain=True)
        return self.now() - t0

    def run(self, floor: float | None = None) -> None:
        """Column generation until the certified bound meets the master, nothing improves the master, the
        master cannot beat `floor` (a bound the caller has), or the time kept for certifying is reached."""
        pass_seconds = self.start()
        history: list[float] = []
        while self.now() + 2 * pass_seconds < self.stop:
            stepped = self.master_step(floor)
            if stepped is None:
                return
            value, tau_m, mu = stepped
            history.append(value)
            t0 = self.now()
            alpha = SMOOTH ** self.iterations  # early on, price between the master's and the fluid duals
            tau = self.project(alpha * self.guess_tau + (1 - alpha) * tau_m)
            tau_m = self.project(tau_m)
            self.last_tau = tau_m
            w = self.zi.class_values(tau)
            const_new, const_old = self.zi.node_const(tau, False), self.zi.node_const(tau, True)
            gains = (self.zi.class_values(tau_m), self.zi.node_const(tau_m, False), self.zi.node_const(tau_m, True))
            ub_new, ub_old, tables = self.bounds(w, const_new, const_old, -np.minimum(mu, 0.0))
            self.best = max(self.best, self.certify(tau, ub_new, ub_old))
            added = self.columns(w, gains, mu, ub_new, ub_old, tables)
            pass_seconds = max(0.5 * pass_seconds, self.now() - t0)
            self.say(f"zone LP {self.iterations}: master {value:.4f}, bound {self.best:.4f}, {added} columns")
            if not added and alpha < 1e-3:
                w_m, const_m = gains[0], gains[1]
                added = self.exact_pricing(w_m, ub_new.copy(), 3, self.stop, const_new=const_m,
                                           offer=partial(self._offer, w=w_m, const_new=const_m))
                if not added:
                    return
            if len(history) > 6 and history[-7] - value <= GAP * abs(value):
                return

    def _offer(self, k: int, x: Mapping[int, int], w: FloatArray, const_new: FloatArray) -> int:
        """Repair x into a pattern of new shape k and add it if the zone classes' values w (and the node
        rows' const_new) value it above its price."""
        inst = self.inst
        col = self.pricer.column(x, inst.free[k], inst.allowed[k], False, w)
        gain = sum(w[c] * n for c, n in col.items()) + float(const_new[k])
        return int(gain > inst.price[k] * (1 + 1e-9) + TOL and self.master.add(k, False, col))

    def finish(self) -> None:
        """Certify the last duals with every table that may raise theta, then CP-SAT on the shapes that
        decide it."""
        tau = self.last_tau
        if tau is None or self.now() >= self.deadline:
            return
        w = self.zi.class_values(tau)
        const_new, const_old = self.zi.node_const(tau, False), self.zi.node_const(tau, True)
        ub_new, ub_old, _ = self.bounds(w, const_new, const_old, None)
        self.best = max(self.best, self.certify(tau, ub_new, ub_old))
        if self.best < self.value * (1 - GAP):
            self.exact_pricing(w, ub_new, EXACT, self.deadline, const_new=const_new)
            self.best = max(self.best, self.certify(tau, ub_new, ub_old))
        self.say(f"zone LP: certified {self.best:.4f} against a master of {self.value:.4f}")


def zone_lower_bound(problem: Problem, required: Mapping[int, int] | None = None, time_limit: float = 5.0, *,
                     floor: float | None = None, duals: Mapping[int, float] | None = None,
                     progress: Callable[[str], None] | None = None, clock: WorkClock | None = None,
                     force: bool = False) -> ZoneBound | None:
    """A lower bound on the hourly cost of the new nodes of every plan placing exactly the required pods
    (default: every pod of every group that may go somewhere), from the zone-indexed configuration LP. None
    when it does not apply (no hard zone-spread rule, a group only partly required, a free option), when it
    provably equals the global configuration LP (interchangeable zones and enough nodes forced: see
    `zone_instance.py`), when it is too large to converge in a bound's reserve (more than SIZE_LIMIT zone classes x
    shapes: on the aws 100-pod row, 279k, its master was still above the global LP's, 2.6850 against 2.6717,
    after 40 modelled seconds, and its certified bound below the global one), or when no valid bound was found in time; `force` computes it in the last two cases. time_limit is in
    modelled seconds on `clock`, as in `pattern_lower_bound`; floor: the best bound the caller has (the search
    stops once the master shows this one cannot beat it); duals: `PatternBound.duals`, where the search starts."""
    run = BoundRun.of(problem, required, time_limit, clock)
    demand, groups = run.demand, run.groups
    if not groups or any(demand.get(g.index, 0) != g.size for g in problem.groups):
        return None  # the spread rows count every pod of a group: only plans placing them all are covered
    if not force and interchangeable(problem, groups, demand):
        return None
    zi = zone_instance(problem, groups, demand, force)
    if zi is None or not len(zi.inst.price):
        return None
    if len(zi.inst.demand) * len(zi.inst.price) > SIZE_LIMIT and not force:
        return None  # it would not converge in a bound's reserve: its bound would stay below the global one
    gen = ZoneGeneration(zi, run.clock, run.deadline, progress, duals)
    gen.run(floor)
    if floor is not None and gen.value <= floor * (1 + 1e-9):
        return None
    gen.finish()
    if not math.isfinite(gen.best):
        return None
    cost = margined(gen.best)
    return ZoneBound(cost, gen.value, len(zi.inst.demand), len(zi.inst.price), len(zi.rows.rhs), gen.master.columns,
                     gen.iterations, time.monotonic() - run.start)


__all__ = ["ZoneBound", "zone_lower_bound"]
