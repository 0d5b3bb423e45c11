"""The configuration LP's tail (`patterns/generation.py`): once the tables find no more columns, CP-SAT prices
the shapes whose bounds leave room at the master's own duals, adds their best patterns and certifies those
duals again. The bound it reports must stay a bound: never above the optimum, nor any plan.

The tail is forced from the first master (`SETTLED` above every smoothing weight) and the shared tables,
greedy patterns and relaxations offer no columns, so CP-SAT's (and the tables of their own) are the only ones: every master
after the first columns goes through the tail."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from test_bound import brute_force, deployment, node, placed, problem_of, tiny_problems

from karpplan.engines.bound import fluid_lower_bound
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.patterns import generation, pattern_lower_bound
from karpplan.scheduling.problem import Problem

# 40 examples in the suite; KARPPLAN_BOUND_EXAMPLES=300 for a deeper search.
EXAMPLES = int(os.environ.get("KARPPLAN_BOUND_EXAMPLES", "40"))


@pytest.fixture(autouse=True)
def forced_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generation, "SETTLED", 2.0)
    monkeypatch.setattr(generation, "LP_SHAPES", 0)  # no relaxations' patterns either (`lp_pricing.py`)
    monkeypatch.setattr(generation.Generation, "columns", lambda *args, **kwargs: 0)
    monkeypatch.setattr(generation.Generation, "greedy", lambda *args, **kwargs: 0)


def mixed(existing: bool = False) -> Problem:
    return problem_of([node("n1", "2")] * existing + [deployment("a", 4, cpu="700m", anti={"app": "a"}),
                       deployment("b", 5, cpu="600m"),
                       deployment("c", 3, cpu="300m", memory="1536Mi", spread=(1, {"app": "c"}))])


@pytest.mark.parametrize("existing", [False, True])
def test_the_tail_bound_stays_below_the_simulations_plan(existing: bool) -> None:
    problem = mixed(existing)
    plan, _ = solve_karpenter(problem)
    said: list[str] = []
    bound = pattern_lower_bound(problem, placed(plan), time_limit=5.0, progress=said.append)
    assert bound is not None
    assert any("CP-SAT" in line for line in said)  # the tail ran
    assert 0 < bound.cost <= plan.cost + 1e-9
    if not existing:
        # CP-SAT prices every new shape that may hold a better pattern: the certificate meets the LP it certifies
        # (with an existing node, whose patterns only the shared tables offer here, the master may stop short).
        assert bound.cost >= bound.lp_value * (1 - 1e-4)


def test_the_tail_bound_is_the_same_on_every_run() -> None:
    first = pattern_lower_bound(mixed(), time_limit=2.0)
    second = pattern_lower_bound(mixed(), time_limit=2.0)
    assert first is not None and second is not None
    assert (first.cost, first.iterations, first.columns) == (second.cost, second.iterations, second.columns)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_problems())
def test_the_tail_bound_never_exceeds_the_brute_force_optimum(problem: Problem) -> None:
    optimum = brute_force(problem)
    bound = pattern_lower_bound(problem, time_limit=5.0)
    assert bound is not None
    assert 0.0 <= bound.cost <= optimum + 1e-9
    fluid = fluid_lower_bound(problem)
    assert fluid is not None
    assert bound.cost >= fluid.cost * (1 - 1e-5) - 1e-9


def test_the_lps_own_plan_for_rounding_keeps_the_tables_tail() -> None:
    # `lp_rounding` rounds the master's last columns; CP-SAT's patterns would move it to another of a flat LP's
    # optima (a 600-pod plan rounded 0.9% dearer), so a bound asked for its plan keeps the tables' tail.
    problem = mixed()
    plan, _ = solve_karpenter(problem)
    said: list[str] = []
    bound = pattern_lower_bound(problem, placed(plan), time_limit=5.0, progress=said.append, want_mix=True)
    assert bound is not None and bound.mix is not None
    assert not any("CP-SAT, then" in line for line in said)
    assert 0 < bound.cost <= plan.cost + 1e-9
