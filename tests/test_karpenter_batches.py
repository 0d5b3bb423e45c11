"""The Karpenter baseline runs provisioning batch after batch (issue 24, item 2).

Within a batch Karpenter charges each new NodeClaim its largest candidate's capacity against NodePool limits
(`subtractMax`), so a capped pool stops early; the nodes it launches are the cheapest type that holds their
pods, the next batch's scheduler charges the limits with their real capacity, and the pods left are placed
on them or on new claims, until a batch places nothing. The plan says how many batches that took, and
compares its cost with Karpenter's only when both schedule the same pods.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_render_plan import sample_plan, table_text, with_summary

import karpplan.plan_reasons as reasons_module
from karpplan.catalog import load_catalog
from karpplan.engines import karpenter_batches
from karpplan.engines.karpenter_simulation import KarpenterSimulation, solve_karpenter
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, make_plan, prepare
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

from planner_helpers import FAKE_CATALOG, POOL, deployment, plan_json, plan_text

MANIFEST = Path(__file__).parent / "data" / "manifests" / "limits-batch-workers.yaml"

# A v1alpha5 Provisioner capped at 100 CPU and 50 replicas spread one per node and evenly over zones: the
# shape of the "Karpenter: 4 scheduled" report (issue 24).
PROVISIONER_50 = """
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: default}
spec:
  requirements:
    - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits:
    resources: {cpu: 100}
  providerRef: {name: default}
---
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata: {name: default}
spec: {}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 50
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: web}}}
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: web}}}
      containers:
        - name: app
          image: nginx
          resources: {requests: {cpu: 500m, memory: 512Mi}}
"""


def _capped(limits: str, replicas: int, cpu: str = "1") -> str:
    """The test catalog's pool with `limits`, and `replicas` pods of `cpu` one per node (small: 2 CPU, $0.4;
    large: 4 CPU, $0.7)."""
    return f"""
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: default}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: []
  limits: {limits}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: one-per-node}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: one}}}}
  template:
    metadata: {{labels: {{app: one}}}}
    spec:
      topologySpreadConstraints:
        - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {{matchLabels: {{app: one}}}}}}
      containers:
        - {{name: app, image: nginx, resources: {{requests: {{cpu: "{cpu}", memory: 64Mi}}}}}}
"""


def _problem(tmp_path: Path, manifests: str, catalog: str | None = FAKE_CATALOG) -> Problem:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "manifests.yaml"
    path.write_text(manifests)
    catalog_file = None
    if catalog is not None:
        (tmp_path / "catalog.yaml").write_text(catalog)
        catalog_file = str(tmp_path / "catalog.yaml")
    inventory = load_inventory([str(path)])
    return prepare(inventory, load_catalog(inventory.region or "us-east-1", catalog_file)).problem


# ------------------------------------------------------------------------------------------ batches
def test_a_capped_provisioner_places_every_replica_over_several_batches(tmp_path: Path) -> None:
    path = tmp_path / "provisioner.yaml"
    path.write_text(PROVISIONER_50)
    plan = plan_json(path, "--engine", "karpenter")
    summary = plan["summary"]
    assert summary["scheduled"] == 50 and not plan["unschedulable"]
    assert summary["batches"] > 1
    assert summary["karpenter"]["scheduled"] == 50 and summary["karpenter"]["batches"] == summary["batches"]
    assert sum(int(n["labels"]["karpenter.k8s.aws/instance-cpu"]) for n in plan["nodes"]) <= 100
    assert len({n["name"] for n in plan["nodes"]}) == 50  # one replica per node, as the spread asks


def test_the_optimal_plan_compares_like_for_like_with_the_batched_baseline(tmp_path: Path) -> None:
    path = tmp_path / "provisioner.yaml"
    path.write_text(PROVISIONER_50)
    plan = plan_json(path)
    karpenter = plan["summary"]["karpenter"]
    assert karpenter["scheduled"] == plan["summary"]["scheduled"] == 50
    assert karpenter["likeForLike"] is True and karpenter["batches"] > 1
    assert plan["summary"]["batches"] is None  # the optimal engine plans in one go
    assert plan["summary"]["hourlyCost"] <= karpenter["hourlyCost"] + 1e-9


def test_limits_are_charged_with_the_launched_nodes_capacity(tmp_path: Path) -> None:
    # limits.cpu 8, one 1-CPU pod per node. Batch 1 charges each claim its largest candidate (4, 4) and stops
    # at 2 pods; their nodes launch as `small` (2 CPU each), so batch 2 finds 4 CPU left, and so on until
    # four smalls use the 8: two pods more than a batch charged by candidates, two fewer than asked.
    plan = plan_text(tmp_path, _capped("{cpu: 8}", 6), engine="karpenter")
    assert plan.summary.scheduled == 4 and plan.summary.unschedulable == 2
    assert [n.instance_type for n in plan.nodes] == ["small"] * 4
    assert plan.summary.batches == 3


def test_the_ledger_holds_limits_less_real_capacity(tmp_path: Path) -> None:
    problem = _problem(tmp_path, _capped("{cpu: 8}", 6))
    sim = KarpenterSimulation(problem)
    sim.run()
    assert [(item.batch, item.option.instance_type.name) for item in sim.launched] == [
        (1, "small"), (1, "small"), (2, "small"), (3, "small")]
    remaining = sim.ledger.remaining("default")
    assert remaining is not None and dict(remaining.items()) == {"cpu": 0}
    assert sim.ledger.nodes_left("default") is None and sim.ledger.launched("default") == 4


def test_node_limits_count_the_nodes_launched_before_the_batch(tmp_path: Path) -> None:
    # limits.nodes 3 with limits.cpu 8: batch 1 launches 2 nodes (CPU-capped), batch 2 may open claims while
    # 1 node is left, batch 3 finds none left.
    plan = plan_text(tmp_path, _capped("{cpu: 8, nodes: 3}", 6), engine="karpenter")
    assert plan.summary.new_nodes == 3 and plan.summary.scheduled == 3
    assert not any("limits.nodes" in w for w in plan.warnings)


def test_within_a_batch_node_limits_only_count_nodes_that_existed(tmp_path: Path) -> None:
    plan = plan_text(tmp_path, _capped("{nodes: 2}", 5), engine="karpenter")
    assert plan.summary.new_nodes == 5 and plan.summary.batches == 1
    assert any("limits.nodes only against nodes that existed when a provisioning batch started" in w
               for w in plan.warnings)


def test_a_batch_that_places_nothing_ends_the_run(tmp_path: Path) -> None:
    # A pod no instance type holds stays pending whatever the batches: the run ends, it does not loop.
    manifests = _capped("{cpu: 8}", 2) + """
---
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "64"}}}]
"""
    problem = _problem(tmp_path, manifests)
    solution, _ = solve_karpenter(problem, time_limit=30)
    assert [pod.name for _, pod in solution.unplaced] == ["huge"]
    assert solution.batches == 1 and not solution.notes


def test_nothing_placed_is_no_batch(tmp_path: Path) -> None:
    plan = plan_text(tmp_path, _capped("{cpu: 0}", 3), engine="karpenter")
    assert plan.summary.scheduled == 0 and plan.summary.batches == 0


FOLLOWER = POOL + deployment("db", 1, cpu="1") + deployment("web", 1, cpu="500m", extra="""
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - {labelSelector: {matchLabels: {app: db}}, topologyKey: topology.kubernetes.io/zone}
""")


def test_a_pod_following_an_undecided_zone_joins_the_launched_node_next_batch(tmp_path: Path) -> None:
    # Zone affinity to a pod whose claim has no zone yet fails in that batch; once the claim is a node, the
    # next batch places the follower, on the launched node first (Karpenter's "pod affinity with zone
    # topology (unconstrained target)").
    plan = plan_text(tmp_path, FOLLOWER, engine="karpenter")
    assert plan.summary.scheduled == 2 and plan.summary.batches == 2
    (node,) = plan.nodes
    assert sorted(node.pods) == ["default/db-0", "default/web-0"]


@pytest.mark.parametrize("exact", [False, True])
def test_skipping_the_recount_between_batches_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             exact: bool) -> None:
    # Topology counts are recorded again between batches only when a claim counted pods with its zone still
    # open; otherwise the state goes on. Both must give the very same plan.
    problems = [_problem(tmp_path / "a", PROVISIONER_50, None), _problem(tmp_path / "b", MANIFEST.read_text(), None),
                _problem(tmp_path / "c", _capped("{cpu: 8}", 6)), _problem(tmp_path / "d", FOLLOWER)]

    def plans() -> list[tuple[object, ...]]:
        out = []
        for problem in problems:
            solution, _ = solve_karpenter(problem, exact_limits=exact)
            out.append((solution.batches, [(n.name, sorted(p.key for _, p in n.pods)) for n in solution.nodes]))
        return out

    watched = plans()
    monkeypatch.setattr(karpenter_batches.RecountWatch, "needed", lambda self, state: True)
    assert plans() == watched
    assert any(batches > 1 for batches, _ in watched)


# ------------------------------------------------------------------------------------------ warm start
@pytest.mark.parametrize(("manifests", "unplaced"), [(PROVISIONER_50, 0), (_capped("{cpu: 8, nodes: 3}", 6), 3),
                                                     (_capped("{cpu: 9}", 6), 2)])
def test_the_exact_limits_simulation_stays_a_valid_warm_start(tmp_path: Path, manifests: str, unplaced: int) -> None:
    # The optimal engine starts from the simulation with limits charged exactly: over batches it must still
    # keep every rule the verifier checks (limits.nodes included), and place what the limits allow.
    catalog = None if "Provisioner" in manifests else FAKE_CATALOG
    problem = _problem(tmp_path, manifests, catalog)
    exact, _ = solve_karpenter(problem, exact_limits=True)
    assert not exact.exceeds_node_limits
    assert verify(problem, exact) == []
    assert len(exact.unplaced) == unplaced


def test_the_worker_batch_fills_its_cpu_limit(tmp_path: Path) -> None:
    plan = plan_json(MANIFEST, "--engine", "karpenter")
    launched_cpu = sum(int(n["labels"]["karpenter.k8s.aws/instance-cpu"]) for n in plan["nodes"])
    assert 96 < launched_cpu <= 100  # the first batch alone stopped far below (largest candidates charged)
    assert plan["summary"]["batches"] > 1
    assert not any("first provisioning batch" in w for w in plan["warnings"])


# ------------------------------------------------------------------------------------------ summary
def test_the_table_says_the_batches_in_plain_words() -> None:
    plan = with_summary(sample_plan(), karpenter_batches=2, karpenter_scheduled=8, karpenter_new_nodes=13)
    line = " ".join(table_text(plan).split("Karpenter", 1)[1].split())
    assert line.startswith("$0.2948/h, 8 of 10 pods on 13 new nodes in 2 provisioning batches")
    one = with_summary(sample_plan(), karpenter_batches=1, karpenter_new_nodes=1, pods=8)
    assert "8 pods on 1 new node in 1 provisioning batch " in " ".join(table_text(one).split())


def test_the_karpenter_engine_says_its_batches_on_the_solver_line() -> None:
    plan = with_summary(sample_plan(), engine="karpenter", status="heuristic", batches=3, time_limit=None)
    assert "karpenter engine in 3 provisioning batches, status heuristic" in table_text(plan)


def test_no_saving_is_quoted_when_karpenter_schedules_fewer_pods() -> None:
    plan = with_summary(sample_plan(), karpenter_cost=0.1, karpenter_scheduled=6)
    text = " ".join(table_text(plan).split())
    assert "not like for like: optimal schedules 2 pods more than Karpenter, so no saving is quoted" in text
    assert "more than Karpenter's greedy plan" not in text and "%)" not in text.split("Karpenter", 1)[1]
    assert plan.summary.to_document()["karpenter"]["likeForLike"] is False


def test_a_saving_is_quoted_when_both_schedule_the_same_pods() -> None:
    text = " ".join(table_text(sample_plan()).split())
    assert "optimal saves $0.0960/h (32.6%) vs Karpenter's greedy plan" in text


def test_reasons_are_worked_out_once_per_group(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = reasons_module.reasons_for

    def counting(*args: object) -> list[str]:
        calls.append("x")
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(reasons_module, "reasons_for", counting)
    inventory = load_inventory([str(MANIFEST)])
    plan = make_plan(inventory, load_catalog("us-east-1"), PlanOptions(engine="karpenter", time_limit=10))
    assert len(plan.unschedulable) >= 10
    assert len(calls) == 1
    assert len({u.reasons for u in plan.unschedulable}) == 1
    assert all("exceed limits" in u.reasons[0] for u in plan.unschedulable)


def test_a_simulation_cut_by_the_time_limit_says_so() -> None:
    plan = plan_json(MANIFEST, "--engine", "karpenter", time_limit="0.001")
    assert any(w.startswith("not simulated: the time limit ran out") for w in plan["warnings"])
    assert plan["summary"]["notSimulated"] == len(plan["notSimulated"]) > 0


# karpenter-blueprints' od-spot-split shape (aws-samples/karpenter-blueprints, blueprints/od-spot-split): a spot
# NodePool with a custom `capacity-spread` key over four values, limits cpu 1k / memory 500Gi, and replicas spread
# on that key. A new user read Karpenter's several batches as a simulation bug; the plan now says why.
SPLIT_POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: node-spot}
spec:
  LIMITS
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: capacity-spread, operator: In, values: ["2", "3", "4", "5"]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["2"]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: workload-split}
spec:
  replicas: 8
  selector: {matchLabels: {app: workload-split}}
  template:
    metadata: {labels: {app: workload-split}}
    spec:
      containers:
        - {name: app, image: pause, resources: {requests: {cpu: 512m, memory: 512Mi}}}
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: capacity-spread, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: workload-split}}}
"""


def test_the_plan_says_when_subtract_max_splits_karpenters_launch_into_batches(tmp_path: Path) -> None:
    for sub in ("capped", "optimal", "free"):
        (tmp_path / sub).mkdir()
    capped = plan_text(tmp_path / "capped", SPLIT_POOL.replace("LIMITS", "limits: {cpu: 1k, memory: 500Gi}"),
                       catalog=None, engine="karpenter")
    assert capped.summary.scheduled == 8 and capped.summary.batches is not None and capped.summary.batches > 1
    notes = [w for w in capped.warnings if "subtractMax" in w]
    assert len(notes) == 1 and "NodePool node-spot" in notes[0] and "memory 500Gi" in notes[0]
    # The optimal plan shows it too: it explains the baseline its saving is quoted against.
    optimal = plan_text(tmp_path / "optimal", SPLIT_POOL.replace("LIMITS", "limits: {cpu: 1k, memory: 500Gi}"),
                        catalog=None)
    assert any("subtractMax" in w for w in optimal.warnings)
    # Without limits one batch packs two replicas per value: four nodes, and nothing to explain.
    free = plan_text(tmp_path / "free", SPLIT_POOL.replace("LIMITS", ""), catalog=None, engine="karpenter")
    assert free.summary.batches == 1 and free.summary.new_nodes == 4
    assert not any("subtractMax" in w for w in free.warnings)
