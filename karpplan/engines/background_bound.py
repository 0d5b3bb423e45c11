"""The configuration and zone-indexed LP bounds, computed beside the neighbourhood search on a core of their own.

Column generation is single-threaded (GLOP, numpy tables, CP-SAT on one shape at a time): run before the
search, as it was, it left every other core idle for its whole reserve (measured on the bench's 2 cores:
4.7 of 10 s at 1,000 diverse pods on AWS, 12 of 60 s at 10,000 realistic pods). Neither needs the other:
the bounds depend only on how many pods of each group the plan places, which the search keeps. So with
two workers or more the bounds run in a forked child process and the search starts at once. It solves the
same batches it always does, but while the child holds a core their solves run one after the other and are
charged so (a batch straddling the child's end pays that for its share of the overlap), so the work clock's
model of the machine stays true and the search's own steps are the ones it would take anyway, only sooner.

Determinism (`--seed` gives the same plan for a given number of workers) holds because the search asks only
about work clocks: the child's clock runs on from the parent's at the fork and is published as it is charged;
`held(start, end)` is the overlap of a batch's span with the child's, and `stop(now, cost)` whether bounds
done by `now` prove the plan optimal. When a question is ahead of the child's clock before the child has
finished, the search waits for it (the child's model runs slow there); it never guesses. Stopping on a proof
cannot change the plan: the search could not have made it cheaper.

A child that fails (killed, out of memory, an exception, hung past the wall guard) leaves the other bounds
in place, and a note says so; only then may two runs differ.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from ctypes import c_double
from dataclasses import dataclass
from multiprocessing.connection import Connection

from karpplan.engines.bound import MARGIN, FluidBound, fluid_lower_bound
from karpplan.engines.combinatorial_bound import (
    CombinatorialBound,
    with_lp_shares,
    worth_rounding,
    zone_integer_bound,
)
from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns import PatternBound, pattern_lower_bound, zone_lower_bound
from karpplan.engines.patterns.mix import PatternMix
from karpplan.engines.zone_node_bound import unrounded, zone_node_bound
from karpplan.scheduling.problem import Problem

Sourced = list[tuple[float, str]]  # (bound in $/h, which LP gave it)
POLL_SECONDS = 0.002  # how long the search sleeps between looks at a child it must wait for
FINISH_GRACE_SECONDS = 2.0  # how long past the wall guard the plan waits for the bounds before going without
UNGUARDED_WAIT_SECONDS = 600.0  # ... and how long in all without a wall guard (library callers, tests)
PROVEN_TOLERANCE = 1e-6  # a plan this close to a bound is proven optimal (as the optimiser counts it) ...
PROVEN_RELATIVE = 3 * MARGIN  # ... or this share of its cost: the LP bounds are reported less MARGIN of themselves


def proves(bounds: Sequence[float], cost: float) -> bool:
    """Whether these lower bounds prove a plan of `cost` optimal: the LP bounds are certified less a relative
    MARGIN, so a bound that meets a plan of a few dollars an hour sits more than 1e-6 below it; the relative
    tolerance lets it stop the search (a cheaper plan it may miss is cheaper by at most 3 parts per million)."""
    return bool(bounds) and cost - max(bounds) <= max(PROVEN_TOLERANCE, PROVEN_RELATIVE * abs(cost))


def lp_bounds(problem: Problem, placed: Mapping[int, int], fluid: FluidBound | None, known: list[float],
              reserve: float, deadline: float, margin: float, clock: WorkClock, plan_cost: float,
              on_mix: Callable[[PatternMix], None] | None = None) -> Sourced:
    """The configuration LP's bound, then the zone-indexed LP's (each given up to `reserve` of the work clock
    before `deadline` less `margin`), for the plans that place `placed`; each is tried only while the
    bounds so far (`known` and those found here) do not prove `plan_cost` optimal. `on_mix` hears the
    configuration LP's own plan (`PatternMix`), when it asks for it and the LP ran."""
    found: Sourced = []

    def bounds() -> list[float]:
        return known + [b for b, _ in found]

    pattern = None
    if not proves(bounds(), plan_cost):
        # The configuration LP sees whole pods per node, which the fluid LP does not.
        budget = max(min(reserve, deadline - clock.now() - margin), 0.3)
        pattern = pattern_lower_bound(problem, placed, time_limit=budget, fluid=fluid, clock=clock,
                                      want_mix=on_mix is not None)
        if pattern is not None:
            found.append((pattern.cost, "configuration-lp"))
            if on_mix is not None and pattern.mix is not None:
                on_mix(pattern.mix)
            if not proves(bounds(), plan_cost) and not clock.past_wall():
                # Whole nodes in every zone (`combinatorial_bound.py`, `zone_node_bound.py`) raise it where the
                # LP's fractions are too cheap: the LP's duals price each component's pods, the rounding bounds
                # their nodes.
                raised = _raised(problem, placed, pattern, clock)
                if raised > pattern.cost:
                    found.append((raised, "configuration-lp"))
    if not proves(bounds(), plan_cost) and not clock.past_wall():
        # The zone-indexed one sees the zonal rules too; it declines at once where it cannot be stronger.
        budget = max(min(reserve, deadline - clock.now() - margin), 0.3)
        zone = zone_lower_bound(problem, placed, time_limit=budget, floor=max(bounds(), default=None),
                                duals=pattern.duals if pattern is not None else None, clock=clock)
        if zone is not None:
            found.append((zone.cost, "zone-lp"))
    return found


def _raised(problem: Problem, placed: Mapping[int, int], pattern: PatternBound, clock: WorkClock) -> float:
    """The configuration LP's bound raised per component (`with_lp_shares`); the LP's own if the raising fails
    on an input it was not built for: the bounds already found are kept either way."""
    try:
        if not worth_rounding(problem):
            # Past the rounding's size only the programmes (a pool's alike groups are one class, so they stay small).
            whole = zone_node_bound(problem, placed, clock, unrounded(problem, placed),
                                    wall_seconds=max(clock.wall_left(), 0.1))
            return with_lp_shares(pattern.cost, pattern.duals, whole)
        whole = zone_integer_bound(problem, placed, clock)
        # Every dimension at once, whole pods per node, per zone (`zone_node_bound.py`): raises components only.
        whole = zone_node_bound(problem, placed, clock, whole, wall_seconds=max(clock.wall_left(), 0.1))
        return with_lp_shares(pattern.cost, pattern.duals, whole, component_floors(problem, whole, clock))
    except (ArithmeticError, ValueError, IndexError, KeyError):
        return pattern.cost


def component_floors(problem: Problem, whole: CombinatorialBound, clock: WorkClock) -> list[float]:
    """Each component's own fluid LP bound (0 where it found none): the nodes of a component hold only its pods,
    so the fluid LP of its pods alone bounds them, and per component it may beat the LP's duals."""
    out = []
    for comp in whole.components:
        if clock.past_wall():
            out.append(0.0)
            continue
        own = fluid_lower_bound(problem, {g: whole.demand[g] for g in comp.groups if g in whole.demand},
                                time_limit=max(clock.wall_left(), 0.1), clock=clock)
        out.append(own.cost if own is not None else 0.0)
    return out


class PublishedClock(WorkClock):
    """The child's work clock: every charge is also written where the parent can read it."""

    def __init__(self, start: WorkClock, shared: c_double) -> None:
        super().__init__(wall_deadline=start.wall_deadline, spent=start.spent, cut=start.cut)
        self.shared = shared

    def charge(self, seconds: float) -> None:
        super().charge(seconds)
        self.shared.value = self.spent


@dataclass(frozen=True)
class _Outcome:
    sourced: Sourced
    spent: float  # the child's work clock when it finished
    cut: bool  # the wall guard stopped one of its phases
    error: str | None = None


def fork_available() -> bool:
    """Forking is safe only on Linux: macOS's system libraries may abort a forked child of a threaded
    process, and Windows has no fork. Elsewhere the bounds run before the search, as with one worker, and so
    they do in a daemonic process, which may have no children."""
    return (sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
            and not multiprocessing.current_process().daemon)


class BackgroundBound:
    """`run(clock)` (the LP bounds) in a forked child, and what the search needs to know meanwhile.

    The search asks, on its own work clock: `held(start, end)`, the modelled seconds of [start, end] during
    which the child holds a core (the part of a batch to charge as solved on one core fewer), and
    `stop(now, cost)`, whether the child's bounds, done by `now`, prove `cost` optimal. Both answers depend
    on the child's modelled finishing time only: when the child's clock is behind the question and it has
    not finished, they wait for it. `finish()` waits for the child and gives what it found; `close()`
    ends a child still running (the plan failed or was interrupted)."""

    def __init__(self, run: Callable[[WorkClock], Sourced], clock: WorkClock, known: list[float],
                 on_bound: Callable[[float], None] | None = None) -> None:
        self.known = list(known)
        self.on_bound = on_bound
        self.clock = clock
        ctx = multiprocessing.get_context("fork")
        self._shared = ctx.RawValue(c_double, clock.now())
        receive, send = ctx.Pipe(duplex=False)
        self._receive: Connection = receive
        self._outcome: _Outcome | None = None
        self.failure: str | None = None
        self._process = ctx.Process(target=_child, args=(run, clock, self._shared, send), daemon=True)
        # Frozen out of the collector, the parent's objects are not written to by the child's collections
        # (no pages copied for them); the parent unfreezes them at once.
        gc.freeze()
        try:
            self._process.start()
        finally:
            gc.unfreeze()
        send.close()  # the child holds the only writing end: a child that dies unheard shows as end of file
        self._began = time.monotonic()

    # ------------------------------------------------------------------------------------ the search's view
    def held(self, start: float, end: float) -> float:
        """Modelled seconds of [start, end] (the search's clock) during which the child holds a core."""
        outcome = self._known_by(end)
        finished = math.inf if outcome is None else outcome.spent
        return min(max(finished - start, 0.0), end - start)

    def stop(self, now: float, cost: float) -> bool:
        """Whether the bounds, done by `now` on the child's clock, prove `cost` optimal."""
        outcome = self._known_by(now)
        if outcome is None or now < outcome.spent:
            return False
        return proves(self.known + [b for b, _ in outcome.sourced], cost)

    def busy(self) -> bool:
        """Whether the child still works, by the wall clock (for how the search runs its batches only)."""
        return self._outcome is None and not self._receive.poll() and self._process.is_alive()

    def _known_by(self, when: float) -> _Outcome | None:
        """The child's outcome, or None if it is still working at `when` on its work clock; waits while it
        is neither finished nor past `when`, so the answer is the same whatever the machine's speed. The
        wall guard (or, without one, `UNGUARDED_WAIT_SECONDS`) ends the wait: the child then counts as
        still working, and the search stops on the guard anyway."""
        while self._outcome is None:
            if self._receive.poll():
                return self._read()
            if self._shared.value > when or self._out_of_time():
                return None
            if not self._process.is_alive():
                return self._read()
            self._receive.poll(POLL_SECONDS)
        return self._outcome

    def _out_of_time(self) -> bool:
        if self.clock.wall_deadline is not None:
            return self.clock.past_wall()
        return time.monotonic() - self._began > UNGUARDED_WAIT_SECONDS

    def _read(self) -> _Outcome:
        outcome: _Outcome
        try:
            outcome = self._receive.recv()
        except (EOFError, OSError):
            self._process.join(FINISH_GRACE_SECONDS)
            outcome = _Outcome([], self._shared.value, False,
                               f"the lower bounds' process ended without a result (exit code {self._process.exitcode})")
        if outcome.error is not None:
            self.failure = outcome.error
            outcome = _Outcome([], -math.inf, outcome.cut)  # nothing is coming: every core is the search's
        self._outcome = outcome
        if outcome.cut:
            self.clock.cut = True
        if self.on_bound is not None and outcome.sourced:
            self.on_bound(max(b for b, _ in outcome.sourced))
        return outcome

    def finish(self) -> Sourced:
        """Wait for the child; what it found (nothing if it failed, or outlived the wall guard by
        `FINISH_GRACE_SECONDS`, or ran `UNGUARDED_WAIT_SECONDS` without one: see `failure`)."""
        if self._outcome is None:
            left = self.clock.wall_left()
            wait = (UNGUARDED_WAIT_SECONDS - (time.monotonic() - self._began) if left == math.inf
                    else left + FINISH_GRACE_SECONDS)
            if self._receive.poll(max(wait, 0.0)):
                self._read()
            else:
                self._outcome = _Outcome([], -math.inf, True)
                self.clock.cut = True
                self.failure = "the lower bounds' process did not finish within the time limit"
        self.close()
        assert self._outcome is not None
        return list(self._outcome.sourced)

    def close(self) -> None:
        """End the child if it still runs, and free the pipe."""
        self._process.join(FINISH_GRACE_SECONDS if self._outcome is not None else 0.0)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._receive.close()


def _child(run: Callable[[WorkClock], Sourced], clock: WorkClock, shared: c_double,
           send: Connection) -> None:
    child_clock = PublishedClock(clock, shared)
    try:
        outcome = _Outcome(run(child_clock), child_clock.spent, child_clock.cut)
    except BaseException:  # reported to the parent, which keeps the other bounds and says why
        outcome = _Outcome([], child_clock.spent, child_clock.cut, traceback.format_exc(limit=8))
    try:
        send.send(outcome)
        send.close()
    except OSError:
        pass  # the parent is gone (killed or interrupted): nobody to tell


def start_background(run: Callable[[WorkClock], Sourced], clock: WorkClock, lanes: int, known: list[float],
                     on_bound: Callable[[float], None] | None = None) -> BackgroundBound | None:
    """A `BackgroundBound`, or None where it cannot help or run: fewer than two lanes, or no fork."""
    if lanes < 2 or not fork_available():
        return None
    return BackgroundBound(run, clock, known, on_bound)


__all__ = ["BackgroundBound", "PublishedClock", "Sourced", "fork_available", "lp_bounds", "proves", "start_background"]
