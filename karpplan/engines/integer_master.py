"""The configuration LP's integer master: whole nodes of the LP's patterns instead of its fractions.

The configuration LP (`engines/patterns/`) buys fractions of patterns (one node of one shape holding whole pods
of each class) and ignores zones. Rounding its optimum up (`lp_rounding.py`) costs a few per cent on large plans
and far more on small ones. This module solves the *integer* master over the columns the LP priced and the
plan's own nodes (a restricted master heuristic, "price and branch"):

    min sum_j price_j y_j   s.t.  sum_j a[r, j] y_j >= demand_r  (every covering row r of the LP's master),
                                  y integer >= 0,

with SCIP (bundled with OR-Tools), hinted with the plan's nodes, so its answer is never dearer than they are.

`whole_nodes`: zones ignored, as in the LP. Not a plan: `LpRounding.dealt` deals its nodes to the zones. Masters
per zone over the plan's zone split, and a MIP dealing the whole nodes to the zones, were tried and dropped: built,
neither beat the plan it started from, and the dealing MIP took 22-128 modelled seconds (docs/design-notes/
optimiser.md, "Session 16: the diverse plan from the LP's columns").

SCIP runs single-threaded and stops on a node limit, never on the wall clock, so its answer depends only on
its input; its work (LP iterations and nodes) is charged to the work clock at modelled rates. The wall guard
still stops it (a cut, as for every phase).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from ortools.linear_solver import pywraplp

from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns.mix import PatternMix
from karpplan.engines.result import Solution
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import Problem

WHOLE_NODES = 400  # SCIP's node limit (aws diverse 100, zones ignored: 2.7245 at 400 nodes, 2.8010 at 100)
# Modelled seconds (fitted on aws diverse 1,000 pods: 14,032 iterations and 401 nodes over 38 rows, 2.6 s of CPU)
MIP_ITERATION_SECONDS = 1.5e-4  # per simplex iteration of SCIP's LPs (per 100 rows, at least one)
MIP_NODE_SECONDS = 1e-3  # ... per branch-and-bound node
MIP_ENTRY_SECONDS = 2e-5  # ... per variable and row built

Shape = tuple[tuple[float, ...], float]  # (room per dimension of the mix, price)
Column = tuple[Shape, tuple[tuple[int, int], ...]]  # (shape, (class, pods) of one node)
DealtColumn = tuple[tuple[float, ...], float, tuple[tuple[int, int], ...], int]  # (room, price, (class, pods), nodes)


class IntegerMaster:
    """The integer master of one problem over one LP's columns (see the module docstring)."""

    def __init__(self, problem: Problem, mix: PatternMix, clock: WorkClock | None = None) -> None:
        self.problem, self.mix, self.clock = problem, mix, clock
        self.zones = sorted({o.zone for o in problem.options})
        self.option_of: dict[tuple[Shape, str], LaunchOption] = {}
        for o in sorted(problem.options, key=lambda o: (o.price, o.index)):
            self.option_of.setdefault((self._shape(o), o.zone), o)

    def _shape(self, o: LaunchOption) -> Shape:
        return tuple(float(max(o.free.get(d), 0)) for d in self.mix.dims), float(o.price)

    # ------------------------------------------------------------------------------------ entry point
    def whole_nodes(self, plan: Solution) -> tuple[list[DealtColumn], float] | None:
        """Zones ignored: the cheapest whole nodes of the LP's columns and `plan`'s own covering every row of the
        pods `plan` places, as (room, price, (class, pods), nodes) per column, and their cost in $/h; None when
        `plan` has existing nodes or a class the LP did not price, SCIP found nothing, or the wall guard passed.
        Not a plan: the zonal rules may not hold on any dealing of these nodes to the zones."""
        demand = self._demand(plan)
        if demand is None:
            return None
        cols, hint = self._read(plan)
        offered = [j for j, (shape, _) in enumerate(cols) if any((shape, z) in self.option_of for z in self.zones)]
        whole = self._whole(cols, offered, hint, demand)
        if whole is None:
            return None
        out = [(cols[j][0][0], cols[j][0][1], cols[j][1], count) for j, count in sorted(whole.items())]
        return out, sum(price * count for _, price, _, count in out)

    def _demand(self, plan: Solution) -> Counter[int] | None:
        """The pods `plan` places per covering row of the master (rows in the order the plan's pods first reach
        them); None when `plan` has existing nodes or places a group of a class the LP did not price."""
        if any(n.option is None for n in plan.nodes):
            return None
        left_out = Counter(g.index for g, _ in plan.unplaced)
        if any(g.size > left_out[g.index] and g.index not in self.mix.class_of_group for g in self.problem.groups):
            return None
        demand: Counter[int] = Counter()
        for n in plan.nodes:
            for g, _ in n.pods:
                for r in self.mix.rows_of[self.mix.class_of_group[g.index]]:
                    demand[r] += 1
        return demand

    def _read(self, plan: Solution) -> tuple[list[Column], Counter[int]]:
        """The columns (the LP's, then `plan`'s nodes as patterns) and `plan`'s nodes per column (its hint)."""
        columns: dict[Column, int] = {}
        for col in self.mix.columns:
            columns.setdefault(((col.room, col.price), col.counts), len(columns))
        hint: Counter[int] = Counter()
        for n in plan.nodes:
            assert n.option is not None
            counts = Counter(self.mix.class_of_group[g.index] for g, _ in n.pods)
            hint[columns.setdefault((self._shape(n.option), tuple(sorted(counts.items()))), len(columns))] += 1
        return sorted(columns, key=lambda c: columns[c]), hint

    def _row_slots(self, counts: Sequence[tuple[int, int]]) -> Counter[int]:
        """The pods a node of this pattern holds per covering row of the master."""
        out: Counter[int] = Counter()
        for c, n in counts:
            for r in self.mix.rows_of[c]:
                out[r] += n
        return out

    # ------------------------------------------------------------------------------------ one master
    def _whole(self, cols: Sequence[Column], offered: Sequence[int], hint: Counter[int], demand: Counter[int]
               ) -> dict[int, int] | None:
        """The cheapest whole nodes of the offered columns covering `demand` (row -> pods): column -> nodes."""
        s = _scip()
        if s is None:
            return None
        y: dict[int, pywraplp.Variable] = {}
        slots: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for j in offered:
            per_row = self._row_slots(cols[j][1])
            # No plan needs more nodes of a pattern than cover every row it holds on their own.
            most = max(-(-demand[r] // n) for r, n in per_row.items())
            if most <= 0 and not hint[j]:
                continue
            y[j] = s.IntVar(0, max(most, hint[j]), "")
            for r, n in per_row.items():
                slots[r].append((j, n))
        for r, need in demand.items():
            s.Add(sum(n * y[j] for j, n in slots[r]) >= need)
        objective = s.Objective()
        for j, v in y.items():
            objective.SetCoefficient(v, cols[j][0][1])
        objective.SetMinimization()
        s.SetHint(list(y.values()), [float(hint[j]) for j in y])
        if not self._run(s, WHOLE_NODES, len(demand)):
            return None
        return {j: round(v.solution_value()) for j, v in y.items() if round(v.solution_value()) > 0}

    # ------------------------------------------------------------------------------------ SCIP
    def _run(self, s: pywraplp.Solver, nodes: int, rows: int) -> bool:
        """SCIP to its node limit (the wall guard stops it too: a cut); its work charged. Whether it has an answer."""
        clock = self.clock
        s.SetSolverSpecificParametersAsString(f"limits/nodes = {nodes}\nrandomization/randomseedshift = 0\n")
        if clock is not None:
            if clock.past_wall():
                return False
            guard = clock.wall_left()
            if guard != math.inf:
                s.SetTimeLimit(max(math.ceil(guard * 1000), 1))
            clock.charge(MIP_ENTRY_SECONDS * (s.NumVariables() + s.NumConstraints()))
        status = s.Solve()
        if clock is not None:
            clock.charge(MIP_ITERATION_SECONDS * s.iterations() * max(rows / 100.0, 1.0) + MIP_NODE_SECONDS * s.nodes())
            if clock.past_wall():
                return False
        return status in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE)


def _scip() -> pywraplp.Solver | None:
    return pywraplp.Solver.CreateSolver("SCIP")


__all__ = ["IntegerMaster"]
