"""What both column generations share (the global configuration LP's, `generation.py`, and the zone-indexed
one's, `zone_lp.py`): the clocks and the time kept for certifying, the master's first columns, one master
step with its stopping tests, and CP-SAT on the shapes whose bounds are highest."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from karpplan.engines.bound import MARGIN, _required
from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns.instance import FloatArray, Instance
from karpplan.engines.patterns.pricing import Pricer
from karpplan.scheduling.problem import GroupInfo, Problem

EXACT_SECONDS = 0.2  # CP-SAT's time per shape
GAP = 5e-5  # relative gap between the certified bound and the master at which the search stops


@dataclass
class BoundRun:
    """One bound's inputs: when it started (wall), its work clock and deadline on it, the pods of each group
    it must place and those groups."""

    start: float
    clock: WorkClock
    deadline: float
    demand: dict[int, int]
    groups: list[GroupInfo]

    @classmethod
    def of(cls, problem: Problem, required: Mapping[int, int] | None, time_limit: float,
           clock: WorkClock | None) -> BoundRun:
        """time_limit modelled seconds on `clock` (default: a fresh clock whose wall guard is the same number
        of real seconds away); required as in `fluid_lower_bound`."""
        start = time.monotonic()
        if clock is None:
            clock = WorkClock(wall_deadline=start + time_limit)
        demand = _required(problem, required)
        return cls(start, clock, clock.now() + time_limit, demand,
                   [g for g in problem.groups if demand.get(g.index, 0) > 0])


def margined(best: float) -> float:
    """A certified bound, kept non-negative, less the safety margin every LP bound reports."""
    best = max(best, 0.0)
    return max(best - MARGIN * abs(best), 0.0)


class RestrictedMaster(Protocol):
    def add(self, shape: int, existing: bool, x: Mapping[int, int]) -> bool: ...

    def solve(self) -> tuple[float, FloatArray, FloatArray, bool] | None: ...


class ColumnGeneration:
    """Column generation on a restricted master; subclasses price and certify. `stop` is where column
    generation ends, `reserve` of the time before `deadline` being kept for certifying the last duals."""

    master: RestrictedMaster

    def __init__(self, inst: Instance, clock: WorkClock, deadline: float, reserve: float,
                 progress: Callable[[str], None] | None) -> None:
        self.inst = inst
        self.clock = clock
        self.deadline = deadline  # on the work clock
        self.stop = deadline - reserve * (deadline - clock.now())
        self.progress = progress
        self.pricer = Pricer(inst, clock)
        self.best = -math.inf  # the best certified bound
        self.value = math.inf  # the best master value without artificial columns
        self.iterations = 0

    def add_single_class_columns(self) -> None:
        """Every class alone, one pod, on its cheapest new shape and on every existing shape it may use:
        a first master that covers every class."""
        inst = self.inst
        for c in range(len(inst.demand)):
            ks = np.nonzero(inst.allowed[:, c])[0]
            if len(ks):
                self.master.add(int(ks[np.argmin(inst.price[ks])]), False, {c: 1})
            for e in np.nonzero(inst.old_allowed[:, c])[0]:
                self.master.add(int(e), True, {c: 1})

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    def now(self) -> float:
        """The work clock, or infinity once the wall-clock guard has passed (every phase then ends)."""
        return math.inf if self.clock.past_wall() else self.clock.now()

    def master_step(self, floor: float | None) -> tuple[float, FloatArray, FloatArray] | None:
        """Solve the master: (value, row duals, existing-shape duals), or None when the search should end
        (the wall guard stopped GLOP, the master cannot beat `floor`, or the certified bound meets it)."""
        solved = self.master.solve()
        if solved is None:
            return None
        value, duals, mu, artificial = solved
        self.iterations += 1
        if not artificial:
            self.value = min(self.value, value)
            if floor is not None and value <= floor * (1 + 1e-9):
                return None  # this LP is no stronger than the caller's bound here
        if self.best >= self.value * (1 - GAP):
            return None
        return value, duals, mu

    def exact_pricing(self, values: FloatArray, ub_new: FloatArray, limit: int, deadline: float,
                      offer: Callable[[int, Mapping[int, int]], int] | None = None,
                      const_new: FloatArray | None = None, every: bool = False) -> int:
        """CP-SAT on the new shapes with the highest bounds, one at a time while the highest is not solved
        yet: their bounds (plus `const_new`, the part of a pattern's value CP-SAT does not see) into ub_new
        and, with `offer`, their best patterns offered to the master (with `every`, each pattern CP-SAT found
        on its way to the best too); returns the columns added."""
        inst, pricer = self.inst, self.pricer
        added = 0
        done: set[int] = set()
        while len(done) < limit:
            ratio = ub_new / inst.price
            k = int(np.argmax(ratio))
            left = deadline - self.now()
            if k in done or left < 0.05 or (offer is not None and ratio[k] <= 1 + 1e-9):
                break
            done.add(k)
            bound, found = pricer.exact(k, False, values, min(EXACT_SECONDS, left / 3))
            ub_new[k] = min(ub_new[k], bound if const_new is None else bound + float(const_new[k]))
            if offer is not None:
                for x in found[:None if every else 1]:
                    added += offer(k, x)
        return added


__all__ = ["EXACT_SECONDS", "GAP", "BoundRun", "ColumnGeneration", "RestrictedMaster", "margined"]
