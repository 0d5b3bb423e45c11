"""Upper bounds on the pricing problem (the best value of a pattern on a shape, for the duals pi) and
patterns near the best (see the package docstring): screening bounds for every shape, dynamic-programming
tables over a few dimensions (the other ones priced by Lagrange multipliers), and CP-SAT for one shape.
Every table, screening and CP-SAT solve is charged to the work clock."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping

import numpy as np
from ortools.sat.python import cp_model

from karpplan.engines.effort import (
    PRICING_WALL_PER_DETERMINISTIC,
    WorkClock,
    column_seconds,
    pricing_seconds,
    screen_seconds,
    table_seconds,
)
from karpplan.engines.patterns.buckets import Bucket, shared_buckets, solo_buckets
from karpplan.engines.patterns.caps import NodeCaps, node_caps
from karpplan.engines.patterns.columns import ColumnRepair
from karpplan.engines.patterns.instance import BoolArray, FloatArray, Instance
from karpplan.engines.patterns.tables import NEG, Stage, add_group, add_item, backtrack, undominated_members

SCREEN = (0.0, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)  # screening multipliers, times the fluid prices


class _Found(cp_model.CpSolverSolutionCallback):
    """Every solution CP-SAT finds on its way to the best (one worker: the same ones on every run)."""

    def __init__(self, xs: Mapping[int, cp_model.IntVar]) -> None:
        super().__init__()
        self.xs = xs
        self.patterns: list[dict[int, int]] = []

    def on_solution_callback(self) -> None:
        self.patterns.append({c: n for c, v in self.xs.items() if (n := int(self.value(v))) > 0})


class Pricer:
    """The pricing problems of every shape, new and existing: the caps per node, the buckets of the
    tables, and the screening bounds' pod counts."""

    def __init__(self, inst: Instance, clock: WorkClock) -> None:
        self.inst = inst
        self.clock = clock  # charged for every table, screening, CP-SAT solve and column
        self.caps_new = node_caps(inst, existing=False)
        self.caps_old = node_caps(inst, existing=True)
        self.repair = ColumnRepair(inst, self.caps_new, self.caps_old)
        self.buckets = shared_buckets(inst, inst.free, inst.allowed, False) + shared_buckets(
            inst, inst.old_free, inst.old_allowed, True)
        self.u_new: FloatArray | None = None
        self.u_old: FloatArray | None = None
        self.best_t: list[FloatArray] = []  # the best screening multiple of sigma, per shape (new, existing)

    def caps(self, existing: bool) -> NodeCaps:
        return self.caps_old if existing else self.caps_new

    def solo(self, shapes: list[int], existing: bool, lam: FloatArray) -> list[Bucket]:
        """Tables of their own for the shapes that decide the bound (see `buckets.solo_buckets`)."""
        return solo_buckets(self.inst, shapes, existing, lam)

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
            self.u_new = self._bounds_per_shape(inst.free, inst.allowed, self.caps_new.loose)
            self.u_old = self._bounds_per_shape(inst.old_free, inst.old_allowed, self.caps_old.loose)
        assert self.u_old is not None
        out = []
        for free, u, groups in ((inst.free, self.u_new, self.caps_new.groups),
                                (inst.old_free, self.u_old, self.caps_old.groups)):
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
    def exact(self, k: int, existing: bool, pi: FloatArray, seconds: float) -> tuple[float, list[dict[int, int]]]:
        """The pricing problem of one shape solved by CP-SAT within `seconds`: (an upper bound on its best
        value, the patterns it found, the best first: every improving solution of its search, each a column
        the master may use). Values are scaled to integers; the bound adds back the most the rounding can
        hide (half a unit per pod)."""
        inst = self.inst
        free, allowed = (inst.old_free[k], inst.old_allowed[k]) if existing else (inst.free[k], inst.allowed[k])
        caps = self.caps(existing).sets
        cand = [int(c) for c in np.nonzero(allowed & (pi > 0))[0]]
        u = self.u_old if existing else self.u_new
        if u is None or not cand:
            return 0.0, []
        top = float(pi[cand].max())
        unit = top / 1e6
        model = cp_model.CpModel()
        xs: dict[int, cp_model.IntVar] = {}
        for c in cand:
            n = int(u[k, c])
            if n > 0:
                xs[c] = model.new_int_var(0, n, "")
        if not xs:
            return 0.0, []
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
        found = _Found(xs)
        status = solver.Solve(model, found)
        self.clock.charge(pricing_seconds(solver.response_proto.deterministic_time))
        self.clock.record_stop(status == cp_model.OPTIMAL, solver.wall_time, solver.parameters.max_time_in_seconds)
        slack = 0.5 * sum(int(u[k, c]) for c in xs) * unit
        if status == cp_model.OPTIMAL:
            bound = solver.ObjectiveValue() * unit + slack
        elif status == cp_model.FEASIBLE:
            bound = solver.BestObjectiveBound() * unit + slack
        else:
            return math.inf, []
        return bound, found.patterns[::-1]

    # ------------------------------------------------------------------------------------ tables
    def table(self, b: Bucket, pi: FloatArray, keep: bool) -> tuple[FloatArray, list[Stage]]:
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
        caps = self.caps(b.existing)
        bound = np.minimum(np.minimum(inst.demand[cls], fit), caps.loose[cls])
        if b.dims:
            weights = np.stack([np.floor(rq[:, d] / g) for d, g in zip(b.dims, b.grids, strict=True)],
                               axis=1).astype(np.int64)
        else:
            weights = np.zeros((len(cls), 0), dtype=np.int64)
        group_of, families = caps.group_of, caps.groups
        stages: list[Stage] = []
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
                stages.append(add_item(f, c, take, tuple(v * take for v in w), values[:, i] * take, keep))
        for grp, items in members.items():
            items = undominated_members(items)
            for _ in range(families[grp][1]):
                stage, f = add_group(f, items, keep)
                stages.append(stage)
        self.clock.charge(table_seconds(f.size, len(stages), sum(max(len(st.members), 1) for st in stages)))
        return f, stages

    def read(self, b: Bucket, f: FloatArray) -> FloatArray:
        """Upper bounds on the best pattern value of every shape of the bucket."""
        free = self.inst.old_free if b.existing else self.inst.free
        rows = b.row_of
        index = (rows, *b.cells.T)
        out: FloatArray = f[index] + (b.lam[rows] * free[b.shapes]).sum(axis=1)
        return out

    def steer(self, b: Bucket, stages: list[Stage], scale: FloatArray) -> None:
        """Move every row's multipliers (the soft dimensions only) against the subgradient of the bound at
        the row's shape: up where the table's best pattern overfills the shape, down where it leaves room;
        the step grows while the direction holds and shrinks when it turns (Rprop)."""
        free = self.inst.old_free if b.existing else self.inst.free
        soft = ~b.exact
        if not soft.any():
            return
        req = self.inst.req
        for r, i in enumerate(b.rep.tolist()):
            x = backtrack(stages, r, tuple(int(v) for v in b.cells[i]))
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
        """A real pattern near x (see `columns.ColumnRepair.column`)."""
        self.clock.charge(column_seconds(len(x)))
        return self.repair.column(x, room, allowed, existing, pi)
