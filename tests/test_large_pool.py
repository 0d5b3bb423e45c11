"""Pools too large for the packing's CP-SAT model are re-solved whole too: split over their zones by CP-SAT, each
zone packed by the re-packer (`engines/large_pool.py`), first in the search (`pool_resolve.large_pool_share`).

The plan a user gets must stay valid (every rule, every limit) and never dearer than the plan the search started
from; on a chart repository's shape (many small Deployments spread over three zones in one NodePool) the pass
makes it cheaper."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from test_bound_is_valid import _problem, exhaustive_optimum, tiny_problems

from karpplan.catalog import load_catalog
from karpplan.engines import pool_resolve
from karpplan.engines.effort import WorkClock
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.neighbourhood import NeighbourhoodSearch
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution
from karpplan.model.build import load_inventory
from karpplan.planner import make_problem
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

from planner_helpers import deployment

SPREAD = """\
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: %s}}}"""
POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: team}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
"""


def _searched(problem: Problem, tries: int | None = None) -> tuple[Solution, Solution]:
    """(The re-packed Karpenter plan, the neighbourhood search's plan from it.)"""
    karpenter, _ = solve_karpenter(problem)
    repacker = Repacker(problem)
    start = repacker.repack(karpenter)
    return start, NeighbourhoodSearch(repacker, seed=1, parallel=1).improve(start, WorkClock(), 5.0, max_tries=tries)


@pytest.fixture
def every_pool_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pool past the CP-SAT packing's size: the large path re-solves them all."""
    monkeypatch.setattr(pool_resolve, "POOL_NODES", 0)
    monkeypatch.setattr(pool_resolve, "POOL_KINDS", 0)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=tiny_problems())
def test_a_pool_packed_by_zone_keeps_every_rule_and_is_never_below_the_optimum(
        tmp_path: Path, every_pool_large: None, text: str) -> None:
    problem = _problem(tmp_path, text)
    start, plan = _searched(problem, tries=8)
    if plan.unplaced or plan.exceeds_node_limits:
        return
    assert verify(problem, plan) == [], f"the plan breaks a rule:\n{text}"
    assert plan.cost <= start.cost + 1e-9
    optimum = exhaustive_optimum(problem)
    if optimum is not None:
        assert plan.cost >= optimum - 1e-6


def test_many_small_deployments_spread_over_zones_get_cheaper(tmp_path: Path, every_pool_large: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # Thirty Deployments of one to three replicas, each spread over the three zones by maxSkew 1.
    text = POOL + "".join(deployment(f"app-{i}", 1 + i % 3, cpu=f"{250 + 50 * (i % 5)}m",
                                     memory=f"{256 + 128 * (i % 4)}Mi", extra=SPREAD % f"app-{i}") for i in range(30))
    (tmp_path / "m.yaml").write_text(text)
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    problem = make_problem(inventory, load_catalog("us-east-1", None), inventory.pending)
    calls: list[int] = []
    inner = pool_resolve.pack_zones
    monkeypatch.setattr(pool_resolve, "pack_zones", lambda *a, **k: calls.append(1) or inner(*a, **k))
    start, plan = _searched(problem, tries=1)  # one sub-solve: the pool re-solved whole, nothing else
    assert calls, "the pool was not packed zone by zone"
    assert not plan.unplaced and verify(problem, plan) == []
    assert plan.cost < start.cost - 1e-9


@pytest.mark.parametrize(("nodes", "kinds"), [(3, 3), (30, 30), (30, 300), (6, 300)])
def test_only_a_pool_of_more_kinds_than_the_cpsat_packing_takes_time_first(nodes: int, kinds: int) -> None:
    class Ledger:
        def family_of(self, key: object) -> list[object]:
            return ["a", "b", "c"]

    class Group:
        def __init__(self, index: int) -> None:
            self.index = index

    class Node:
        def __init__(self, groups: range) -> None:
            self.pods = [(Group(g), None) for g in groups]

    per_node = -(-kinds // nodes)
    nodes_of = [Node(range(i * per_node, min((i + 1) * per_node, kinds))) for i in range(nodes)]
    buckets = {k: nodes_of[i::3] for i, k in enumerate("abc")}
    share = pool_resolve.large_pool_share(Ledger(), buckets, 10.0)  # type: ignore[arg-type]
    assert share == (pool_resolve.LARGE_POOL_SHARE * 10.0 if kinds > pool_resolve.POOL_KINDS else 0.0)
    assert pool_resolve.large_pool_share(None, buckets, 10.0) == 0.0  # type: ignore[arg-type]
