"""A plan read off the whole-node programme (karpplan/engines/whole_node_plan.py), and the small-plan phase that
stops on it: the plan always verifies and places every pod, its bound is never above the exhaustive optimum,
and where the two meet the optimiser answers `optimal` without a search."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from test_bound_is_valid import exhaustive_optimum
from test_combinatorial_bound import EXAMPLES, deployment, pool, problem_of, zoned_problems
from test_domain_key_bound import deployment as keyed_deployment
from test_domain_key_bound import keyed_problems, labelled, optimum_of, split_pool
from test_domain_key_bound import problem_of as keyed_problem_of

from karpplan.engines.effort import WorkClock
from karpplan.engines.whole_node_plan import programme_plan
from karpplan.planner import PlanOptions, solve
from karpplan.verify import verify


def test_a_zone_spread_is_planned_and_proven_from_the_programme(tmp_path: Path) -> None:
    # Three 600m pods over three zones: a small node in each (0.155), which the programme both bounds and buys.
    problem = problem_of(tmp_path, pool("default") + deployment("web", 3, "600m", "zone-spread"))
    clock = WorkClock()
    made = programme_plan(problem, clock)
    assert made is not None and clock.now() > 0
    assert made.plan.cost == pytest.approx(0.155) and made.bound == pytest.approx(0.155, rel=1e-5)
    assert not verify(problem, made.plan) and not made.plan.unplaced
    assert sorted(len(n.pods) for n in made.plan.nodes) == [1, 1, 1]


def test_pods_of_a_custom_label_spread_are_balanced_over_its_domains(tmp_path: Path) -> None:
    # Nine 600m pods over three capacity-spread values (one pool gives 1, the other 2 and 3): three per domain on
    # a medium each (0.27), the exhaustive optimum.
    problem = keyed_problem_of(tmp_path, split_pool("od", "'1'") + split_pool("spot", "'2', '3'")
                               + keyed_deployment("web", 9, "600m", "key-spread"))
    made = programme_plan(problem)
    assert made is not None and made.plan.cost == pytest.approx(0.27) and made.bound == pytest.approx(0.27, rel=1e-5)
    assert sorted(n.option.labels["capacity-spread"] for n in made.plan.nodes if n.option) == ["1", "2", "3"]


def test_hostname_anti_affinity_gets_a_node_per_pod(tmp_path: Path) -> None:
    problem = problem_of(tmp_path, pool("default") + deployment("db", 3, "250m", "host-anti"))
    made = programme_plan(problem)
    assert made is not None and not verify(problem, made.plan)
    assert all(len(n.pods) == 1 for n in made.plan.nodes) and made.plan.cost == pytest.approx(0.15)


def test_existing_nodes_leave_the_problem_to_the_other_engines(tmp_path: Path) -> None:
    node = """---
apiVersion: v1
kind: Node
metadata: {name: old, labels: {kubernetes.io/hostname: old, topology.kubernetes.io/zone: zone-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
    problem = problem_of(tmp_path, node + pool("default") + deployment("web", 3, "600m", "none"))
    assert programme_plan(problem) is None


def test_the_optimiser_answers_optimal_with_the_programmes_plan(tmp_path: Path) -> None:
    # Thirty 512m pods of one Deployment on one pool: whole nodes decide (the LPs share one node's room), and the
    # programme's plan meets its own bound, so no search runs.
    problem = problem_of(tmp_path, pool("default") + deployment("web", 30, "512m", "zone-spread"))
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=10.0, workers=1))
    made = programme_plan(problem)
    assert made is not None
    assert plan.status == "optimal" and plan.cost == pytest.approx(made.plan.cost)
    assert plan.lower_bound == pytest.approx(plan.cost, rel=1e-5)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=zoned_problems())
def test_the_programmes_plan_is_valid_and_its_bound_below_the_optimum(tmp_path: Path, case: tuple[str, int]) -> None:
    text, zones = case
    problem = problem_of(tmp_path, text, zones)
    made = programme_plan(problem)
    if made is None:
        return
    optimum = exhaustive_optimum(problem)
    assert not verify(problem, made.plan) and not made.plan.unplaced, text
    assert optimum is not None, f"a valid plan, yet the exhaustive search found none:\n{text}"
    assert made.bound <= optimum + 1e-6 <= made.plan.cost + 2e-6, text


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=keyed_problems())
def test_on_custom_keys_too(tmp_path: Path, case: tuple[str, int]) -> None:
    # (A spread over a custom key and one over the zones together: neither programme alone sees both, so its
    # packing may break one; the verifier then turns it down, and nothing is claimed.)
    text, zones = case
    problem = keyed_problem_of(tmp_path, text, zones)
    made = programme_plan(problem)
    if made is None:
        return
    optimum = optimum_of(problem)
    assert not verify(problem, made.plan) and labelled(problem)(made.plan), text
    assert optimum is not None and made.bound <= optimum + 1e-6 <= made.plan.cost + 2e-6, text


def test_pods_no_plan_can_place_do_not_keep_the_rest_from_being_proven(tmp_path: Path) -> None:
    # A Deployment selecting a label no pool gives is left out by every plan (a static verdict); the other one's
    # three zone-spread pods are planned and proven as if it were not there.
    lost = deployment("lost", 2, "250m", "none").replace("    spec:\n", "    spec:\n      nodeSelector: {team: none}\n", 1)
    problem = problem_of(tmp_path, pool("default") + deployment("web", 3, "600m", "zone-spread") + lost)
    made = programme_plan(problem)
    assert made is not None and len(made.plan.unplaced) == 2 and made.plan.cost == pytest.approx(0.155)
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=10.0, workers=1))
    assert plan.status == "optimal" and len(plan.unplaced) == 2 and plan.cost == pytest.approx(0.155)


def test_pods_affine_to_their_own_kind_are_left_to_the_engines(tmp_path: Path) -> None:
    # Required pod affinity on the hostname to their own Deployment: kube-scheduler puts them all on one node (the
    # first pod's node), which the programme does not know; the verifier, reading the final state only, would
    # accept two nodes of five, so the programme's plan is not offered at all.
    affine = deployment("web", 10, "250m", "none").replace("    spec:\n", """    spec:
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}
""", 1)
    assert programme_plan(problem_of(tmp_path, pool("default") + affine)) is None
