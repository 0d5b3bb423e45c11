"""The Karpenter simulation's shortcuts agree with the plain rules they stand for (no timing here).

The engine filters launch options with `OptionTable` masks, caches facts per node, screens claims
before evaluating them and shares counters between equal rules. These tests replay simulations and
check, at every placement, that each shortcut gives what the straightforward rule gives.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import workloads as w  # noqa: E402
from karpplan.catalog import load_catalog  # noqa: E402
from karpplan.constraints.pool_headroom import capacity_fits as fits_limits  # noqa: E402
from karpplan.engines.karpenter_claims import ClaimOrder  # noqa: E402
from karpplan.engines.karpenter_simulation import KarpenterSimulation, solve_karpenter  # noqa: E402
from karpplan.model.build import load_inventory  # noqa: E402
from karpplan.model.pods import Pod  # noqa: E402
from karpplan.model.resources import LimitVector, Resources  # noqa: E402
from karpplan.planner import make_problem  # noqa: E402
from karpplan.scheduling.candidates import LaunchOption, check_pool, option_table  # noqa: E402
from karpplan.scheduling.nodeclaim import PlannedNode  # noqa: E402
from karpplan.scheduling.preferences import Attempt  # noqa: E402
from karpplan.scheduling.problem import PREFER_NO_SCHEDULE_TIER, GroupInfo, Problem  # noqa: E402
from karpplan.scheduling.state import PlacementState  # noqa: E402

from planner_helpers import FAKE_CATALOG  # noqa: E402

MIXED = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  weight: 10
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: spare}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [small]}]
      taints: [{key: spare, effect: PreferNoSchedule}]
  limits: {cpu: "12"}
---
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {kubernetes.io/hostname: node-1, topology.kubernetes.io/zone: zone-a}
status:
  allocatable: {cpu: "3", memory: 6Gi, pods: "20"}
---
apiVersion: v1
kind: Pod
metadata: {name: bound-web, namespace: default, labels: {app: web}}
spec:
  nodeName: node-1
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 256Mi}}}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: solo}}}
"""


def _deployment(name: str, replicas: int, cpu: str, labels: str, extra: str = "") -> str:
    return f"""
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: default}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {labels}}}
  template:
    metadata: {{labels: {labels}}}
    spec:
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: {cpu}, memory: 512Mi}}}}}}]
{textwrap.indent(textwrap.dedent(extra), "      ")}"""


MIXED += _deployment("web", 7, "700m", "{app: web}", """
topologySpreadConstraints:
- {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
   labelSelector: {matchLabels: {app: web}}}
- {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
   labelSelector: {matchLabels: {app: web}}}
""")
MIXED += _deployment("solo", 5, "300m", "{app: solo}", """
affinity:
  podAntiAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: solo}}}
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 5
      preference: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-c]}]}
""")
MIXED += _deployment("cache", 6, "400m", "{app: cache}", """
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: cache}}}
""")
MIXED += _deployment("batch", 9, "1", "{app: batch}", """
tolerations: [{key: spare, operator: Exists}]
""")


def _problem_from(tmp_path: Path, manifests: str, catalog: str | None) -> Problem:
    path = tmp_path / "manifests.yaml"
    path.write_text(manifests)
    catalog_file = None
    if catalog is not None:
        catalog_file = tmp_path / "catalog.yaml"
        catalog_file.write_text(textwrap.dedent(catalog))
    inventory = load_inventory([str(path)])
    loaded = load_catalog("us-east-1", str(catalog_file) if catalog_file else None)
    return make_problem(inventory, loaded, list(inventory.pending))


def _bench_problem(tmp_path: Path, catalog: str, pods: int, generic: bool = False) -> Problem:
    inputs = w.make_inputs(catalog, pods, 42, generic_only=generic)
    manifests, catalog_file = w.write_inputs(inputs, tmp_path)
    inventory = load_inventory([str(manifests)])
    loaded = load_catalog(None, str(catalog_file) if catalog_file else None)
    return make_problem(inventory, loaded, list(inventory.pending))


@pytest.fixture(params=["mixed", "bench-synthetic", "bench-aws"])
def problem(request: pytest.FixtureRequest, tmp_path: Path) -> Problem:
    if request.param == "mixed":
        return _problem_from(tmp_path, MIXED, FAKE_CATALOG)
    return _bench_problem(tmp_path, request.param.removeprefix("bench-"), 120)


# ------------------------------------------------------------------------------------------ options
def _reference_evaluate(state: PlacementState, group_info: GroupInfo, slot: PlannedNode,
                        attempt: Attempt) -> list[LaunchOption] | None:
    """The resource part of `evaluate` as plain per-option rules."""
    pod_template = group_info.template
    total = slot.requests + pod_template.requests
    options = [o for o in slot.options if o.index in group_info.option_ids and total.fits_in(o.free)]
    if not attempt.tolerate_prefer_no_schedule:
        options = [o for o in options if group_info.tier.get(o.index, 0) < PREFER_NO_SCHEDULE_TIER]
    if attempt.node_preference is not None:
        term = attempt.node_preference.term
        options = [o for o in options if term.matches(o.labels, "")]
    return options or None


class CheckedSimulation(KarpenterSimulation):
    """A simulation that, before every placement, checks the engine's shortcuts on every open claim."""

    checked = 0

    def place(self, group_info: GroupInfo, pod: Pod) -> bool:
        state = self.state
        # The claims tried: in Karpenter's order (fewest pods first, then creation), screened.
        candidates = self._order.candidates(group_info)
        assert candidates == [s for s in sorted(self.claims, key=lambda s: len(s.members)) if s in candidates]
        for attempt in self._attempts_for(group_info):
            blocked = set().union(*state.name_blocks(group_info.template, attempt))
            screen = state.affinity_screen(group_info.template) + state.spread_screen(group_info.template, attempt)
            for slot in self.claims:
                options, _ = state.evaluate(group_info, slot, attempt)
                rows = state.feasible(group_info, slot, attempt)
                assert (options is None) == (rows is None)
                if options is not None and rows is not None:
                    assert [o.index for o in options] == [state.table.options[r].index for r in rows.tolist()]
                    assert group_info.index not in slot.full_for and slot.name not in blocked
                    assert slot in candidates  # the screens skip only claims the pod fails on
                    assert all(not state.domain_values(slot, k).isdisjoint(a) for k, a in screen)
                if _reference_evaluate(state, group_info, slot, attempt) is None:
                    assert options is None
                assert [o.index for o in slot.options] == sorted(o.index for o in slot.options)
                self.checked += 1
        return super().place(group_info, pod)


@pytest.mark.parametrize("exact", [False, True])
def test_shortcuts_agree_with_the_rules(problem: Problem, exact: bool) -> None:
    sim = CheckedSimulation(problem, exact_limits=exact)
    unplaced = sim.run()
    assert sim.checked > 0
    placed = sum(len(s.members) for s in sim.state.slots)
    assert placed + len(unplaced) == problem.pending_count


# ------------------------------------------------------------------------------------------ table
def test_option_table_matches_the_per_option_rules(tmp_path: Path) -> None:
    problem = _bench_problem(tmp_path, "aws", 60)
    options = problem.options
    table = option_table(options)
    assert option_table(list(options)) is table  # the same option objects share one table
    rows = table.all
    for requests in (Resources({"cpu": 1500, "memory": 4 * 2**30, "pods": 1}), Resources({"cpu": 64000}),
                     Resources({"nvidia.com/gpu": 1}), Resources({"cpu": 2**70})):
        assert table.fits(requests, rows).tolist() == [requests.fits_in(o.free) for o in options]
    for remaining in (LimitVector({"cpu": 8000, "memory": 2**36}), LimitVector({"cpu": 0})):
        assert table.within_limits(remaining).tolist() == [fits_limits(o.capacity, remaining) for o in options]
    cheapest = min(options, key=lambda o: (o.price, o.instance_type.name, o.zone, o.capacity_type))
    assert table.options[int(rows[table.rank("cheapest")[rows].argmin()])] is cheapest
    smallest = min(options, key=lambda o: (o.capacity.get("cpu"), o.capacity.get("memory"), o.price))
    assert table.options[int(rows[table.rank("smallest")[rows].argmin()])] is smallest


def test_check_pool_matches_the_per_option_rules(problem: Problem) -> None:
    for group_info in problem.groups:
        pod_template = group_info.template
        for pool in problem.pools:
            remaining, nodes_left = problem.headroom[pool.name]
            verdict = check_pool(pod_template, pool, problem.options, remaining, nodes_left)
            if not verdict.ok:
                continue
            expected = [o for o in problem.options if o.pool is pool and pod_template.affinity.matches(o.labels)
                        and pod_template.requests.fits_in(o.free)
                        and (remaining is None or fits_limits(o.capacity, remaining))]
            assert [o.index for o in verdict.options] == [o.index for o in expected]


def _plan_of(problem: Problem) -> list[tuple[str, str, list[str]]]:
    solution, _ = solve_karpenter(problem)
    return [(n.name, f"{n.option.instance_type.name} {n.option.zone}" if n.option else "", [p.key for _, p in n.pods])
            for n in solution.nodes]


def test_screening_claims_changes_no_placement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Realistic Deployments (zone and hostname spreads, several pools): the plan with the claim screens
    (resources, pool, zonal spread) is the plan of trying every open claim in Karpenter's order."""
    inputs = w.realistic_inputs(600)
    manifests, _ = w.write_inputs(inputs, tmp_path)
    inventory = load_inventory([str(manifests)])
    problem = make_problem(inventory, load_catalog(inputs.region, None), list(inventory.pending))
    screened = _plan_of(problem)
    calls = {"skipped": 0}

    def every_claim(order: ClaimOrder, group_info: GroupInfo) -> list[PlannedNode]:
        claims = sorted(order.claims, key=lambda s: len(s.members))
        calls["skipped"] += len(claims) - len(screened_candidates(order, group_info))
        return claims

    screened_candidates = ClaimOrder.candidates
    monkeypatch.setattr(ClaimOrder, "candidates", every_claim)
    monkeypatch.setattr(PlacementState, "spread_screen", lambda self, template, attempt: [])
    problem = make_problem(inventory, load_catalog(inputs.region, None), list(inventory.pending))
    assert _plan_of(problem) == screened
    assert calls["skipped"] > 0  # the screens did skip claims
