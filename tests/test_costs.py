"""Cost per workload (showback): the documented rule, and costs that add up to the plan's cost on every case."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from manifests import INSTANCE_TYPE, ON_DEMAND, ZONE, deployment, nodepool

from karpplan.costs import plan_costs
from karpplan.costs.apportion import apportion
from karpplan.planner import PlanOptions, make_plan, read_catalog, read_inventory

CASES = Path(__file__).resolve().parent.parent.parent / "shared" / "cases"
PLAN_SUITES = ("kube", "karpenter", "fargate", "seed")

# m5.large only (1930m CPU allocatable, $0.096/h in us-east-1), on demand, in one zone.
POOL = nodepool(requirements={**ON_DEMAND, INSTANCE_TYPE: ("m5.large",), ZONE: ("us-east-1a",)})


DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: monitoring}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 193m, memory: 100Mi}}}]
"""


def _plan_costs(path: Path, *extra: str, engine: str = "karpenter") -> tuple[float, dict[str, object]]:
    out = subprocess.run([sys.executable, "-m", "karpplan", "plan", str(path), "--engine", engine, *extra,
                          "-o", "json"], capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    return doc["summary"]["hourlyCost"], doc["costs"]


def test_a_node_is_split_by_the_larger_share_and_the_rest_is_idle(tmp_path: Path) -> None:
    # m5.large: 1930m CPU allocatable, $0.096/h. A 1-CPU pod takes 1/1.93 of it by CPU (its memory share is
    # smaller); the DaemonSet's 193m is a tenth of every node; the rest is the pool's idle.
    manifest = tmp_path / "all.yaml"
    manifest.write_text("---\n".join([POOL, deployment("web", 2, namespace="shop"), DAEMONSET]))
    total, costs = _plan_costs(manifest, "--region", "us-east-1")
    assert total == pytest.approx(0.192)
    workloads = {w["workload"]: w for w in costs["workloads"]}  # type: ignore[attr-defined]
    assert workloads["Deployment/shop/web"]["hourlyCost"] == pytest.approx(2 * 0.096 / 1.93, abs=2e-6)
    assert workloads["Deployment/shop/web"]["pods"] == 2
    assert workloads["DaemonSet/monitoring/agent"]["hourlyCost"] == pytest.approx(2 * 0.0096, abs=2e-6)
    assert workloads["DaemonSet/monitoring/agent"]["pods"] == 2
    pool = costs["nodePools"][0]  # type: ignore[index]
    assert pool["nodePool"] == "default" and pool["hourlyCost"] == pytest.approx(0.192)
    assert pool["idleHourlyCost"] == pytest.approx(0.192 - workloads["Deployment/shop/web"]["hourlyCost"]
                                                   - workloads["DaemonSet/monitoring/agent"]["hourlyCost"], abs=2e-6)
    namespaces = [n["namespace"] for n in costs["namespaces"]]  # type: ignore[attr-defined]
    assert namespaces == ["shop", "monitoring"]  # sorted by cost, most first
    assert costs["monthlyCost"] == pytest.approx(0.192 * 730)


def test_shares_over_a_whole_node_are_scaled_to_it(tmp_path: Path) -> None:
    # One pod takes most of the CPU, the other most of the memory: their larger shares add up to more than the
    # node, so they are scaled down to it and nothing is idle.
    manifest = tmp_path / "all.yaml"
    manifest.write_text("---\n".join([POOL, deployment("cpu", 1, namespace="a", cpu="1500m", memory="500Mi"),
                                      deployment("mem", 1, namespace="b", cpu="300m", memory="6000Mi")]))
    total, costs = _plan_costs(manifest, "--region", "us-east-1")
    assert total == pytest.approx(0.096)
    assert costs["idleHourlyCost"] == 0
    assert sum(w["hourlyCost"] for w in costs["workloads"]) == pytest.approx(0.096, abs=1e-9)  # type: ignore[attr-defined]


GPU_POOL = nodepool(requirements={**ON_DEMAND, INSTANCE_TYPE: ("g4dn.12xlarge",), ZONE: ("us-east-1a",)})
GPU_JOB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: train, namespace: ml}
spec:
  replicas: 1
  selector: {matchLabels: {app: train}}
  template:
    metadata: {labels: {app: train}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "4", memory: 16Gi},
                                                   limits: {nvidia.com/gpu: 4}}}]
"""


def test_a_pod_holding_every_gpu_of_its_node_pays_for_the_node(tmp_path: Path) -> None:
    # g4dn.12xlarge: 4 GPUs, 48 vCPU. A pod with all 4 GPUs and 4 vCPU leaves nothing another GPU pod could
    # use: by CPU and memory alone it was charged a tenth of the node and the rest called idle.
    manifest = tmp_path / "all.yaml"
    manifest.write_text("---\n".join([GPU_POOL, GPU_JOB]))
    total, costs = _plan_costs(manifest, "--region", "us-east-1")
    workloads = {w["workload"]: w for w in costs["workloads"]}  # type: ignore[attr-defined]
    assert workloads["Deployment/ml/train"]["hourlyCost"] == pytest.approx(total)
    assert costs["idleHourlyCost"] == 0


def test_apportioned_parts_add_up_to_the_rounded_total() -> None:
    parts = apportion([1 / 3] * 3, 1.0)
    assert sum(parts) == 1_000_000 and sorted(parts) == [333_333, 333_333, 333_334]
    assert sum(apportion([0.1234567] * 7, 0.1234567 * 7)) == round(0.1234567 * 7 * 1_000_000)


def test_the_table_shows_the_costliest_workloads(tmp_path: Path) -> None:
    manifest = tmp_path / "all.yaml"
    manifest.write_text("---\n".join([POOL, deployment("web", 2, namespace="shop")]))
    out = subprocess.run([sys.executable, "-m", "karpplan", "plan", str(manifest), "--engine", "karpenter",
                          "--region", "us-east-1"], capture_output=True, text=True, timeout=120)
    assert "Cost by workload" in out.stdout
    assert "Deployment/shop/web" in out.stdout and "idle" in out.stdout


def _plan_cases() -> list[Path]:
    if not CASES.exists():
        return []
    return sorted(c for suite in PLAN_SUITES for c in (CASES / suite).glob("*")
                  if (c / "manifests.yaml").exists())


@pytest.mark.skipif(not _plan_cases(), reason="../shared/cases is not beside the project")
@pytest.mark.parametrize("case", _plan_cases(), ids=lambda c: f"{c.parent.name}/{c.name}")
def test_costs_add_up_to_the_plans_cost_on_every_case(case: Path) -> None:
    expect = yaml.safe_load((case / "expect.yaml").read_text()) or {}
    catalog = case / "catalog.yaml"
    options = PlanOptions(paths=(str(case / "manifests.yaml"),), engine="karpenter", time_limit=5,
                          catalog=str(catalog) if catalog.exists() else None, region=expect.get("region"))
    inventory = read_inventory(options)
    plan = make_plan(inventory, read_catalog(options, inventory), options)
    costs = plan_costs(plan, inventory.daemonsets)
    total = plan.summary.hourly_cost
    assert costs.hourly_cost == pytest.approx(total, abs=1e-6)
    for view in (costs.to_document()["workloads"], costs.to_document()["namespaces"]):
        assert sum(item["hourlyCost"] for item in view) + costs.to_document()["idleHourlyCost"] == \
            pytest.approx(total, abs=1e-6)
    assert sum(p["hourlyCost"] for p in costs.to_document()["nodePools"]) == pytest.approx(total, abs=1e-6)
    assert all(w.hourly_micros >= 0 for w in costs.workloads)


CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: us-east-1}
availabilityZones: [us-east-1a, us-east-1b]
fargateProfiles:
  - name: serverless
    selectors: [{namespace: serverless}]
"""

EXISTING = """\
apiVersion: v1
kind: Node
metadata:
  name: old-1
  labels: {topology.kubernetes.io/zone: us-east-1a, kubernetes.io/hostname: old-1,
           node.kubernetes.io/instance-type: m5.large, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  allocatable: {cpu: 1930m, memory: 6903Mi, pods: "29"}
---
apiVersion: v1
kind: Pod
metadata: {name: legacy, namespace: shop}
spec:
  nodeName: old-1
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
"""


def test_a_fargate_pod_pays_its_own_price_and_existing_nodes_are_not_charged(tmp_path: Path) -> None:
    manifest = tmp_path / "all.yaml"
    manifest.write_text("---\n".join([CLUSTER, POOL, deployment("fn", 1, namespace="serverless", memory="2Gi"),
                                      deployment("web", 1, namespace="shop"), EXISTING]))
    out = subprocess.run([sys.executable, "-m", "karpplan", "plan", str(manifest), "--engine", "karpenter",
                          "-o", "json"], capture_output=True, text=True, timeout=120)
    doc = json.loads(out.stdout)
    fargate = next(n for n in doc["nodes"] if n["capacityType"] == "fargate")
    workloads = {w["workload"]: w for w in doc["costs"]["workloads"]}
    assert workloads["Deployment/serverless/fn"]["hourlyCost"] == fargate["hourlyPrice"]
    pools = {p["nodePool"]: p for p in doc["costs"]["nodePools"]}
    assert pools["fargate:serverless"]["idleHourlyCost"] == 0
    # The pod bound to the existing node costs nothing here, as the plan's cost does not count that node.
    assert workloads["Pod/shop/legacy"]["hourlyCost"] == 0 and workloads["Pod/shop/legacy"]["pods"] == 1
    assert doc["costs"]["hourlyCost"] == doc["summary"]["hourlyCost"]


def test_yaml_carries_the_same_costs(tmp_path: Path) -> None:
    manifest = tmp_path / "all.yaml"
    manifest.write_text("---\n".join([POOL, deployment("web", 2, namespace="shop"), DAEMONSET]))
    _, costs = _plan_costs(manifest, "--region", "us-east-1")
    out = subprocess.run([sys.executable, "-m", "karpplan", "plan", str(manifest), "--engine", "karpenter",
                          "--region", "us-east-1", "-o", "yaml"], capture_output=True, text=True, timeout=120)
    assert yaml.safe_load(out.stdout)["costs"] == costs


def test_a_mostly_idle_plan_that_kept_preferences_says_where_to_look(tmp_path: Path) -> None:
    # karpenter-blueprints' ha-az shape: small replicas with a preferred spread over hosts, kept as Karpenter keeps
    # it, one per node: most of the plan is idle, and a new user could not tell why.
    import io

    from rich.console import Console

    from karpplan.render.plan_table import render_table

    from planner_helpers import FAKE_CATALOG, plan_text
    from planner_helpers import POOL as HELPER_POOL
    from planner_helpers import deployment as helper_deployment

    def table_text(plan: object) -> str:
        console = Console(record=True, width=120, color_system=None, file=io.StringIO())
        render_table(plan, console, plan_costs(plan))  # type: ignore[arg-type]
        return " ".join(console.export_text().split())

    spread = """\
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
         labelSelector: {matchLabels: {app: ha}}}
"""
    manifests = HELPER_POOL + helper_deployment("ha", 6, cpu="100m", extra=spread)
    (tmp_path / "honour").mkdir()
    (tmp_path / "drop").mkdir()
    honour = plan_text(tmp_path / "honour", manifests, catalog=FAKE_CATALOG)
    text = table_text(honour)
    assert "Idle is" in text and "--preferences drop plans without them" in text
    dropped = plan_text(tmp_path / "drop", manifests, catalog=FAKE_CATALOG, preferences="drop")
    assert "Idle is" not in table_text(dropped)
