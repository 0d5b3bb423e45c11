"""The restricted master of the configuration LP (GLOP), aggregated (see the package docstring), and the
fluid-like duals column generation starts from."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Mapping

import numpy as np
from ortools.linear_solver import pywraplp

from karpplan.engines.effort import WorkClock, simplex_seconds
from karpplan.engines.patterns.instance import FloatArray, Instance


class GlopMaster:
    """What the restricted masters (this one and the zone LP's) share: a GLOP model with covering `rows`,
    existing-shape `old_rows`, artificial `buy` columns, solved on the work clock."""

    solver: pywraplp.Solver
    clock: WorkClock
    rows: list[pywraplp.Constraint]
    old_rows: list[pywraplp.Constraint]
    buy: list[pywraplp.Variable]
    objective: pywraplp.Objective

    def open_glop(self, clock: WorkClock) -> pywraplp.Solver:
        """A fresh GLOP model on `clock`, as `self.solver`."""
        self.clock = clock
        solver = pywraplp.Solver.CreateSolver("GLOP")
        if solver is None:
            raise RuntimeError("GLOP is not available")
        self.solver = solver
        return solver

    def solve_optimally(self) -> tuple[float, FloatArray, FloatArray, bool] | None:
        """(value, row duals, existing-shape duals, artificial columns used), or None when GLOP did not
        reach an optimum (the wall guard stopped it)."""
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
        return self.objective.Value(), tau, mu, artificial


class Master(GlopMaster):
    """min sum price * y + big * sum buy  s.t.  for every row r (a set of classes):
    sum_p (pods of r in p) y_p + buy_r >= demand of r;  the patterns of an existing shape <= its node count.
    The artificial columns `buy` keep it feasible from the start."""

    def __init__(self, inst: Instance, rows_of: list[list[int]], n_rows: int, clock: WorkClock) -> None:
        self.inst = inst
        self.rows_of = rows_of
        solver = self.open_glop(clock)
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
        # New-node columns as (shape, pods per class, variable): the LP's own plan, for `mixture`.
        self.patterns: list[tuple[int, tuple[tuple[int, int], ...], pywraplp.Variable]] = []

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
            self.patterns.append((shape, key[2], var))
        coef: dict[int, int] = defaultdict(int)
        for c, n in key[2]:
            for r in self.rows_of[c]:
                coef[r] += n
        for r, n in coef.items():
            self.rows[r].SetCoefficient(var, float(n))
        self.columns += 1
        return True

    def mixture(self) -> list[tuple[int, tuple[tuple[int, int], ...], float]] | None:
        """Every new-node column (shape, pods per class) with its value in the master's optimum over all
        columns so far (solved again: columns priced after the last solve are in it), or None when GLOP did not
        reach an optimum or the optimum still buys an artificial column."""
        solved = self.solve_optimally()
        if solved is None or solved[3]:
            return None
        return [(shape, counts, float(var.solution_value())) for shape, counts, var in self.patterns]

    def solve(self) -> tuple[float, FloatArray, FloatArray, bool] | None:
        """(value, duals of the classes, duals of the existing rows, artificial columns used). Solved to
        optimality (a time limit would make the duals depend on the machine); the wall guard stops it."""
        solved = self.solve_optimally()
        if solved is None:
            return None
        value, tau, mu, artificial = solved
        pi = np.array([sum(tau[r] for r in rs) for rs in self.rows_of], dtype=np.float64)
        return value, pi, mu, artificial


def dual_guess(inst: Instance) -> tuple[FloatArray, FloatArray]:
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
