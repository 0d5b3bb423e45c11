"""The entry point: `pattern_lower_bound`, the configuration LP bound of a problem (see the package
docstring), and what it reports."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from karpplan.engines.bound import FluidBound
from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns.driver import BoundRun, margined
from karpplan.engines.patterns.generation import Generation
from karpplan.engines.patterns.instance import pod_classes
from karpplan.engines.patterns.mix import PatternMix
from karpplan.scheduling.problem import Problem


@dataclass(frozen=True)
class PatternBound:
    cost: float  # $/h lower bound on the new nodes' cost (certified; callers take the larger of it and the fluid)
    lp_value: float  # the last master's value (inf if none): an upper estimate of the LP the bound certifies
    classes: int  # pod classes
    shapes: int  # distinct launch-option shapes priced
    columns: int  # patterns in the master
    iterations: int  # master solves
    seconds: float
    # group index -> the value per pod of its class in the dual solution behind `cost` (pods of free classes
    # and groups without pods to place are left out): where the zone-indexed LP starts from
    duals: dict[int, float] = field(default_factory=dict, compare=False)  # (not compared, nor hashed)
    # With `want_mix`: the last master's optimum over every column priced, for `lp_rounding` (None if none).
    mix: PatternMix | None = field(default=None, compare=False)


def pattern_lower_bound(problem: Problem, required: Mapping[int, int] | None = None,
                        time_limit: float = 5.0, fluid: FluidBound | None = None, *,
                        progress: Callable[[str], None] | None = None,
                        clock: WorkClock | None = None, want_mix: bool = False) -> PatternBound | None:
    """A lower bound on the hourly cost of the new nodes of every plan placing the required pods, from
    the configuration LP (see the package docstring). required: group index -> pods of that group that
    must be placed (default: every pod of every group with a usable existing node or launch option), as
    in `fluid_lower_bound`. fluid: the fluid bound, if the caller has it; the search stops once it is
    clear that this bound cannot beat it. NodePool limits are relaxed. None when no valid bound was found
    in time (or no plan can place the required pods); callers take the larger of this and the fluid bound.
    time_limit is in modelled seconds on `clock` (default: a fresh clock whose wall guard is the same
    number of real seconds away), so the bound does not depend on the machine's speed or load. want_mix:
    also report the LP's own plan (`PatternBound.mix`), which `lp_rounding` rounds into a plan.
    """
    run = BoundRun.of(problem, required, time_limit, clock)
    start, demand, groups = run.start, run.demand, run.groups
    if not groups:
        return PatternBound(0.0, 0.0, 0, 0, 0, 0, time.monotonic() - start)
    inst = pod_classes(problem, groups, demand)
    if inst is None:
        return None
    if not len(inst.demand) or not len(inst.price):
        # Nothing to buy (every class is free, or may only use existing nodes): 0 bounds every plan.
        return PatternBound(0.0, math.inf, len(inst.demand), len(inst.price), 0, 0, time.monotonic() - start)
    # The LP's own plan for `lp_rounding` keeps the tail it was tuned on (see `Generation.tail`).
    gen = Generation(inst, run.clock, run.deadline, progress, exact_tail=not want_mix)
    gen.run(fluid.cost if fluid is not None else None)
    gen.finish()
    if not math.isfinite(gen.best):
        return None
    cost = margined(gen.best)
    dual = gen.best_dual
    duals = {} if dual is None else {g: float(dual[c]) for g, c in inst.class_of_group.items()}
    columns = gen.master.mixture() if want_mix else None
    mix = PatternMix.of(inst, gen.master.rows_of, columns) if columns is not None else None
    return PatternBound(cost, gen.value, len(inst.demand), len(inst.price), gen.master.columns, gen.iterations,
                        time.monotonic() - start, duals, mix)
