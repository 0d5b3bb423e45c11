"""The optimal engine never answers with a plan dearer than the Karpenter plan it is compared with (issue 29).

A re-packed start that a later step made dearer (found on karpenter-blueprints' od-spot-split, where a
carried-over plan lost its nodes' custom-key domains and the zone repair paid for a spread it had not broken)
loses to Karpenter's own plan when that plan keeps every rule.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import karpplan.engines.optimiser as optimiser
from karpplan.catalog import load_catalog
from karpplan.engines.effort import WorkClock
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.result import Solution, SolvedNode
from karpplan.model.build import load_inventory
from karpplan.planner import prepare
from karpplan.verify import verify

from planner_helpers import FAKE_CATALOG, POOL, deployment


def test_a_dearer_repaired_start_loses_to_karpenters_valid_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "m.yaml").write_text(textwrap.dedent(POOL + deployment("web", 12, cpu="700m")
                                                     + deployment("api", 5, cpu="1500m", memory="3Gi")))
    (tmp_path / "catalog.yaml").write_text(textwrap.dedent(FAKE_CATALOG))
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    problem = prepare(inventory, load_catalog(None, str(tmp_path / "catalog.yaml"))).problem
    greedy, _ = solve_karpenter(problem)
    assert not verify(problem, greedy)
    repair = optimiser._repair_zones

    def dearer(*args: object) -> tuple[Solution, str]:
        best, source = repair(*args)  # type: ignore[arg-type]
        spare = next(n for n in best.nodes if n.option is not None)
        padded = [*best.nodes, SolvedNode("spare-node", None, spare.option, [])]
        return Solution(best.engine, padded, best.unplaced, "feasible", best.lower_bound), f"{source} + zone repair"

    monkeypatch.setattr(optimiser, "_repair_zones", dearer)
    # Nothing after the choice may win the money back: the choice itself must not lose it.
    monkeypatch.setattr(optimiser._OptimiserRun, "round", lambda self: None)
    monkeypatch.setattr(optimiser._OptimiserRun, "search", lambda self: None)
    best, _ = optimiser.solve_optimal(problem, greedy, time_limit=3.0, seed=0, workers=1, clock=WorkClock())
    assert best.cost <= greedy.cost + 1e-9
    assert not verify(problem, best)
