"""The exact slot model (engines/cpsat/exact.py): small problems proven optimal, every plan valid."""

from __future__ import annotations

import sys
from pathlib import Path

from karpplan.catalog import load_catalog
from karpplan.engines.background_bound import PROVEN_TOLERANCE
from karpplan.engines.effort import WorkClock
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.engines.optimiser import solve_optimal
from karpplan.model.build import load_inventory
from karpplan.planner import prepare
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

HOST_SPREAD = """\
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
spec:
  requirements:
  - key: karpenter.k8s.aws/instance-category
    operator: In
    values: [t, m, c]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: host-spread
spec:
  replicas: 20
  selector:
    matchLabels:
      app: host-spread
  template:
    metadata:
      labels:
        app: host-spread
    spec:
      containers:
      - image: pause
        name: host-spread
        resources:
          requests:
            cpu: '1'
            memory: 256M
      topologySpreadConstraints:
      - labelSelector:
          matchLabels:
            app: host-spread
        maxSkew: 5
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
      - labelSelector:
          matchLabels:
            app: host-spread
        maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
"""


def _problem(path: Path) -> Problem:
    return prepare(load_inventory([str(path)]), load_catalog(None, None)).problem


def _solve(problem: Problem) -> tuple[float, float | None, str, int, int]:
    greedy, _ = solve_karpenter(problem)
    # A work clock without a wall guard: the same plan on every run, however loaded the machine.
    best, _ = solve_optimal(problem, greedy, time_limit=10.0, seed=0, workers=2, clock=WorkClock())
    return best.cost, best.lower_bound, best.status, len(best.unplaced), len(verify(problem, best))


def test_host_spread_seed_is_proven_optimal(tmp_path: Path) -> None:
    path = tmp_path / "host-spread.yaml"
    path.write_text(HOST_SPREAD)
    cost, bound, status, unplaced, violations = _solve(_problem(path))
    assert (status, unplaced, violations) == ("optimal", 0, 0)
    assert bound is not None and 0 <= cost - bound <= PROVEN_TOLERANCE  # the LPs may prove it before the slot model


def test_small_diverse_aws_workload_is_proven_optimal(tmp_path: Path) -> None:
    from bench.workloads import make_inputs, write_inputs

    manifests, _ = write_inputs(make_inputs("aws", 10), tmp_path)
    cost, bound, status, unplaced, violations = _solve(_problem(manifests))
    assert (status, unplaced, violations) == ("optimal", 0, 0)
    assert bound is not None and 0 <= cost - bound <= PROVEN_TOLERANCE  # the LPs may prove it before the slot model
    greedy_cost = solve_karpenter(_problem(manifests))[0].cost
    assert cost <= greedy_cost + 1e-9


def test_broken_warm_start_is_repaired_in_the_slot_model(tmp_path: Path) -> None:
    """20 diverse pods: Karpenter's plan breaks zone spread (generic pods count for the spread selectors);
    the slot model around it places every pod under every rule (the optimiser used to leave 2 out)."""
    from bench.workloads import make_inputs, write_inputs

    manifests, _ = write_inputs(make_inputs("aws", 20), tmp_path)
    problem = _problem(manifests)
    greedy, _ = solve_karpenter(problem)
    assert verify(problem, greedy)
    cost, bound, _, unplaced, violations = _solve(problem)
    assert (unplaced, violations) == (0, 0)
    assert bound is not None and bound <= cost


def test_exact_plan_is_deterministic(tmp_path: Path) -> None:
    from bench.workloads import make_inputs, write_inputs

    manifests, _ = write_inputs(make_inputs("aws", 10), tmp_path)
    problem = _problem(manifests)
    greedy, _ = solve_karpenter(problem)
    plans = [solve_optimal(problem, greedy, time_limit=10.0, seed=3, workers=2, clock=WorkClock())[0]
             for _ in range(2)]
    assert [sorted((n.name, sorted(p.key for _, p in n.pods)) for n in plan.nodes) for plan in plans][0] == \
        [sorted((n.name, sorted(p.key for _, p in n.pods)) for n in plan.nodes) for plan in plans][1]
