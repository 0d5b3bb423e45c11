"""The pricing problem's LP relaxation (`patterns/lp_pricing.py`): its bound on a shape's best pattern is certified
from GLOP's duals, and the configuration LP bound that uses it (columns and certificates) must stay a bound: never
above the optimum, nor any plan."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_bound import brute_force, deployment, placed, problem_of, tiny_problems
from test_pattern_bound_tail import mixed

from karpplan.engines.effort import WorkClock
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.patterns import generation, pattern_lower_bound
from karpplan.engines.patterns.instance import Instance, pod_classes
from karpplan.engines.patterns.lp_pricing import LpPricer
from karpplan.engines.patterns.pricing import Pricer
from karpplan.scheduling.problem import Problem

EXAMPLES = int(os.environ.get("KARPPLAN_BOUND_EXAMPLES", "40"))


def instance_of(problem: Problem) -> Instance | None:
    """The LP's instance of every pod of every group that some option can hold (None: none can)."""
    demand = {g.index: g.size for g in problem.groups if g.options}
    return pod_classes(problem, [g for g in problem.groups if g.options], demand)


def best_pattern(inst: Instance, pricer: Pricer, k: int, pi: np.ndarray) -> float:
    """The best pattern of new shape k at pi, by enumerating every pod count within u."""
    assert pricer.u_new is not None
    ranges = [range(int(pricer.u_new[k, c]) + 1) if inst.allowed[k, c] else range(1) for c in range(len(inst.demand))]
    best = 0.0
    for x in itertools.product(*ranges):
        counts = np.array(x, dtype=np.float64)
        if (counts @ inst.req > inst.free[k] + 1e-9).any():
            continue
        if any(counts[members].sum() > per_node for members, per_node in pricer.caps_new.sets):
            continue
        best = max(best, float(pi @ counts))
    return best


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_problems(), st.lists(st.floats(0.0, 2.0), min_size=8, max_size=8))
def test_the_relaxations_bound_is_never_below_the_best_pattern(problem: Problem, values: list[float]) -> None:
    inst = instance_of(problem)
    assume(inst is not None and len(inst.demand) > 0)
    assert inst is not None
    pricer = Pricer(inst, WorkClock())
    pricer.screen(np.zeros(len(inst.demand)), np.zeros(len(inst.dims)))  # (sets the pod counts u)
    relaxed = LpPricer(inst, pricer, WorkClock())
    pi = np.array([values[c % len(values)] for c in range(len(inst.demand))])
    for k in range(len(inst.price)):
        priced = relaxed.price(k, pi)
        assert priced is not None
        ub, rounded = priced
        best = best_pattern(inst, pricer, k, pi)
        assert ub >= best - 1e-7
        # The rounded optima, repaired and filled, are real patterns no better than the best.
        for x in rounded:
            col = pricer.column(x, inst.free[k], inst.allowed[k], False, pi)
            assert sum(pi[c] * n for c, n in col.items()) <= best + 1e-7


@pytest.fixture
def relaxations_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shape priced by its relaxation each iteration, and the tables' and greedy patterns off: the
    relaxations' patterns (and the tail's) are the master's only columns after the first."""
    monkeypatch.setattr(generation, "LP_SHAPES", 1000)
    monkeypatch.setattr(generation.Generation, "columns", lambda *args, **kwargs: 0)
    monkeypatch.setattr(generation.Generation, "greedy", lambda *args, **kwargs: 0)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_problems())
def test_the_bound_with_the_relaxations_never_exceeds_the_brute_force_optimum(problem: Problem) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(generation, "LP_SHAPES", 1000)
        mp.setattr(generation.Generation, "columns", lambda *args, **kwargs: 0)
        mp.setattr(generation.Generation, "greedy", lambda *args, **kwargs: 0)
        bound = pattern_lower_bound(problem, time_limit=5.0)
    assert bound is not None
    assert 0.0 <= bound.cost <= brute_force(problem) + 1e-9


@pytest.mark.usefixtures("relaxations_only")
@pytest.mark.parametrize("existing", [False, True])
def test_the_bound_with_the_relaxations_stays_below_the_simulations_plan(existing: bool) -> None:
    problem = mixed(existing)
    plan, _ = solve_karpenter(problem)
    bound = pattern_lower_bound(problem, placed(plan), time_limit=5.0)
    assert bound is not None
    assert 0 < bound.cost <= plan.cost + 1e-9
    if not existing:
        assert bound.cost >= bound.lp_value * (1 - 1e-4)  # the relaxations and the tail certify the LP itself


@pytest.mark.usefixtures("relaxations_only")
def test_the_bound_with_the_relaxations_is_the_same_on_every_run() -> None:
    first = pattern_lower_bound(mixed(), time_limit=2.0)
    second = pattern_lower_bound(mixed(), time_limit=2.0)
    assert first is not None and second is not None
    assert (first.cost, first.iterations, first.columns) == (second.cost, second.iterations, second.columns)


def test_a_relaxation_finds_the_mix_that_fills_both_dimensions() -> None:
    # CPU-heavy and memory-heavy pods: the best small node (1900m, 2038Mi) holds two of each, no more of one kind
    # alone; the relaxation's rounded optimum (then filled) is the best node of every shape, and its bound no less.
    problem = problem_of([deployment("cpu", 6, cpu="800m", memory="200Mi"),
                          deployment("mem", 6, cpu="100m", memory="800Mi")])
    inst = instance_of(problem)
    assert inst is not None
    pricer = Pricer(inst, WorkClock())
    pricer.screen(np.zeros(len(inst.demand)), np.zeros(len(inst.dims)))
    relaxed = LpPricer(inst, pricer, WorkClock())
    pi = np.ones(len(inst.demand))
    kinds = []
    for k in range(len(inst.price)):
        priced = relaxed.price(k, pi)
        assert priced is not None
        ub, rounded = priced
        col = max((pricer.column(x, inst.free[k], inst.allowed[k], False, pi) for x in rounded),
                  key=lambda col: sum(col.values()))
        best = best_pattern(inst, pricer, k, pi)
        assert sum(col.values()) == best <= ub + 1e-9
        kinds.append(len(col))
    assert 2 in kinds  # the small node holds both kinds
