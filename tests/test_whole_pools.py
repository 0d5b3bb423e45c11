"""A small pool re-solved whole with spare slots: two large nodes become four smaller ones when they are cheaper,
never past the pool's node limit, and the same seed gives the same plan."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from karpplan.engines import whole_pools
from karpplan.engines.effort import WorkClock
from karpplan.engines.neighbourhood import NeighbourhoodSearch
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution, SolvedNode
from karpplan.scheduling.problem import Problem

from planner_helpers import POOL


def _type(name: str, cpu: int, price: float) -> str:
    return (f"  - {{name: {name}, arch: amd64, os: linux, capacity: {{cpu: \"{cpu}\", memory: {4 * cpu}Gi, pods: \"50\"}},\n"
            f"     allocatable: {{cpu: {cpu * 1000 - 50 * cpu}m, memory: {3 * cpu}Gi, pods: \"50\"}},\n"
            f"     offerings: [{{zone: zone-a, capacityType: on-demand, price: {price}}}]}}\n")


# One zone, four sizes at one price per vCPU: 950m of each vCPU free for pods.
ONE_ZONE = ("apiVersion: karpplan.io/v1alpha1\nkind: InstanceCatalog\nmetadata: {name: one-zone}\nzones: [zone-a]\n"
            "instanceTypes:\n" + _type("s", 1, 0.1) + _type("m", 2, 0.2) + _type("l", 4, 0.4) + _type("xl", 8, 0.8))

WORKER = """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker}
spec:
  replicas: 26
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      containers: [{name: app, image: busybox, resources: {requests: {cpu: 500m, memory: 256Mi}}}]
"""


def _problem(tmp_path: Path, pool: str = POOL) -> Problem:
    from karpplan.catalog import load_catalog
    from karpplan.model.build import load_inventory
    from karpplan.planner import prepare

    (tmp_path / "catalog.yaml").write_text(ONE_ZONE)
    (tmp_path / "apps.yaml").write_text(pool + WORKER)
    return prepare(load_inventory([str(tmp_path / "apps.yaml")]), load_catalog(None, str(tmp_path / "catalog.yaml"))).problem


def _two_xl(problem: Problem) -> Solution:
    """The 26 pods on two xl (15 fit on each): 1.6 $/h."""
    xl = next(o for o in problem.options if o.instance_type.name == "xl")
    pods = [(g, p) for g in problem.groups for p in g.group.pods]
    return Solution("optimal", [SolvedNode("a", None, xl, pods[:13]), SolvedNode("b", None, xl, pods[13:])], [],
                    "feasible")


def _shape(solution: Solution) -> list[str]:
    return sorted(n.option.instance_type.name for n in solution.nodes if n.option is not None)


def test_two_large_nodes_become_four_smaller_ones(tmp_path: Path) -> None:
    from karpplan.verify import verify

    problem = _problem(tmp_path)
    start = _two_xl(problem)
    assert verify(problem, start) == [] and start.cost == pytest.approx(1.6)
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(start, WorkClock(), 5.0)
    # 26 pods of 500m: an xl holds 15, an l 7, an m 3, an s 1; no two nodes hold them for less than two xl, and no
    # neighbourhood of the two nodes may add one. Re-solved whole with spare slots: xl + l + m + s, 1.5 $/h.
    assert better.cost == pytest.approx(1.5)
    assert _shape(better) == ["l", "m", "s", "xl"]
    assert verify(problem, better) == []
    assert sorted(p.key for n in better.nodes for _, p in n.pods) == sorted(p.key for n in start.nodes for _, p in n.pods)


def test_without_the_whole_pool_pass_the_two_nodes_stay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the pass is for: the rest of the search keeps the two xl."""
    monkeypatch.setattr(whole_pools, "WHOLE_POOL_NODES", 0)
    problem = _problem(tmp_path)
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(_two_xl(problem), WorkClock(), 5.0)
    assert better.cost == pytest.approx(1.6)


def test_a_pool_limited_to_two_nodes_keeps_two(tmp_path: Path) -> None:
    from karpplan.verify import verify

    problem = _problem(tmp_path, POOL + "  limits: {nodes: '2'}\n")
    better = NeighbourhoodSearch(Repacker(problem), seed=0, parallel=1).improve(_two_xl(problem), WorkClock(), 5.0)
    assert len(better.nodes) == 2 and better.cost == pytest.approx(1.6)
    assert verify(problem, better) == []


def test_the_same_seed_gives_the_same_plan(tmp_path: Path) -> None:
    problem = _problem(tmp_path)
    plans = [NeighbourhoodSearch(Repacker(problem), seed=3, parallel=2).improve(_two_xl(problem), WorkClock(), 5.0)
             for _ in range(2)]
    assert [(n.option.instance_type.name, Counter(g.index for g, _ in n.pods)) for n in plans[0].nodes
            if n.option is not None] == [(n.option.instance_type.name, Counter(g.index for g, _ in n.pods))
                                         for n in plans[1].nodes if n.option is not None]
