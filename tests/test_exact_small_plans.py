"""Small plans proven exactly (engines/cpsat/exact.py, engines/dominance.py, engines/small_plans.py).

On tiny random problems (those of `test_bound_is_valid.py`: two to four pods, hostname and zone rules, NodePool
limits, three instance types in two zones, here with spot offerings beside on-demand ones) the exact slot model's
proven plan costs what an exhaustive search over every partition of the pods into nodes and every launch option
finds, and the verifier accepts it; dropping the buckets another bucket dominates never raises that optimum; the
array Pareto front keeps exactly the options a pairwise comparison keeps; and a plan whose bound already meets its
cost stops at once, proven.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from test_bound_is_valid import CATALOG, exhaustive_optimum, tiny_problems

from karpplan.catalog import load_catalog
from karpplan.engines.cpsat import exact
from karpplan.engines.cpsat.exact import SlotModel
from karpplan.engines.dominance import pareto_front
from karpplan.engines.effort import WorkClock
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.optimiser import solve_optimal
from karpplan.engines.repack import Repacker
from karpplan.model.build import load_inventory
from karpplan.model.resources import Resources
from karpplan.planner import make_problem
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

EXAMPLES = 12

# The same types, each zone's on-demand offering with a spot offering beside it (cheaper, or the same price).
SPOT_CATALOG = re.sub(
    r"( +)- \{zone: zone-a, capacityType: on-demand, price: ([0-9.]+)\}",
    lambda m: f"{m[0]}\n{m[1]}- {{zone: zone-a, capacityType: spot, price: {round(float(m[2]) * 0.8, 4)}}}", CATALOG)


def _problem(tmp_path: Path, text: str, catalog: str) -> Problem:
    (tmp_path / "m.yaml").write_text(text)
    (tmp_path / "c.yaml").write_text(catalog)
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    return make_problem(inventory, load_catalog(None, str(tmp_path / "c.yaml")), inventory.pending)


def _exact(problem: Problem) -> tuple[str, Any, float]:
    model = SlotModel(problem, None, Repacker(problem), -1.0)
    model.plan_slots()
    model.build()
    return model.solve_exact(20.0, 0, 1, WorkClock())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=tiny_problems())
def test_the_exact_model_finds_the_exhaustive_optimum_and_a_valid_plan(tmp_path: Path, text: str) -> None:
    problem = _problem(tmp_path, text, CATALOG)
    optimum = exhaustive_optimum(problem)
    status, plan, bound = _exact(problem)
    assert status == "optimal", text
    assert plan is not None
    if optimum is None:
        assert plan.unplaced, f"the exact model placed every pod where no valid plan does:\n{text}"
        return
    assert not plan.unplaced, f"the exact model left out a pod of a problem with a valid plan:\n{text}"
    assert verify(problem, plan) == [], text
    assert abs(plan.cost - optimum) < 1e-6, f"exact {plan.cost}, exhaustive {optimum}:\n{text}"
    assert bound <= optimum + 1e-6


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=tiny_problems())
def test_dropping_dominated_buckets_never_raises_the_optimum(tmp_path: Path, text: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    problem = _problem(tmp_path, text, SPOT_CATALOG)
    _, pruned, _ = _exact(problem)
    with monkeypatch.context() as patch:
        patch.setattr(exact, "drop_dominated_buckets", lambda fronts, dominates: {})
        _, whole, _ = _exact(problem)
    assert pruned is not None and whole is not None
    assert len(pruned.unplaced) == len(whole.unplaced), text
    assert pruned.cost <= whole.cost + 1e-6, f"pruned {pruned.cost}, unpruned {whole.cost}:\n{text}"
    if not pruned.unplaced:
        assert verify(problem, pruned) == [], text


def test_spot_buckets_replace_dearer_on_demand_ones(tmp_path: Path) -> None:
    """Nothing reads the capacity type: zone-a's on-demand bucket (dearer than its spot twin) gets no slots."""
    text = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: c, image: x, resources: {requests: {cpu: 250m, memory: 256Mi}}}
"""
    problem = _problem(tmp_path, text, SPOT_CATALOG)
    model = SlotModel(problem, None, Repacker(problem), -1.0)
    model.plan_slots()
    kept = {(o.zone, o.capacity_type) for options in model.bucket_options for o in options}
    assert ("zone-a", "spot") in kept and ("zone-a", "on-demand") not in kept
    assert model.replaced, "the dropped options stand in for by a kept one"


def _option(index: int, price: float, free: dict[str, int], capacity: dict[str, int]) -> Any:
    return SimpleNamespace(index=index, price=price, free=Resources(free), capacity=Resources(capacity),
                           instance_type=SimpleNamespace(name=f"t{index}"))


def test_the_array_pareto_front_is_the_pairwise_one() -> None:
    rng = random.Random(7)
    for _ in range(60):
        options = [_option(i, rng.choice([0.1, 0.2, 0.3]), {"cpu": rng.choice([1, 2, 4]), "memory": rng.choice([1, 2, 4]),
                                                           "pods": rng.choice([3, 5])},
                           {"cpu": rng.choice([1, 2, 4])}) for i in range(rng.randint(1, 12))]
        dims, limited = ["cpu", "memory", "pods"], ["cpu"]
        expected: list[Any] = []
        for o in sorted(options, key=lambda o: (o.price, o.instance_type.name)):
            if not any(all(f.free.get(d) >= o.free.get(d) for d in dims)
                       and all(f.capacity.get(k) <= o.capacity.get(k) for k in limited) for f in expected):
                expected.append(o)
        assert [o.index for o in pareto_front(options, dims, limited)] == [o.index for o in expected]


def test_the_pareto_front_of_a_catalog_sized_class_is_the_pairwise_one() -> None:
    """Hundreds of options (one NodePool's class on the aws catalog has 835), many of one size and price: past a
    chunk of the array comparison, and equal rows (the first kept) spread over it."""
    rng = random.Random(11)
    for n in (257, 600):
        options = [_option(i, rng.choice([0.1, 0.2, 0.3, 0.4]), {"cpu": rng.choice([1, 2, 4, 8]),
                                                                "memory": rng.choice([1, 2, 4, 8]), "pods": 5},
                           {"cpu": rng.choice([1, 2])}) for i in range(n)]
        dims, limited = ["cpu", "memory", "pods"], ["cpu"]
        expected: list[Any] = []
        for o in sorted(options, key=lambda o: (o.price, o.instance_type.name)):
            if not any(all(f.free.get(d) >= o.free.get(d) for d in dims)
                       and all(f.capacity.get(k) <= o.capacity.get(k) for k in limited) for f in expected):
                expected.append(o)
        assert [o.index for o in pareto_front(options, dims, limited)] == [o.index for o in expected]


def test_a_plan_its_bound_already_proves_stops_at_once(tmp_path: Path) -> None:
    """20 pods, zone maxSkew 5 and hostname maxSkew 1: the configuration LP meets the re-packed Karpenter plan,
    so the plan is proven optimal without the slot model's search (it used to run the whole limit)."""
    from test_exact import HOST_SPREAD

    (tmp_path / "m.yaml").write_text(HOST_SPREAD)
    inventory = load_inventory([str(tmp_path / "m.yaml")])
    problem = make_problem(inventory, load_catalog(None, None), inventory.pending)
    greedy, _ = solve_karpenter(problem)
    clock = WorkClock()
    best, _ = solve_optimal(problem, greedy, time_limit=10.0, seed=0, workers=2, clock=clock)
    assert best.status == "optimal" and not best.unplaced and verify(problem, best) == []
    assert best.lower_bound is not None and best.cost - best.lower_bound <= 1e-6
    assert clock.now() < 2.0, f"{clock.now():.2f} modelled seconds for a plan proven by its bounds"

