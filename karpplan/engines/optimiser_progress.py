"""What the optimal engine tells a watcher while it runs: typed progress events, no rendering.

The optimiser (`optimiser.py`) reports through a `ProgressTracker`: the phase it is in, each plan it holds
(cost and pods left out) and each lower bound it proves. The tracker turns these into `ProgressEvent`s
for a `ProgressSink` (the CLI's live display, `render/progress_display.py`, or a test's list): phases in the
order of `PHASES`, the best plan so far (fewest pods left out, then cheapest) and the best bound so far
(never lower than an earlier one). The last event is `done`, with the plan the engine returns.

The engine plans the EC2 nodes it may launch; the plan also pays for the nodes it does not choose (static
NodePools' nodes, Fargate pods). The tracker's `offset` is that fixed cost: every event's cost and bound
include it, so what a watcher reads is what the plan will report.

Watching never changes the plan: the sink is called with what the engine already computed, and the
engine never waits for it. It may be called from CP-SAT's search thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class Phase(StrEnum):
    """The optimiser's phases as a watcher sees them, in the order they run (`PHASES`)."""

    warm_start = "warm start"  # the Karpenter simulation, re-packed
    model = "model"  # building the whole-plan CP-SAT model
    solve = "CP-SAT"  # CP-SAT on the whole-plan model
    bound = "lower bound"  # fluid LP, configuration LP
    search = "neighbourhood search"
    done = "done"


PHASES: tuple[Phase, ...] = tuple(Phase)


@dataclass(frozen=True)
class ProgressEvent:
    """Where the optimiser is: `cost` ($/h of the best plan so far, None before one), `unplaced` (its
    pods left out), `bound` (the best lower bound so far, None before one), wall seconds since the time
    limit began (`elapsed`) out of `limit`, and a few words on the phase (`detail`)."""

    phase: Phase
    cost: float | None
    bound: float | None
    elapsed: float
    limit: float
    unplaced: int = 0
    detail: str = ""

    @property
    def gap(self) -> float | None:
        """(cost - bound) / cost, as the plan reports it (None without both, 0 for a free plan)."""
        if self.cost is None or self.bound is None:
            return None
        if self.cost <= 0:
            return 0.0
        return max(self.cost - self.bound, 0.0) / self.cost


ProgressSink = Callable[[ProgressEvent], None]


class ProgressTracker:
    """Keeps the best plan and bound so far and tells the sink (nothing at all without one).

    `started` is the `time.monotonic()` the limit began counting from (elapsed is measured from it);
    `offset` ($/h) is the plan's fixed cost outside the engine's (static NodePools' nodes, Fargate pods),
    added to every event's cost and bound. The engine reports its own costs; the tracker keeps them."""

    def __init__(self, sink: ProgressSink | None, limit: float, started: float | None = None,
                 offset: float = 0.0) -> None:
        self.sink = sink
        self.limit = limit
        self.offset = offset
        self.started = time.monotonic() if started is None else started
        self.phase = PHASES[0]
        self.best: tuple[int, float] | None = None  # (pods left out, cost)
        self.bound: float | None = None
        self._lock = threading.Lock()

    def enter(self, phase: Phase, detail: str = "") -> None:
        """The optimiser starts `phase` (phases only move forward)."""
        if self.sink is None:
            return
        with self._lock:
            if PHASES.index(phase) > PHASES.index(self.phase):
                self.phase = phase
            self._emit(detail)

    def update(self, *, cost: float | None = None, unplaced: int = 0, bound: float | None = None,
               detail: str = "") -> None:
        """A plan (`cost`, `unplaced`) and/or a lower bound the current phase found; told only when one
        is better than what came before, or `detail` is given."""
        if self.sink is None:
            return
        with self._lock:
            better = False
            if cost is not None and (self.best is None or (unplaced, cost) < self.best):
                self.best, better = (unplaced, cost), True
            if bound is not None and (self.bound is None or bound > self.bound):
                self.bound, better = bound, True
            if better or detail:
                self._emit(detail)

    def finish(self, cost: float, unplaced: int, bound: float | None) -> None:
        """The plan the engine returns and its lower bound, as the plan reports them: the last event, `done`
        (a CP-SAT incumbent shown earlier can be cheaper than the plan decoded from it, and the plan keeps
        CP-SAT's bound only when it keeps CP-SAT's plan)."""
        if self.sink is None:
            return
        with self._lock:
            self.phase = Phase.done
            self.best, self.bound = (unplaced, cost), bound
            self._emit("")

    def _emit(self, detail: str) -> None:
        assert self.sink is not None
        unplaced, cost = self.best if self.best is not None else (0, None)
        bound = self.bound if self.bound is None or cost is None else min(self.bound, cost)
        if cost is not None:
            cost += self.offset
        if bound is not None:
            bound += self.offset
        self.sink(ProgressEvent(self.phase, cost, bound, time.monotonic() - self.started, self.limit, unplaced,
                                detail))


__all__ = ["PHASES", "Phase", "ProgressEvent", "ProgressSink", "ProgressTracker"]
