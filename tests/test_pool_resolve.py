"""A pool re-solved whole once the neighbourhood search has nothing left: pods change zone so that one zone's
pods fill a large node and the others' fit small ones, every zone spread kept."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from karpplan.engines.effort import WorkClock
from karpplan.engines.neighbourhood import NeighbourhoodSearch
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution, SolvedNode
from karpplan.scheduling.problem import Problem

from planner_helpers import POOL

THREE_ZONES = """
apiVersion: karpplan.io/v1alpha1
kind: InstanceCatalog
metadata: {name: three-zones}
zones: [zone-a, zone-b, zone-c]
instanceTypes:
  - {name: s, arch: amd64, os: linux, capacity: {cpu: "1", memory: 4Gi, pods: "20"},
     allocatable: {cpu: 950m, memory: 3Gi, pods: "20"},
     offerings: [{zone: zone-a, capacityType: on-demand, price: 0.1}, {zone: zone-b, capacityType: on-demand, price: 0.1},
                 {zone: zone-c, capacityType: on-demand, price: 0.1}]}
  - {name: xl, arch: amd64, os: linux, capacity: {cpu: "8", memory: 32Gi, pods: "20"},
     allocatable: {cpu: 7900m, memory: 30Gi, pods: "20"},
     offerings: [{zone: zone-a, capacityType: on-demand, price: 0.8}, {zone: zone-b, capacityType: on-demand, price: 0.8},
                 {zone: zone-c, capacityType: on-demand, price: 0.8}]}
"""


def deployment(name: str, replicas: int) -> str:
    """A Deployment of 500m pods spread over zones by its own label (maxSkew 1), as a chart renders it."""
    return f"""
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      topologySpreadConstraints:
        - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {{matchLabels: {{app: {name}}}}}}}
      containers: [{{name: app, image: nginx, resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}}}]
"""


def _problem(tmp_path: Path) -> Problem:
    from karpplan.catalog import load_catalog
    from karpplan.model.build import load_inventory
    from karpplan.planner import prepare

    apps = POOL + "".join(deployment(f"tri-{i}", 3) for i in range(5)) + "".join(
        deployment(f"one-{i}", 1) for i in range(9))
    (tmp_path / "catalog.yaml").write_text(THREE_ZONES)
    (tmp_path / "apps.yaml").write_text(apps)
    return prepare(load_inventory([str(tmp_path / "apps.yaml")]), load_catalog(None, str(tmp_path / "catalog.yaml"))).problem


def _even_split(problem: Problem) -> Solution:
    """Eight pods on an xl in each zone: every three-replica Deployment's pod there and three single pods."""
    xl = {o.zone: o for o in problem.options if o.instance_type.name == "xl"}
    zones = sorted(xl)
    members: dict[str, list] = {z: [] for z in zones}
    singles = 0
    for group in sorted(problem.groups, key=lambda g: g.template.labels["app"]):
        for i, pod in enumerate(group.group.pods):
            if group.size == 3:
                members[zones[i]].append((group, pod))
            else:
                members[zones[singles % 3]].append((group, pod))
                singles += 1
    return Solution("optimal", [SolvedNode(z, None, xl[z], members[z]) for z in zones], [], "feasible")


def pods_of(solution: Solution) -> list[str]:
    return sorted(pod.key for n in solution.nodes for _, pod in n.pods)


def test_pods_change_zone_so_that_two_zones_need_only_small_nodes(tmp_path: Path) -> None:
    from karpplan.verify import verify

    problem = _problem(tmp_path)
    start = _even_split(problem)
    assert verify(problem, start) == [] and start.cost == pytest.approx(2.4)
    search = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1)
    better = search.improve(start, WorkClock(), 5.0)
    # Each zone must hold one pod of each three-replica Deployment (five 500m pods: an xl, or five s at 0.5),
    # so with two or three nodes a zone no trade gets below 2.4. Re-solved whole, the nine single pods go to one
    # zone, whose fourteen pods fill its xl, and the other zones hold five pods on five s each: 0.8 + 2 x 0.5.
    assert better.cost == pytest.approx(1.8)
    by_zone = Counter((n.option.zone, n.option.instance_type.name) for n in better.nodes if n.option is not None)
    assert sorted(by_zone.values()) == [1, 5, 5]
    assert pods_of(better) == pods_of(start) and verify(problem, better) == []


def test_the_pool_pass_gives_the_same_plan_for_the_same_seed(tmp_path: Path) -> None:
    problem = _problem(tmp_path)
    plans = [NeighbourhoodSearch(Repacker(problem), seed=4, parallel=2).improve(_even_split(problem), WorkClock(), 5.0)
             for _ in range(2)]
    assert [(n.option.zone, n.option.instance_type.name, sorted(p.key for _, p in n.pods)) for n in plans[0].nodes
            if n.option is not None] == [(n.option.zone, n.option.instance_type.name, sorted(p.key for _, p in n.pods))
                                         for n in plans[1].nodes if n.option is not None]


@pytest.mark.parametrize("refine", [True, False])
def test_a_split_the_one_packing_misses_is_packed_zone_by_zone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                refine: bool) -> None:
    from karpplan.engines import pool_resolve
    from karpplan.engines.cpsat.neighbourhood_model import SubProblem
    from karpplan.verify import verify

    # Every model over more than one zone finds nothing (as when its budget runs out on a larger pool): only the
    # zone-by-zone packing of the split, each zone re-solved alone, can reach the cheaper plan.
    inner = SubProblem.solve
    monkeypatch.setattr(SubProblem, "solve", lambda self, budget, seed: (None, 0.01) if len(self.sides) > 1
                        else inner(self, budget, seed))
    monkeypatch.setattr(pool_resolve, "ZONE_REFINE", refine)
    problem = _problem(tmp_path)
    start = _even_split(problem)
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(start, WorkClock(), 5.0)
    assert verify(problem, better) == [] and pods_of(better) == pods_of(start)
    if refine:
        assert better.cost == pytest.approx(1.8)
    else:
        assert better.cost > 1.8 + 1e-6
