"""Whole nodes per zone in every dimension at once (karpplan/engines/zone_node_bound.py): SCIP's proven bound of
a small integer programme, never above the exhaustive optimum nor any valid plan, and above the one-dimension
whole-node bound where whole pods per node decide."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from test_bound_is_valid import engine_plans, exhaustive_optimum
from test_combinatorial_bound import EXAMPLES, deployment, pool, problem_of, zoned_problems

from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD
from karpplan.engines import combinatorial_bound
from karpplan.engines.background_bound import lp_bounds
from karpplan.engines.bound import fluid_lower_bound
from karpplan.engines.combinatorial_bound import zone_integer_bound
from karpplan.engines.effort import WorkClock
from karpplan.engines.zone_node_bound import unrounded, zone_node_bound
from karpplan.planner import PlanOptions, solve
from karpplan.verify import verify


def test_whole_pods_per_node_count(tmp_path: Path) -> None:
    # Four 700m pods on small (900m free, 0.05) and medium (1900m, 0.09) nodes: in CPU alone a medium and a
    # small cover 2800m (0.14); whole pods, one per small and two per medium, need two mediums (0.18).
    problem = problem_of(tmp_path, pool("default", None, "small, medium") + deployment("web", 4, "700m", "none"))
    assert zone_integer_bound(problem).cost < 0.15
    assert zone_node_bound(problem).cost == pytest.approx(0.18, rel=1e-5)
    assert exhaustive_optimum(problem) == pytest.approx(0.18)


def test_a_zone_spread_of_three_pods_buys_a_node_in_each_zone(tmp_path: Path) -> None:
    # Three 600m pods, maxSkew 1 over three zones: a small node in each (zone-b's is dearer: 0.05 + 0.055 + 0.05).
    problem = problem_of(tmp_path, pool("default") + deployment("web", 3, "600m", "zone-spread"))
    assert zone_node_bound(problem).cost == pytest.approx(0.155, rel=1e-5)
    assert exhaustive_optimum(problem) == pytest.approx(0.155)


def test_two_pools_add_up_by_component(tmp_path: Path) -> None:
    text = (pool("a", "a", "small, medium") + pool("b", "b") + deployment("web", 4, "700m", "none", "a")
            + deployment("api", 2, "600m", "zone-spread", "b"))
    bound = zone_node_bound(problem_of(tmp_path, text))
    assert len(bound.components) == 2
    assert bound.cost == pytest.approx(0.18 + 0.1, rel=1e-5)  # two mediums; two small nodes, zone-a and zone-c


def test_the_lp_bounds_the_optimiser_runs_are_raised_by_it(tmp_path: Path) -> None:
    # Fifteen 700m pods spread over three zones, five in each, on small and medium nodes: a zone's five pods need
    # two mediums and a small (0.23; zone-b's small 0.055). The configuration LP buys 7.5 mediums (0.675), the
    # one-dimension rounding 2 mediums a zone (3800m for 3500m: 0.54); whole pods per zone cost 0.695.
    problem = problem_of(tmp_path, pool("default", None, "small, medium") + deployment("web", 15, "700m", "zone-spread"))
    assert zone_integer_bound(problem).cost < 0.55
    placed = {g.index: g.size for g in problem.groups}
    clock = WorkClock()
    found = lp_bounds(problem, placed, fluid_lower_bound(problem), [], 2.0, clock.now() + 4.0, 0.0, clock, 1.0)
    lp = [b for b, source in found if source == "configuration-lp"]
    assert min(lp) < 0.68 and max(lp) == pytest.approx(0.695, rel=1e-5)
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=5.0, workers=1))
    assert plan.cost == pytest.approx(0.695)


def test_plans_past_the_roundings_size_are_raised_by_it_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Past `worth_rounding` (5,000 pods; here lowered to 10) the one-dimension rounding is skipped, the programme
    # still runs: the same 0.695 as above.
    monkeypatch.setattr(combinatorial_bound, "MAX_PODS", 10)
    problem = problem_of(tmp_path, pool("default", None, "small, medium") + deployment("web", 15, "700m", "zone-spread"))
    placed = {g.index: g.size for g in problem.groups}
    clock = WorkClock()
    found = lp_bounds(problem, placed, fluid_lower_bound(problem), [], 2.0, clock.now() + 4.0, 0.0, clock, 1.0)
    assert max(b for b, source in found if source == "configuration-lp") == pytest.approx(0.695, rel=1e-5)
    assert unrounded(problem).cost == 0.0 and len(unrounded(problem).components) == 1


def test_the_same_bound_and_clock_on_every_run(tmp_path: Path) -> None:
    problem = problem_of(tmp_path, pool("default") + deployment("web", 4, "900m", "zone-spread")
                         + deployment("api", 3, "600m", "host-anti"))
    runs = []
    for _ in range(2):
        clock = WorkClock()
        runs.append((zone_node_bound(problem, clock=clock).cost, clock.now()))
    assert runs[0] == runs[1] and runs[0][1] > 0


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=zoned_problems())
def test_the_bound_never_exceeds_the_optimum_nor_a_valid_plan(tmp_path: Path, case: tuple[str, int]) -> None:
    text, zones = case
    problem = problem_of(tmp_path, text, zones)
    optimum = exhaustive_optimum(problem)
    if optimum is None:
        return
    bound = zone_node_bound(problem).cost
    assert bound >= zone_integer_bound(problem).cost - 1e-9  # it only raises the one-dimension bound
    assert bound <= optimum + 1e-6, f"bound {bound} above the optimum {optimum}:\n{text}"
    for engine, plan in engine_plans(problem).items():
        if (not plan.unplaced and not plan.exceeds_node_limits and verify(problem, plan) == []
                and not TOPOLOGY_SPREAD.launch_violations(problem, plan)):
            assert bound <= plan.cost + 1e-6, f"bound {bound} above {engine}'s valid plan ({plan.cost}):\n{text}"
