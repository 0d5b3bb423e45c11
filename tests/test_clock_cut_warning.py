"""A cut search blames the machine only when the work clock shows the machine ran slow (issue 29: the
quickstart warned "this machine is slower than the reference" for a plan that was simply not proven)."""

from __future__ import annotations

from karpplan.engines.effort import MACHINE_SLOWER_RATIO, WorkClock
from karpplan.engines.optimiser import (
    CLOCK_CUT_WARNING,
    LIMIT_CUT_WARNING,
    TIME_LIMIT_SHORT_WARNING,
    _cut_note,
)


def test_slowdown_is_wall_seconds_per_modelled_second_since_a_mark() -> None:
    clock = WorkClock()
    clock.charge(2.0)  # charged before the optimiser (the problem, the simulation)
    mark = clock.now()
    clock.charge(4.0)
    assert clock.slowdown(4.4, mark) == 1.1
    assert clock.slowdown(12.0, mark) == 3.0
    assert clock.slowdown(1.0, clock.now()) == float("inf")  # no work charged: nothing to excuse the wall clock


def test_a_cut_on_a_machine_as_fast_as_the_model_does_not_blame_the_machine() -> None:
    note = _cut_note(0.8, 10.0, 1.1)
    assert note == LIMIT_CUT_WARNING
    assert "slower" not in note and "machine" not in note
    assert "--time-limit" in note and "re-run may give a different plan" in note


def test_a_cut_on_a_slow_machine_says_so() -> None:
    assert _cut_note(0.8, 10.0, MACHINE_SLOWER_RATIO * 2) == CLOCK_CUT_WARNING
    assert "slower" in CLOCK_CUT_WARNING


def test_a_limit_used_up_before_the_optimiser_is_the_limit_whatever_the_machine() -> None:
    assert _cut_note(7.4, 10.0, 1.0).startswith(TIME_LIMIT_SHORT_WARNING)
    assert _cut_note(7.4, 10.0, 5.0).startswith(TIME_LIMIT_SHORT_WARNING)
