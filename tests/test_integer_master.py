"""The configuration LP's integer master (`engines/integer_master.py`): whole nodes of the LP's patterns that
cover every pod, never dearer than the plan they start from, and plans built from them that keep every rule."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from plan_checks import bench_problem

from karpplan.engines import lp_start, optimiser
from karpplan.engines.effort import TimeBudget, WorkClock
from karpplan.engines.integer_master import DealtColumn, IntegerMaster
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.lp_rounding import LpRounding, affinity_clusters
from karpplan.engines.optimiser import solve_optimal
from karpplan.engines.patterns import PatternBound, pattern_lower_bound
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution
from karpplan.engines.zone_repair import ZoneRepair
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify


@pytest.fixture(scope="module")
def diverse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Problem, Repacker, Solution, PatternBound]:
    """aws diverse 60 pods (every rule the rounding keeps: zone spreads, zone affinity, hostname spread and
    anti-affinity), its re-packed Karpenter plan with zones repaired, and the configuration LP with its columns."""
    problem = bench_problem(Path(tmp_path_factory.mktemp("diverse")), "aws", 60)
    repacker = Repacker(problem, WorkClock())
    start, _ = ZoneRepair(problem, repacker, WorkClock()).repair(repacker.repack(solve_karpenter(problem)[0]))
    assert verify(problem, start) == []
    bound = pattern_lower_bound(problem, None, time_limit=2.0, clock=WorkClock(), want_mix=True)
    assert bound is not None and bound.mix is not None
    return problem, repacker, start, bound


def _master(problem: Problem, bound: PatternBound, clock: WorkClock) -> IntegerMaster:
    assert bound.mix is not None
    return IntegerMaster(problem, bound.mix, clock)


def test_whole_nodes_cover_every_pod_cost_at_least_the_bound_and_no_more_than_the_plan(
        diverse: tuple[Problem, Repacker, Solution, PatternBound]) -> None:
    problem, repacker, start, bound = diverse
    assert bound.mix is not None
    clock = WorkClock()
    whole = _master(problem, bound, clock).whole_nodes(start)
    assert whole is not None
    columns, cost = whole
    assert bound.cost - 1e-6 <= cost <= start.cost + 1e-6
    assert clock.now() > 0  # SCIP's work is on the work clock
    # Every covering row of the LP's master holds all of its pods.
    mix = bound.mix
    demand: Counter[int] = Counter()
    for g in problem.groups:
        for r in mix.rows_of[mix.class_of_group[g.index]]:
            demand[r] += g.size
    held: Counter[int] = Counter()
    for _, _, counts, nodes in columns:
        for c, k in counts:
            for r in mix.rows_of[c]:
                held[r] += k * nodes
    assert all(held[r] >= need for r, need in demand.items())
    # The same input gives the same nodes (SCIP stops on a node limit, not on the clock).
    assert _master(problem, bound, WorkClock()).whole_nodes(start) == whole


def test_the_plan_dealt_from_the_masters_nodes_places_the_same_pods_and_keeps_every_rule(
        diverse: tuple[Problem, Repacker, Solution, PatternBound]) -> None:
    problem, repacker, start, bound = diverse
    assert bound.mix is not None
    master = _master(problem, bound, WorkClock())
    whole = master.whole_nodes(start)
    assert whole is not None
    plan = LpRounding(problem, repacker, bound.mix, WorkClock()).dealt(start, whole[0])
    assert plan is not None
    assert verify(problem, plan) == []
    assert sorted(plan.placement()) == sorted(start.placement())


def test_a_mid_sized_plan_starts_from_the_integer_master_and_is_the_same_on_every_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problem = bench_problem(tmp_path, "aws", 120)
    monkeypatch.setattr(lp_start, "MASTER_MIN_PODS", 100)  # the bench's 1,000 pods take a minute
    started: list[Solution | None] = []

    def heard(problem: Problem, repacker: Repacker, plan: Solution, clock: WorkClock) -> Solution | None:
        started.append(lp_start.master_start(problem, repacker, plan, clock))
        return started[-1]

    monkeypatch.setattr(optimiser, "master_start", heard)
    plans = []
    for _ in range(2):
        greedy, _ = solve_karpenter(problem)
        budget = TimeBudget.of(8.0, WorkClock())
        plan, _ = solve_optimal(problem, greedy, budget=budget, seed=3, workers=2)
        plans.append(plan)
        assert "round" in dict(budget.phases())
        assert verify(problem, plan) == []
    assert plans[0].cost == plans[1].cost and plans[0].placement() == plans[1].placement()
    # The master's plan (kept when cheaper than the search's start) keeps every rule and places every pod.
    assert len(started) == 2 and started[0] is not None and started[1] is not None
    assert started[0].cost == started[1].cost
    assert verify(problem, started[0]) == [] and not started[0].unplaced


def test_the_dealt_plan_stays_near_the_masters_nodes_when_capped_pods_could_take_a_clusters_slots(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """aws diverse 300 pods: the hostname anti-affinity and spread pods (placed first) take the slots a zone's
    affinity clusters do not need, so the clusters' pods find theirs in their home zone and few pods are left
    over onto new nodes: the plan costs within 2% of the master's whole nodes (3% before)."""
    problem = bench_problem(tmp_path, "aws", 300)
    repacker = Repacker(problem, WorkClock())
    start, _ = ZoneRepair(problem, repacker, WorkClock()).repair(repacker.repack(solve_karpenter(problem)[0]))
    masters: list[float] = []

    class Heard(IntegerMaster):
        def whole_nodes(self, plan: Solution) -> tuple[list[DealtColumn], float] | None:
            whole = super().whole_nodes(plan)
            masters.append(whole[1] if whole is not None else float("nan"))
            return whole

    monkeypatch.setattr(lp_start, "IntegerMaster", Heard)
    plan = lp_start.master_start(problem, repacker, start, WorkClock())
    assert plan is not None and len(masters) == 1
    assert verify(problem, plan) == [] and not plan.unplaced
    assert masters[0] <= plan.cost <= 1.02 * masters[0]


def test_the_masters_nodes_split_over_the_zones_with_their_pods_give_a_cheaper_plan(tmp_path: Path) -> None:
    """aws diverse 600 pods: the master's whole nodes split over the zones together with the pods the zone rules
    tie (`zone_split`), then the spreads' uncapped pods given zones and placed by a flow (`zone_fill`), cost less
    than the same nodes dealt one at a time (17.27 against 17.33, master 17.00), keep every rule and place every
    pod; the same plan on every run."""
    problem = bench_problem(tmp_path, "aws", 600)
    repacker = Repacker(problem, WorkClock())
    start, _ = ZoneRepair(problem, repacker, WorkClock()).repair(repacker.repack(solve_karpenter(problem)[0]))
    bound = pattern_lower_bound(problem, None, time_limit=lp_start.MASTER_LP_SECONDS, clock=WorkClock(),
                                want_mix=True)
    assert bound is not None and bound.mix is not None
    whole = IntegerMaster(problem, bound.mix, WorkClock()).whole_nodes(start)
    assert whole is not None
    plans = {split: LpRounding(problem, repacker, bound.mix, WorkClock()).dealt(start, whole[0], split=split)
             for split in (True, False)}
    split, one_by_one = plans[True], plans[False]
    assert split is not None and one_by_one is not None
    assert verify(problem, split) == [] and sorted(split.placement()) == sorted(start.placement())
    assert split.cost < one_by_one.cost - 0.03
    assert split.cost <= 1.02 * whole[1]
    again = LpRounding(problem, repacker, bound.mix, WorkClock()).dealt(start, whole[0])
    assert again is not None and again.placement() == split.placement()


def test_a_plan_leaving_a_zone_affinity_group_out_is_dealt_without_it(
        diverse: tuple[Problem, Repacker, Solution, PatternBound]) -> None:
    # A plan that leaves every pod of a clustered group out (a cut Karpenter simulation does): the LP prices no class
    # for it, and the dealing splits the clusters over the zones without it (it had raised a KeyError).
    problem, repacker, start, _ = diverse
    clustered = [g for members in affinity_clusters(problem) for g in members]
    assert clustered
    out = clustered[0]
    nodes = [replace(n, pods=[(g, p) for g, p in n.pods if g.index != out.index]) for n in start.nodes]
    nodes = [n for n in nodes if n.pods]
    plan = replace(start, nodes=nodes, unplaced=start.unplaced + [(out, p) for p in out.group.pods])
    placed = {g.index: g.size - (g.size if g.index == out.index else 0) for g in problem.groups}
    bound = pattern_lower_bound(problem, placed, time_limit=2.0, clock=WorkClock(), want_mix=True)
    assert bound is not None and bound.mix is not None and out.index not in bound.mix.class_of_group
    whole = IntegerMaster(problem, bound.mix, WorkClock()).whole_nodes(plan)
    assert whole is not None
    dealt = LpRounding(problem, repacker, bound.mix, WorkClock()).dealt(plan, whole[0])
    if dealt is not None:
        assert sorted(dealt.placement()) == sorted(plan.placement())
        assert all(g.index != out.index for n in dealt.nodes for g, _ in n.pods)
