"""The zone-count repair (engines/zone_repair.py): pods moved between zones until every hard zone spread
holds once every matching pod is counted, as the verifier (and the scenario checker) count them."""

from __future__ import annotations

import sys
import tempfile
import textwrap
from collections import Counter
from pathlib import Path

from karpplan.catalog import load_catalog
from karpplan.engines.effort import WorkClock
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.optimiser import solve_optimal
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution
from karpplan.engines.zone_repair import ZoneRepair, zonal_violations
from karpplan.model.build import load_inventory
from karpplan.planner import prepare
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

from planner_helpers import FAKE_CATALOG, POOL, deployment

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

_SPREAD = ("      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
           "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {tier: web}}}]")
_PREFER_A = ("      affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, preference: "
             "{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]}}]}}")
_IN_A = "      nodeSelector: {topology.kubernetes.io/zone: zone-a}"
# Three spread pods go one per zone; four pods without the rule but with its label then follow their
# preference into zone-a, which ends 5 against 1 (Karpenter checks the spread only when placing its owners).
PILED = POOL + deployment("web", 3, "1500m", _SPREAD, labels=", tier: web") + \
    deployment("side", 4, "100m", _PREFER_A, labels=", tier: web")


def _problem(tmp_path: Path, text: str) -> Problem:
    (tmp_path / "manifests.yaml").write_text(text)
    (tmp_path / "catalog.yaml").write_text(textwrap.dedent(FAKE_CATALOG))
    return prepare(load_inventory([str(tmp_path / "manifests.yaml")]),
                   load_catalog(None, str(tmp_path / "catalog.yaml"))).problem


def _warm(problem: Problem) -> tuple[Solution, Repacker]:
    greedy, _ = solve_karpenter(problem)
    repacker = Repacker(problem)
    return repacker.repack(greedy), repacker


def _zones(plan: Solution, app: str) -> Counter[str]:
    return Counter(n.option.zone for n in plan.nodes if n.option is not None for _, p in n.pods
                   if p.labels.get("app") == app)


def _same_pods(a: Solution, b: Solution) -> bool:
    return sorted(a.placement()) == sorted(b.placement()) and len(a.unplaced) == len(b.unplaced)


def test_pods_without_the_rule_move_out_of_the_full_zone(tmp_path: Path) -> None:
    problem = _problem(tmp_path, PILED)
    warm, repacker = _warm(problem)
    assert zonal_violations(verify(problem, warm)), "the warm start should break the zone spread"
    repaired, moved = ZoneRepair(problem, repacker, WorkClock()).repair(warm)
    assert verify(problem, repaired) == []
    assert moved == 2 and _same_pods(warm, repaired)
    assert _zones(repaired, "web") == _zones(warm, "web")  # the pods carrying no zone rule moved
    assert repaired.cost <= warm.cost + 1e-9
    assert repaired.notes == []


def test_a_rule_owner_moves_when_the_others_cannot(tmp_path: Path) -> None:
    """The pods piling into zone-a must run there: the spread's own pod leaves zone-a instead (the verifier
    judges the domains holding the rule's own pods)."""
    problem = _problem(tmp_path, PILED.replace(_PREFER_A, _IN_A))
    warm, repacker = _warm(problem)
    assert zonal_violations(verify(problem, warm))
    repaired, moved = ZoneRepair(problem, repacker, WorkClock()).repair(warm)
    assert verify(problem, repaired) == [] and moved == 1
    assert _zones(repaired, "web")["zone-a"] == 0 and _zones(repaired, "side") == Counter({"zone-a": 4})


def test_no_move_helps_the_plan_says_so(tmp_path: Path) -> None:
    """No node may be added (limits.nodes 3) and no node has room for another 1.5-vCPU pod: the plan is
    kept as it was, with a note."""
    text = PILED.replace(_PREFER_A, _IN_A).replace("      requirements: []",
                                                   "      requirements: []\n  limits: {nodes: \"3\"}")
    problem = _problem(tmp_path, text)
    warm, repacker = _warm(problem)
    assert zonal_violations(verify(problem, warm))
    repaired, moved = ZoneRepair(problem, repacker, WorkClock()).repair(warm)
    assert moved == 0 and repaired.placement() == warm.placement()
    assert len(repaired.notes) == 1 and repaired.notes[0].startswith("zone repair: 1 domain(s) remain past")


def test_a_valid_plan_is_returned_as_it_is(tmp_path: Path) -> None:
    problem = _problem(tmp_path, POOL + deployment("web", 3, "1500m", _SPREAD, labels=", tier: web"))
    warm, repacker = _warm(problem)
    repaired, moved = ZoneRepair(problem, repacker, WorkClock()).repair(warm)
    assert repaired is warm and moved == 0


def test_the_optimal_engine_plans_the_benchmarks_diverse_pods_within_every_zone_spread() -> None:
    """bench diverse, 100 pods on the embedded catalog: the re-packed Karpenter plan breaks zone spread (the
    generic and hostname-spread pods share the zone-spread pods' label); the optimal engine's plan keeps
    every rule."""
    from bench import workloads as w

    inputs = w.make_family_inputs("diverse", "aws", 100, 42)
    with tempfile.TemporaryDirectory() as tmp:
        manifests, _ = w.write_inputs(inputs, Path(tmp))
        problem = prepare(load_inventory([str(manifests)]), load_catalog(inputs.region, None)).problem
    greedy, _ = solve_karpenter(problem)
    assert zonal_violations(verify(problem, greedy))
    best, _ = solve_optimal(problem, greedy, time_limit=3.0, seed=0, workers=1, clock=WorkClock())
    assert verify(problem, best) == [] and not best.unplaced
