"""Whole nodes in every zone (karpplan/engines/combinatorial_bound.py): a bound never above the exhaustive
optimum nor any valid plan, alone or raising the configuration LP's, and tight where zone spreads force
small nodes in several zones, which the LPs buy as fractions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bound_is_valid import RULES, engine_plans, exhaustive_optimum

from karpplan.catalog import load_catalog
from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD
from karpplan.engines.background_bound import component_floors, lp_bounds
from karpplan.engines.bound import fluid_lower_bound
from karpplan.engines.combinatorial_bound import components, with_lp_shares, zone_integer_bound
from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns.lower_bound import pattern_lower_bound
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, make_problem, solve
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

# 20 examples in the suite (a few seconds); KARPPLAN_BOUND_EXAMPLES=300 for a deeper search.
EXAMPLES = int(os.environ.get("KARPPLAN_BOUND_EXAMPLES", "20"))

ZONES = ("zone-a", "zone-b", "zone-c")
TYPES = (("small", 1, 0.05, 1.1), ("medium", 2, 0.09, 1.0), ("large", 4, 0.19, 0.9))


def catalog(zones: int) -> str:
    """Three instance types (1, 2 and 4 vCPU, the large one cheapest per vCPU) in `zones` zones, zone-b's
    prices differing."""
    text = "apiVersion: karpplan.io/v1alpha1\nkind: InstanceCatalog\nmetadata: {name: tiny}\n"
    text += f"zones: [{', '.join(ZONES[:zones])}]\ninstanceTypes:\n"
    for name, cpu, price, factor in TYPES:
        text += f"""\
  - name: {name}
    arch: amd64
    os: linux
    capacity: {{cpu: "{cpu}", memory: {cpu * 2}Gi, pods: "8"}}
    allocatable: {{cpu: {cpu * 1000 - 100}m, memory: {cpu * 2048 - 300}Mi, pods: "8"}}
    offerings:
"""
        for z in ZONES[:zones]:
            zone_price = round(price * factor, 4) if z == "zone-b" else price
            text += f"      - {{zone: {z}, capacityType: on-demand, price: {zone_price}}}\n"
    return text


def pool(name: str, team: str | None = None, types: str = "") -> str:
    labels = f"\n    metadata: {{labels: {{team: {team}}}}}" if team else ""
    requirements = (f"[{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}]"
                    if types else "[]")
    return f"""---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  template:{labels}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: {requirements}
"""


def deployment(name: str, replicas: int, cpu: str, rule: str, team: str | None = None) -> str:
    selector = f"\n      nodeSelector: {{team: {team}}}" if team else ""
    return f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:{selector}
      containers:
      - {{name: c, image: x, resources: {{requests: {{cpu: {cpu}, memory: 256Mi}}}}}}
{RULES[rule].replace("APP", name)}"""


def problem_of(tmp_path: Path, manifests: str, zones: int = 3) -> Problem:
    (tmp_path / "m.yaml").write_text(manifests)
    (tmp_path / "c.yaml").write_text(catalog(zones))
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    return make_problem(inventory, load_catalog(None, str(tmp_path / "c.yaml")), inventory.pending)


def raised(problem: Problem) -> float | None:
    """The configuration LP's bound raised by the whole-node bound and each component's own fluid LP, as the
    optimiser computes it (`background_bound.lp_bounds`)."""
    pattern = pattern_lower_bound(problem, fluid=fluid_lower_bound(problem))
    if pattern is None:
        return None
    whole = zone_integer_bound(problem)
    return with_lp_shares(pattern.cost, pattern.duals, whole, component_floors(problem, whole, WorkClock()))


# ---------------------------------------------------------------------------------------- by hand
def test_a_zone_spread_of_three_pods_buys_a_node_in_each_zone(tmp_path: Path) -> None:
    # Three 600m pods, maxSkew 1 over three zones: one pod per zone, so three small nodes (0.05, 0.055, 0.05).
    # The LPs share one large node's room (0.19 for 3.9 vCPU) across them: well under that.
    problem = problem_of(tmp_path, pool("default") + deployment("web", 3, "600m", "zone-spread"))
    whole = zone_integer_bound(problem)
    assert whole.cost == pytest.approx(0.155, rel=1e-5)
    assert exhaustive_optimum(problem) == pytest.approx(0.155)
    pattern = pattern_lower_bound(problem)
    assert pattern is not None and pattern.cost < 0.12
    assert with_lp_shares(pattern.cost, pattern.duals, whole) == pytest.approx(0.155, rel=1e-5)


def test_zone_anti_affinity_buys_a_node_in_each_zone(tmp_path: Path) -> None:
    # Three 250m pods that repel each other by zone: one per zone, each on a node of its own.
    problem = problem_of(tmp_path, pool("default") + deployment("db", 3, "250m", "zone-anti"))
    assert zone_integer_bound(problem).cost == pytest.approx(0.155, rel=1e-5)
    assert exhaustive_optimum(problem) == pytest.approx(0.155)


def test_hostname_anti_affinity_buys_a_node_per_pod_whatever_the_zones(tmp_path: Path) -> None:
    # Three 250m pods that repel each other by hostname, no zone rule: their 750m fit one small node, but each
    # needs a node of its own, the cheapest of any zone (zone-a's small, 0.05).
    problem = problem_of(tmp_path, pool("default") + deployment("db", 3, "250m", "host-anti"))
    assert zone_integer_bound(problem).cost == pytest.approx(0.15, rel=1e-5)
    assert exhaustive_optimum(problem) == pytest.approx(0.15)


def test_the_lp_bounds_the_optimiser_runs_include_the_raised_one(tmp_path: Path) -> None:
    problem = problem_of(tmp_path, pool("default") + deployment("web", 3, "600m", "zone-spread"))
    placed = {g.index: g.size for g in problem.groups}
    clock = WorkClock()
    found = lp_bounds(problem, placed, fluid_lower_bound(problem), [], 2.0, clock.now() + 4.0, 0.0, clock, 1.0)
    lp = [b for b, source in found if source == "configuration-lp"]
    assert max(lp) == pytest.approx(0.155, rel=1e-5)  # the LP alone is below 0.12, raised by whole nodes
    assert min(lp) < 0.12
    # The optimiser's plan costs exactly that (CP-SAT proves it on its own too).
    plan, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=5.0, workers=1))
    assert plan.cost == pytest.approx(0.155) and plan.status == "optimal"


def test_pods_of_two_pools_add_up_by_component(tmp_path: Path) -> None:
    # Two teams' pools (nodeSelector), each with a zone-spread Deployment of two 600m pods: two small nodes each.
    text = (pool("a", "a") + pool("b", "b") + deployment("web", 2, "600m", "zone-spread", "a")
            + deployment("api", 2, "600m", "zone-spread", "b"))
    problem = problem_of(tmp_path, text)
    assert len(components([g for g in problem.groups if g.size])) == 2
    whole = zone_integer_bound(problem)
    assert len(whole.components) == 2
    assert whole.cost == pytest.approx(0.2, rel=1e-5)  # zone-a and zone-c, the cheaper small nodes, per team


def test_without_a_zone_rule_the_rounding_is_of_the_whole_demand(tmp_path: Path) -> None:
    # Five 600m pods and nothing spreading them: all may share zone-b's large node (3.9 vCPU, 0.171) and a
    # small one, one zone's rounding only.
    problem = problem_of(tmp_path, pool("default") + deployment("web", 5, "600m", "none"))
    whole = zone_integer_bound(problem)
    assert 0 < whole.cost <= 0.171 + 0.05 + 1e-9


def test_a_components_own_bound_raises_the_lp_by_what_its_duals_miss(tmp_path: Path) -> None:
    text = (pool("a", "a") + pool("b", "b") + deployment("web", 2, "600m", "zone-spread", "a")
            + deployment("api", 2, "600m", "zone-spread", "b"))
    whole = zone_integer_bound(problem_of(tmp_path, text))
    first, second = whole.components
    duals = {g: 0.01 for g in first.groups | second.groups}  # each component priced at 2 pods x 0.01
    assert with_lp_shares(0.04, duals, whole) == pytest.approx(0.04 + (first.cost - 0.02) + (second.cost - 0.02))
    # A floor above a component's whole-node bound counts instead of it; one below changes nothing.
    assert with_lp_shares(0.04, duals, whole, [first.cost + 0.5, 0.0]) == pytest.approx(
        0.04 + (first.cost + 0.5 - 0.02) + (second.cost - 0.02))


def test_pods_that_may_use_existing_nodes_are_left_out(tmp_path: Path) -> None:
    node = """---
apiVersion: v1
kind: Node
metadata: {name: old, labels: {kubernetes.io/hostname: old, topology.kubernetes.io/zone: zone-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
    problem = problem_of(tmp_path, node + pool("default") + deployment("web", 3, "600m", "none"))
    assert zone_integer_bound(problem).cost == 0.0


def test_the_work_clock_is_charged(tmp_path: Path) -> None:
    problem = problem_of(tmp_path, pool("default") + deployment("web", 3, "600m", "zone-spread"))
    clock = WorkClock()
    before = clock.now()
    zone_integer_bound(problem, clock=clock)
    assert clock.now() > before


# ---------------------------------------------------------------------------------------- property
@st.composite
def zoned_problems(draw: st.DrawFn) -> tuple[str, int]:
    """One or two pools (two: teams chosen by nodeSelector, or one pool restricted to an instance type), up to
    four pods of up to two Deployments with any rule of `test_bound_is_valid.RULES`, two or three zones."""
    zones = draw(st.integers(2, 3))
    shape = draw(st.sampled_from(["one", "teams", "types"]))
    teams: list[str | None]
    if shape == "one":
        text, teams = pool("default"), [None, None]
    elif shape == "teams":
        text, teams = pool("a", "a") + pool("b", "b"), ["a", draw(st.sampled_from(["a", "b"]))]
    else:
        text, teams = pool("default", None, draw(st.sampled_from(["small", "medium, large"]))), [None, None]
    total = 0
    for i, name in enumerate(("web", "api")[:draw(st.integers(1, 2))]):
        replicas = draw(st.integers(1, 4 - total))
        total += replicas
        text += deployment(name, replicas, draw(st.sampled_from(["250m", "600m", "900m"])),
                           draw(st.sampled_from(sorted(RULES))), teams[i])
        if total >= 4:
            break
    return text, zones


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=zoned_problems())
def test_the_bound_never_exceeds_the_optimum_nor_a_valid_plan(tmp_path: Path, case: tuple[str, int]) -> None:
    text, zones = case
    problem = problem_of(tmp_path, text, zones)
    optimum = exhaustive_optimum(problem)
    if optimum is None:
        return
    bounds = {"whole-nodes": zone_integer_bound(problem).cost}
    lp = raised(problem)
    if lp is not None:
        bounds["configuration-lp+whole-nodes"] = lp
    kept = {engine: plan.cost for engine, plan in engine_plans(problem).items()
            if not plan.unplaced and not plan.exceeds_node_limits and verify(problem, plan) == []
            and not TOPOLOGY_SPREAD.launch_violations(problem, plan)}
    for name, bound in bounds.items():
        assert bound <= optimum + 1e-6, f"{name} bound {bound} above the optimum {optimum}:\n{text}"
        for engine, cost in kept.items():
            assert bound <= cost + 1e-6, f"{name} bound {bound} above {engine}'s valid plan ({cost}):\n{text}"
