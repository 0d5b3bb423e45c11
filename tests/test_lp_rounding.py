"""The configuration LP's optimum rounded into a plan (`engines/lp_rounding.py`): the plan places the pods the
plan it replaces places, keeps every rule the verifier checks, costs close to the LP, and is only tried where
the LP leaves out nothing the rounding can put back."""

from __future__ import annotations

import copy
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from plan_checks import bench_problem

from bench.workloads import make_inputs, nodepool_manifests, to_yaml
from karpplan.catalog import load_catalog
from karpplan.engines import optimiser
from karpplan.engines.effort import TimeBudget, WorkClock
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.lp_rounding import LpRounding, rounding_applies
from karpplan.engines.optimiser import solve_optimal
from karpplan.engines.patterns import pattern_lower_bound
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution
from karpplan.model.build import load_inventory
from karpplan.planner import make_problem
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

from planner_helpers import FAKE_CATALOG, POOL, bound_pod, deployment, existing_node


def test_the_rounded_lp_places_the_same_pods_keeps_every_rule_and_costs_close_to_the_lp(tmp_path: Path) -> None:
    problem = bench_problem(tmp_path, "synthetic", 600)
    greedy, _ = solve_karpenter(problem)
    repacker = Repacker(problem, WorkClock())
    start = repacker.repack(greedy)
    assert rounding_applies(problem, repacker)
    bound = pattern_lower_bound(problem, None, time_limit=5.0, clock=WorkClock(), want_mix=True)
    assert bound is not None and bound.mix is not None
    rounded = LpRounding(problem, repacker, bound.mix, WorkClock()).round(start)
    assert rounded is not None
    # Zone spreads (maxSkew 1 over three zones), zone affinity, hostname spread and anti-affinity all hold.
    assert verify(problem, rounded) == []
    assert sorted(rounded.placement()) == sorted(start.placement())
    assert all(node.new for node in rounded.nodes)
    assert bound.cost - 1e-6 <= rounded.cost <= 1.05 * bound.lp_value


ZONE_SPREAD = """
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}"""


def test_a_rounded_plan_keeps_the_existing_nodes_and_counts_their_pods_in_the_zone_spreads(tmp_path: Path) -> None:
    # A full node in zone-a already runs a `web` pod: the 30 new ones must leave zone-a one short.
    manifests = POOL + existing_node("full", "zone-a") + bound_pod("web-old", "web", "full") + \
        deployment("web", 30, cpu="300m", memory="256Mi", extra=ZONE_SPREAD)
    path = tmp_path / "manifests.yaml"
    path.write_text(textwrap.dedent(manifests))
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(textwrap.dedent(FAKE_CATALOG))
    inventory = load_inventory([str(path)])
    problem = make_problem(inventory, load_catalog(None, str(catalog)), list(inventory.pending))
    repacker = Repacker(problem, WorkClock())
    start = repacker.repack(solve_karpenter(problem)[0])
    assert rounding_applies(problem, repacker) and problem.existing
    bound = pattern_lower_bound(problem, None, time_limit=5.0, clock=WorkClock(), want_mix=True)
    assert bound is not None and bound.mix is not None
    rounded = LpRounding(problem, repacker, bound.mix, WorkClock()).round(start)
    assert rounded is not None
    assert [n.name for n in rounded.nodes if not n.new] == ["full"]
    assert verify(problem, rounded) == []
    web = Counter(n.option.zone for n in rounded.new_nodes for _ in n.pods if n.option is not None)
    web["zone-a"] += 1  # the bound pod
    assert sum(web.values()) == 31 and max(web.values()) - min(web.values()) <= 1


def _problem(tmp_path: Path, edit: Any = None, pools: list[dict[str, Any]] | None = None) -> Problem:
    """A small aws diverse workload, its Deployments changed by `edit` (and its NodePools by `pools`)."""
    inputs = make_inputs("aws", 60, 42)
    documents = [copy.deepcopy(d) for d in inputs.manifests]
    if edit is not None:
        for d in documents:
            if d.get("kind") == "Deployment":
                edit(d["spec"]["template"]["spec"])
    if pools is not None:
        documents = [d for d in documents if d.get("kind") != "NodePool"] + pools
    path = tmp_path / "manifests.yaml"
    path.write_text(to_yaml(documents))
    inventory = load_inventory([str(path)])
    return make_problem(inventory, load_catalog(None, None), list(inventory.pending))


def _zonal_anti_affinity(spec: dict[str, Any]) -> None:
    spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": "nginx"}}}]}}


def _hostname_affinity(spec: dict[str, Any]) -> None:
    spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "nginx"}}}]}}


def _weighted_pools() -> list[dict[str, Any]]:
    heavy, _ = nodepool_manifests("aws")  # (the EC2NodeClass stays where it is)
    light = copy.deepcopy(heavy)
    heavy["metadata"]["name"], heavy["spec"]["weight"] = "heavy", 50
    light["metadata"]["name"] = "light"
    return [heavy, light]


@pytest.mark.parametrize(("edit", "pools", "applies"), [
    (None, None, True),
    (_zonal_anti_affinity, None, False),  # the LP relaxes it and the rounding does not deal zones by it
    (_hostname_affinity, None, False),  # pods that must share a node: the patterns cannot say which
    (None, _weighted_pools(), False),  # a lighter pool only when no heavier one can take the pod
], ids=["diverse", "zonal-anti-affinity", "hostname-affinity", "weighted-pools"])
def test_the_rounding_is_tried_only_where_the_lp_leaves_out_nothing_it_can_put_back(
        tmp_path: Path, edit: Any, pools: list[dict[str, Any]] | None, applies: bool) -> None:
    problem = _problem(tmp_path, edit, pools)
    assert rounding_applies(problem, Repacker(problem)) is applies


def test_a_large_plan_starts_from_the_rounded_lp_and_is_the_same_on_every_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problem = bench_problem(tmp_path, "synthetic", 600)
    monkeypatch.setattr(optimiser, "ROUNDING_MIN_PODS", 500)  # the bench's 5,000 pods take a minute
    rounded: list[Solution | None] = []
    original = LpRounding.round

    def heard(self: LpRounding, plan: Solution) -> Solution | None:
        rounded.append(original(self, plan))
        return rounded[-1]

    monkeypatch.setattr(LpRounding, "round", heard)
    plans = []
    for _ in range(2):
        greedy, _ = solve_karpenter(problem)
        budget = TimeBudget.of(6.0, WorkClock())
        plan, _ = solve_optimal(problem, greedy, budget=budget, seed=3, workers=2)
        plans.append(plan)
        assert "round" in dict(budget.phases())
        assert verify(problem, plan) == []
    assert plans[0].cost == plans[1].cost and plans[0].placement() == plans[1].placement()
    # The rounded plan is cheaper than the re-packed Karpenter plan, so the search started from it.
    start = Repacker(problem, WorkClock()).repack(solve_karpenter(problem)[0])
    assert len(rounded) == 2 and rounded[0] is not None and plans[0].cost <= rounded[0].cost < start.cost
