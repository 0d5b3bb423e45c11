"""eksctl node groups (issue 24, item 4): `nodeGroups` and `managedNodeGroups` are running capacity pending pods
may land on, shown as existing nodes with their price, labels, taints and zones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app

CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: cluster-5
  region: eu-north-1
availabilityZones: ["eu-north-1a", "eu-north-1b", "eu-north-1c"]
nodeGroups:
  - name: ng1-public
    instanceType: m5.xlarge
    desiredCapacity: 3
    labels: {role: web}
  - name: ng2-private
    availabilityZones: ["eu-north-1b"]
    taints:
      dedicated: "batch:NoSchedule"
  - name: ng3-mixed
    minSize: 1
    desiredCapacity: 4
    instancesDistribution:
      instanceTypes: ["c5.large", "c5a.large"]
      onDemandBaseCapacity: 1
      onDemandPercentageAboveBaseCapacity: 50
managedNodeGroups:
  - name: mng-spot
    instanceTypes: ["c5.large", "c5a.large"]
    desiredCapacity: 1
    spot: true
    taints:
      - key: spot
        value: "true"
        effect: NoSchedule
"""
APPS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {role: web}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch}
spec:
  replicas: 1
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      nodeSelector: {eks.amazonaws.com/capacityType: SPOT}
      tolerations: [{key: spot, operator: Exists}]
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
"""


def _plan(tmp_path: Path, *texts: str, args: tuple[str, ...] = ()) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "cluster.yaml"
    path.write_text("---\n".join(texts))
    result = CliRunner().invoke(app, ["plan", str(path), "--engine", "karpenter", "-o", "json", *args])
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}, result.stderr


def _by_group(plan: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for node in plan["nodes"]:
        group = node["labels"].get("alpha.eksctl.io/nodegroup-name")
        if group:
            out.setdefault(group, []).append(node)
    return out


def test_node_groups_are_existing_priced_nodes_pods_land_on(tmp_path: Path) -> None:
    code, plan, err = _plan(tmp_path, CLUSTER, APPS)
    assert code == 0, err
    groups = _by_group(plan)
    # desiredCapacity, eksctl's default of 2 when absent, a managed group's own count
    assert {g: len(n) for g, n in groups.items()} == {"ng1-public": 3, "ng2-private": 2, "ng3-mixed": 4,
                                                       "mng-spot": 1}
    assert all(not n["new"] and n["hourlyPrice"] > 0 for nodes in groups.values() for n in nodes)
    assert plan["summary"]["newNodes"] == 0 and plan["summary"]["hourlyCost"] == 0
    # web needs role=web (ng1-public's label), batch the managed spot group's label and its taint
    placed = {p["name"]: p["node"] for p in plan["pods"]}
    assert all(placed[f"web-{i}"].startswith("ng1-public-") for i in range(3))
    assert placed["batch-0"].startswith("mng-spot-")


def test_node_group_labels_taints_types_and_zones(tmp_path: Path) -> None:
    _, plan, _ = _plan(tmp_path, CLUSTER, APPS)
    groups = _by_group(plan)
    public = groups["ng1-public"]
    assert sorted(n["zone"] for n in public) == ["eu-north-1a", "eu-north-1b", "eu-north-1c"]
    labels = public[0]["labels"]
    assert labels["alpha.eksctl.io/cluster-name"] == "cluster-5"
    assert labels["node.kubernetes.io/instance-type"] == "m5.xlarge" and labels["kubernetes.io/arch"] == "amd64"
    assert labels["topology.kubernetes.io/region"] == "eu-north-1"
    assert labels["kubernetes.io/hostname"] == public[0]["name"]
    assert "eks.amazonaws.com/nodegroup" not in labels  # a self-managed group's nodes do not carry it
    private = groups["ng2-private"]
    assert {n["instanceType"] for n in private} == {"m5.large"}  # eksctl's default type
    assert {n["zone"] for n in private} == {"eu-north-1b"}
    assert private[0]["taints"] == [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    mixed = groups["ng3-mixed"]
    assert {n["instanceType"] for n in mixed} == {"c5.large"}  # the first of instancesDistribution
    # 1 on-demand base, then half of the other 3 on-demand (rounded up): 3 on-demand, 1 spot
    assert sorted(n["capacityType"] for n in mixed) == ["on-demand", "on-demand", "on-demand", "spot"]
    spot = groups["mng-spot"][0]
    assert spot["labels"]["eks.amazonaws.com/nodegroup"] == "mng-spot"
    assert spot["labels"]["eks.amazonaws.com/capacityType"] == "SPOT" and spot["capacityType"] == "spot"
    assert spot["taints"] == [{"key": "spot", "value": "true", "effect": "NoSchedule"}]
    assert any("eksctl managed node group mng-spot: 1 spot c5.large node(s) in eu-north-1a" in w
               for w in plan["warnings"])


def test_an_instance_type_outside_the_catalog_is_said_at_its_line(tmp_path: Path) -> None:
    cluster = CLUSTER.replace("instanceType: m5.xlarge", "instanceType: m5.mega")
    code, plan, _ = _plan(tmp_path, cluster, APPS)
    assert code == 1  # web's role=web nodes are gone
    assert f"{tmp_path / 'cluster.yaml'}:9: node group ng1-public: instance type m5.mega is not in the catalog " \
           "(aws-eu-north-1), so its 3 node(s) are left out of the plan" in plan["warnings"]


def test_a_bad_taint_effect_is_bad_input(tmp_path: Path) -> None:
    code, plan, err = _plan(tmp_path, CLUSTER.replace('"batch:NoSchedule"', '"batch:Never"'), APPS)
    assert code == 2 and plan == {}
    assert f"{tmp_path / 'cluster.yaml'}:15: nodeGroups[1].taints.dedicated: Unsupported value" in err


def test_a_launch_template_groups_type_is_said_not_guessed(tmp_path: Path) -> None:
    cluster = CLUSTER + """\
  - name: from-template
    launchTemplate: {id: lt-1234, version: "3"}
"""
    _, plan, _ = _plan(tmp_path, cluster, APPS)
    assert "from-template" not in _by_group(plan)
    assert any(w.endswith("node group from-template: its instance type is the one launch template lt-1234 sets, "
                          "which karpplan cannot know offline, so its 2 node(s) are left out of the plan; set "
                          "instanceType to plan them") for w in plan["warnings"])


LINTED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {role: web}
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: alpha.eksctl.io/nodegroup-name
          whenUnsatisfiable: DoNotSchedule
          labelSelector: {matchLabels: {app: web}}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: gpu}
spec:
  replicas: 1
  selector: {matchLabels: {app: gpu}}
  template:
    metadata: {labels: {app: gpu}}
    spec:
      nodeSelector: {role: gpu}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
"""


def test_lint_counts_node_groups_as_capacity(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER + "---\n" + LINTED)
    result = CliRunner().invoke(app, ["lint", str(path), "-o", "json"])
    findings = [(f["rule"], f["object"]) for f in json.loads(result.stdout)["findings"]]
    # web fits ng1-public and spreads over a key its nodes carry; nothing has role=gpu
    assert findings == [("no-pool-can-launch", "Deployment/default/gpu")]
    assert result.exit_code == 1


def test_of_several_listed_types_the_first_the_catalog_holds_is_planned(tmp_path: Path) -> None:
    cluster = CLUSTER.replace('instanceTypes: ["c5.large", "c5a.large"]\n    desiredCapacity: 1',
                              'instanceTypes: ["c1.huge", "c5a.large"]\n    desiredCapacity: 1')
    _, plan, _ = _plan(tmp_path, cluster, APPS)
    assert [n["instanceType"] for n in _by_group(plan)["mng-spot"]] == ["c5a.large"]
    assert any("mng-spot: 1 spot c5a.large node(s)" in w and w.endswith(
        "it lists 2 types and EC2 picks among them: karpplan plans the first the catalog holds (c5a.large)")
        for w in plan["warnings"])


# https://github.com/eksctl-io/eksctl/blob/main/examples/15-managed-nodes.yaml (trimmed): a tainted group with
# maxSize headroom and an untainted one at its maxSize
GROWABLE = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: cluster-15, region: us-west-2}
managedNodeGroups:
  - name: managed-ng-public
    instanceType: m5.large
    minSize: 2
    desiredCapacity: 3
    maxSize: 4
    availabilityZones: ["us-west-2a", "us-west-2b"]
    labels: {role: worker}
    taints:
    - {key: key1, value: value1, effect: NoSchedule}
  - name: managed-ng-private
    instanceType: m5.large
    desiredCapacity: 2
    maxSize: 2
"""
BIG = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations: [{key: key1, operator: Exists}]
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""


def test_a_pod_that_does_not_fit_names_the_node_groups_that_could_grow_for_it(tmp_path: Path) -> None:
    """Pods beyond the groups' nodes read "no nodepools found: nothing can be launched", though a group they
    tolerate may grow to its maxSize (cluster-autoscaler's, not simulated)."""
    code, plan, err = _plan(tmp_path, GROWABLE, BIG)
    assert code == 1, err
    reasons = plan["unschedulable"][0]["reasons"]
    assert ("no nodepools found, so Karpenter launches nothing; eksctl node group managed-ng-public could add up to "
            "1 node(s) for it, but its maxSize is 4, and growing it (cluster-autoscaler) is not simulated") in reasons
    assert not any("managed-ng-private could" in r for r in reasons)  # at its maxSize already


def test_a_group_whose_taint_the_pod_does_not_tolerate_is_not_named(tmp_path: Path) -> None:
    code, plan, err = _plan(tmp_path, GROWABLE, BIG.replace("      tolerations: [{key: key1, operator: Exists}]\n", ""))
    assert code == 1, err
    assert "no nodepools found: nothing can be launched" in plan["unschedulable"][0]["reasons"]


WINDOWS_CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: migrating, region: us-east-2}
availabilityZones: ["us-east-2a", "us-east-2b"]
nodeGroups:
  - name: windows-ng
    amiFamily: WindowsServer2019FullContainer
    instanceType: m5.large
    desiredCapacity: 2
managedNodeGroups:
  - name: linux-ng
    instanceType: m5.large
    desiredCapacity: 1
"""
IIS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: iis, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: iis}}
  template:
    metadata: {labels: {app: iis}}
    spec:
      nodeSelector: {kubernetes.io/os: windows}
      containers: [{name: iis, image: mcr.microsoft.com/windows/servercore/iis, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""


def test_a_windows_node_group_runs_windows_pods(tmp_path: Path) -> None:
    """An eksctl group with a Windows amiFamily keeps Windows nodes: they advertise the IPv4 addresses a Windows pod
    takes (vpc.amazonaws.com/PrivateIPv4Address) and carry the licence in their price. They were Linux m5.large nodes
    with a windows label, so every Windows pod read "Insufficient vpc.amazonaws.com/PrivateIPv4Address" (a new user's
    migration from cluster-autoscaler)."""
    code, plan, err = _plan(tmp_path, WINDOWS_CLUSTER, IIS)
    assert code == 0, err
    windows = _by_group(plan)["windows-ng"]
    assert all(n["allocatable"].get("vpc.amazonaws.com/PrivateIPv4Address") == "9" for n in windows)
    assert all(n["labels"]["kubernetes.io/os"] == "windows" for n in windows)
    linux = _by_group(plan)["linux-ng"][0]
    assert min(n["hourlyPrice"] for n in windows) > linux["hourlyPrice"]  # the Windows licence
    placed = {p["name"]: p["node"] for p in plan["pods"]}
    assert sorted(placed[f"iis-{i}"].split("-")[0] for i in range(2)) == ["windows", "windows"]


def test_pods_that_ask_nothing_of_the_os_on_windows_nodes_are_said(tmp_path: Path) -> None:
    """A Redis without an OS selector lands on an untainted Windows node group, as kube-scheduler would place it:
    the plan says so and how to keep it off (it was silent)."""
    windows_only = WINDOWS_CLUSTER.split("managedNodeGroups:")[0]
    redis = IIS.replace("name: iis", "name: redis").replace("app: iis", "app: redis").replace(
        "      nodeSelector: {kubernetes.io/os: windows}\n", "").replace("replicas: 2", "replicas: 1")
    small = IIS.replace('cpu: "1"', "cpu: 500m")
    code, plan, err = _plan(tmp_path, windows_only, redis.replace('cpu: "1"', "cpu: 500m"), small)
    assert code == 0, err
    said = [w for w in plan["warnings"] if "ask" in w and "Windows nodes" in w]
    assert len(said) == 1 and said[0].startswith("Deployment/shop/redis (1 pod) asks nothing of the node's OS")
    assert "kubernetes.io/os: linux" in said[0] and "iis" not in said[0]
