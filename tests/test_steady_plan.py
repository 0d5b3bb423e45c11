"""The optimal plan is never dearer than Karpenter's steady state (issue 29).

A new user on a loaded machine saw "optimal $1.6548/h costs $0.0821/h (5.2%) more than Karpenter's steady
state": the optimiser had no time for a plan of its own, and showed Karpenter's launch re-packed, while
karpplan held a cheaper valid plan, the launch consolidated (`consolidate/steady_plan.py`). Here the machine is
so loaded that the optimiser's wall guard has passed when it starts (`WorkClock(wall_deadline=now)`), while
the plan's limit leaves the steady state its time: the consolidated cluster is shown, and the plan says why.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from types import ModuleType

import pytest
from test_render_plan import table_text
from test_steady_state import UNDER_USED_NODE, manifests

from karpplan.consolidate.from_plan import steady_state_of
from karpplan.engines.effort import TimeBudget, WorkClock
from karpplan.plan import Plan, SteadyState
from karpplan.planner import Engine, PlanOptions, make_plan, read_catalog, read_inventory
from karpplan.render.documents import plan_document

ZONES = ("us-east-1a", "us-east-1b")
SHOWN = "Karpenter's consolidated plan (its launch after consolidation, its steady state) is cheaper at $0.1700/h"
CHECKER = Path(__file__).resolve().parent.parent.parent / "shared" / "cases" / "check.py"

# The database alone, a bare Pod nothing recreates: consolidating its node evicts it for good.
BARE_DB = """
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default, labels: {app: db}}
spec:
  containers: [{name: db, image: postgres, resources: {requests: {cpu: 1500m, memory: 2Gi}}}]
"""


def _plan(path: Path, *, loaded: bool, engine: Engine = "optimal") -> Plan:
    """`plan` of the manifests at `path` with a 20 s limit; `loaded`: the optimiser's wall guard has passed
    when it starts (a machine far slower than karpplan's timings assume), else the work clock alone."""
    options = PlanOptions(paths=(str(path),), zones=ZONES, engine=engine, time_limit=20.0,
                          steady_state=steady_state_of)
    inventory = read_inventory(options)
    clock = WorkClock(wall_deadline=time.monotonic()) if loaded else WorkClock()
    return make_plan(inventory, read_catalog(options, inventory), options, TimeBudget.of(20.0, clock))


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("karpplan_case_checker", CHECKER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _all_manifests(path: Path) -> Path:
    joined = path / "all.yaml.txt"  # one file for the scenario checker, which the plan never reads
    joined.write_text("\n---\n".join(p.read_text() for p in sorted(path.glob("*.yaml"))))
    return joined


def test_a_starved_optimiser_shows_karpenters_cheaper_consolidated_plan(tmp_path: Path) -> None:
    path = manifests(tmp_path)
    plan = _plan(path, loaded=True)
    summary, steady = plan.summary, plan.summary.karpenter_steady
    assert summary.karpenter_cost == pytest.approx(0.255) and steady.hourly_cost == pytest.approx(0.17)
    assert steady.hourly_cost is not None and summary.hourly_cost <= steady.hourly_cost + 1e-9
    assert summary.scheduled == 4 and summary.new_nodes == 1 and summary.engine == "optimal"
    assert summary.lower_bound is None or summary.lower_bound <= summary.hourly_cost + 1e-9
    note = next(w for w in plan.warnings if w.startswith("the optimiser's own plan cost $0.2550/h"))
    assert SHOWN in note and "is shown" in note
    assert not any("the plan shown is Karpenter's, with its pods packed tighter" in w for w in plan.warnings)
    assert type(steady) is SteadyState  # the summary quotes the figures, as before
    document = plan_document(plan)
    assert document["summary"]["hourlyCost"] <= document["summary"]["karpenter"]["steadyStateHourlyCost"]
    if CHECKER.exists():
        checker = _checker()
        assert checker.verify_plan(document, checker.Manifests(_all_manifests(path))) == []
    text = " ".join(table_text(plan, width=200).split())
    assert "optimal $0.1700/h: same cost as Karpenter's steady state" in text
    assert "more than Karpenter's steady state" not in text


def test_an_optimiser_with_its_time_finds_the_plan_itself_and_nothing_is_said(tmp_path: Path) -> None:
    plan = _plan(manifests(tmp_path), loaded=False)
    assert plan.summary.hourly_cost == pytest.approx(0.17) and plan.summary.status == "optimal"
    assert not any("Karpenter's consolidated plan" in w or "the optimiser's own plan" in w for w in plan.warnings)


def test_the_karpenter_engine_still_shows_the_launch(tmp_path: Path) -> None:
    plan = _plan(manifests(tmp_path), loaded=True, engine="karpenter")
    assert plan.summary.hourly_cost == pytest.approx(0.255) and plan.summary.new_nodes == 2
    assert plan.summary.karpenter_steady.hourly_cost == pytest.approx(0.17)
    assert not any("consolidated plan" in w or "the optimiser's own plan" in w for w in plan.warnings)


def test_a_steady_state_that_evicts_a_bare_pod_is_not_shown_and_the_plan_says_why(tmp_path: Path) -> None:
    path = manifests(tmp_path)
    (path / "apps.yaml").write_text((path / "apps.yaml").read_text().split("---")[1] + "---" + BARE_DB)
    plan = _plan(path, loaded=True)
    assert plan.summary.hourly_cost == pytest.approx(0.255) and plan.summary.scheduled == 4
    note = next(w for w in plan.warnings if w.startswith("the optimiser's own plan costs $0.2550/h"))
    assert "more than Karpenter's steady state ($0.1700/h), which is not shown as the plan" in note
    assert "consolidation evicts 1 bare pod(s) for good" in note


def test_a_steady_state_that_removes_an_existing_node_is_not_shown(tmp_path: Path) -> None:
    """Consolidation takes the cache pod off the node running today: the plans keep that node, so the costs
    compare different clusters (the summary says so) and the optimiser's plan stays."""
    path = manifests(tmp_path)
    (path / "node.yaml").write_text(UNDER_USED_NODE)
    plan = _plan(path, loaded=True)
    steady = plan.summary.karpenter_steady
    assert steady.existing_removed > 0 and steady.hourly_cost is not None
    assert plan.summary.hourly_cost == pytest.approx(0.255)
    assert not any("the optimiser's own plan" in w for w in plan.warnings)
    text = " ".join(table_text(plan, width=200).split())
    assert "its steady state also removes" in text and "running nodes this plan keeps" in text and "$-" not in text


# Two replicas kept one per node (hostname spread, maxSkew 1): Karpenter launches a node for each.
HOSTNAME_SPREAD = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: web}}}
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 700m, memory: 1Gi}}}]
"""


def test_a_cheaper_steady_state_that_breaks_a_rule_is_never_shown_and_the_plan_says_which(tmp_path: Path) -> None:
    """A steady state below the optimiser's proven plan can only break a rule every plan keeps (here
    consolidation stacks both replicas on one node): the proven plan stays, with the rule named, and no
    advice to raise the time limit."""
    path = manifests(tmp_path)
    (path / "apps.yaml").write_text(HOSTNAME_SPREAD)
    plan = _plan(path, loaded=False)
    steady = plan.summary.karpenter_steady.hourly_cost
    assert plan.summary.status == "optimal" and plan.summary.new_nodes == 2
    assert steady is not None
    notes = [w for w in plan.warnings if "the optimiser's own plan" in w]
    if steady < plan.summary.hourly_cost - 1e-6:
        [note] = notes
        assert "which is not shown as the plan: it breaks 1 scheduling rule(s) every plan keeps" in note
        assert "kubernetes.io/hostname maxSkew 1" in note
        assert note.endswith("the optimiser's plan is proven the cheapest") and "--time-limit" not in note
    else:  # consolidation keeps one replica per node, as Karpenter's own scheduler would
        assert notes == []
