"""A plan the time limit cut says so per pod: the pods the Karpenter simulation never reached are listed as
not simulated, never as unschedulable with a reason nobody checked, and the plan exits as a cut plan (3).

Issue 29: at 50,000 pods the default limit cut the simulation after 16,167 pods and the other 33,833 were
reported unschedulable, "a node could be launched for this pod alone, but not together with the plan's
other pods", which was false. A limit of 0 leaves the simulation a millisecond (`planner.solve`), in which it
cannot place 1,500 pods on any machine, so the cut is certain.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from karpplan.catalog import load_catalog
from karpplan.cli.main import app
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, make_plan, prepare

from planner_helpers import FAKE_CATALOG, POOL, deployment

MANY = 1_500
# Many pods any node takes, and two that no NodePool can take (a label no pool sets): those two are
# unschedulable however long the simulation runs.
MANIFESTS = POOL + deployment("web", MANY, cpu="250m") + deployment(
    "pinned", 2, extra="      nodeSelector: {team: nobody}")
FALSE_REASON = "a node could be launched for this pod alone"


def _files(tmp_path: Path) -> tuple[str, str]:
    manifests = tmp_path / "manifests.yaml"
    manifests.write_text(textwrap.dedent(MANIFESTS))
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(textwrap.dedent(FAKE_CATALOG))
    return str(manifests), str(catalog)


def _plan(tmp_path: Path, *args: str) -> tuple[int, dict[str, object], str]:
    manifests, catalog = _files(tmp_path)
    result = CliRunner().invoke(app, ["--color", "never", "plan", manifests, "--catalog", catalog, *args])
    return result.exit_code, json.loads(result.stdout) if "json" in args else {}, result.stdout


def test_cut_karpenter_plan_lists_pods_as_not_simulated(tmp_path: Path) -> None:
    code, document, _ = _plan(tmp_path, "--engine", "karpenter", "--time-limit", "1e-9", "-o", "json")
    assert code == 3  # a cut plan, not "pods unschedulable"
    summary = document["summary"]
    assert isinstance(summary, dict)
    assert summary["notSimulated"] == MANY and summary["unschedulable"] == 2
    assert summary["karpenter"]["notSimulated"] == MANY
    not_simulated = document["notSimulated"]
    assert isinstance(not_simulated, list) and len(not_simulated) == MANY
    assert {item["workload"] for item in not_simulated} == {"Deployment/web"}
    assert all(item["reason"].startswith("not simulated: the time limit ran out") for item in not_simulated)
    # The pods no pool can take keep their true reason; nothing carries the false one.
    unschedulable = document["unschedulable"]
    assert isinstance(unschedulable, list)
    assert {u["workload"] for u in unschedulable} == {"Deployment/pinned"}
    assert any('label "team"' in r for u in unschedulable for r in u["reasons"])
    assert not any(FALSE_REASON in r for u in unschedulable for r in u["reasons"])
    warnings = document["warnings"]
    assert isinstance(warnings, list)
    assert any(w.startswith("not simulated: the time limit ran out") and f"{MANY:,} pod(s)" in w for w in warnings)
    assert not any("reported unschedulable" in w for w in warnings)


def test_cut_plan_table_says_not_simulated(tmp_path: Path) -> None:
    code, _, out = _plan(tmp_path, "--engine", "karpenter", "--time-limit", "1e-9")
    assert code == 3
    assert f"{MANY} not simulated (the time limit ran out)" in " ".join(out.replace("│", " ").split())


def test_cut_optimal_plan_carries_the_cut(tmp_path: Path) -> None:
    """The optimal engine starts from the cut simulation: the pods it did not place either are not simulated."""
    manifests, catalog = _files(tmp_path)
    inventory = load_inventory([manifests])
    plan = make_plan(inventory, load_catalog(None, catalog), PlanOptions(engine="optimal", time_limit=0.0))
    assert plan.exit_code == 3
    assert plan.summary.not_simulated == len(plan.not_simulated) > 0
    assert plan.summary.scheduled + plan.summary.unschedulable + plan.summary.not_simulated == MANY + 2
    assert all("not simulated: the time limit ran out" in p.reason and "optimiser" in p.reason
               for p in plan.not_simulated)
    assert {u.workload for u in plan.unschedulable} == {"Deployment/pinned"}


def test_finished_plan_has_nothing_not_simulated(tmp_path: Path) -> None:
    code, document, _ = _plan(tmp_path, "--engine", "karpenter", "--time-limit", "60", "-o", "json")
    assert code == 1  # the two pinned pods, which no pool can take
    summary = document["summary"]
    assert isinstance(summary, dict)
    assert summary["notSimulated"] == 0 and summary["scheduled"] == MANY and summary["unschedulable"] == 2
    assert document["notSimulated"] == []


def test_simulation_left_undecided_only_what_some_node_could_take(tmp_path: Path) -> None:
    manifests, catalog = _files(tmp_path)
    inventory = load_inventory([manifests])
    problem = prepare(inventory, load_catalog(None, catalog)).problem
    solution, _ = solve_karpenter(problem, time_limit=1e-9)
    assert len(solution.unplaced) == MANY + 2
    assert len(solution.not_simulated) == MANY
    assert not any(key.split("/")[1].startswith("pinned") for key in solution.not_simulated)


def test_a_cut_plan_under_pool_limits_is_not_simulated_again_past_the_limit(tmp_path: Path) -> None:
    """A NodePool with limits made the optimal engine simulate a cut launch again, exactly and without a time
    limit (`within_limits`): a 5,000-pod plan given 2 s took 22 s, and its cut went unsaid. The pods the clock
    left are not simulated again: the plan stays cut."""
    manifests, catalog = _files(tmp_path)
    limited = Path(manifests).read_text().replace("requirements: []", "requirements: []\n  limits: {cpu: '100000'}")
    Path(manifests).write_text(limited)
    inventory = load_inventory([manifests])
    assert any(pool.limits for pool in inventory.nodepools)
    plan = make_plan(inventory, load_catalog(None, catalog), PlanOptions(engine="optimal", time_limit=0.0))
    assert plan.exit_code == 3 and plan.summary.not_simulated > 0
    assert plan.summary.karpenter_not_simulated == plan.summary.not_simulated


def test_cut_plan_honouring_preferences_simulates_once_and_keeps_the_cut(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `--preferences honour` the cut simulation's plan is carried over: no second simulation (it would
    have less time still), and the pods it never reached stay not simulated."""
    import karpplan.engines.karpenter_simulation as simulation

    runs: list[int] = []
    real = simulation.solve_karpenter

    def cut_after_ha(*args: Any, **kwargs: Any) -> Any:
        # The clock cut the simulation once the `ha` replicas (the largest pods, placed first) were placed.
        runs.append(1)
        whole, state = real(*args, **{**kwargs, "time_limit": 60.0})
        nodes = [replace(n, pods=[(g, p) for g, p in n.pods if p.workload == "Deployment/ha"]) for n in whole.nodes]
        left = [(g, p) for n in whole.nodes for g, p in n.pods if p.workload != "Deployment/ha"]
        return replace(whole, nodes=[n for n in nodes if n.pods], unplaced=[*whole.unplaced, *left],
                       not_simulated=frozenset(p.key for _, p in left)), state

    monkeypatch.setattr(simulation, "solve_karpenter", cut_after_ha)
    spread = ("      topologySpreadConstraints:\n      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
              "whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: ha}}}\n")
    _, catalog = _files(tmp_path)
    manifests = tmp_path / "manifests.yaml"
    manifests.write_text(textwrap.dedent(MANIFESTS + deployment("ha", 3, cpu="2", extra=spread)))
    plan = make_plan(load_inventory([str(manifests)]), load_catalog(None, catalog),
                     PlanOptions(engine="optimal", time_limit=0.0))
    assert len(runs) == 1
    assert plan.exit_code == 3 and plan.summary.not_simulated > 0
    assert plan.summary.scheduled == 3 and plan.summary.not_simulated == MANY
    assert {u.workload for u in plan.unschedulable} == {"Deployment/pinned"}
    assert plan.summary.preferences is not None and plan.summary.preferences.kept == 1
