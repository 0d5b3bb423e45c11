"""The pattern (configuration) LP lower bound (karpplan/engines/patterns/): never above a real plan's
cost, and above the fluid bound where whole pods per node matter."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from test_bound import (
    LARGE,
    SMALL,
    brute_force,
    catalog_text,
    deployment,
    node,
    placed,
    pool,
    problem_of,
    tiny_problems,
)

from karpplan.engines.bound import fluid_lower_bound
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.patterns import PatternBound, pattern_lower_bound
from karpplan.scheduling.problem import Problem


def pattern_of(problem: Problem, required: dict[int, int] | None = None, time_limit: float = 5.0) -> PatternBound:
    result = pattern_lower_bound(problem, required, time_limit=time_limit)
    assert result is not None
    return result


def fluid_of(problem: Problem, required: dict[int, int] | None = None) -> float:
    result = fluid_lower_bound(problem, required)
    assert result is not None
    return result.cost


ONE_CPU = catalog_text([("one", 1000, 2048, 10, 1.0)])


# ---------------------------------------------------------------------------------------- whole pods
def test_pods_that_do_not_pair_need_a_node_each() -> None:
    # 600m pods on 1-CPU nodes: the fluid LP packs 0.6 node per pod, a node really holds one.
    problem = problem_of([deployment("web", 5, cpu="600m")], catalog=ONE_CPU)
    assert fluid_of(problem) == pytest.approx(3.0, rel=1e-5)
    b = pattern_of(problem)
    assert b.cost == pytest.approx(5.0, rel=1e-5)
    assert b.cost <= 5.0
    assert b.classes == 1 and b.shapes == 1


def test_cpu_and_memory_must_fit_together() -> None:
    # Each node has room for two pods' CPU or two pods' memory, but the 'cpu' pods and the 'mem' pods each
    # take most of one resource: a node holds one of each kind at most. Fluid: 1.5 nodes; really 2.
    catalog = catalog_text([("t", 2000, 2048, 10, 1.0)])
    docs = [deployment("cpu", 2, cpu="1200m", memory="256Mi"), deployment("mem", 2, cpu="200m", memory="1200Mi")]
    problem = problem_of(docs, catalog=catalog)
    assert fluid_of(problem) < 2.0 - 1e-3
    assert pattern_of(problem).cost == pytest.approx(2.0, rel=1e-5)
    assert brute_force(problem) == pytest.approx(2.0)


def test_a_mix_of_sizes_packs_like_the_best_plan() -> None:
    # 'small' holds one 1-CPU pod (1900m), 'large' three (3900m): 3 pods fit one large node at 0.7.
    problem = problem_of([deployment("web", 3, cpu="1")])
    assert fluid_of(problem) < LARGE - 1e-3
    assert pattern_of(problem).cost == pytest.approx(LARGE, rel=1e-5)
    assert brute_force(problem) == pytest.approx(LARGE)


def test_at_least_the_fluid_bound_where_integrality_matters() -> None:
    docs = [deployment("a", 3, cpu="700m", memory="1Gi"), deployment("b", 4, cpu="1300m", memory="512Mi"),
            deployment("c", 2, cpu="400m", memory="1500Mi", anti={"app": "c"})]
    problem = problem_of(docs)
    pattern, fluid = pattern_of(problem).cost, fluid_of(problem)
    assert pattern >= fluid * (1 - 1e-5)
    assert pattern > fluid + 0.05  # whole pods cost more than the fluid packing here
    karpenter, _ = solve_karpenter(problem)
    assert pattern <= karpenter.cost + 1e-9


# ---------------------------------------------------------------------------------------- caps
def test_self_anti_affinity_needs_one_node_per_pod() -> None:
    problem = problem_of([deployment("web", 4, anti={"app": "web"})])
    assert pattern_of(problem).cost == pytest.approx(4 * SMALL, rel=1e-5)


def test_hostname_spread_caps_pods_per_new_node() -> None:
    problem = problem_of([deployment("web", 6, spread=(2, {"app": "web"}))])
    assert pattern_of(problem).cost == pytest.approx(3 * SMALL, rel=1e-5)


def test_a_larger_type_at_the_same_unit_price_does_not_replace_small_nodes_under_a_cap() -> None:
    catalog = catalog_text([("single", 1000, 1024, 10, 0.5), ("double", 2000, 2048, 20, 1.0)])
    problem = problem_of([deployment("web", 3, anti={"app": "web"})], catalog=catalog)
    assert pattern_of(problem).cost == pytest.approx(1.5, rel=1e-5)


# ---------------------------------------------------------------------------------------- existing nodes
def test_existing_room_for_everything_gives_zero() -> None:
    problem = problem_of([node("n1", "8"), deployment("web", 4, cpu="1")])
    assert pattern_of(problem).cost == 0.0


def test_existing_room_holds_whole_pods_only() -> None:
    # n1 has 1500m free: one 1-CPU pod, not one and a half. The other three fit one large node.
    problem = problem_of([node("n1", "1500m"), deployment("web", 4, cpu="1")])
    assert fluid_of(problem) < LARGE - 0.1
    assert pattern_of(problem).cost == pytest.approx(LARGE, rel=1e-5)


def test_anti_affinity_allows_one_pod_per_existing_node() -> None:
    problem = problem_of([node("n1", "8"), node("n2", "8"), deployment("web", 4, anti={"app": "web"})])
    assert pattern_of(problem).cost == pytest.approx(2 * SMALL, rel=1e-5)


def test_existing_nodes_the_pods_may_not_use_do_not_help() -> None:
    # The pods ask for the 'large' type; n1's room is for other pods only.
    problem = problem_of([node("n1", "8"), deployment("web", 2, cpu="1", instance_type="large")])
    assert not problem.groups[0].existing_ok
    assert pattern_of(problem).cost == pytest.approx(LARGE, rel=1e-5)


# ---------------------------------------------------------------------------------------- options
def test_classes_keep_to_their_options() -> None:
    # 'a' pods fit 'small' nodes but may only use 'large' ones; 'b' pods may use either.
    docs = [deployment("a", 2, cpu="1200m", instance_type="large"), deployment("b", 1, cpu="1200m")]
    problem = problem_of(docs)
    # One large node holds both 'a' pods (2400m of 3900m) and the 'b' pod fits there too (3600m).
    assert pattern_of(problem).cost == pytest.approx(LARGE, rel=1e-5)
    only_small = problem_of([deployment("a", 2, cpu="1200m", instance_type="small")])
    assert pattern_of(only_small).cost == pytest.approx(2 * SMALL, rel=1e-5)


def test_a_free_option_makes_the_pods_it_holds_free() -> None:
    catalog = catalog_text([("free", 1000, 1024, 10, 0.0), ("paid", 4000, 4096, 10, 1.0)])
    docs = [deployment("fits", 3, cpu="500m"), deployment("big", 1, cpu="2")]
    problem = problem_of(docs, catalog=catalog)
    # Only the 2-CPU pod needs a paid node.
    assert pattern_of(problem).cost == pytest.approx(1.0, rel=1e-5)


def test_pool_limits_are_relaxed_so_the_bound_stays_below_the_plans() -> None:
    pools = [pool({"nodes": 2}, "cheap", ["small"]), pool(None, "dear", ["large"])]
    problem = problem_of([deployment("web", 5, anti={"app": "web"})], pools=pools)
    pattern = pattern_of(problem).cost
    assert pattern == pytest.approx(5 * SMALL, rel=1e-5)  # as if the cheap pool had no limit
    assert pattern <= fluid_of(problem)  # the fluid bound keeps the limit: callers take the larger


# ---------------------------------------------------------------------------------------- required
def test_required_excludes_pods() -> None:
    problem = problem_of([deployment("web", 4, anti={"app": "web"}), deployment("api", 2, anti={"app": "api"})])
    web, api = (g.index for g in problem.groups)
    assert pattern_of(problem).cost == pytest.approx(4 * SMALL, rel=1e-5)
    assert pattern_of(problem, {web: 1, api: 2}).cost == pytest.approx(2 * SMALL, rel=1e-5)
    assert pattern_of(problem, {web: 0}).cost == 0.0
    assert pattern_of(problem, {}).cost == 0.0
    assert pattern_of(problem, {web: 99}).cost == pytest.approx(4 * SMALL, rel=1e-5)


def test_pods_that_nothing_can_hold() -> None:
    problem = problem_of([deployment("web", 2), deployment("huge", 1, cpu="64")])
    web, huge = (g.index for g in problem.groups)
    assert pattern_of(problem).cost == pytest.approx(pattern_of(problem, {web: 2}).cost)
    assert pattern_lower_bound(problem, {web: 2, huge: 1}) is None


# ---------------------------------------------------------------------------------------- time and plans
def test_a_tiny_time_limit_still_gives_a_valid_bound() -> None:
    # The screening at the starting duals certifies a bound before any time is spent, so even a limit of
    # 0 gives one: above 0 (these pods need a node), never above a real plan's cost.
    docs = [deployment("a", 3, cpu="700m", memory="1Gi"), deployment("b", 1, cpu="1300m", memory="512Mi")]
    problem = problem_of(docs)
    optimum = brute_force(problem)
    karpenter, _ = solve_karpenter(problem)
    for limit in (0.0, 1e-4, 1e-2):
        result = pattern_lower_bound(problem, time_limit=limit)
        assert result is not None
        assert 0.0 < result.cost <= min(optimum, karpenter.cost) + 1e-9
        assert result.classes == 2 and result.shapes >= 1
        # The certified bound is below the last master's value; with no master solved there is none (inf).
        assert result.cost <= result.lp_value * (1 + 1e-9)
        if result.iterations == 0:
            assert result.lp_value == math.inf


def test_a_fluid_bound_that_cannot_be_beaten_stops_the_search_early() -> None:
    # Pods much smaller than the nodes: whole pods pack as well as fluid ones, up to the last node.
    problem = problem_of([deployment("web", 4, cpu="100m", memory="64Mi")],
                         catalog=catalog_text([("t", 4000, 8192, 100, 1.0)]))
    fluid = fluid_lower_bound(problem)
    assert fluid is not None
    result = pattern_lower_bound(problem, fluid=fluid)
    assert result is not None
    assert result.cost <= 1.0 + 1e-9  # one node holds all four


def test_bound_never_exceeds_the_simulations_plan() -> None:
    docs = [node("n1", "2"), deployment("a", 4, cpu="700m", anti={"app": "a"}), deployment("b", 5, cpu="600m"),
            deployment("c", 3, cpu="300m", memory="1536Mi", spread=(1, {"app": "c"}))]
    problem = problem_of(docs)
    plan, _ = solve_karpenter(problem)
    b = pattern_of(problem, placed(plan))
    assert 0 < b.cost <= plan.cost + 1e-9


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_problems())
def test_property_bound_below_brute_force_optimum(problem: Problem) -> None:
    optimum = brute_force(problem)
    b = pattern_lower_bound(problem, time_limit=5.0)
    assert b is not None  # without limits or existing nodes, every group with an option can be placed
    assert 0.0 <= b.cost <= optimum + 1e-9
    # Without pool limits the configuration LP is at least the fluid LP (its patterns are fluid packings).
    fluid = fluid_lower_bound(problem)
    assert fluid is not None
    assert b.cost >= fluid.cost * (1 - 1e-5) - 1e-9


def test_a_pattern_over_two_overlapping_caps_is_repaired_within_both() -> None:
    """A group in two cap sets (its own hostname spread inside an anti-affinity clique it shares): a pattern over
    both caps loses the least valuable pods until both hold; dropping pods for one set may already settle the
    other: the repair reads each cap afresh (a stale one raised ValueError, which would stop the LP's search)."""
    import numpy as np

    from karpplan.engines.patterns.caps import node_caps
    from karpplan.engines.patterns.columns import ColumnRepair
    from karpplan.engines.patterns.instance import pod_classes

    problem = problem_of([
        deployment("a", 3, labels={"team": "x"}, anti={"team": "x"}, spread=(1, {"app": "a"})),
        deployment("b", 1, labels={"team": "x"}, anti={"team": "x"}),
    ])
    groups = problem.groups
    inst = pod_classes(problem, groups, {g.index: g.group.size for g in groups})
    assert inst is not None
    a, b = (inst.class_of_group[g.index] for g in groups)
    caps = node_caps(inst, existing=False)
    assert len(caps.sets_of_class[a]) == 2  # the clique {a, b} and a's own spread
    repair = ColumnRepair(inst, caps, node_caps(inst, existing=True))
    room = inst.free[int(np.argmax(inst.free[:, 0]))]
    pi = np.zeros(len(inst.demand))
    pi[a], pi[b] = 0.1, 1.0
    for x in ({a: 2, b: 1}, {b: 1, a: 2}, {a: 3}):
        out = repair.column(x, room, np.ones(len(inst.demand), dtype=np.bool_), False, pi)
        # One pod of the clique a node may hold, the most valuable one.
        assert out == ({b: 1} if b in x else {a: 1})
