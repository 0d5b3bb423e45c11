"""Planner rules, through the library API, for both engines where Karpenter and the optimiser agree."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from karpplan.catalog import load_catalog
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, make_problem, solve
from karpplan.verify import verify

from planner_helpers import FAKE_CATALOG, POOL, deployment, existing_node, plan_text

BOTH = pytest.mark.parametrize("engine", ["optimal", "karpenter"])
QUICKSTART = Path(__file__).resolve().parent.parent / "fixtures" / "quickstart"


@BOTH
def test_plan_runs_end_to_end(engine: str) -> None:
    """The quickstart planned end to end, and the plan checked by the independent verifier."""
    inventory = load_inventory([str(QUICKSTART)])
    problem = make_problem(inventory, load_catalog(inventory.region, None), list(inventory.pending))
    solution, _, greedy = solve(problem, PlanOptions(engine=engine, time_limit=5.0, seed=1))
    placed = sum(len(n.pods) for n in solution.nodes)
    assert placed + len(solution.unplaced) == problem.pending_count == 13
    assert placed >= sum(len(n.pods) for n in greedy.nodes) >= 12
    assert verify(problem, solution) == []
    assert verify(problem, greedy) == []


@BOTH
def test_cheapest_node_and_honest_summary(tmp_path: Path, engine: str) -> None:
    plan = plan_text(tmp_path, POOL + deployment("web", 3, cpu="1"), engine=engine)
    assert plan.exit_code == 0
    assert plan.summary.scheduled == 3
    new = [n for n in plan.nodes if n.new]
    # Three 1-CPU pods fit one 'large' (3900m, $0.70); three 'small' nodes would cost $1.20.
    assert [n.instance_type for n in new] == ["large"]
    assert plan.summary.hourly_cost == pytest.approx(0.7)
    if engine == "optimal":
        assert plan.summary.lower_bound is not None
        assert plan.summary.lower_bound <= plan.summary.hourly_cost + 1e-9
        assert plan.summary.gap is not None and plan.summary.gap >= 0


def test_optimal_never_costs_more_than_karpenter(tmp_path: Path) -> None:
    manifests = POOL + deployment("a", 4, cpu="1200m") + deployment("b", 3, cpu="700m") + deployment("c", 5, cpu="300m")
    optimal = plan_text(tmp_path, manifests)
    assert optimal.summary.karpenter_cost is not None
    assert optimal.summary.hourly_cost <= optimal.summary.karpenter_cost + 1e-9
    assert optimal.summary.scheduled == 12


@BOTH
def test_untolerated_pool_taint_is_reported_with_the_taint(tmp_path: Path, engine: str) -> None:
    pool = POOL.replace("requirements: []", "requirements: []\n      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]")
    plan = plan_text(tmp_path, pool + deployment("web", 1), engine=engine)
    assert plan.exit_code == 1
    (failure,) = plan.unschedulable
    assert failure.pod == "default/web-0"
    assert any("dedicated=gpu:NoSchedule" in r for r in failure.reasons)
    assert any("manifests.yaml:" in r for r in failure.reasons)


def two_pools(first: str, second: str) -> str:
    return f"""
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: pool-large}}
spec:
  {first}
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [large]}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: pool-small}}
spec:
  {second}
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [small]}}]
"""


@BOTH
def test_heavier_pool_wins_even_when_pricier(tmp_path: Path, engine: str) -> None:
    plan = plan_text(tmp_path, two_pools("weight: 50", "weight: 10") + deployment("web", 2), engine=engine)
    assert {n.node_pool for n in plan.nodes if n.new} == {"pool-large"}


@BOTH
def test_prefer_no_schedule_pool_only_when_nothing_else_fits(tmp_path: Path, engine: str) -> None:
    pools = two_pools("weight: 10", "weight: 10").replace(
        "values: [small]}]", "values: [small]}]\n      taints: [{key: spot-only, effect: PreferNoSchedule}]")
    plan = plan_text(tmp_path, pools + deployment("web", 1), engine=engine)
    assert {n.node_pool for n in plan.nodes if n.new} == {"pool-large"}


def test_node_limit_is_exact(tmp_path: Path) -> None:
    pool = POOL.replace("spec:\n  template:", "spec:\n  limits: {nodes: 1}\n  template:", 1)
    plan = plan_text(tmp_path, pool + deployment("web", 3, cpu="1500m"))
    assert sum(1 for n in plan.nodes if n.new) == 1
    assert plan.summary.unschedulable == 1
    assert all(any("limit" in r for r in u.reasons) for u in plan.unschedulable)


def test_karpenter_engine_reproduces_karpenters_batch_node_limit_overshoot(tmp_path: Path) -> None:
    # Karpenter checks limits.nodes only against nodes that existed before the batch (subtractMax never
    # decrements `nodes`), so one batch can launch past it; the simulation predicts exactly that.
    pool = POOL.replace("spec:\n  template:", "spec:\n  limits: {nodes: 1}\n  template:", 1)
    plan = plan_text(tmp_path, pool + deployment("web", 3, cpu="1500m"), engine="karpenter")
    assert sum(1 for n in plan.nodes if n.new) == 2
    assert plan.summary.unschedulable == 0


@BOTH
def test_hostname_spread_caps_each_new_node_at_max_skew(tmp_path: Path, engine: str) -> None:
    spread = """      topologySpreadConstraints:
      - {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}
"""
    plan = plan_text(tmp_path, POOL + deployment("web", 6, extra=spread), engine=engine)
    assert plan.summary.scheduled == 6
    per_node = Counter(p.node for p in plan.pods if p.node)
    assert max(per_node.values()) <= 2
    assert len(per_node) == 3


@BOTH
def test_zone_spread_balances_across_reachable_zones(tmp_path: Path, engine: str) -> None:
    spread = """      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}
"""
    plan = plan_text(tmp_path, POOL + deployment("web", 7, extra=spread), engine=engine)
    zones = {n.name: n.zone for n in plan.nodes}
    counts = sorted(Counter(zones[p.node] for p in plan.pods if p.node).values())
    assert counts == [2, 2, 3]


@BOTH
def test_hostname_anti_affinity_gives_each_replica_a_node(tmp_path: Path, engine: str) -> None:
    anti = """      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}
"""
    plan = plan_text(tmp_path, POOL + deployment("web", 3, extra=anti), engine=engine)
    assert plan.summary.scheduled == 3
    assert len({p.node for p in plan.pods if p.node}) == 3


@BOTH
def test_daemonset_overhead_is_reserved_on_new_nodes(tmp_path: Path, engine: str) -> None:
    daemon = """
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: a, image: agent, resources: {requests: {cpu: "1"}}}]
"""
    plan = plan_text(tmp_path, POOL + daemon + deployment("web", 1, cpu="1500m"), engine=engine)
    (node,) = [n for n in plan.nodes if n.new]
    # 1.5 CPU + 1 CPU of DaemonSet does not fit 'small' (1900m): the node must be 'large'.
    assert node.instance_type == "large"
    assert node.daemon_requests.get("cpu") == 1000


@BOTH
def test_existing_node_with_room_is_used_first(tmp_path: Path, engine: str) -> None:
    node = existing_node("node-1", "zone-a", cpu="8")
    plan = plan_text(tmp_path, POOL + node + deployment("web", 4, cpu="1"), engine=engine)
    assert plan.summary.new_nodes == 0
    assert plan.summary.hourly_cost == 0
    assert {p.node for p in plan.pods if not p.bound} == {"node-1"}


def test_same_seed_same_plan(tmp_path: Path) -> None:
    manifests = POOL + deployment("a", 9, cpu="700m") + deployment("b", 5, cpu="300m")
    first = plan_text(tmp_path, manifests).to_document()
    second = plan_text(tmp_path, manifests).to_document()
    for doc in (first, second):
        for timing in ("solveSeconds", "phases"):  # wall seconds differ from run to run
            doc["summary"].pop(timing)
    assert first == second


def test_fargate_and_ec2_in_one_plan(tmp_path: Path) -> None:
    cluster = """
---
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: us-east-1}
fargateProfiles:
  - name: fp-study
    selectors: [{namespace: "study-*"}]
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: study-api}
spec:
  containers: [{name: api, image: api, resources: {requests: {cpu: 500m, memory: 500Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: privileged, namespace: study-ops}
spec:
  containers: [{name: p, image: p, securityContext: {privileged: true}}]
"""
    plan = plan_text(tmp_path, POOL + cluster + deployment("web", 2), catalog=FAKE_CATALOG)
    fargate = [n for n in plan.nodes if n.capacity_type == "fargate"]
    assert len(fargate) == 1 and fargate[0].fargate is not None
    assert fargate[0].fargate.capacity_provisioned == "0.5vCPU 1GB"
    assert fargate[0].hourly_price == pytest.approx(0.024685)
    assert any(n.new and n.capacity_type != "fargate" for n in plan.nodes)
    (refused,) = plan.unschedulable
    assert refused.pod == "study-ops/privileged"
    assert any("Privileged" in r for r in refused.reasons)
    assert plan.summary.hourly_cost == pytest.approx(sum(n.hourly_price for n in plan.nodes if n.new))


def test_existing_fargate_nodes_hold_the_spread_minimum_and_the_reason_says_so(tmp_path: Path) -> None:
    fargate_node = """
---
apiVersion: v1
kind: Node
metadata:
  name: fargate-ip-10-0-1-1
  labels: {eks.amazonaws.com/compute-type: fargate, kubernetes.io/hostname: fargate-ip-10-0-1-1,
           topology.kubernetes.io/zone: zone-z}
spec:
  taints: [{key: eks.amazonaws.com/compute-type, value: fargate, effect: NoSchedule}]
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "1"}
"""
    spread = """      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}
"""
    plan = plan_text(tmp_path, POOL + fargate_node + deployment("web", 6, extra=spread), engine="karpenter")
    # zone-z exists only through the Fargate node (default nodeTaintsPolicy Ignore): its 0 caps the
    # three EC2 zones at one matching pod each.
    assert plan.summary.scheduled == 3
    assert all(any("Fargate node(s) fargate-ip-10-0-1-1" in r for r in u.reasons) for u in plan.unschedulable)

    honored = spread.replace("whenUnsatisfiable: DoNotSchedule,", "whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Honor,")
    plan = plan_text(tmp_path, POOL + fargate_node + deployment("web", 6, extra=honored), engine="karpenter")
    assert plan.summary.scheduled == 6
