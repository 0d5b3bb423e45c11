"""The configuration and zone-indexed LP bounds, computed beside the neighbourhood search on a core of their own.

Column generation is single-threaded (GLOP, numpy tables, CP-SAT on one shape at a time): run before the
search, as it was, it left every other core idle for its whole reserve (measured on the bench's 2 cores:
4.7 of 10 s at 1,000 diverse pods on AWS, 12 of 60 s at 10,000 realistic pods). Neither needs the other:
the bounds depend only on how many pods of each group the plan places, which the search keeps. So with
two workers or more the bounds run in a forked child process and the search starts at once. It solves the
same batches it always does, but while the child holds a core each batch is charged as solved on one core
fewer (its side-by-side solves partly one after the other), so the work clock's model of the machine stays
true and the search's own steps are the ones it would take anyway, only sooner.

Determinism (`--seed` gives the same plan for a given number of workers) holds because the switch back to
every core happens at a point of the *search's* work clock that depends on nothing but modelled time: the
child's work clock runs on from the parent's at the fork and is published as it is charged, and the search
has every core again from its first batch whose clock reading is at or past the child's final reading.
When the search's clock gets ahead of the child's before the child has finished, the search waits for it
(the child's model runs slow there); it never guesses. Once the bounds prove the plan optimal, the search
stops: it could not have made the plan cheaper, so the plan is the same either way.

A child that fails (killed, out of memory, an exception) leaves the fluid bound in place, and a note says so;
only then may two runs differ.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import sys
import traceback
from collections.abc import Callable, Mapping
from ctypes import c_double
from dataclasses import dataclass
from multiprocessing.connection import Connection

from karpplan.engines.bound import FluidBound
from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns import pattern_lower_bound, zone_lower_bound
from karpplan.scheduling.problem import Problem

Sourced = list[tuple[float, str]]  # (bound in $/h, which LP gave it)
POLL_SECONDS = 0.002  # how long the search sleeps between looks at a child it must wait for
FINISH_GRACE_SECONDS = 2.0  # how long past the wall guard the plan waits for the bounds before going without
PROVEN_TOLERANCE = 1e-6  # a plan this close to a bound is proven optimal (as the optimiser counts it)


def lp_bounds(problem: Problem, placed: Mapping[int, int], fluid: FluidBound | None, known: list[float],
              reserve: float, deadline: float, margin: float, clock: WorkClock, plan_cost: float) -> Sourced:
    """The configuration LP's bound, then the zone-indexed LP's (each given up to `reserve` of the work clock
    before `deadline` less `margin`), for the plans that place `placed`; each is tried only while the
    bounds so far (`known` and those found here) do not prove `plan_cost` optimal."""
    found: Sourced = []

    def proven() -> bool:
        bounds = known + [b for b, _ in found]
        return bool(bounds) and plan_cost - max(bounds) <= PROVEN_TOLERANCE

    pattern = None
    if not proven():
        # The configuration LP sees whole pods per node, which the fluid LP does not.
        budget = max(min(reserve, deadline - clock.now() - margin), 0.3)
        pattern = pattern_lower_bound(problem, placed, time_limit=budget, fluid=fluid, clock=clock)
        if pattern is not None:
            found.append((pattern.cost, "configuration-lp"))
    if not proven() and not clock.past_wall():
        # The zone-indexed one sees the zonal rules too; it declines at once where it cannot be stronger.
        budget = max(min(reserve, deadline - clock.now() - margin), 0.3)
        bounds = known + [b for b, _ in found]
        zone = zone_lower_bound(problem, placed, time_limit=budget, floor=max(bounds, default=None),
                                duals=pattern.duals if pattern is not None else None, clock=clock)
        if zone is not None:
            found.append((zone.cost, "zone-lp"))
    return found


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
    process, and Windows has no fork. Elsewhere the bounds run before the search, as with one worker."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


class BackgroundBound:
    """`run(clock)` (the LP bounds) in a forked child, and the cores the search has meanwhile.

    `cores(now, cost)`, asked by the search before each batch with its work clock and the plan's cost, is
    `lanes - 1` while the child's bounds are not done at `now` (by the child's work clock), `lanes` after,
    and 0 once they prove `cost` optimal. `finish()` waits for the child and gives what it found."""

    def __init__(self, run: Callable[[WorkClock], Sourced], clock: WorkClock, lanes: int, known: list[float],
                 on_bound: Callable[[float], None] | None = None) -> None:
        self.lanes = lanes
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
        # Frozen out of the collector, the parent's objects stay untouched in the child (no pages copied
        # for their reference counts); the parent unfreezes them at once.
        gc.freeze()
        try:
            self._process.start()
        finally:
            gc.unfreeze()
        send.close()  # the child holds the only writing end: a child that dies unheard shows as end of file

    # ------------------------------------------------------------------------------------ the search's view
    def cores(self, now: float, cost: float) -> int:
        outcome = self._outcome if self._outcome is not None else self._await(now)
        if outcome is None:
            return max(self.lanes - 1, 1)
        bounds = self.known + [b for b, _ in outcome.sourced]
        if bounds and cost - max(bounds) <= PROVEN_TOLERANCE:
            return 0
        return self.lanes if now >= outcome.spent else max(self.lanes - 1, 1)

    def _await(self, now: float) -> _Outcome | None:
        """The child's outcome if it finished at or before `now` on its work clock (waiting for it while
        its clock is not past `now`), else None: the same answer whatever the machine's speed."""
        while True:
            if self._receive.poll():
                return self._read()
            if self._shared.value > now or self.clock.past_wall():
                return None  # still working at `now` (or out of time: the search stops anyway)
            if not self._process.is_alive() and not self._receive.poll():
                return self._read()
            self._receive.poll(POLL_SECONDS)

    def _read(self) -> _Outcome:
        try:
            outcome: _Outcome = self._receive.recv()
        except (EOFError, OSError):
            self._process.join()
            outcome = _Outcome([], self._shared.value, False,
                               f"the lower bounds' process ended without a result (exit code {self._process.exitcode})")
        if outcome.error is not None:
            self.failure = outcome.error
            outcome = _Outcome([], -math.inf, outcome.cut)  # widen at once: nothing is coming
        self._outcome = outcome
        if outcome.cut:
            self.clock.cut = True
        if self.on_bound is not None and outcome.sourced:
            self.on_bound(max(b for b, _ in outcome.sourced))
        return outcome

    def finish(self) -> Sourced:
        """Wait for the child; what it found (nothing if it failed or outlived the wall guard by
        `FINISH_GRACE_SECONDS`: see `failure`)."""
        if self._outcome is None:
            left = self.clock.wall_left()
            if not self._receive.poll(None if left == math.inf else max(left, 0.0) + FINISH_GRACE_SECONDS):
                self._process.terminate()
                self._outcome = _Outcome([], -math.inf, True)
                self.failure = "the lower bounds' process did not finish within the time limit"
        outcome = self._outcome if self._outcome is not None else self._read()
        self._process.join()
        return list(outcome.sourced)


def _child(run: Callable[[WorkClock], Sourced], clock: WorkClock, shared: c_double,
           send: Connection) -> None:
    child_clock = PublishedClock(clock, shared)
    try:
        outcome = _Outcome(run(child_clock), child_clock.spent, child_clock.cut)
    except BaseException:  # reported to the parent, which keeps the fluid bound and says why
        outcome = _Outcome([], child_clock.spent, child_clock.cut, traceback.format_exc(limit=8))
    send.send(outcome)
    send.close()


def start_background(run: Callable[[WorkClock], Sourced], clock: WorkClock, lanes: int, known: list[float],
                     on_bound: Callable[[float], None] | None = None) -> BackgroundBound | None:
    """A `BackgroundBound`, or None where it cannot help or run: fewer than two lanes, or no fork."""
    if lanes < 2 or not fork_available():
        return None
    return BackgroundBound(run, clock, lanes, known, on_bound)


__all__ = ["BackgroundBound", "PublishedClock", "Sourced", "fork_available", "lp_bounds", "start_background"]
