"""The pricing problem's LP relaxation, one GLOP model per new shape kept across iterations: near-best patterns
(the LP's optimum rounded down and rounded up, each repaired and filled greedily by `Pricer.column`) and an upper
bound on the pattern's value, for many shapes
at a small share of CP-SAT's cost.

For shape k and duals pi, the relaxation is

    max sum_c pi_c x_c  s.t.  sum_c req[c, d] x_c <= room[k, d] (every dimension),
                              sum_{c in s} x_c <= pods per node of s (every cap set s),  0 <= x_c <= u[k, c],

u[k, c] the most pods of class c one node of the shape can hold (what fits, what the class must place, its least
cap: `Pricer.u_new`). Pods are small beside most nodes, so the rounded optimum is close to the best pattern (on
aws diverse 1,000 pods, the optimum rounded down and filled is within 0.8% of CP-SAT's proven best on the 15 shapes
that decide theta, within 0.1% on 9 of them, in 2-30 ms of wall against 0.05-7 s; docs/design-notes/optimiser.md,
"Session 19: the diverse 1,000 row").

**The bound is certified from the duals, not read off GLOP.** For any multipliers lam >= 0 on the dimensions and
rho >= 0 on the cap sets, every pattern x (integer, within u) is worth at most

    lam . room + sum_s rho_s cap_s + sum_c u[k, c] (pi_c - lam . req_c - sum_{s ∋ c} rho_s)^+,

since sum_c x_c (pi_c - lam . req_c - rho . s(c)) <= sum_c u_c (...)^+ and the other terms are at most the rows'
right-hand sides. GLOP's row duals (their magnitudes) are such multipliers, so GLOP's tolerances can only loosen
the bound, never make it wrong. Only the objective changes between iterations: each model keeps its basis
(GLOP starts from it), and its work is charged to the work clock (the model's entries once, each solve's
coefficients and simplex iterations)."""

from __future__ import annotations

import math

import numpy as np
from ortools.linear_solver import pywraplp

from karpplan.engines.effort import SIMPLEX_ITERATION_SECONDS, WorkClock
from karpplan.engines.patterns.instance import FloatArray, Instance
from karpplan.engines.patterns.pricing import Pricer

# Modelled seconds (fitted on aws diverse 1,000 pods, 88 shapes of up to 186 classes: 1.45 CPU microseconds per
# entry built, 0.06 CPU s for a solve of every shape, 906-2,000 simplex iterations in all; the model's figures are
# about 1.5 times those)
ENTRY_SECONDS = 2e-6  # building a model, per variable, row and coefficient (once per shape)
OBJECTIVE_ENTRY_SECONDS = 2e-6  # per objective coefficient set before a solve
SOLVE_SECONDS = 3e-4  # per solve


class _ShapeLp:
    """One shape's relaxation: the GLOP model, its classes, its dimension and cap-set rows."""

    def __init__(self, inst: Instance, pricer: Pricer, k: int) -> None:
        assert pricer.u_new is not None
        u = pricer.u_new[k]
        self.inst, self.caps = inst, pricer.caps_new.sets
        self.classes = [int(c) for c in np.nonzero(inst.allowed[k] & (u > 0))[0]]
        self.u = np.array([float(u[c]) for c in self.classes])
        self.req = inst.req[self.classes] if self.classes else np.zeros((0, len(inst.dims)))
        self.room = inst.free[k]
        self.entries = self._build(scaled=False)

    def _build(self, scaled: bool) -> int:
        """The GLOP model (its entries). `scaled`: each dimension's row in units of the shape's room, the model
        a solve falls back to when GLOP stops ABNORMAL on rows 10^6 apart (memory in bytes, CPU in millicores);
        `solve` turns the duals back into the original units."""
        inst = self.inst
        solver = pywraplp.Solver.CreateSolver("GLOP")
        if solver is None:
            raise RuntimeError("GLOP is not available")
        self.solver, self.scaled = solver, scaled
        self.scales = [float(r) if scaled and r > 0 else 1.0 for r in self.room]
        self.x = [solver.NumVar(0.0, float(n), "") for n in self.u]
        entries = len(self.x)
        self.dim_rows: list[pywraplp.Constraint] = []
        for d in range(len(inst.dims)):
            row = solver.Constraint(-solver.infinity(), float(self.room[d]) / self.scales[d])
            for i, c in enumerate(self.classes):
                if inst.req[c, d] > 0:
                    row.SetCoefficient(self.x[i], float(inst.req[c, d]) / self.scales[d])
                    entries += 1
            self.dim_rows.append(row)
        position = {c: i for i, c in enumerate(self.classes)}
        # (row, the positions of its classes, pods per node): only sets of two classes or more bind beyond u.
        self.cap_rows: list[tuple[pywraplp.Constraint, list[int], int]] = []
        for members, per_node in self.caps:
            inside = [position[int(c)] for c in members if int(c) in position]
            if len(inside) > 1:
                row = solver.Constraint(-solver.infinity(), float(per_node))
                for i in inside:
                    row.SetCoefficient(self.x[i], 1.0)
                entries += len(inside)
                self.cap_rows.append((row, inside, per_node))
        self.objective = solver.Objective()
        self.objective.SetMaximization()
        return entries + len(self.dim_rows) + len(self.cap_rows)

    def solve(self, pi: FloatArray, clock: WorkClock) -> tuple[float, list[dict[int, int]]] | None:
        """(the certified upper bound, the LP's optimum rounded down and rounded up) at pi; None if GLOP stopped
        short."""
        values = np.maximum(pi[self.classes], 0.0) if self.classes else np.zeros(0)
        status = self._solved(values, clock)
        if status == pywraplp.Solver.ABNORMAL and not self.scaled:
            self._build(scaled=True)  # (charged as the re-solve below; built once, kept for later iterations)
            status = self._solved(values, clock)
        if status != pywraplp.Solver.OPTIMAL:
            return None
        lam = np.array([abs(r.dual_value()) / scale for r, scale in zip(self.dim_rows, self.scales, strict=True)])
        reduced = values - self.req @ lam
        ub = float(lam @ self.room)
        for row, inside, per_node in self.cap_rows:
            rho = abs(row.dual_value())
            ub += rho * per_node
            reduced[inside] -= rho
        ub += float(self.u @ np.maximum(reduced, 0.0))
        x = [var.solution_value() for var in self.x]
        down = {c: n for c, v in zip(self.classes, x, strict=True) if (n := int(math.floor(v + 1e-9))) > 0}
        up = {c: n for c, v in zip(self.classes, x, strict=True) if (n := int(math.ceil(v - 1e-9))) > 0}
        return ub, [down] if up == down else [down, up]


    def _solved(self, values: FloatArray, clock: WorkClock) -> int:
        """GLOP's status at these objective values, the solve charged to the work clock."""
        for var, v in zip(self.x, values.tolist(), strict=True):
            self.objective.SetCoefficient(var, v)
        guard = clock.wall_left()
        if guard != math.inf:
            self.solver.SetTimeLimit(max(math.ceil(guard * 1000), 1))
        status = int(self.solver.Solve())
        rows = len(self.dim_rows) + len(self.cap_rows)
        clock.charge(SOLVE_SECONDS + OBJECTIVE_ENTRY_SECONDS * len(self.x)
                     + SIMPLEX_ITERATION_SECONDS * self.solver.iterations() * max(rows / 1000.0, 1.0))
        return status


class LpPricer:
    """The relaxations of every new shape, built when first asked for (see the module docstring)."""

    def __init__(self, inst: Instance, pricer: Pricer, clock: WorkClock) -> None:
        self.inst, self.pricer, self.clock = inst, pricer, clock
        self.models: dict[int, _ShapeLp] = {}

    def price(self, k: int, pi: FloatArray) -> tuple[float, list[dict[int, int]]] | None:
        """(an upper bound on the best pattern of new shape k at pi, the relaxation's optimum rounded down and
        rounded up: patterns to repair and fill, `Pricer.column`), or None when GLOP stopped short (the wall
        guard)."""
        model = self.models.get(k)
        if model is None:
            model = self.models[k] = _ShapeLp(self.inst, self.pricer, k)
            self.clock.charge(ENTRY_SECONDS * model.entries)
        if not model.classes:
            return 0.0, []
        solved = model.solve(pi, self.clock)
        if solved is None:
            return None
        return solved


__all__ = ["LpPricer"]
