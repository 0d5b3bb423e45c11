"""Static NodePools (`spec.replicas`, Karpenter v1.6+; issue 14 item 7).

Karpenter's static provisioning controller (kubernetes-sigs/karpenter pkg/controllers/static/provisioning)
keeps min(replicas, limits.nodes) NodeClaims of the pool whatever is pending, created from the pool's
template alone; the AWS provider picks the capacity type (reserved, spot, on-demand, in that order) and
CreateFleet the cheapest instance type and zone. The dynamic provisioner never launches the pool for pods,
but its nodes are nodes like any other: pending pods may land there. The plan holds them as new nodes,
priced, marked `static`, and says which launch it assumed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from karpplan.catalog import load_catalog
from karpplan.cli.main import app
from karpplan.engines.karpenter_simulation import solve_karpenter
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, make_problem, solve
from karpplan.verify import verify

from planner_helpers import plan_json

MANIFEST = Path(__file__).parent / "data" / "manifests" / "static-nodepool-trading.yaml"
STATIC = "static-prod-nodepool"
M5_2XLARGE = 0.384  # us-east-1 on-demand, the embedded catalog


def _static(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in plan["nodes"] if n["nodePool"] == STATIC]


@pytest.mark.parametrize("engine", ["optimal", "karpenter"])
def test_static_nodes_are_planned_priced_and_used(engine: str) -> None:
    plan = plan_json(MANIFEST, "--engine", engine)
    static = _static(plan)
    assert len(static) == 3
    for node in static:
        assert node["new"] and node["static"]
        assert (node["instanceType"], node["zone"], node["capacityType"]) == ("m5.2xlarge", "us-east-1a", "on-demand")
        assert node["hourlyPrice"] == M5_2XLARGE
        assert node["labels"]["nodepool-type"] == "static"
        assert node["labels"]["karpenter.sh/nodepool"] == STATIC
        assert node["taints"] == [{"key": "example.com/special-taint", "effect": "NoSchedule"}]
        assert node["daemonSetRequests"]["cpu"] == "100m"  # node-exporter tolerates everything
    others = [n for n in plan["nodes"] if n["nodePool"] != STATIC]
    assert all(not n["static"] for n in others)
    # The six matchers fit the three static nodes (three 2-CPU pods per m5.2xlarge): no node is launched
    # for them; the web pods do not tolerate the taint and go to the general pool.
    on = {p["name"]: p["node"] for p in plan["pods"]}
    names = {n["name"] for n in static}
    assert all(on[p] in names for p in on if p.startswith("order-matcher-"))
    assert all(on[p] not in names for p in on if p.startswith("web-"))
    assert plan["summary"]["scheduled"] == 10
    assert plan["summary"]["hourlyCost"] == pytest.approx(3 * M5_2XLARGE + sum(n["hourlyPrice"] for n in others))
    assert plan["summary"]["karpenter"]["hourlyCost"] >= 3 * M5_2XLARGE
    (warning,) = [w for w in plan["warnings"] if STATIC in w]
    assert warning.startswith(f"{MANIFEST}:4: NodePool {STATIC} is static (replicas: 3): ")
    assert "karpplan plans its 3 (" in warning
    assert warning.endswith("as m5.2xlarge on-demand in us-east-1a at $0.3840/h each")  # nothing assumed


def test_the_plan_of_static_nodes_passes_the_verifier() -> None:
    inventory = load_inventory([str(MANIFEST)])
    problem = make_problem(inventory, load_catalog("us-east-1"), list(inventory.pending))
    (pool,) = problem.static
    assert [n.name for n in pool.nodes] == [f"{STATIC}-m5-2xlarge-us-east-1a-{i}" for i in (1, 2, 3)]
    best, _, greedy = solve(problem, PlanOptions(time_limit=5))
    for solution in (best, greedy):
        assert not solution.unplaced
        assert verify(problem, solution) == []
    simulated, _ = solve_karpenter(problem)
    assert not simulated.unplaced


def _variant(tmp_path: Path, old: str, new: str, extra: str = "") -> Path:
    text = MANIFEST.read_text()
    assert old in text
    path = tmp_path / "static.yaml"
    path.write_text(text.replace(old, new, 1) + extra)
    return path


def test_an_open_instance_type_is_the_cheapest_launch_and_said_to_be_assumed(tmp_path: Path) -> None:
    # Only a family and a size range: EC2 picks the type and zone at launch. karpplan plans the cheapest
    # on-demand m-family type with at least 8 vCPUs and says so.
    path = _variant(tmp_path, """        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["m5.2xlarge"]""", """        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["m5", "m6i", "m6a", "m7i"]
        - key: karpenter.k8s.aws/instance-cpu
          operator: Gt
          values: ["7"]""")
    path.write_text(path.read_text().replace('values: ["us-east-1a"]', 'values: ["us-east-1a", "us-east-1b"]', 1))
    plan = plan_json(path)
    static = _static(plan)
    assert len(static) == 3 and len({(n["instanceType"], n["zone"]) for n in static}) == 1
    catalog = load_catalog("us-east-1")
    cheapest = min(o.price for it in catalog.instance_types
                   if it.labels.get("karpenter.k8s.aws/instance-family") in {"m5", "m6i", "m6a", "m7i"}
                   and int(it.labels["karpenter.k8s.aws/instance-cpu"]) > 7
                   and "metal" not in it.labels.get("karpenter.k8s.aws/instance-size", "")
                   for o in it.offerings if o.capacity_type == "on-demand" and o.zone in {"us-east-1a", "us-east-1b"})
    assert static[0]["hourlyPrice"] == pytest.approx(cheapest)
    assert static[0]["instanceType"] != "m5.2xlarge"  # m6a.2xlarge is cheaper
    (warning,) = [w for w in plan["warnings"] if STATIC in w]
    assert re.search(r": an assumption, the cheapest launch of the \d+ instance types and 2 zones its requirements "
                     r"allow \(EC2 picks when Karpenter creates the nodes, CreateFleet lowest-price\)$", warning)


def test_limits_nodes_and_running_nodes_count(tmp_path: Path) -> None:
    # limits.nodes 2 caps the pool below its replicas; one of them runs already (a Node of the pool in
    # the input, from a cluster dump): one more is planned.
    node = """---
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-12-34.ec2.internal
  labels:
    karpenter.sh/nodepool: static-prod-nodepool
    nodepool-type: static
    node.kubernetes.io/instance-type: m5.2xlarge
    topology.kubernetes.io/zone: us-east-1a
    karpenter.sh/capacity-type: on-demand
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    kubernetes.io/hostname: ip-10-0-12-34.ec2.internal
spec:
  taints:
    - {key: example.com/special-taint, effect: NoSchedule}
status:
  capacity: {cpu: "8", memory: 32386468Ki, pods: "58"}
  allocatable: {cpu: 7910m, memory: 31369636Ki, pods: "58"}
"""
    path = _variant(tmp_path, "    nodes: 20\n", "    nodes: 2\n", node)
    plan = plan_json(path)
    static = _static(plan)
    assert [(n["name"], n["new"], n["static"]) for n in static] == [
        ("ip-10-0-12-34.ec2.internal", False, False), (f"{STATIC}-m5-2xlarge-us-east-1a-1", True, True)]
    (warning,) = [w for w in plan["warnings"] if STATIC in w]
    assert "static (replicas: 3), capped by limits.nodes 2: " in warning
    assert "; 1 of them are in the input; karpplan plans 1 more (" in warning
    # The two static nodes still hold the six matchers (three 2-CPU pods each).
    assert plan["summary"]["scheduled"] == 4 + 6 and not plan["unschedulable"]


def test_an_absurd_replica_count_is_refused_at_its_line(tmp_path: Path) -> None:
    # Each static node is planned as a node: 50,000 of them would take minutes and gigabytes before
    # planning began. The input is refused at the field, as a bad value is (exit 2, file:line).
    path = _variant(tmp_path, "  replicas: 3\n", "  replicas: 50000\n")
    path.write_text(path.read_text().replace("    nodes: 20\n", "    nodes: 60000\n", 1))
    result = CliRunner().invoke(app, ["plan", str(path), "-o", "json"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.strip() == (f"{path}:9: spec.replicas: Invalid value: 50000: karpplan plans at most "
                                     "10,000 nodes per static NodePool (min(replicas, limits.nodes))")


def test_a_large_replica_count_capped_by_limits_nodes_is_planned(tmp_path: Path) -> None:
    path = _variant(tmp_path, "  replicas: 3\n", "  replicas: 50000\n")
    plan = plan_json(path)
    assert len(_static(plan)) == 20  # limits.nodes 20


@pytest.mark.parametrize(("old", "new", "why"), [
    ('values: ["us-east-1a"]', 'values: ["us-west-2a"]',
     "the catalog offers the 1 instance type(s) its requirements allow in no zone and capacity type they allow"),
    ('values: ["on-demand"]', 'values: ["reserved"]',
     "the catalog offers the 1 instance type(s) its requirements allow in no zone and capacity type they allow"),
    ('values: ["m5.2xlarge"]', 'values: ["m5.nonesuch"]', "no instance type of the catalog meets its requirements"),
])
def test_a_static_pool_without_a_launch_says_why(tmp_path: Path, old: str, new: str, why: str) -> None:
    # m5.2xlarge exists; a zone outside the region or a capacity type nothing offers leaves it no offering.
    plan = plan_json(_variant(tmp_path, old, new))
    assert not _static(plan)
    (warning,) = [w for w in plan["warnings"] if STATIC in w]
    assert warning.endswith(f"; {why}, so karpplan plans none")


def test_a_pod_too_many_for_the_static_nodes_is_told_the_pool_never_launches(tmp_path: Path) -> None:
    # Ten matchers for three static nodes that hold nine: Karpenter launches no fourth for the tenth. It was
    # told "no instance type met the scheduling requirements", as if another type would help.
    manifest = tmp_path / "static.yaml"
    text = MANIFEST.read_text()
    assert "replicas: 6" in text
    manifest.write_text(text.replace("replicas: 6", "replicas: 10", 1))
    plan = plan_json(manifest, "--engine", "karpenter")
    reasons = " ".join(r for u in plan["unschedulable"] for r in u["reasons"])
    assert f'nodepool "{STATIC}": static (spec.replicas: 3): Karpenter keeps its 3 node(s)' in reasons
    assert f'nodepool "{STATIC}": no instance type' not in reasons
