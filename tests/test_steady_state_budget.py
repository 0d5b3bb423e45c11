"""The steady state keeps the plan's one time limit (issue 27, bench row aws diverse 1,000: 10.8 s for 10 s).

The phases before it and the steady state share the limit: consolidation gets what is left (no floor that
runs past the limit), checks its deadline before every scheduling simulation (`consolidate/deadline.py`),
and when the time runs out the steady state is said to be not computed, with how far it got, never quoted as
Karpenter's baseline.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest
from test_steady_state import manifests, request

from karpplan.consolidate.deadline import Deadline, OutOfTime
from karpplan.consolidate.from_plan import launched, steady_state_of
from karpplan.consolidate.loop import steady_state
from karpplan.consolidate.snapshot import make_snapshot
from karpplan.consolidate.state import ClusterState
from karpplan.engines.effort import TimeBudget
from karpplan.plan import Plan, SteadyState
from karpplan.planner import (
    STEADY_STATE_AFTER_CUT,
    STEADY_STATE_SHARE,
    PlanOptions,
    SteadyStateRequest,
    make_plan,
    read_catalog,
    read_inventory,
)


# ------------------------------------------------------------------------------------------ the deadline
def test_a_simulation_that_would_end_past_the_deadline_is_not_started() -> None:
    deadline = Deadline.after(1.0)
    runs = 0
    with pytest.raises(OutOfTime):
        while True:  # 0.3 s each: the fourth would end at 1.2 s, past the deadline
            deadline.run(lambda: time.sleep(0.3))
            runs += 1
    assert runs == 3
    assert not deadline.passed()  # stopped before the deadline, not after it


def test_the_first_simulation_is_expected_to_take_what_the_caller_says() -> None:
    """`plan` says its Karpenter simulation's time: a consolidation with less time than that starts nothing
    (aws diverse 1,000: 0.9 s left, a first simulation of 1.2 s ran the plan to 1.08x its limit)."""
    with pytest.raises(OutOfTime):
        Deadline.after(0.5, first=1.0).start()
    Deadline.after(0.5, first=0.2).start()
    Deadline.after(0.5).start()  # unknown: it runs


def test_no_time_at_all_starts_nothing() -> None:
    deadline = Deadline.after(-1.0)
    assert deadline.passed()
    with pytest.raises(OutOfTime):
        deadline.start()


def _launched_state(path: Path) -> tuple[SteadyStateRequest, ClusterState]:
    req = request(path)
    snapshot = make_snapshot(req.inventory, req.inventory.disruption_documents, req.catalog)
    after, _ = launched(snapshot, req.solution)
    return req, ClusterState.of(after, req.catalog)


def test_consolidation_stops_before_a_simulation_it_has_no_time_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    """Every simulation is slow here (0.2 s): with 0.3 s, the second is not started, and the steady state is cut
    inside its limit instead of finishing its pass."""
    import karpplan.consolidate.loop as loop

    real = loop.simulate
    calls: list[float] = []

    def slow(*args: object) -> object:
        calls.append(time.monotonic())
        time.sleep(0.2)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(loop, "simulate", slow)
    _, state = _launched_state(manifests(tmp_path))
    started = time.monotonic()
    result = steady_state(state, time_limit=0.3)
    assert not result.complete and len(calls) == 1
    assert time.monotonic() - started < 0.3 + 0.2  # the one simulation it started, nothing after the limit


def test_a_cut_steady_state_says_how_far_it_got(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One command fits in the time, the next pass is cut: not computed, with the command and what it saves
    said as where consolidation had got to (Karpenter would go on)."""
    import karpplan.consolidate.from_plan as from_plan

    def one_command(state: ClusterState, time_limit: float, first_simulation: float, exact_reasons: bool) -> object:
        result = steady_state(state, max_passes=1)
        result.complete = False
        return result

    monkeypatch.setattr(from_plan, "steady_state", one_command)
    req = request(manifests(tmp_path))
    steady = steady_state_of(req)
    assert steady.hourly_cost is None and steady.actions == 1
    assert steady.note is not None
    assert steady.note.startswith("not computed: the time limit ran out after 1 consolidation command (30.0s")
    assert "they alone take the launch to $" in steady.note and "Karpenter would go on" in steady.note
    assert steady.note.endswith("raise --time-limit")


# ------------------------------------------------------------------------------------------ the plan's one limit
def _plan(path: Path, engine: str, limit: float, hook: object, budget: TimeBudget | None = None) -> Plan:
    options = PlanOptions(paths=(str(path),), zones=("us-east-1a", "us-east-1b"), engine=engine,  # type: ignore[arg-type]
                          time_limit=limit, steady_state=hook)  # type: ignore[arg-type]
    inventory = read_inventory(options)
    return make_plan(inventory, read_catalog(options, inventory), options, budget or TimeBudget(limit))


@pytest.mark.parametrize("engine", ["karpenter", "optimal"])
def test_the_steady_state_gets_what_is_left_of_the_limit_and_no_more(tmp_path: Path, engine: str) -> None:
    """A steady state that uses all the time it is given ends the plan at its limit, not past it."""
    limit = 3.0
    budget = TimeBudget(limit)
    seen: list[tuple[float, float]] = []  # (seconds given, seconds of the limit gone when asked)

    def hook(req: SteadyStateRequest) -> SteadyState:
        seen.append((req.time_limit, budget.elapsed()))
        time.sleep(max(req.time_limit, 0.0))
        return SteadyState(None, note="not computed: the time limit ran out")

    plan = _plan(manifests(tmp_path), engine, limit, hook, budget)
    [(given, gone)] = seen
    assert given == pytest.approx(limit - gone, abs=0.05)  # what is left, no floor beyond it
    assert budget.elapsed() <= max(limit, gone) + 0.1
    assert plan.summary.karpenter_steady.note == "not computed: the time limit ran out"


@pytest.mark.parametrize(("engine", "share"), [("karpenter", 0.0), ("optimal", STEADY_STATE_SHARE)])
def test_the_optimal_engine_leaves_the_steady_state_its_share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              engine: str, share: float) -> None:
    import karpplan.planner as planner

    real = planner.solve
    limits: list[float] = []

    def solve(problem: object, options: object, budget: TimeBudget, *args: object) -> object:
        limits.append(budget.limit)
        return real(problem, options, budget, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(planner, "solve", solve)
    _plan(manifests(tmp_path), engine, 4.0, steady_state_of)
    assert limits == [pytest.approx(4.0 * (1 - share))]


def test_a_launch_the_clock_cut_is_not_consolidated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Karpenter plan that the limit cut before every pod was simulated is not the launch a cluster settles
    from: its steady state is not computed, and says why."""
    import karpplan.engines.karpenter_simulation as simulation

    real = simulation.solve_karpenter

    def cut(*args: object, **kwargs: object) -> object:
        solution, state = real(*args, **kwargs)  # type: ignore[arg-type]
        return replace(solution, not_simulated=frozenset(p.key for _, p in solution.unplaced) | {"default/x"}), state

    monkeypatch.setattr(simulation, "solve_karpenter", cut)
    called: list[SteadyStateRequest] = []
    plan = _plan(manifests(tmp_path), "karpenter", 5.0, called.append)
    assert called == []
    steady = plan.summary.karpenter_steady
    assert steady.hourly_cost is None and steady.note == STEADY_STATE_AFTER_CUT


# ------------------------------------------------------------------------------------------ the simulation's share
def test_the_karpenter_simulation_leaves_the_plans_assembly_its_time() -> None:
    """At 50,000 pods a simulation given the whole 10 s limit ended the plan at 12.9 s: assembling it (the
    pods' reasons, the Plan) took 2.8 s more. The simulation leaves that time, and never more than half."""
    from types import SimpleNamespace

    from karpplan.planner import ASSEMBLE_POD_SECONDS, _simulation_seconds

    def seconds(pods: int, limit: float) -> float:
        budget = TimeBudget(limit)
        with budget.phase("build"):
            return _simulation_seconds(SimpleNamespace(pending_count=pods), budget)  # type: ignore[arg-type]

    assert seconds(1_000, 10.0) == pytest.approx(10.0 - 1_000 * ASSEMBLE_POD_SECONDS, abs=0.01)
    assert seconds(20_000, 10.0) == pytest.approx(8.0, abs=0.01)
    assert seconds(50_000, 10.0) == pytest.approx(5.0, abs=0.01)  # half at most: the rest is the simulation's
    assert seconds(10, 0.0) == 0.001
