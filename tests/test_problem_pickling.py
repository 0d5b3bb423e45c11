"""A scheduling `Problem` pickled and loaded (a process pool, a spawned worker) is the same problem: the same
bounds and the same plans as the original.

Its rules are looked up by id(template); an unpickled template lives at another address, so a plain dict lost
them all: the hostname anti-affinity caps went, and the fluid bound priced replicas that must each have a node of
their own as if they could share one (on three such replicas and a plain Deployment: $1.24/h instead of $1.60/h).
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from test_bound import deployment, problem_of

from karpplan.engines.bound import fluid_lower_bound
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.patterns.lower_bound import pattern_lower_bound
from karpplan.engines.result import Solution
from karpplan.planner import PlanOptions, solve
from karpplan.scheduling.by_owner import ByOwner
from karpplan.scheduling.problem import Problem


def _problem() -> Problem:
    zone_spread = deployment("api", 3, "300m")
    zone_spread["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "api"}}}]
    preferred = deployment("cache", 2, "200m")
    preferred["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}}]}}
    return problem_of([deployment("web", 4, "500m", anti={"app": "web"}),
                       deployment("queue", 3, "300m", spread=(1, {"app": "queue"})),
                       zone_spread, preferred, deployment("batch", 5, "700m")])


def _layout(solution: Solution) -> list[tuple[Any, ...]]:
    return sorted((n.option.key if n.option is not None else None, tuple(sorted(p.key for _, p in n.pods)))
                  for n in solution.nodes)


def test_an_unpickled_problem_has_the_same_bounds_and_plans() -> None:
    original = _problem()
    loaded: Problem = pickle.loads(pickle.dumps(original))
    assert len(loaded.topology.anti_affinity) == 1 and len(loaded.topology.spread) == 2
    # Every rule is found again under the loaded problem's own templates.
    for topology_map in ("spread", "affinity", "anti_affinity", "preferred_affinity", "preferred_anti"):
        before, after = getattr(original.topology, topology_map), getattr(loaded.topology, topology_map)
        assert {g.index for g in original.groups if id(g.template) in before} == \
               {g.index for g in loaded.groups if id(g.template) in after}, topology_map

    fluid, fluid_loaded = fluid_lower_bound(original), fluid_lower_bound(loaded)
    assert fluid is not None and fluid_loaded is not None
    assert fluid_loaded.cost == pytest.approx(fluid.cost)
    pattern, pattern_loaded = pattern_lower_bound(original), pattern_lower_bound(loaded)
    assert pattern is not None and pattern_loaded is not None
    assert pattern_loaded.cost == pytest.approx(pattern.cost)

    karpenter, _ = solve_karpenter(original)
    karpenter_loaded, _ = solve_karpenter(loaded)
    assert _layout(karpenter_loaded) == _layout(karpenter)

    options = PlanOptions(engine="optimal", time_limit=10, workers=1)
    best, _, _ = solve(original, options)
    best_loaded, _, _ = solve(loaded, options)
    assert best.status == best_loaded.status == "optimal"
    assert best_loaded.cost == pytest.approx(best.cost)
    assert not best_loaded.unplaced


def test_queue_rank_survives_pickling() -> None:
    """The consolidation simulation's queue order (`Problem.queue_rank`, by id(pod)) is kept for the groups' pods."""
    problem = _problem()
    pods = [p for g in problem.groups for p in g.group.pods]
    problem.queue_rank = {id(p): len(pods) - i for i, p in enumerate(pods)}
    loaded: Problem = pickle.loads(pickle.dumps(problem))
    assert loaded.queue_rank is not None
    assert [loaded.queue_rank[id(p)] for g in loaded.groups for p in g.group.pods] == [len(pods) - i for i in range(len(pods))]


def test_a_map_set_by_id_alone_refuses_to_be_pickled_rather_than_lose_entries() -> None:
    rules: ByOwner[int] = ByOwner()
    rules[12345] = 1
    with pytest.raises(TypeError, match="set by id alone"):
        pickle.dumps(rules)
