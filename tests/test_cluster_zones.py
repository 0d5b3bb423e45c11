"""The cluster's zones (issue 24, item 3): read from --zones, a ClusterConfig, EC2NodeClass status or existing
nodes, said when assumed, and the only zones new nodes launch in and zone spreads count."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from manifests import ON_DEMAND, ZONE, deployment, nodepool
from typer.testing import CliRunner

from karpplan.cli.main import app


def _pool_and_web(*, pool_zones: Sequence[str] = (), pinned_to: str | None = None) -> str:
    """An on-demand NodePool (launching only in `pool_zones` when given) and 6 replicas spread over zones
    (DoNotSchedule), pinned to the zone `pinned_to` when given."""
    requirements = {**ON_DEMAND, ZONE: pool_zones} if pool_zones else ON_DEMAND
    return "---\n".join([nodepool(requirements=requirements),
                         deployment("web", 6, spread=(ZONE, "DoNotSchedule"), zone=pinned_to)])


POOL = _pool_and_web()
CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: prod
  region: us-west-2
availabilityZones: ["us-west-2a", "us-west-2b", "us-west-2c"]
"""
NODE_CLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
status:
  subnets:
    - {id: subnet-1, zone: us-east-1b, zoneID: use1-az1}
    - {id: subnet-2, zone: us-east-1c, zoneID: use1-az2}
"""
NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-1-1.ec2.internal
  labels: {topology.kubernetes.io/zone: us-east-1d, kubernetes.io/hostname: ip-10-0-1-1.ec2.internal}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "20"}
"""


def _write(tmp_path: Path, name: str, *texts: str) -> str:
    path = tmp_path / name
    path.write_text("---\n".join(texts))
    return str(path)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _plan(*args: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = _run("plan", *args, "--engine", "karpenter", "-o", "json")
    return code, json.loads(out) if out else {}, err


def _new_zones(plan: dict[str, Any]) -> list[str]:
    return sorted(n["zone"] for n in plan["nodes"] if n["new"])


def _pod_zones(plan: dict[str, Any]) -> list[str]:
    """The zone of every placed pod, sorted."""
    zone = {n["name"]: n["zone"] for n in plan["nodes"]}
    return sorted(zone[p["node"]] for p in plan["pods"] if p["node"])


def test_without_zone_information_every_zone_is_assumed_and_said(tmp_path: Path) -> None:
    code, plan, _ = _plan(_write(tmp_path, "m.yaml", POOL))
    assert code == 0
    summary = plan["summary"]
    assert summary["zonesSource"] == "assumed: every zone of us-east-1"
    assert len(summary["zones"]) == 6
    assumed = [w for w in plan["warnings"] if w.startswith("zones:")]
    assert len(assumed) == 1 and "--zones" in assumed[0] and "assumed every zone of us-east-1" in assumed[0]


def test_zones_flag_narrows_launches_and_spread_domains(tmp_path: Path) -> None:
    code, plan, _ = _plan(_write(tmp_path, "m.yaml", POOL), "--zones", "us-east-1a,us-east-1b")
    assert code == 0
    assert plan["summary"]["zones"] == ["us-east-1a", "us-east-1b"]
    assert plan["summary"]["zonesSource"] == "--zones"
    # Two domains: the six replicas spread 3 and 3, never into a zone the cluster does not have.
    assert _pod_zones(plan) == ["us-east-1a"] * 3 + ["us-east-1b"] * 3
    assert not any(w.startswith("zones:") for w in plan["warnings"])


def test_zones_flag_outside_the_region_is_bad_input(tmp_path: Path) -> None:
    code, out, err = _run("plan", _write(tmp_path, "m.yaml", POOL), "--zones", "us-east-1a,us-west-2a")
    assert code == 2 and out == ""
    assert err.strip() == ("--zones: us-west-2a is not a zone of region us-east-1; its zones are us-east-1a, "
                           "us-east-1b, us-east-1c, us-east-1d, us-east-1e, us-east-1f")


def test_clusterconfig_availability_zones_are_the_clusters(tmp_path: Path) -> None:
    code, plan, _ = _plan(_write(tmp_path, "m.yaml", CLUSTER, POOL))
    assert code == 0
    assert plan["summary"]["zones"] == ["us-west-2a", "us-west-2b", "us-west-2c"]
    assert plan["summary"]["zonesSource"] == f"ClusterConfig {tmp_path / 'm.yaml'}:6"
    assert _pod_zones(plan) == ["us-west-2a", "us-west-2a", "us-west-2b", "us-west-2b", "us-west-2c", "us-west-2c"]


def test_clusterconfig_zone_outside_its_region_is_blamed_at_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "m.yaml", CLUSTER.replace('"us-west-2c"', '"us-east-1c"'), POOL)
    code, out, err = _run("plan", path)
    assert code == 2 and out == ""
    assert err.startswith(f"{path}:6: availabilityZones: us-east-1c is not a zone of region us-west-2")


def test_ec2nodeclass_status_subnets_give_the_zones(tmp_path: Path) -> None:
    code, plan, _ = _plan(_write(tmp_path, "m.yaml", NODE_CLASS, POOL))
    assert code == 0
    assert plan["summary"]["zones"] == ["us-east-1b", "us-east-1c"]
    assert plan["summary"]["zonesSource"].startswith("EC2NodeClass ")
    assert set(_new_zones(plan)) == {"us-east-1b", "us-east-1c"}


def test_existing_nodes_give_the_zones(tmp_path: Path) -> None:
    code, plan, _ = _plan(_write(tmp_path, "m.yaml", NODE, POOL))
    assert plan["summary"]["zonesSource"] == "existing nodes"
    assert plan["summary"]["zones"] == ["us-east-1d"]
    assert code == 0 and set(_new_zones(plan)) == {"us-east-1d"}


def test_zones_table_line_says_where_they_came_from(tmp_path: Path) -> None:
    code, out, _ = _run("--color", "never", "plan", _write(tmp_path, "m.yaml", POOL), "--engine", "karpenter",
                        "--zones", "us-east-1a,us-east-1c")
    assert code == 0
    assert "Zones        us-east-1a, us-east-1c (from --zones)" in out


def test_lint_explain_and_catalog_take_zones(tmp_path: Path) -> None:
    manifests = _write(tmp_path, "m.yaml", POOL)
    code, out, err = _run("lint", manifests, "--zones", "eu-west-1a")
    assert code == 2 and out == "" and err.startswith("--zones: eu-west-1a is not a zone of region us-east-1")
    log = tmp_path / "log.txt"
    log.write_text("nothing to see\n")
    code, out, err = _run("explain", str(log), "--manifests", manifests, "--zones", "eu-west-1a")
    assert code == 2 and err.startswith("--zones: eu-west-1a")
    code, out, _ = _run("catalog", "--zones", "us-east-1a", "-o", "json", "--limit", "1")
    assert code == 0 and json.loads(out)["catalog"]["zones"] == ["us-east-1a"]
    assert json.loads(out)["catalog"]["zonesSource"] == "--zones"


def test_a_zone_a_pending_pod_requires_joins_the_existing_nodes_zones(tmp_path: Path) -> None:
    pinned = _pool_and_web(pinned_to="us-east-1b")
    code, plan, _ = _plan(_write(tmp_path, "m.yaml", NODE, pinned))
    assert code == 0
    assert plan["summary"]["zones"] == ["us-east-1b", "us-east-1d"]
    assert plan["summary"]["zonesSource"] == "existing nodes and the zones pending pods and NodePools name"
    assert set(_new_zones(plan)) == {"us-east-1b"}


def test_a_zone_a_nodepool_names_joins_the_existing_nodes_zones(tmp_path: Path) -> None:
    # A NodePool that launches only in us-east-1a and us-east-1b says the cluster has subnets there, even
    # when the one node given runs elsewhere: its pods are planned there, not left out on a guess.
    zoned = _pool_and_web(pool_zones=("us-east-1a", "us-east-1b"))
    code, plan, _ = _plan(_write(tmp_path, "m.yaml", NODE, zoned))
    assert code == 0
    assert plan["summary"]["zones"] == ["us-east-1a", "us-east-1b", "us-east-1d"]
    assert set(_new_zones(plan)) <= {"us-east-1a", "us-east-1b"}


def test_a_pod_pinned_outside_the_clusters_zones_is_told_so(tmp_path: Path) -> None:
    pinned = _pool_and_web(pinned_to="us-east-1e")
    code, plan, _ = _plan(_write(tmp_path, "m.yaml", pinned), "--zones", "us-east-1a,us-east-1b")
    assert code == 1
    assert ("the pod requires zone us-east-1e, which is not one of the cluster's zones (us-east-1a, us-east-1b; "
            "from --zones)") in plan["unschedulable"][0]["reasons"]


def test_an_existing_vpcs_subnets_give_the_zones(tmp_path: Path) -> None:
    cluster = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: cluster-4, region: eu-north-1}
vpc:
  id: "vpc-0dd338ecf29863c55"
  subnets:
    private:
      eu-north-1a: {id: "subnet-0b2512f8c6ae9bf30"}
      my-subnet: {id: "subnet-08cb9a2ed60394ce3", az: eu-north-1b}
"""
    path = _write(tmp_path, "m.yaml", cluster, POOL)
    code, plan, _ = _plan(path)
    assert code == 0
    assert plan["summary"]["zones"] == ["eu-north-1a", "eu-north-1b"]
    assert plan["summary"]["zonesSource"] == f"ClusterConfig {path}:6 (vpc.subnets)"
    assert _pod_zones(plan) == ["eu-north-1a"] * 3 + ["eu-north-1b"] * 3
