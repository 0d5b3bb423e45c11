"""The fluid LP lower bound (karpplan/engines/bound.py): never above a real plan's cost, and tight where it should be."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from karpplan.catalog.user import parse_catalog
from karpplan.engines.bound import FluidBound, fluid_lower_bound
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.result import Solution
from karpplan.inputs.loader import parse_documents
from karpplan.model.labels import HOSTNAME
from karpplan.planner import PlanOptions, make_problem, solve
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import Topology

from conftest import inventory_from
from planner_helpers import FAKE_CATALOG, POOL

SMALL, LARGE = 0.4, 0.7  # FAKE_CATALOG's prices


# ---------------------------------------------------------------------------------------- builders
def deployment(name: str, replicas: int, cpu: str = "100m", memory: str = "64Mi", *,
               labels: dict[str, str] | None = None, anti: dict[str, str] | None = None,
               spread: tuple[int, dict[str, str]] | None = None, instance_type: str | None = None) -> dict[str, Any]:
    """A Deployment; `anti` / `spread` are the selectors of a required hostname anti-affinity term / hard
    hostname spread constraint (maxSkew, selector)."""
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
    }
    if anti is not None:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": anti}, "topologyKey": HOSTNAME}]}}
    if spread is not None:
        spec["topologySpreadConstraints"] = [{"maxSkew": spread[0], "topologyKey": HOSTNAME,
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": spread[1]}}]
    if instance_type is not None:
        spec["nodeSelector"] = {"node.kubernetes.io/instance-type": instance_type}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name, **(labels or {})}}, "spec": spec}}}


def node(name: str, cpu: str, memory: str = "8Gi", pods: str = "110") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME: name, "topology.kubernetes.io/zone": "zone-a"}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}


def catalog_text(types: Sequence[tuple[str, int, int, int, float]], capacity_cpu: dict[str, int] | None = None) -> str:
    """(name, cpu millicores, memory MiB, pods, price) per type; one zone, on-demand, allocatable as given
    (capacity too, unless `capacity_cpu` names the type's CPU capacity)."""
    cap = capacity_cpu or {}
    entries = [{"name": n, "arch": "amd64", "os": "linux",
                "capacity": {"cpu": f"{cap.get(n, c)}m", "memory": f"{m}Mi", "pods": str(p)},
                "allocatable": {"cpu": f"{c}m", "memory": f"{m}Mi", "pods": str(p)},
                "offerings": [{"zone": "zone-a", "capacityType": "on-demand", "price": price}]}
               for n, c, m, p, price in types]
    return yaml.safe_dump({"apiVersion": "karpplan.io/v1alpha1", "kind": "InstanceCatalog",
                           "metadata": {"name": "t"}, "zones": ["zone-a"], "instanceTypes": entries})


def pool(limits: dict[str, Any] | None = None, name: str = "default", types: Sequence[str] = ()) -> str:
    text = POOL.replace("name: default}", f"name: {name}}}", 1)
    if limits is not None:
        text = text.replace("spec:\n  template:", f"spec:\n  limits: {yaml.safe_dump(limits, default_flow_style=True).strip()}\n  template:", 1)
    if types:
        text = text.replace("requirements: []", "requirements: [{key: node.kubernetes.io/instance-type, operator: In, "
                            f"values: [{', '.join(types)}]}}]")
    return text


def problem_of(docs: Sequence[dict[str, Any]], *, catalog: str = FAKE_CATALOG, pools: Sequence[str] = (POOL,)) -> Problem:
    text = "\n---\n".join([*pools, *(yaml.safe_dump(d) for d in docs)])
    inventory = inventory_from(text)
    cat = parse_catalog(parse_documents(catalog, "catalog.yaml")[0])
    return make_problem(inventory, cat, inventory.pending)


def bound_of(problem: Problem, required: dict[int, int] | None = None) -> FluidBound:
    result = fluid_lower_bound(problem, required)
    assert result is not None
    return result


def placed(solution: Solution) -> dict[int, int]:
    counts: Counter[int] = Counter(group_info.index for n in solution.nodes for group_info, _ in n.pods)
    return dict(counts)


# ---------------------------------------------------------------------------------------- brute force
def partitions(items: list[int]) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in partitions(rest):
        yield [[first], *part]
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1:]]


def _conflict(topo: Topology, a: GroupInfo, b: GroupInfo, ns_labels: Any) -> bool:
    for x, y in ((a, b), (b, a)):
        rule = topo.anti_affinity.get(id(x.template))
        if rule is not None and any(t.key == HOSTNAME and t.matches(y.template.namespace, y.template.labels, ns_labels)
                                    for t in rule.terms):
            return True
    return False


def _spread_order_ok(topo: Topology, order: Sequence[GroupInfo]) -> bool:
    """kube-scheduler / Karpenter on a new node, pod by pod: matching pods already there + self <= maxSkew."""
    for i, g in enumerate(order):
        for rule in topo.rules_for(g.template):
            if not (rule.hard and rule.hostname):
                continue
            here = sum(1 for h in order[:i] if rule.counts(h.template.namespace, h.template.labels))
            if here + (1 if rule.self_match else 0) > rule.max_skew:
                return False
    return True


def block_price(problem: Problem, block: Sequence[GroupInfo]) -> float:
    """The cheapest new node that can hold these pods together (inf when none can)."""
    topo, ns = problem.topology, problem.namespace_labels
    for a, b in itertools.combinations(block, 2):
        if _conflict(topo, a, b, ns):
            return math.inf
    by_index = {g.index: g for g in block}
    orders = {tuple(g.index for g in order) for order in itertools.permutations(block)}
    if not any(_spread_order_ok(topo, [by_index[i] for i in order]) for order in orders):
        return math.inf
    total = Counter[str]()
    for g in block:
        total.update(g.template.requests)
    common = set.intersection(*(set(g.option_ids) for g in block))
    prices = [o.price for o in problem.options
              if o.index in common and all(v <= o.free.get(k) for k, v in total.items())]
    return min(prices, default=math.inf)


def brute_force(problem: Problem) -> float:
    """The cheapest set of new nodes holding every pod of every group that has a launch option."""
    pods = [g for g in problem.groups if g.options for _ in range(g.size)]
    best = math.inf
    for part in partitions(list(range(len(pods)))):
        best = min(best, sum(block_price(problem, [pods[i] for i in block]) for block in part))
    return best


# ---------------------------------------------------------------------------------------- by hand
def test_one_group_one_type_is_the_fluid_value() -> None:
    problem = problem_of([deployment("web", 3, cpu="500m")],
                         catalog=catalog_text([("only", 1900, 2038, 5, 0.4)]))
    b = bound_of(problem)
    # CPU binds: 1500m of 1900m; memory 192Mi of 2038Mi and 3 of 5 pods do not.
    assert b.cost == pytest.approx(0.4 * 1500 / 1900, rel=1e-5)
    assert b.cost <= 0.4 * 1500 / 1900
    assert b.nodes == pytest.approx(1500 / 1900, rel=1e-5)
    assert b.classes == 1


def test_pods_count_as_a_resource() -> None:
    problem = problem_of([deployment("web", 8, cpu="10m", memory="1Mi")],
                         catalog=catalog_text([("only", 4000, 4096, 4, 1.0)]))
    assert bound_of(problem).cost == pytest.approx(2.0, rel=1e-5)


def test_cheapest_resource_mix() -> None:
    # 4 CPUs and 4 GiB: 'cpu' nodes cost 1.0 per 4 CPU / 1 GiB, 'mem' nodes 1.0 per 1 CPU / 8 GiB; either
    # alone needs 4 nodes. LP: 4a + b >= 4, a + 8b >= 4 -> a = 28/31, b = 12/31, cost 40/31.
    catalog = catalog_text([("cpu", 4000, 1024, 100, 1.0), ("mem", 1000, 8192, 100, 1.0)])
    problem = problem_of([deployment("a", 8, cpu="500m", memory="512Mi")], catalog=catalog)
    assert bound_of(problem).cost == pytest.approx(40 / 31, rel=1e-5)


def test_self_anti_affinity_needs_one_node_per_pod() -> None:
    n = 4
    problem = problem_of([deployment("web", n, anti={"app": "web"})])
    b = bound_of(problem)
    cheapest = min(o.price for o in problem.groups[0].options)
    assert cheapest == SMALL
    assert b.cost >= n * cheapest * (1 - 1e-5)
    assert b.nodes == pytest.approx(n, rel=1e-5)
    # Without it the same pods need 4 of a node's 5 pod slots.
    assert bound_of(problem_of([deployment("web", n)])).cost == pytest.approx(SMALL * n / 5, rel=1e-5)


def test_a_shared_anti_affinity_term_is_one_clique() -> None:
    docs = [deployment(f"d{i}", 2, labels={"role": "db"}, anti={"role": "db"}) for i in range(3)]
    b = bound_of(problem_of(docs))
    assert b.cost >= 6 * SMALL * (1 - 1e-5)


def test_anti_affinity_to_another_group_only_is_not_a_cap() -> None:
    # 'a' avoids 'b' but not itself: two a's and two b's fit two nodes, not four.
    docs = [deployment("a", 2, cpu="900m", anti={"app": "b"}), deployment("b", 2, cpu="900m")]
    problem = problem_of(docs, catalog=catalog_text([("t", 2000, 4096, 10, 1.0)]))
    assert bound_of(problem).cost <= brute_force(problem) == pytest.approx(2.0)


def test_hostname_spread_caps_pods_per_new_node() -> None:
    problem = problem_of([deployment("web", 6, spread=(2, {"app": "web"}))])
    assert bound_of(problem).cost == pytest.approx(3 * SMALL, rel=1e-5)


def test_groups_sharing_a_spread_constraint_share_the_cap() -> None:
    docs = [deployment(f"d{i}", 2, labels={"tier": "x"}, spread=(1, {"tier": "x"})) for i in range(2)]
    assert bound_of(problem_of(docs)).cost == pytest.approx(4 * SMALL, rel=1e-5)


def test_a_larger_type_at_the_same_unit_price_does_not_replace_small_nodes_under_a_cap() -> None:
    # 'double' is exactly two 'single's at twice the price: it dominates 'single' for fluid packing, but
    # not when one pod per node is the rule (t would be 1/2 < 1).
    catalog = catalog_text([("single", 1000, 1024, 10, 0.5), ("double", 2000, 2048, 20, 1.0)])
    problem = problem_of([deployment("web", 3, anti={"app": "web"})], catalog=catalog)
    assert bound_of(problem).cost == pytest.approx(1.5, rel=1e-5)
    assert brute_force(problem) == pytest.approx(1.5)


def test_dominated_types_do_not_change_the_bound() -> None:
    base = [("a", 2000, 4096, 10, 0.5), ("b", 4000, 2048, 10, 0.6)]
    extra = [("a-copy", 2000, 4096, 10, 0.5), ("a-dear", 2000, 4096, 10, 0.9), ("a-twice", 4000, 8192, 20, 1.0),
             ("a-half", 1000, 2048, 5, 0.3)]
    docs = [deployment("x", 5, cpu="700m", memory="1Gi"), deployment("y", 3, cpu="300m", memory="2Gi",
                                                                      anti={"app": "y"})]
    plain = bound_of(problem_of(docs, catalog=catalog_text(base)))
    richer = bound_of(problem_of(docs, catalog=catalog_text(base + extra)))
    # a-half is cheaper per unit than a: the bound may drop, never rise.
    assert richer.cost <= plain.cost + 1e-9
    without_half = bound_of(problem_of(docs, catalog=catalog_text(base + extra[:3])))
    assert without_half.cost == pytest.approx(plain.cost, rel=1e-6)


# ---------------------------------------------------------------------------------------- existing nodes
def test_existing_room_for_everything_gives_zero() -> None:
    problem = problem_of([node("n1", "8"), deployment("web", 4, cpu="1")])
    assert bound_of(problem).cost == 0.0


def test_existing_room_for_part_of_the_pods() -> None:
    # n1 takes one 1-CPU pod; three go to new nodes (3 CPUs >= 3900m * 0.7/3900 ... cheapest per CPU).
    problem = problem_of([node("n1", "1500m"), deployment("web", 4, cpu="1")])
    b = bound_of(problem)
    per_cpu = min(SMALL / 1900, LARGE / 3900)
    assert b.cost == pytest.approx(2500 * per_cpu, rel=1e-5)  # fluid: 1500m of the 4000m on n1


def test_anti_affinity_allows_one_pod_per_existing_node() -> None:
    problem = problem_of([node("n1", "8"), node("n2", "8"), deployment("web", 4, anti={"app": "web"})])
    assert bound_of(problem).cost == pytest.approx(2 * SMALL, rel=1e-5)


# ---------------------------------------------------------------------------------------- required
def test_required_excludes_pods() -> None:
    problem = problem_of([deployment("web", 4, anti={"app": "web"}), deployment("api", 2, anti={"app": "api"})])
    web, api = (g.index for g in problem.groups)
    assert bound_of(problem).cost == pytest.approx(4 * SMALL, rel=1e-5)
    assert bound_of(problem, {web: 1, api: 2}).cost == pytest.approx(2 * SMALL, rel=1e-5)
    assert bound_of(problem, {web: 0}).cost == 0.0
    assert bound_of(problem, {}).cost == 0.0
    assert bound_of(problem, {web: 99}).cost == pytest.approx(4 * SMALL, rel=1e-5)  # capped at the group's size


def test_groups_nothing_can_hold_are_left_out_by_default_and_infeasible_when_required() -> None:
    problem = problem_of([deployment("web", 2), deployment("huge", 1, cpu="64")])
    web, huge = (g.index for g in problem.groups)
    assert not problem.groups[huge].options
    assert bound_of(problem).cost == pytest.approx(bound_of(problem, {web: 2}).cost)
    assert fluid_lower_bound(problem, {web: 2, huge: 1}) is None


# ---------------------------------------------------------------------------------------- pool limits
def test_pool_limits_push_pods_to_dearer_types() -> None:
    pools = [pool({"cpu": "2"}, "cheap", ["small"]), pool(None, "dear", ["large"])]
    problem = problem_of([deployment("web", 4, anti={"app": "web"})], pools=pools)
    # One 'small' (2 CPUs of capacity) fits the limit; three pods need 'large' nodes.
    assert bound_of(problem).cost == pytest.approx(SMALL + 3 * LARGE, rel=1e-5)


def test_node_limits() -> None:
    pools = [pool({"nodes": 2}, "cheap", ["small"]), pool(None, "dear", ["large"])]
    problem = problem_of([deployment("web", 5, anti={"app": "web"})], pools=pools)
    assert bound_of(problem).cost == pytest.approx(2 * SMALL + 3 * LARGE, rel=1e-5)


def test_an_option_outside_a_limited_pool_is_not_replaced_by_one_inside() -> None:
    # 'large' is cheaper per CPU than 'small', but its pool may launch one node: the rest goes to 'small'.
    pools = [pool({"nodes": 1}, "cheap", ["large"]), pool(None, "dear", ["small"])]
    catalog = catalog_text([("small", 1900, 2038, 50, SMALL), ("large", 3900, 4086, 100, LARGE)])
    problem = problem_of([deployment("web", 8, cpu="1")], pools=pools, catalog=catalog)
    assert bound_of(problem).cost == pytest.approx(LARGE + SMALL * (8000 - 3900) / 1900, rel=1e-5)


def test_a_cheaper_type_that_counts_more_against_the_limit_does_not_replace_another() -> None:
    # 'b' has the room of 'a' for less, but counts 4 CPUs against the pool's 6: both types are needed.
    catalog = catalog_text([("a", 1900, 2048, 100, 0.4), ("b", 1900, 2048, 100, 0.3)], capacity_cpu={"a": 2000, "b": 4000})
    problem = problem_of([deployment("web", 3, cpu="1500m")], pools=[pool({"cpu": "6"})], catalog=catalog)
    # n_a + n_b >= 4500/1900 and 2 n_a + 4 n_b <= 6: n_b = 6/2 - total, the rest on 'a'.
    total = 4500 / 1900
    n_b = 3 - total
    assert bound_of(problem).cost == pytest.approx(0.3 * n_b + 0.4 * (total - n_b), rel=1e-5)


def test_node_limits_keep_bigger_nodes_that_smaller_cheaper_ones_would_replace() -> None:
    # 'small' is cheaper per CPU, but two nodes must hold 7 CPUs: n_s + n_b <= 2, 1900 n_s + 3900 n_b >= 7000.
    catalog = catalog_text([("small", 1900, 2038, 50, 0.3), ("big", 3900, 4086, 100, 0.7)])
    problem = problem_of([deployment("web", 7, cpu="1")], pools=[pool({"nodes": 2})], catalog=catalog)
    assert bound_of(problem).cost == pytest.approx(0.3 * 0.4 + 0.7 * 1.6, rel=1e-5)


def test_limits_that_nothing_can_meet() -> None:
    pools = [pool({"nodes": 1}, "only", ["small"])]
    problem = problem_of([deployment("web", 3, anti={"app": "web"})], pools=pools)
    assert fluid_lower_bound(problem) is None  # no plan places all three
    assert bound_of(problem, {problem.groups[0].index: 1}).cost == pytest.approx(SMALL, rel=1e-5)


# ---------------------------------------------------------------------------------------- against the engines
WORKLOADS: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    "mixed": ([deployment("a", 4, cpu="1200m"), deployment("b", 3, cpu="700m", memory="1Gi"),
               deployment("c", 5, cpu="300m", memory="512Mi")], [POOL]),
    "anti-affinity": ([deployment("a", 3, cpu="500m", anti={"app": "a"}), deployment("b", 4, cpu="1500m"),
                       deployment("c", 2, cpu="200m", labels={"role": "db"}, anti={"role": "db"})], [POOL]),
    "hostname-spread": ([deployment("a", 5, cpu="300m", spread=(1, {"app": "a"})),
                         deployment("b", 4, cpu="800m", labels={"tier": "x"}, spread=(2, {"tier": "x"})),
                         deployment("c", 2, cpu="1", labels={"tier": "x"})], [POOL]),
    "pool-limits": ([deployment("a", 4, cpu="900m", anti={"app": "a"}), deployment("b", 6, cpu="400m")],
                    [pool({"cpu": "4"}, "cheap", ["small"]), pool(None, "dear", ["large"])]),
    "existing": ([node("n1", "2"), node("n2", "1"), deployment("a", 4, cpu="700m", anti={"app": "a"}),
                  deployment("b", 5, cpu="600m")], [POOL]),
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_bound_never_exceeds_the_engines_plans(name: str) -> None:
    docs, pools = WORKLOADS[name]
    problem = problem_of(docs, pools=pools)
    karpenter, _ = solve_karpenter(problem)
    optimal, _, _ = solve(problem, PlanOptions(engine="optimal", time_limit=3.0, workers=1))
    for plan in (karpenter, optimal):
        if plan.exceeds_node_limits:
            continue
        b = bound_of(problem, placed(plan))
        assert b.cost <= plan.cost + 1e-9, (plan.engine, b, plan.cost)
    assert not optimal.unplaced
    full = bound_of(problem)
    assert 0 < full.cost <= optimal.cost + 1e-9
    # The optimiser's own bound, where it has one, is a bound on the same quantity.
    if optimal.lower_bound is not None and optimal.status == "optimal":
        assert full.cost <= optimal.lower_bound + 1e-6


def test_bench_shaped_anti_affinity_is_tight_in_node_count() -> None:
    docs = [deployment(f"n{i}", 3, cpu=c, labels={"kind": "nginx"}, anti={"kind": "nginx"})
            for i, c in enumerate(["100m", "250m", "500m"])]
    problem = problem_of(docs)
    b = bound_of(problem)
    karpenter, _ = solve_karpenter(problem)
    assert len(karpenter.new_nodes) == 9
    assert b.nodes == pytest.approx(9, rel=1e-5)
    assert b.cost == pytest.approx(karpenter.cost, rel=1e-5)


# ---------------------------------------------------------------------------------------- brute force
def test_brute_force_matches_hand_counts() -> None:
    problem = problem_of([deployment("web", 3, cpu="1", anti={"app": "web"})])
    assert brute_force(problem) == pytest.approx(3 * SMALL)
    problem = problem_of([deployment("web", 3, cpu="1")])
    assert brute_force(problem) == pytest.approx(LARGE)


@pytest.mark.parametrize("docs", [
    [deployment("a", 2, cpu="1500m"), deployment("b", 2, cpu="1")],
    [deployment("a", 3, cpu="1", memory="1Gi", spread=(2, {"app": "a"})), deployment("b", 1, cpu="2")],
    [deployment("a", 2, cpu="600m", labels={"t": "x"}, anti={"t": "x"}),
     deployment("b", 2, cpu="600m", labels={"t": "x"}, anti={"t": "x"})],
    [deployment("a", 2, cpu="1200m", instance_type="small"), deployment("b", 2, cpu="1200m", instance_type="large")],
])
def test_bound_below_the_brute_force_optimum(docs: list[dict[str, Any]]) -> None:
    problem = problem_of(docs)
    optimum = brute_force(problem)
    assert bound_of(problem).cost <= optimum + 1e-9
    karpenter, _ = solve_karpenter(problem)
    assert optimum <= karpenter.cost + 1e-9  # the brute force is a real optimum, the simulation a real plan


CPU_CHOICES = [100, 300, 500, 800, 1000, 1500, 2500]
MEM_CHOICES = [64, 256, 512, 1024, 2048, 3072]


@st.composite
def tiny_problems(draw: st.DrawFn) -> Problem:
    n_types = draw(st.integers(2, 3))
    types = [(f"t{i}", draw(st.sampled_from([1000, 1500, 2000, 3000, 4000])),
              draw(st.sampled_from([1024, 2048, 4096])), draw(st.integers(1, 4)),
              draw(st.sampled_from([0.1, 0.25, 0.3, 0.5, 0.8, 1.0]))) for i in range(n_types)]
    n_groups = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, 2)) for _ in range(n_groups)]
    while sum(sizes) > 4:
        sizes[sizes.index(max(sizes))] -= 1
    docs = []
    for i, size in enumerate(sizes):
        shared = draw(st.booleans())
        labels = {"tier": "x"} if shared else {}
        anti = draw(st.sampled_from([None, {"app": f"g{i}"}, {"tier": "x"}]))
        spread_sel = draw(st.sampled_from([None, {"app": f"g{i}"}, {"tier": "x"}]))
        spread = (draw(st.integers(1, 2)), spread_sel) if spread_sel is not None else None
        pinned = draw(st.sampled_from([None, *[t[0] for t in types]]))
        docs.append(deployment(f"g{i}", size, f"{draw(st.sampled_from(CPU_CHOICES))}m",
                               f"{draw(st.sampled_from(MEM_CHOICES))}Mi", labels=labels, anti=anti,
                               spread=spread, instance_type=pinned))
    return problem_of(docs, catalog=catalog_text(types))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_problems())
def test_property_bound_below_brute_force_optimum(problem: Problem) -> None:
    optimum = brute_force(problem)
    b = fluid_lower_bound(problem)
    assert b is not None  # without limits or existing nodes, every group with an option can be placed
    assert b.cost <= optimum + 1e-9
    assert b.cost >= 0
