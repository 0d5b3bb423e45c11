"""Neighbourhood search: cheaper plans from exact re-solves of a few nodes, never a broken rule."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from plan_checks import bench_problem, hostname_violations, resource_violations, zone_level_view

from karpplan.constraints.pool_headroom import Headroom
from karpplan.engines.effort import WorkClock
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.neighbourhood import NeighbourhoodSearch
from karpplan.engines.optimiser import solve_optimal
from karpplan.engines.optimiser_progress import Phase, ProgressEvent
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution, SolvedNode
from karpplan.model.resources import Resources
from karpplan.scheduling.problem import Problem

from planner_helpers import POOL


def one_pod_per_node(problem: Problem, solution: Solution, repacker: Repacker) -> Solution:
    """The plan with every pod on a node of its own, of the cheapest option of the same bucket."""
    nodes: list[SolvedNode] = []
    for node in solution.new_nodes:
        assert node.option is not None
        shape = repacker.shape(repacker.bucket_of(node.option))
        for group, pod in node.pods:
            option = next(o for o in shape.options
                          if o.index in group.option_ids and group.template.requests.fits_in(o.free))
            nodes.append(SolvedNode("", None, option, [(group, pod)]))
    return repacker.renamed(solution, nodes)


def pods_of(solution: Solution) -> list[str]:
    return sorted(pod.key for n in solution.nodes for _, pod in n.pods)


@pytest.mark.parametrize("catalog", ["synthetic", "aws"])
def test_search_makes_a_wasteful_plan_much_cheaper_and_keeps_every_rule(tmp_path: Path, catalog: str) -> None:
    problem = bench_problem(tmp_path, catalog, 100)
    greedy, _ = solve_karpenter(problem)
    repacker = Repacker(problem)
    wasteful = one_pod_per_node(problem, greedy, repacker)
    search = NeighbourhoodSearch(repacker, seed=3, parallel=2)
    better = search.improve(wasteful, WorkClock(), 3.0)
    # 100 pods on 100 nodes: merging them into shared nodes saves well over a fifth of the bill.
    assert better.cost < 0.8 * wasteful.cost
    assert len(better.new_nodes) < len(wasteful.new_nodes)
    assert search.moves > 0 and search.tried >= search.moves
    assert pods_of(better) == pods_of(wasteful)
    assert resource_violations(better) == []
    assert hostname_violations(problem, better) == []


@pytest.mark.parametrize("every", [0, 1])
def test_bucket_neighbourhoods_keep_zone_counts_and_cross_zone_ones_keep_every_zone_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, every: int) -> None:
    from karpplan.engines import neighbourhood
    from karpplan.engines.zone_repair import ZoneRepair
    from karpplan.verify import verify

    monkeypatch.setattr(neighbourhood, "CROSS_ZONE_EVERY", every)
    problem = bench_problem(tmp_path, "aws", 100)
    repacker = Repacker(problem)
    start, _ = ZoneRepair(problem, repacker).repair(repacker.repack(solve_karpenter(problem)[0]))
    assert verify(problem, start) == []
    search = NeighbourhoodSearch(repacker, seed=1, parallel=2)
    better = search.improve(start, WorkClock(), 2.0)
    assert better.cost < start.cost and pods_of(better) == pods_of(start)
    # The whole verifier: every zone spread still holds on the final counts, whatever moved.
    assert verify(problem, better) == []
    if every == 0:
        # Bucket neighbourhoods alone never move a pod to another zone.
        assert zone_level_view(problem, better) == zone_level_view(problem, start)
    else:
        assert zone_level_view(problem, better) != zone_level_view(problem, start)


def test_search_never_makes_the_repacked_plan_dearer(tmp_path: Path) -> None:
    problem = bench_problem(tmp_path, "synthetic", 100)
    repacker = Repacker(problem)
    start = repacker.repack(solve_karpenter(problem)[0])
    better = NeighbourhoodSearch(repacker, seed=0, parallel=1).improve(start, WorkClock(), 1.5)
    assert better.cost <= start.cost + 1e-9
    assert pods_of(better) == pods_of(start)
    assert hostname_violations(problem, better) == []


def test_anti_affinity_pods_keep_a_node_each(tmp_path: Path) -> None:
    problem = bench_problem(tmp_path, "aws", 100)
    repacker = Repacker(problem)
    wasteful = one_pod_per_node(problem, solve_karpenter(problem)[0], repacker)
    better = NeighbourhoodSearch(repacker, seed=1, parallel=2).improve(wasteful, WorkClock(), 2.0)
    anti_per_node = [sum(1 for group, _ in n.pods if group.template.labels.get("app") == "nginx") for n in better.new_nodes]
    assert max(anti_per_node) == 1
    assert sum(anti_per_node) == 20  # the benchmark's n/5 hostname anti-affinity pods
    assert Counter(anti_per_node)[1] == 20


@pytest.mark.parametrize("guarded", [False, True], ids=["budget spent", "wall guard passed"])
def test_an_exhausted_budget_returns_the_plan_unchanged(tmp_path: Path, guarded: bool) -> None:
    clock, until = (WorkClock(wall_deadline=0.0), 60.0) if guarded else (WorkClock(spent=5.0), 5.0)
    problem = bench_problem(tmp_path, "synthetic", 100)
    repacker = Repacker(problem)
    start = repacker.repack(solve_karpenter(problem)[0])
    search = NeighbourhoodSearch(repacker, seed=0)
    same = search.improve(start, clock, until)
    assert search.tried == 0
    assert [(n.option, [p.key for _, p in n.pods]) for n in same.nodes] == \
        [(n.option, [p.key for _, p in n.pods]) for n in start.nodes]
    # Only the wall clock makes a run unrepeatable, and the clock remembers it for the plan's notes.
    assert clock.cut == guarded


def test_a_pool_at_its_limits_gets_no_more_capacity(tmp_path: Path) -> None:
    problem = bench_problem(tmp_path, "aws", 100)
    repacker = Repacker(problem)
    wasteful = one_pod_per_node(problem, solve_karpenter(problem)[0], repacker)

    def capacity(solution: Solution, name: str) -> int:
        return sum(n.option.capacity.get(name) for n in solution.new_nodes if n.option is not None)

    # The pool's limits are exactly what the plan launches: no headroom in CPU or memory.
    at_limit = Resources({name: capacity(wasteful, name) for name in ("cpu", "memory")})
    problem.headroom["default"] = Headroom(at_limit, None)
    better = NeighbourhoodSearch(repacker, seed=2, parallel=2).improve(wasteful, WorkClock(), 2.0)
    assert better.cost < wasteful.cost
    assert capacity(better, "cpu") <= at_limit.get("cpu")
    assert capacity(better, "memory") <= at_limit.get("memory")


def test_the_same_seed_and_number_of_tries_give_the_same_plan(tmp_path: Path) -> None:
    problem = bench_problem(tmp_path, "synthetic", 100)
    repacker = Repacker(problem)
    wasteful = one_pod_per_node(problem, solve_karpenter(problem)[0], repacker)

    def run(seed: int) -> list[tuple[str, list[str]]]:
        search = NeighbourhoodSearch(repacker, seed=seed, parallel=2)
        plan = search.improve(wasteful, WorkClock(), 3600, max_tries=12)
        assert search.tried == 12
        return [(n.name, sorted(p.key for _, p in n.pods)) for n in plan.new_nodes]

    assert run(7) == run(7)


def test_the_same_seed_and_budget_give_the_same_plan_however_long_it_takes(tmp_path: Path) -> None:
    # The search stops on the work clock, which is charged modelled time: a run slowed down by a loaded
    # machine (here: a sleep in every report) still stops after the same neighbourhoods.
    problem = bench_problem(tmp_path, "synthetic", 100)
    repacker = Repacker(problem)
    wasteful = one_pod_per_node(problem, solve_karpenter(problem)[0], repacker)

    def run(delay: float) -> tuple[int, list[tuple[str, list[str]]]]:
        search = NeighbourhoodSearch(repacker, seed=5, parallel=2)
        clock = WorkClock(wall_deadline=time.monotonic() + 600)
        plan = search.improve(wasteful, clock, 1.0, report=lambda *_: time.sleep(delay))
        assert clock.now() >= 1.0 - 0.1 and not clock.cut
        return search.tried, [(n.name, sorted(p.key for _, p in n.pods)) for n in plan.new_nodes]

    fast, slow = run(0.0), run(0.02)
    assert fast[0] > 0 and fast == slow


def test_a_large_problem_shows_live_progress_from_the_search(tmp_path: Path) -> None:
    problem = bench_problem(tmp_path, "synthetic", 100)
    greedy, _ = solve_karpenter(problem)
    events: list[ProgressEvent] = []
    best, _ = solve_optimal(problem, greedy, time_limit=4.0, seed=0, workers=2, progress=events.append,
                            clock=WorkClock())
    searching = [e for e in events if e.phase is Phase.search and e.detail]
    assert searching, "no progress event while searching"
    last = searching[-1]
    assert last.cost == pytest.approx(best.cost) and last.bound is not None and last.gap is not None
    assert "neighbourhoods improved" in last.detail
    assert events[-1].phase is Phase.done and events[-1].cost == pytest.approx(best.cost)
    assert best.cost < greedy.cost


SPLIT_CATALOG = """
apiVersion: karpplan.io/v1alpha1
kind: InstanceCatalog
metadata: {name: split}
zones: [zone-a]
instanceTypes:
  - {name: s, arch: amd64, os: linux, capacity: {cpu: "1", memory: 4Gi, pods: "20"},
     allocatable: {cpu: 950m, memory: 3Gi, pods: "20"}, offerings: [{zone: zone-a, capacityType: on-demand, price: 0.1}]}
  - {name: m, arch: amd64, os: linux, capacity: {cpu: "4", memory: 16Gi, pods: "20"},
     allocatable: {cpu: 3900m, memory: 14Gi, pods: "20"}, offerings: [{zone: zone-a, capacityType: on-demand, price: 0.4}]}
  - {name: xl, arch: amd64, os: linux, capacity: {cpu: "8", memory: 32Gi, pods: "20"},
     allocatable: {cpu: 7900m, memory: 30Gi, pods: "20"}, offerings: [{zone: zone-a, capacityType: on-demand, price: 0.79}]}
"""


WEB_FIVE = """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 900m, memory: 512Mi}}}]
"""


def _problem(tmp_path: Path, catalog: str, manifests: str) -> Problem:
    """The problem of these manifests against this catalog (both YAML text)."""
    from karpplan.catalog import load_catalog
    from karpplan.model.build import load_inventory
    from karpplan.planner import prepare

    (tmp_path / "catalog.yaml").write_text(catalog)
    (tmp_path / "apps.yaml").write_text(manifests)
    return prepare(load_inventory([str(tmp_path / "apps.yaml")]), load_catalog(None, str(tmp_path / "catalog.yaml"))).problem


def _one_xl_node(tmp_path: Path, pool: str) -> tuple[Problem, Solution]:
    """Five 900m pods all on one xl node (4.5 of its 7.9 CPUs): the bulk packing's choice, the most
    cost-efficient size, alone in its bucket (one zone)."""
    problem = _problem(tmp_path, SPLIT_CATALOG, pool + WEB_FIVE)
    group = problem.groups[0]
    xl = next(o for o in problem.options if o.instance_type.name == "xl")
    return problem, Solution("optimal", [SolvedNode("n", None, xl, [(group, p) for p in group.group.pods])], [],
                             "feasible")


def test_a_node_alone_in_its_bucket_just_past_a_smaller_size_is_split(tmp_path: Path) -> None:
    problem, alone = _one_xl_node(tmp_path, POOL)
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(alone, WorkClock(), 1.0)
    # Four pods fit an m (3.6 of 3.9 CPUs), the fifth an s: 0.5 $/h instead of 0.79.
    assert sorted(n.option.instance_type.name for n in better.nodes if n.option is not None) == ["m", "s"]
    assert better.cost == pytest.approx(0.5)
    assert pods_of(better) == pods_of(alone) and resource_violations(better) == []


def test_a_split_keeps_the_pools_node_limit(tmp_path: Path) -> None:
    limited = POOL.replace("spec:\n  template:", "spec:\n  limits: {nodes: 1}\n  template:")
    assert "nodes: 1" in limited
    problem, alone = _one_xl_node(tmp_path, limited)
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(alone, WorkClock(), 1.0)
    # One node at most: the xl stays (no single smaller type holds 4.5 CPUs).
    assert [n.option.instance_type.name for n in better.nodes if n.option is not None] == ["xl"]


TWO_ZONES = SPLIT_CATALOG.replace("zones: [zone-a]", "zones: [zone-a, zone-b]").replace(
    "offerings: [{zone: zone-a, capacityType: on-demand, price: 0.1}]",
    "offerings: [{zone: zone-a, capacityType: on-demand, price: 0.1}, {zone: zone-b, capacityType: on-demand, price: 0.1}]")

# Two 400m web pods and four 900m batch pods.
TWO_SMALL = WEB_FIVE.replace("replicas: 5", "replicas: 2").replace("cpu: 900m", "cpu: 400m") + WEB_FIVE.replace(
    "web", "batch").replace("replicas: 5", "replicas: 4").replace("image: nginx", "image: busybox")

ZONE_SPREAD = """      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: web}}}
"""


def _one_web_pod_per_zone(tmp_path: Path, apps: str) -> tuple[Problem, Solution]:
    """In each of two zones, a 400m web pod alone on an s node (0.95 CPU) and two 900m batch pods on
    an s node each: one s could hold both web pods, 0.1 $/h less."""
    problem = _problem(tmp_path, TWO_ZONES, POOL + apps)
    web, batch = sorted(problem.groups, key=lambda g: g.template.labels["app"] != "web")
    small = {o.zone: o for o in problem.options if o.instance_type.name == "s"}
    batch_pods = list(batch.group.pods)
    nodes = []
    for i, (zone, pod) in enumerate(zip(("zone-a", "zone-b"), web.group.pods, strict=True)):
        nodes.append(SolvedNode(f"web{i}", None, small[zone], [(web, pod)]))
        nodes += [SolvedNode(f"batch{i}{j}", None, small[zone], [(batch, batch_pods.pop())]) for j in range(2)]
    return problem, Solution("optimal", nodes, [], "feasible")


def test_pods_in_two_zones_share_a_node_when_no_zone_rule_keeps_them_apart(tmp_path: Path) -> None:
    problem, apart = _one_web_pod_per_zone(tmp_path, TWO_SMALL)
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(apart, WorkClock(), 1.0)
    # The two web pods share a node: five s, or (the pool re-solved whole, `whole_pools.py`) an m holding three
    # batch pods and both web pods beside an s, as cheap with fewer nodes.
    assert any(sum(g.template.labels["app"] == "web" for g, _ in n.pods) == 2 for n in better.nodes)
    assert len(better.new_nodes) <= 5
    assert better.cost == pytest.approx(0.5) and pods_of(better) == pods_of(apart)


def test_a_zone_spread_keeps_pods_in_two_zones_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from karpplan.engines.zone_moves import ZoneLedger
    from karpplan.verify import verify

    # The model's zone rows keep the rule: the check after each move (`commit`) never has to refuse one.
    verdicts: list[bool] = []
    commit = ZoneLedger.commit
    monkeypatch.setattr(ZoneLedger, "commit", lambda self, before, after: verdicts.append(
        commit(self, before, after)) or verdicts[-1])

    problem, apart = _one_web_pod_per_zone(tmp_path, TWO_SMALL.replace(
        "    metadata: {labels: {app: web}}\n    spec:\n",
        "    metadata: {labels: {app: web}}\n    spec:\n" + ZONE_SPREAD, 1))
    assert problem.topology.spread and verify(problem, apart) == []
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(apart, WorkClock(), 1.0)
    # Both web pods on one node would put 2 in one zone and 0 in the other, past maxSkew 1.
    assert better.cost == pytest.approx(0.6) and verify(problem, better) == []
    web_zones = sorted(n.option.zone for n in better.nodes if n.option is not None
                       for g, _ in n.pods if g.template.labels["app"] == "web")
    assert web_zones == ["zone-a", "zone-b"]
    assert False not in verdicts


PREFERS_BATCH_ZONE = """      affinity:
        podAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 50
              podAffinityTerm: {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: batch}}}
"""


def test_a_met_zone_preference_stays_met_when_another_zone_is_cheaper(tmp_path: Path) -> None:
    # web prefers the zone of batch, which is in zone-a. An s node costs 0.1 in zone-a and 0.09 in zone-b:
    # the cheapest plan puts both web pods on one s in zone-b, which would break web-0's preference.
    catalog = TWO_ZONES.replace("{zone: zone-b, capacityType: on-demand, price: 0.1}",
                                "{zone: zone-b, capacityType: on-demand, price: 0.09}")
    apps = TWO_SMALL.replace("    metadata: {labels: {app: web}}\n    spec:\n",
                             "    metadata: {labels: {app: web}}\n    spec:\n" + PREFERS_BATCH_ZONE, 1)
    problem = _problem(tmp_path, catalog, POOL + apps)
    web, batch = sorted(problem.groups, key=lambda g: g.template.labels["app"] != "web")
    small = {o.zone: o for o in problem.options if o.instance_type.name == "s"}
    web_pods, batch_pods = list(web.group.pods), list(batch.group.pods)
    nodes = [SolvedNode("web-a", None, small["zone-a"], [(web, web_pods[0])]),
             SolvedNode("web-b", None, small["zone-b"], [(web, web_pods[1])])]
    nodes += [SolvedNode(f"batch{i}", None, small["zone-a"], [(batch, pod)]) for i, pod in enumerate(batch_pods)]
    start = Solution("optimal", nodes, [], "feasible")
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(start, WorkClock(), 1.0)
    zone_of = {pod.key: n.option.zone for n in better.nodes if n.option is not None for _, pod in n.pods}
    assert zone_of[web_pods[0].key] == "zone-a"
    assert {zone_of[p.key] for p in batch_pods} == {"zone-a"}
    assert pods_of(better) == pods_of(start)


TWO_POOLS = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: big}
spec:
  weight: 50
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m]}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: small}
spec:
  weight: 10
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [s]}]
"""


@pytest.mark.parametrize("limit", [None, "cpu: \"4\""])
def test_a_pod_moves_to_another_pools_node_in_its_zone_when_that_is_cheaper(tmp_path: Path, limit: str | None) -> None:
    from karpplan.verify import verify

    pools = TWO_POOLS if limit is None else TWO_POOLS.replace("  weight: 50\n", f"  weight: 50\n  limits: {{{limit}}}\n")
    # Four 900m batch pods: three on an m of pool `big` (2.7 of 3.9 CPUs), one alone on an s of pool `small`.
    problem = _problem(tmp_path, SPLIT_CATALOG, pools + WEB_FIVE.replace("replicas: 5", "replicas: 4"))
    group = problem.groups[0]
    pods = list(group.group.pods)
    m = next(o for o in problem.options if o.pool.name == "big")
    s = next(o for o in problem.options if o.pool.name == "small")
    apart = Solution("optimal", [SolvedNode("m", None, m, [(group, p) for p in pods[:3]]),
                                 SolvedNode("s", None, s, [(group, pods[3])])], [], "feasible")
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(apart, WorkClock(), 1.0)
    # No neighbourhood of one bucket, nor of one pool over two zones, could empty the s: all four fit the m
    # (3.6 of 3.9 CPUs, inside the pool's limit of 4 CPUs), 0.4 $/h instead of 0.5.
    assert [(n.option.pool.name, len(n.pods)) for n in better.nodes if n.option is not None] == [("big", 4)]
    assert better.cost == pytest.approx(0.4)
    assert pods_of(better) == pods_of(apart) and verify(problem, better) == []


def test_pods_moved_to_another_zone_may_need_a_node_more_there(tmp_path: Path) -> None:
    from karpplan.verify import verify

    # Nine 900m pods: three on an m in zone-a (room for one more), six on an xl in zone-b (5.4 of 7.9 CPUs).
    catalog = SPLIT_CATALOG.replace("zones: [zone-a]", "zones: [zone-a, zone-b]").replace(
        "offerings: [{zone: zone-a, capacityType: on-demand, price: 0.1}]",
        "offerings: [{zone: zone-b, capacityType: on-demand, price: 0.1}]")
    catalog = catalog.replace("offerings: [{zone: zone-a, capacityType: on-demand, price: 0.4}]",
                              "offerings: [{zone: zone-a, capacityType: on-demand, price: 0.4}, "
                              "{zone: zone-b, capacityType: on-demand, price: 0.4}]").replace(
        "offerings: [{zone: zone-a, capacityType: on-demand, price: 0.79}]",
        "offerings: [{zone: zone-b, capacityType: on-demand, price: 0.79}]")
    problem = _problem(tmp_path, catalog, POOL + WEB_FIVE.replace("replicas: 5", "replicas: 9"))
    group = problem.groups[0]
    pods = list(group.group.pods)
    m = next(o for o in problem.options if o.instance_type.name == "m" and o.zone == "zone-a")
    xl = next(o for o in problem.options if o.instance_type.name == "xl" and o.zone == "zone-b")
    start = Solution("optimal", [SolvedNode("a", None, m, [(group, p) for p in pods[:3]]),
                                 SolvedNode("b", None, xl, [(group, p) for p in pods[3:]])], [], "feasible")
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(start, WorkClock(), 1.0)
    # Neither node alone gets cheaper (six pods on two m cost 0.8 > 0.79), nor does any trade between the
    # zones with a node a side (zone-a holds 1 to 4 pods on an m, zone-b the other 5 to 8 on the xl; the xl is
    # offered in zone-b only, the s too). With a node more in zone-b: eight pods on the xl and one on an s,
    # 0.89 instead of 1.19.
    assert better.cost == pytest.approx(0.89)
    assert sorted((n.option.zone, n.option.instance_type.name, len(n.pods)) for n in better.nodes
                  if n.option is not None) == [("zone-b", "s", 1), ("zone-b", "xl", 8)]
    assert pods_of(better) == pods_of(start) and verify(problem, better) == []


THREE_ZONES_M = """
apiVersion: karpplan.io/v1alpha1
kind: InstanceCatalog
metadata: {name: three-zones}
zones: [zone-a, zone-b, zone-c]
instanceTypes:
  - {name: m, arch: amd64, os: linux, capacity: {cpu: "4", memory: 16Gi, pods: "20"},
     allocatable: {cpu: 3900m, memory: 14Gi, pods: "20"},
     offerings: [{zone: zone-a, capacityType: on-demand, price: 0.4}, {zone: zone-b, capacityType: on-demand, price: 0.4},
                 {zone: zone-c, capacityType: on-demand, price: 0.4}]}
"""


@pytest.mark.parametrize("max_skew", [None, 1])
def test_a_pool_of_a_few_nodes_over_three_zones_moves_pods_round_them_in_one_step(
        tmp_path: Path, max_skew: int | None) -> None:
    from karpplan.verify import verify

    apps = WEB_FIVE.replace("replicas: 5", "replicas: 8")
    if max_skew is not None:
        apps = apps.replace("    metadata: {labels: {app: web}}\n    spec:\n",
                            "    metadata: {labels: {app: web}}\n    spec:\n" + ZONE_SPREAD, 1)
    problem = _problem(tmp_path, THREE_ZONES_M, POOL + apps)
    group = problem.groups[0]
    pods = list(group.group.pods)
    m = {o.zone: o for o in problem.options}
    # Eight 900m pods on an m in each zone, 3 + 3 + 2: an m holds four, so zone-a and zone-b have room for one
    # more each. No trade between two zones empties a node; zone-c's two pods going one to each does.
    start = Solution("optimal", [SolvedNode("a", None, m["zone-a"], [(group, p) for p in pods[:3]]),
                                 SolvedNode("b", None, m["zone-b"], [(group, p) for p in pods[3:6]]),
                                 SolvedNode("c", None, m["zone-c"], [(group, p) for p in pods[6:]])], [], "feasible")
    assert verify(problem, start) == []
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(start, WorkClock(), 1.0)
    assert pods_of(better) == pods_of(start) and verify(problem, better) == []
    if max_skew is None:
        assert better.cost == pytest.approx(0.8)
        assert [len(n.pods) for n in better.nodes] == [4, 4]
    else:
        # A zone spread of maxSkew 1 forbids 4 + 4 + 0: the plan stays as it is.
        assert better.cost == pytest.approx(1.2)
