"""Dual prices of a bucket's fluid LP: what holding its pods pays per unit of each dimension.

The neighbourhood search (`neighbourhood.py`) ranks some partners of a seed node by reduced cost at these
prices (a node dearer than its pods' worth is one worth re-packing): the LP buys the bucket's options
fractionally until the pods of its nodes are covered in every dimension.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from karpplan.engines.effort import WorkClock, simplex_seconds
from karpplan.engines.repack import BucketShape, Repacker
from karpplan.engines.result import SolvedNode


def bucket_dual_prices(repacker: Repacker, shape: BucketShape, nodes: Sequence[SolvedNode], clock: WorkClock
                       ) -> npt.NDArray[np.float64] | None:
    """Dual price per dimension of the fluid LP over the bucket's options holding its nodes' pods; None when
    the LP is not solved (no demand, or no optimum). The simplex iterations are charged to `clock`."""
    from ortools.linear_solver import pywraplp  # lazy: the LP solver loads only when seeds are priced

    demand = np.zeros(len(repacker.dims), dtype=np.float64)
    for node in nodes:
        for group_info, _ in node.pods:
            demand += repacker.requests[group_info.index]
    solver = pywraplp.Solver.CreateSolver("GLOP")
    if solver is None or not demand.any():
        return None
    scale = np.maximum(demand, 1.0)  # rows in shares of the demand, for the solver's tolerances
    n = [solver.NumVar(0.0, solver.infinity(), "") for _ in shape.options]
    rows = []
    for d in range(len(demand)):
        row = solver.RowConstraint(1.0 if demand[d] > 0 else 0.0, solver.infinity(), "")
        for i, v in enumerate(n):
            row.SetCoefficient(v, float(shape.free[i][d]) / scale[d])
        rows.append(row)
    objective = solver.Objective()
    for i, v in enumerate(n):
        objective.SetCoefficient(v, float(shape.price[i]))
    objective.SetMinimization()
    status = solver.Solve()
    clock.charge(simplex_seconds(solver.iterations(), len(rows)))
    if status != pywraplp.Solver.OPTIMAL:
        return None
    return np.array([max(r.dual_value(), 0.0) for r in rows], dtype=np.float64) / scale


__all__ = ["bucket_dual_prices"]
