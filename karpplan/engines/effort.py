"""A deterministic clock for the optimiser: work is charged in modelled seconds, never read off the wall.

`--seed` must give the same plan on every run, but a search stopped by the wall clock stops wherever the
machine happened to be, which depends on its load. So every phase that searches until its time runs out
(the whole-plan CP-SAT model, the configuration LP's column generation, the neighbourhood search) reads
this clock instead: each step charges what it would take on the reference machine (2 cores; the
coefficients below were fitted on the benchmark's rows) from quantities that do not depend on timing
(CP-SAT's deterministic time, table cells, simplex iterations, model sizes). The phases stop when the
modelled time reaches their budget, so the stopping point, and the plan, depend only on the problem,
the seed, the time limit and the number of workers.

The wall clock stays a guard: `--time-limit` is a promise. On a machine much slower than the reference
the guard may stop a phase before its modelled budget; the clock records that (`cut`), the plan says so
in a note, and only then may two runs differ.

The clock belongs to the run's one `TimeBudget`: made by the CLI from `--time-limit` and handed down, it
also times every named phase on the wall clock (reading, catalog, build, simulation, the optimiser's
phases, rendering), which the plan reports; the optimiser alone decides when its phases stop.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# ---- reference-machine coefficients (seconds), fitted on bench/ rows; see docs/architecture.md
CP_SAT_WALL_PER_DETERMINISTIC = 1.35  # one CP-SAT worker: wall seconds per deterministic second
CP_SAT_SOLVE_OVERHEAD = 0.0064  # per CP-SAT solve of a small model (presolve, setup)
MODEL_ENTRY_SECONDS = 2.5e-5  # building a small CP-SAT model in Python, per variable or constraint
SEARCH_STEP_SECONDS = 0.001  # choosing one neighbourhood (queue, partners, option masks)
BUCKET_NODE_SECONDS = 1e-5  # ... per node of the bucket it is drawn from
WHOLE_MODEL_DETERMINISTIC_PER_SECOND = 1.0  # whole-plan CP-SAT: deterministic seconds per modelled second
TABLE_CALL_SECONDS = 1.4e-3  # per pricing table built
TABLE_STAGE_SECONDS = 1.5e-5  # per stage (an item or a choose-one group) of a table
TABLE_SWEEP_SECONDS = 1.4e-9  # one cell swept once (an item sweeps the table once, a group once per member)
PRICING_WALL_PER_DETERMINISTIC = 2.0  # CP-SAT on one shape's pricing problem: wall per deterministic second
PRICING_SOLVE_OVERHEAD = 0.015  # ... per solve, building the model included
SIMPLEX_ITERATION_SECONDS = 2.0e-5  # one GLOP iteration (per 1,000 rows, at least one)
LP_SOLVE_OVERHEAD = 0.002  # per GLOP solve
SCREEN_SECONDS = 3e-4  # screening bounds, per call
SCREEN_ENTRY_SECONDS = 5e-9  # ... per (shape, class, multiplier)
COLUMN_SECONDS = 2e-4  # repairing a pattern into a column, plus per class in it
COLUMN_CLASS_SECONDS = 5e-6
PRE_SEARCH_SECONDS = 0.8  # building the problem, the simulation and the re-packing, fixed part
# ... per pending pod and per pod group. Fitted in session 16 on CPU seconds of the three steps: on a loaded 2-core
# machine realistic 50,000 pods in 1,296 groups took 22.0 s, many-deployments 20,000 pods in 10,000 groups 17.9 s
# (each group is checked against every NodePool, simulated and re-packed on its own); the loaded machine ran the
# same code 1.7 times slower than a quiet one (37.2 s against session 15's quiet 22 s at 50,000 pods), so the
# figures are a quiet machine's: 12.9 and 10.5 s. The former 6e-4 per pod charged 29.3 s and 12.8 s.
PRE_SEARCH_POD_SECONDS = 2.5e-4
PRE_SEARCH_GROUP_SECONDS = 4.8e-4
# ---- the wall-clock tail after the optimiser (replaying the plan, assembling the Plan and its report of
# unmet preferences), reserved before the time limit when the wall guard is set. Measured on a loaded
# 2-core machine (bench rows of 10,000 pods: 2 s for the diverse rows, 5 s for the realistic one, whose
# ScheduleAnyway spreads are each checked against every pod, in the plan and in Karpenter's): the guard is
# for slow machines, so the reserve is too.
POST_SEARCH_SECONDS = 0.05
POST_SEARCH_POD_SECONDS = 2e-4  # per pending pod
SOFT_SPREAD_POD_SECONDS = 2.5e-6  # per (preferred spread rule of a group, pending pod)


# ---- `--time-limit auto` (the default): a limit that fits the problem, from what the input holds. The limit
# must first hold what runs before the optimiser can do anything (reading, building the problem, the
# Karpenter simulation: `pre_search_seconds`, which grows with the pending pods), and give the optimiser
# (re-packing, bounds, search) twice as much again; its models (CP-SAT, the configuration LP's columns)
# grow with the pod groups, each a class of interchangeable pods, so each group adds a little more. Never
# less than the former fixed default, which proves plans of up to about a thousand pods (they stop as soon
# as the bound meets the cost, so a larger limit costs them nothing), and capped so that a huge input
# still answers within minutes. Reference figures: 1,000 realistic pods (215 groups) 10 s; 4,000 pods in
# 2,000 deployments 50 s; 20,000 realistic pods (944 groups) 57 s; 50,000 pods about 2 min.
AUTO_TIME_LIMIT_MIN_SECONDS = 10.0
AUTO_TIME_LIMIT_PRE_SEARCH_FACTOR = 3.0  # the time before the optimiser, and twice it for the optimiser
AUTO_TIME_LIMIT_POD_SECONDS = 6e-4  # the time before the optimiser per pod, as the limits were fitted (session 15)
AUTO_TIME_LIMIT_GROUP_SECONDS = 0.02  # per pod group
AUTO_TIME_LIMIT_MAX_SECONDS = 300.0


def auto_time_limit(pending_pods: int, pod_groups: int) -> float:
    """`--time-limit auto`: seconds for a plan of `pending_pods` pods in `pod_groups` groups (whole seconds)."""
    wanted = (AUTO_TIME_LIMIT_PRE_SEARCH_FACTOR * (PRE_SEARCH_SECONDS + AUTO_TIME_LIMIT_POD_SECONDS * pending_pods)
              + AUTO_TIME_LIMIT_GROUP_SECONDS * pod_groups)
    return float(min(AUTO_TIME_LIMIT_MAX_SECONDS, max(AUTO_TIME_LIMIT_MIN_SECONDS, math.ceil(wanted))))


# A cut blames the machine only when it ran the optimiser's work this many times slower than the model: a
# wall guard that stops the search just before the work deadline is the limit running out, not a slow machine
# (the guard sits about 14% beyond the work deadline, `WORK_HEADROOM_SHARE`, so any cut shows some slowdown).
MACHINE_SLOWER_RATIO = 1.5


@dataclass
class WorkClock:
    """Modelled seconds spent so far (`now`), and the wall-clock guard (`wall_deadline`, a
    `time.monotonic()` value, or None for no guard). Charged from one thread only."""

    wall_deadline: float | None = None
    spent: float = 0.0
    cut: bool = field(default=False)  # the wall clock stopped a phase before its modelled budget

    def now(self) -> float:
        return self.spent

    def charge(self, seconds: float) -> None:
        if seconds > 0:
            self.spent += seconds

    def slowdown(self, wall_seconds: float, since: float = 0.0) -> float:
        """Wall seconds per modelled second: `wall_seconds` against the modelled seconds charged since the
        clock read `since` (infinite when none were). Above `MACHINE_SLOWER_RATIO` the machine really ran
        the work slower than the reference; near 1 a cut is the limit's, not the machine's."""
        modelled = self.spent - since
        return wall_seconds / modelled if modelled > 0 else float("inf")

    def wall_left(self) -> float:
        """Wall seconds before the guard (infinite without one)."""
        if self.wall_deadline is None:
            return float("inf")
        return self.wall_deadline - time.monotonic()

    def record_stop(self, finished: bool, used: float, limit: float) -> None:
        """A solve given `limit` wall seconds (the guard; infinite for none) that did not finish and used
        (almost) all of them was stopped by the wall clock: a cut."""
        if not finished and math.isfinite(limit) and used >= 0.99 * limit:
            self.cut = True

    def past_wall(self) -> bool:
        """True once the wall-clock guard has passed; remembered in `cut`."""
        if self.wall_deadline is not None and time.monotonic() >= self.wall_deadline:
            self.cut = True
        return self.cut


UNLIMITED_PHASES = frozenset({"parse", "catalog", "render"})  # timed, but outside the time limit


@dataclass(eq=False)
class TimeBudget:
    """A run's one time limit (`--time-limit`): the work clock every searching phase reads, and the wall
    seconds each named phase took (the plan reports them).

    The CLI makes one from `--time-limit` and hands it down; the optimiser (`optimiser.py`) alone decides
    when its phases stop: it sets the clock's wall guard from `limit` (unless `wall_guard` is off: a clock
    given by the caller keeps its own guard, or none) and charges what ran before it its modelled time.
    The limit counts from the first phase that plans, i.e. every phase but reading the input, loading the
    catalog and rendering (`UNLIMITED_PHASES`), or from the optimiser's start when nothing ran before it.
    Phases are flat, not nested; a phase entered twice adds up."""

    limit: float
    clock: WorkClock = field(default_factory=WorkClock)
    wall_guard: bool = True
    started: float | None = None  # `time.monotonic()` when the limit began counting
    _seconds: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def of(cls, limit: float, clock: WorkClock | None = None) -> TimeBudget:
        """A budget of `limit` seconds; a given clock keeps its own wall guard (tests run without one)."""
        return cls(limit) if clock is None else cls(limit, clock, wall_guard=False)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as phase `name`."""
        begin = time.monotonic()
        if self.started is None and name not in UNLIMITED_PHASES:
            self.started = begin
        try:
            yield
        finally:
            self._seconds[name] = self._seconds.get(name, 0.0) + time.monotonic() - begin

    def elapsed(self) -> float:
        """Wall seconds since the limit began counting (0 before)."""
        return 0.0 if self.started is None else time.monotonic() - self.started

    def phases(self) -> tuple[tuple[str, float], ...]:
        """(name, wall seconds) of every phase so far, in the order they first ran."""
        return tuple(self._seconds.items())


def available_cores() -> int:
    """Cores this process may run on: its CPU affinity (which container runtimes set) where the platform
    has one, else the machine's count. The default number of workers; side-by-side solves are charged as
    running in parallel, which holds only up to this many."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(len(affinity(0)), 1)
    return max(os.cpu_count() or 1, 1)


def cp_sat_seconds(deterministic_time: float) -> float:
    """Modelled wall time of a one-worker CP-SAT solve of a small model."""
    return CP_SAT_WALL_PER_DETERMINISTIC * deterministic_time + CP_SAT_SOLVE_OVERHEAD


def model_build_seconds(entries: int) -> float:
    """Modelled time to build a small CP-SAT model of `entries` variables and constraints."""
    return MODEL_ENTRY_SECONDS * entries


def simplex_seconds(iterations: int, rows: int) -> float:
    """Modelled time of a GLOP solve: iterations, each costing in proportion to the rows."""
    return LP_SOLVE_OVERHEAD + SIMPLEX_ITERATION_SECONDS * iterations * max(rows / 1000.0, 1.0)


def table_seconds(cells: int, stages: int, sweeps: int) -> float:
    """Modelled time of a pricing table of `cells` cells whose stages sweep it `sweeps` times in all."""
    return TABLE_CALL_SECONDS + TABLE_STAGE_SECONDS * stages + TABLE_SWEEP_SECONDS * cells * sweeps


def pricing_seconds(deterministic_time: float) -> float:
    """Modelled time of CP-SAT on one shape's pricing problem."""
    return PRICING_WALL_PER_DETERMINISTIC * deterministic_time + PRICING_SOLVE_OVERHEAD


def screen_seconds(entries: int) -> float:
    """Modelled time of screening bounds over `entries` (shape, class, multiplier) triples."""
    return SCREEN_SECONDS + SCREEN_ENTRY_SECONDS * entries


def column_seconds(classes: int) -> float:
    """Modelled time to repair a pattern of `classes` classes into a column."""
    return COLUMN_SECONDS + COLUMN_CLASS_SECONDS * classes


def pre_search_seconds(pending_pods: int, pod_groups: int = 0) -> float:
    """Modelled time of what comes before the optimiser's search (problem, simulation, re-packing)."""
    return PRE_SEARCH_SECONDS + PRE_SEARCH_POD_SECONDS * pending_pods + PRE_SEARCH_GROUP_SECONDS * pod_groups


def post_search_seconds(pending_pods: int, soft_spread_rules: int) -> float:
    """Wall seconds to keep after the optimiser's phases for the plan's replay and assembly (a slow
    machine's figure): per pending pod, and per pending pod for each preferred spread rule of a group."""
    return POST_SEARCH_SECONDS + (POST_SEARCH_POD_SECONDS + SOFT_SPREAD_POD_SECONDS * soft_spread_rules) * pending_pods


__all__ = ["MACHINE_SLOWER_RATIO", "UNLIMITED_PHASES", "TimeBudget", "WorkClock", "auto_time_limit", "available_cores", "column_seconds", "cp_sat_seconds", "model_build_seconds", "post_search_seconds",
           "pre_search_seconds", "pricing_seconds", "screen_seconds", "simplex_seconds", "table_seconds"]
