"""When the consolidation simulation must stop: a wall-clock deadline checked before each scheduling simulation.

A pass of the disruption controller runs many scheduling simulations (multi-node consolidation's binary search,
then single-node consolidation candidate after candidate), each a run of the Karpenter engine that may take a
large part of a second on a thousand-node cluster. Checking the clock only between passes lets a pass run far
past the time limit; so every simulation asks first (`Deadline.start`), and one that would not end before the
deadline (it is expected to take as long as the longest of the last few, the first as long as the caller says:
`plan` gives its Karpenter simulation's time) is not started: `OutOfTime` is raised, and the steady state is
reported as cut, never as reached.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")
RECENT = 8  # simulations whose durations predict the next one's


class OutOfTime(Exception):
    """The time limit ran out before the next simulation could finish."""


@dataclass
class Deadline:
    """A `time.monotonic()` deadline, and the durations of the last simulations run under it."""

    at: float
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT))

    @classmethod
    def after(cls, seconds: float, first: float = 0.0) -> Deadline:
        """`seconds` from now; `first`: what the first simulation is expected to take (0: unknown, it runs)."""
        deadline = cls(time.monotonic() + max(seconds, 0.0))
        if first > 0:
            deadline.recent.append(first)
        return deadline

    def expected(self) -> float:
        """Seconds the next simulation is expected to take: the longest of the recent ones (0 before any)."""
        return max(self.recent, default=0.0)

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def start(self) -> None:
        """Raise OutOfTime when a simulation started now would not end before the deadline."""
        if time.monotonic() + self.expected() > self.at:
            raise OutOfTime

    def run(self, work: Callable[[], T]) -> T:
        """`work()` if it is expected to end in time (else OutOfTime), its duration remembered."""
        self.start()
        begin = time.monotonic()
        try:
            return work()
        finally:
            self.recent.append(time.monotonic() - begin)
