"""`plan` quotes Karpenter's steady state (issue 27 item 4): Karpenter's launch consolidated by the disruption
simulation (`consolidate/from_plan.py`), both figures in `summary.karpenter`, and the saving quoted against
the steady state. The summary wording is in tests/golden/plan-table-steady.txt (UPDATE_GOLDEN=1 rewrites it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_render_plan import check_golden, sample_plan, table_text, with_summary

from karpplan.consolidate.from_plan import launched, steady_state_of
from karpplan.consolidate.snapshot import make_snapshot
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.model import labels as L
from karpplan.plan import Plan, SteadyState
from karpplan.planner import PlanOptions, SteadyStateRequest, prepare, read_catalog, read_inventory

from planner_helpers import plan_json

POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: default}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
        - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
        - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5, r5]}}
  disruption:
    consolidationPolicy: {policy}
    consolidateAfter: 30s
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: default}}
spec:
  amiSelectorTerms: [{{alias: al2023@latest}}]
"""

# A database and the web pods that must run in its zone: Karpenter launches the database's node first, then
# (a second provisioning batch, once the database is placed) a node for the web pods beside it. The first
# node is left under-used; consolidation moves the database next to the web pods and deletes it.
APPS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: db, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres, resources: {requests: {cpu: 1500m, memory: 2Gi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector: {matchLabels: {app: db}}
              topologyKey: topology.kubernetes.io/zone
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 700m, memory: 1Gi}}}]
"""

# A node of the NodePool running before the plan, tainted for a cache whose one pod tolerates the taint but
# does not need it: the plan launches beside it, consolidation moves the cache pod onto the new node.
UNDER_USED_NODE = """
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-1-9.ec2.internal
  labels:
    kubernetes.io/hostname: ip-10-0-1-9.ec2.internal
    karpenter.sh/nodepool: default
    karpenter.sh/capacity-type: on-demand
    node.kubernetes.io/instance-type: m5.2xlarge
    topology.kubernetes.io/zone: us-east-1a
spec:
  taints: [{key: team, value: cache, effect: NoSchedule}]
status:
  allocatable: {cpu: 7910m, memory: 30Gi, pods: "58"}
---
apiVersion: v1
kind: Pod
metadata:
  name: cache-7d9f-abc
  namespace: default
  labels: {app: cache}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: cache-7d9f, uid: x, controller: true}]
spec:
  nodeName: ip-10-0-1-9.ec2.internal
  tolerations: [{key: team, operator: Equal, value: cache, effect: NoSchedule}]
  containers: [{name: c, image: redis, resources: {requests: {cpu: 200m, memory: 256Mi}}}]
"""


def manifests(tmp_path: Path, policy: str = "WhenEmptyOrUnderutilized") -> Path:
    (tmp_path / "pool.yaml").write_text(POOL.format(policy=policy))
    (tmp_path / "apps.yaml").write_text(APPS)
    return tmp_path


def request(path: Path, time_limit: float = 30.0) -> SteadyStateRequest:
    options = PlanOptions(paths=(str(path),), zones=("us-east-1a", "us-east-1b"))
    inventory = read_inventory(options)
    prepared = prepare(inventory, read_catalog(options, inventory))
    greedy, _ = solve_karpenter(prepared.problem)
    return SteadyStateRequest(inventory, prepared.catalog, greedy, time_limit, greedy.cost, len(greedy.new_nodes))


# ------------------------------------------------------------------------------------------ the adapter
def test_the_launched_cluster_has_the_plans_nodes_with_their_pods_and_pool(tmp_path: Path) -> None:
    req = request(manifests(tmp_path))
    snapshot = make_snapshot(req.inventory, req.inventory.disruption_documents, req.catalog)
    after, new = launched(snapshot, req.solution)
    assert new == {n.name for n in req.solution.new_nodes} and len(new) == 2
    by_name = {n.name: n for n in after.nodes}
    for solved in req.solution.new_nodes:
        node = by_name[solved.name]
        assert node.pool == "default" and node.price == solved.option.price  # type: ignore[union-attr]
        assert node.node.labels[L.HOSTNAME] == solved.name and node.instance_type is not None
        assert sorted(p.key for p in after.pods_on[solved.name]) == sorted(p.key for _, p in solved.pods)
        assert all(p.node_name == solved.name for p in after.pods_on[solved.name])
    assert after.pending == []


def test_the_adapter_consolidates_the_under_used_launch(tmp_path: Path) -> None:
    req = request(manifests(tmp_path))
    steady = steady_state_of(req)
    assert steady.computed and steady.hourly_cost is not None
    assert steady.hourly_cost < req.launch_cost - 1e-9
    assert steady.actions == 1 and steady.nodes == 1 and steady.note is None


def test_a_when_empty_pool_keeps_its_launch(tmp_path: Path) -> None:
    """The NodePools' disruption settings are read from the input: WhenEmpty does not touch a node with pods."""
    req = request(manifests(tmp_path, "WhenEmpty"))
    steady = steady_state_of(req)
    assert steady.hourly_cost is not None and abs(steady.hourly_cost - req.launch_cost) < 1e-9
    assert steady.actions == 0 and steady.nodes == 2


def test_the_steady_state_reads_no_file_again(tmp_path: Path) -> None:
    """The disruption settings come with the inventory: stdin, or files gone since, give the same figure."""
    req = request(manifests(tmp_path))
    steady = steady_state_of(req)
    for path in tmp_path.iterdir():
        path.unlink()
    assert steady_state_of(req) == steady


def test_no_time_left_says_not_computed(tmp_path: Path) -> None:
    steady = steady_state_of(request(manifests(tmp_path), time_limit=0.0))
    assert steady.hourly_cost is None
    assert steady.note == "not computed: the time limit ran out before consolidation could start; raise --time-limit"


# ------------------------------------------------------------------------------------------ plan, end to end
def test_plan_quotes_the_saving_against_the_steady_state(tmp_path: Path) -> None:
    summary = plan_json(manifests(tmp_path), "--zones", "us-east-1a,us-east-1b", time_limit="8")["summary"]
    karpenter = summary["karpenter"]
    assert karpenter["steadyStateHourlyCost"] < karpenter["hourlyCost"] - 1e-9
    assert karpenter["steadyStateActions"] == 1 and karpenter["steadyStateNodes"] == 1
    assert karpenter["steadyStateMonthlyCost"] == round(karpenter["steadyStateHourlyCost"] * 730, 2)
    assert karpenter["steadyStateNote"] is None
    assert summary["hourlyCost"] <= karpenter["steadyStateHourlyCost"] + 1e-9


def test_karpenter_engine_plans_show_the_steady_state(tmp_path: Path) -> None:
    path = manifests(tmp_path)
    summary = plan_json(path, "--engine", "karpenter", "--zones", "us-east-1a,us-east-1b")["summary"]
    assert summary["karpenter"]["steadyStateHourlyCost"] < summary["hourlyCost"] - 1e-9
    result = subprocess.run(
        [sys.executable, "-m", "karpplan.cli.main", "plan", str(path), "--engine", "karpenter", "--zones",
         "us-east-1a,us-east-1b"], capture_output=True, text=True, timeout=120,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    karpenter = next(line for line in result.stdout.splitlines() if "Karpenter " in line)
    assert "consolidates to $0.1700/h on 1 node (1 consolidation command)" in karpenter


# ------------------------------------------------------------------------------------------ the summary's words
def steady_plan(**changes: object) -> Plan:
    return with_summary(sample_plan(), karpenter_steady=SteadyState(0.2, 3, 1), **changes)


def test_summary_says_launch_and_steady_state_and_saves_against_the_steady_state() -> None:
    text = table_text(steady_plan())
    check_golden("plan-table-steady.txt", text)
    text = " ".join(text.split())
    assert "launches $0.2948/h" in text and "consolidates to $0.2000/h on 3 nodes (1 consolidation command)" in text
    assert "optimal $0.1988/h saves $0.0012/h (0.6%) against Karpenter's steady state" in text
    assert "vs Karpenter's greedy plan" not in text


def test_a_plan_dearer_than_the_steady_state_says_so() -> None:
    plan = with_summary(sample_plan(), karpenter_steady=SteadyState(0.15, 2, 2, "includes $0.1920/h of existing nodes "
                                                                               "consolidation removes (n1)"))
    text = " ".join(table_text(plan, width=200).split())
    assert "optimal $0.1988/h costs $0.0488/h (32.5%) more than Karpenter's steady state" in text
    assert "(it saves $0.0960/h against the launch)" in text
    assert "includes $0.1920/h of existing nodes consolidation removes (n1)" in text
    assert "saves $0.0488" not in text


def test_a_steady_state_not_computed_is_said_and_the_launch_is_the_baseline() -> None:
    note = "not computed: the time limit ran out after 40 consolidation commands (2.5s of consolidation)"
    plan = with_summary(sample_plan(), karpenter_steady=SteadyState(None, None, 40, note))
    text = " ".join(table_text(plan, width=200).split())
    assert "steady state " + note in text
    assert "optimal $0.1988/h saves $0.0960/h (32.6%) against Karpenter's launch (greedy plan)" in text
    assert "consolidates to" not in text
    doc = plan.summary.to_document()["karpenter"]
    assert doc["steadyStateHourlyCost"] is None and doc["steadyStateNote"] == note


def test_removing_existing_nodes_is_said_and_a_bill_below_today_is_not_a_negative_price() -> None:
    """Consolidation may remove nodes running before the plan (the plans keep them): the steady state then
    falls below the launch by more than the launch costs; the summary says so in words, never `$-0.2140/h`."""
    steady = SteadyState(-0.214, 1, 1, "includes $0.3840/h of existing nodes consolidation removes (n1), which the "
                         "plans keep", existing_removed=0.384)
    plan = with_summary(sample_plan(), karpenter_cost=0.17, hourly_cost=0.17, karpenter_steady=steady)
    text = " ".join(table_text(plan, width=200).split())
    assert "consolidates to 1 node (1 consolidation command), $0.2140/h below what the nodes running now cost" in text
    # a plan prices what it launches: against Karpenter's launch, then what its steady state removes besides
    assert "optimal $0.1700/h: same cost as Karpenter's launch; its steady state also removes $0.3840/h of running " \
           "nodes this plan keeps (karpplan consolidate shows which, and why)" in text
    assert "more than Karpenter's steady state" not in text
    assert "$-" not in text
    assert plan.summary.to_document()["karpenter"]["steadyStateExistingRemovedHourlyCost"] == 0.384


def test_the_adapter_says_which_existing_nodes_consolidation_removes(tmp_path: Path) -> None:
    path = manifests(tmp_path)
    (path / "node.yaml").write_text(UNDER_USED_NODE)
    req = request(path)
    steady = steady_state_of(req)
    assert steady.hourly_cost is not None and steady.existing_removed > 0
    assert steady.note is not None and "ip-10-0-1-9.ec2.internal" in steady.note
    # every command saves: the steady state is below the launch by the existing nodes' price at least
    assert steady.hourly_cost <= req.launch_cost - steady.existing_removed + 1e-9


def test_the_plans_launch_options_are_reused_to_the_same_steady_state(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Building every NodePool's launch options again was most of a small plan's steady state (the quickstart):
    the options the plan built are taken from `scheduling/launch_memo.py`, with the same figures as built anew."""
    import karpplan.scheduling.launch_memo as memo

    path = manifests(tmp_path)
    options = PlanOptions(paths=(str(path),), zones=("us-east-1a", "us-east-1b"))
    inventory = read_inventory(options)
    prepared = prepare(inventory, read_catalog(options, inventory))
    greedy, _ = solve_karpenter(prepared.problem)
    req = SteadyStateRequest(inventory, prepared.catalog, greedy, 30.0, greedy.cost, len(greedy.new_nodes))
    built: list[int] = []
    real = memo.build_launch_options
    monkeypatch.setattr(memo, "build_launch_options", lambda *a, **k: built.append(1) or real(*a, **k))
    reused = steady_state_of(req)
    assert built == []
    monkeypatch.setattr(memo, "_memo", [])
    rebuilt = steady_state_of(req)
    assert built == [1]
    assert reused == rebuilt and reused.actions == 1
