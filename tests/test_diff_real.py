"""`karpplan diff` on the changes public GitOps repositories really make, read as a reviewer reads them (session
18): each tree is a condensed rewrite of the repository's files at the two revisions, the change itself as the
commit made it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from diff_helpers import karpplan

from karpplan.diff.model import PlanDiff
from karpplan.diff.run import diff_paths
from karpplan.diff.side import SideOptions


def _write(root: Path, name: str, *docs: dict[str, Any]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(yaml.safe_dump_all(docs, sort_keys=False))


def _diff(tmp_path: Path, region: str = "us-east-1") -> PlanDiff:
    return diff_paths([str(tmp_path / "base")], [str(tmp_path / "head")], SideOptions(region=region, time_limit=5.0))


def _deployment(name: str, replicas: int, cpu: str, memory: str, namespace: str = "default",
                **spec: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {"containers": [{"name": "main", "image": name,
                                           "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod}}}


# ------------------------------------------------------- GoogleCloudPlatform/microservices-demo, no NodePools
def test_manifests_without_any_capacity_say_the_delta_compares_nothing(tmp_path: Path) -> None:
    # GoogleCloudPlatform/microservices-demo commit fb9528333 "Add loadgen initcontainer (#568)": the repository
    # holds the app's Deployments only. Diffed as committed, both sides leave every pod unschedulable and read
    # "$0.00/month": a reviewer must be told that compares nothing, and how to give the cluster's NodePools.
    init = {"initContainers": [{"name": "frontend-check", "image": "busybox:latest",
                                "command": ["/bin/sh", "-exc", "wget http://frontend:80"]}]}
    _write(tmp_path / "base", "loadgenerator.yaml", _deployment("loadgenerator", 1, "300m", "256Mi"))
    _write(tmp_path / "head", "loadgenerator.yaml", _deployment("loadgenerator", 1, "300m", "256Mi", **init))
    diff = _diff(tmp_path)
    [note] = [n for n in diff.notes if "no NodePool" in n]
    assert note.startswith("BASE and HEAD have no NodePool, Provisioner, Node, eksctl node group or Fargate profile")
    assert "karpplan diff --git REF apps/ pools/" in note


def test_a_side_with_a_nodepool_is_not_said_to_lack_one(tmp_path: Path) -> None:
    pool = _pool("general", "on-demand", None, None)
    _write(tmp_path / "base", "all.yaml", _deployment("web", 1, "500m", "512Mi", tolerations=_TOLERATE), pool)
    _write(tmp_path / "head", "all.yaml", _deployment("web", 2, "500m", "512Mi", tolerations=_TOLERATE), pool)
    assert not [n for n in _diff(tmp_path).notes if "no NodePool" in n]


# ------------------------------------------- aws-samples/karpenter-blueprints, blueprints/od-spot-split
_TOLERATE = [{"key": "intent", "operator": "Equal", "value": "workload-split", "effect": "NoSchedule"}]


def _pool(name: str, capacity: str, spread: list[str] | None, cpu_limit: str | None,
          categories: tuple[str, ...] = ("c", "m", "r")) -> dict[str, Any]:
    requirements: list[dict[str, Any]] = [
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity]},
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": list(categories)},
        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]}]
    if spread is not None:
        requirements.insert(0, {"key": "capacity-spread", "operator": "In", "values": spread})
    spec: dict[str, Any] = {"template": {"metadata": {"labels": {"intent": "apps"}}, "spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": requirements,
        "taints": [{"key": "intent", "value": "workload-split", "effect": "NoSchedule"}]}}}
    if cpu_limit is not None:
        spec["limits"] = {"cpu": cpu_limit, "memory": "500Gi"}
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def _split(root: Path, spot_cpu: str = "1k", od_categories: tuple[str, ...] = ("c", "m", "r"),
           replicas: int = 10) -> None:
    spread = {"topologySpreadConstraints": [{"labelSelector": {"matchLabels": {"app": "workload-split"}},
                                             "maxSkew": 1, "topologyKey": "capacity-spread",
                                             "whenUnsatisfiable": "DoNotSchedule"}]}
    workload = _deployment("workload-split", replicas, "512m", "512Mi", nodeSelector={"intent": "apps"},
                           tolerations=_TOLERATE, **spread)
    _write(root, "od-spot.yaml", _pool("node-od", "on-demand", ["1"], "1k", od_categories),
           _pool("node-spot", "spot", ["2", "3", "4", "5"], spot_cpu))
    _write(root, "workload.yaml", workload)


def test_a_nodepool_limit_that_strands_pods_is_no_saving(tmp_path: Path) -> None:
    # the blueprint's spot pool limit lowered from cpu 1k to 4: the cost falls because 4 of the 10 replicas
    # can no longer run, which the workload's row must say (its definition is unchanged)
    _split(tmp_path / "base")
    _split(tmp_path / "head", spot_cpu="4")
    diff = _diff(tmp_path)
    [row] = [w for w in diff.workloads if w.workload == "Deployment/default/workload-split"]
    assert row.change == "unchanged" and row.delta_micros < 0
    assert row.placement == "4 of 10 unschedulable"
    [spot] = [p for p in diff.pools if p.name == "node-spot"]
    assert spot.fields == ("spec.limits.cpu: 1k -> 4",)
    assert len(diff.newly_unschedulable) == 4 and diff.gate.reasons


def test_the_table_lists_a_workload_s_stranded_pods_once(tmp_path: Path) -> None:
    _split(tmp_path / "base")
    _split(tmp_path / "head", spot_cpu="4")
    out = karpplan("diff", str(tmp_path / "base"), str(tmp_path / "head"), "--time-limit", "5",
                   env={"COLUMNS": "400", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 1, out.stderr
    assert "unchanged, 4 of 10 unschedulable" in out.stdout
    [line] = [ln for ln in out.stdout.splitlines() if "workload-split-6" in ln]
    assert line.startswith("default/workload-split-6, default/workload-split-7, default/workload-split-8, "
                           "default/workload-split-9 (Deployment/default/workload-split): ")
    assert out.stdout.count("all available instance types exceed limits") == 1


def test_narrowing_a_nodepool_s_instance_categories_costs_more(tmp_path: Path) -> None:
    # the on-demand pool's instance-category narrowed from [c, m, r] to [m]: the same nodes, dearer
    _split(tmp_path / "base")
    _split(tmp_path / "head", od_categories=("m",))
    diff = _diff(tmp_path)
    [od] = [p for p in diff.pools if p.name == "node-od"]
    assert od.change == "changed" and od.delta_micros > 0
    assert od.fields == ('spec.template.spec.requirements[karpenter.k8s.aws/instance-category].values: '
                         '["c","m","r"] -> ["m"]',)
    assert not diff.newly_unschedulable


def test_a_replica_bump_grows_the_pools_it_lands_in(tmp_path: Path) -> None:
    _split(tmp_path / "base")
    _split(tmp_path / "head", replicas=20)
    diff = _diff(tmp_path)
    [row] = [w for w in diff.workloads if w.workload == "Deployment/default/workload-split"]
    assert row.change == "changed" and row.fields == ("spec.replicas: 10 -> 20",)
    assert (row.pods_base, row.pods_head) == (10, 20) and row.placement == ""
    assert all(p.delta_micros > 0 for p in diff.pools if p.name in ("node-od", "node-spot"))


# ---------------------------------------------------------------- an eksctl Fargate profile added
def _cluster(fargate: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "eksctl.io/v1alpha5", "kind": "ClusterConfig",
                           "metadata": {"name": "fargate-cluster", "region": "us-west-2"},
                           "managedNodeGroups": [{"name": "ng-1", "instanceType": "m5.large", "desiredCapacity": 1}]}
    if fargate:
        doc["fargateProfiles"] = [{"name": "fp-batch", "selectors": [{"namespace": "batch"}]}]
    return doc


@pytest.mark.parametrize("fargate_in", ["head", "base"])
def test_a_fargate_profile_added_says_the_pods_leave_the_node_group(tmp_path: Path, fargate_in: str) -> None:
    # eksctl's examples/ ClusterConfig with a managed node group; the change adds a Fargate profile for the
    # `batch` namespace: the pods that ran on the node group (which the plan does not charge) now pay Fargate's
    # price, and the node group keeps running
    report = _deployment("report", 3, "500m", "1Gi", namespace="batch")
    _write(tmp_path / "base", "cluster.yaml", _cluster(fargate_in == "base"), report)
    _write(tmp_path / "head", "cluster.yaml", _cluster(fargate_in == "head"), report)
    diff = _diff(tmp_path, region="us-west-2")
    moved = [n for n in diff.notes if n.startswith("Deployment/batch/report: ")]
    if fargate_in == "head":
        assert diff.delta_micros > 0
        assert moved == ["Deployment/batch/report: BASE runs 3 of its pods on existing nodes "
                         "(ng-1-m5-large-us-west-2a-1), which the plan does not charge; HEAD runs 3 on new capacity "
                         "(fargate:fp-batch): new spending, while the existing nodes keep running unless they are "
                         "scaled down"]
    else:  # the profile removed: back onto the node group
        assert diff.delta_micros < 0
        assert len(moved) == 1 and "HEAD runs 3 of its pods on existing nodes" in moved[0]
