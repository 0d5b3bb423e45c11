"""`--namespace NS` (`-n`): objects written without a namespace are in NS, as `kubectl apply -n` and
`helm install -n` put them. Helm renders and kustomize builds seldom write `metadata.namespace`; planned in
`default`, a Fargate profile selecting the release's namespace took none of its pods, its LimitRange was
another namespace's and its PodDisruptionBudget guarded nothing."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app

runner = CliRunner()

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
"""
FARGATE = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: shop, region: us-east-1}
fargateProfiles:
  - name: apps
    selectors:
      - namespace: apps
"""
# as `helm template web ./chart` renders it: no metadata.namespace
CHART = """\
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx
          resources: {requests: {cpu: 250m, memory: 512Mi}}
"""


def _write(tmp_path: Path, *docs: str) -> str:
    path = tmp_path / "manifests.yaml"
    path.write_text("---\n".join(docs))
    return str(path)


def _plan(path: str, *args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["--color", "never", "plan", path, "--engine", "karpenter", "--zones",
                                 "us-east-1a,us-east-1b", "-o", "json", *args])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_a_fargate_profile_selecting_the_install_namespace_takes_the_charts_pods(tmp_path: Path) -> None:
    path = _write(tmp_path, FARGATE, POOL, CHART)
    placed = _plan(path, "-n", "apps")
    assert sorted(p["namespace"] + "/" + p["name"] for p in placed["pods"]) == ["apps/web-0", "apps/web-1"]
    assert [n["capacityType"] for n in placed["nodes"]] == ["fargate", "fargate"]
    assert [w["workload"] for w in placed["costs"]["workloads"]] == ["Deployment/apps/web"]
    # without it the pods are in `default`, which no profile selects: they go to the NodePool's EC2 nodes
    unplaced = _plan(path)
    assert {p["namespace"] for p in unplaced["pods"]} == {"default"}
    assert all(n["capacityType"] != "fargate" for n in unplaced["nodes"])


def test_an_object_that_names_its_namespace_and_cluster_scoped_ones_stay_as_written(tmp_path: Path) -> None:
    other = CHART.replace("metadata: {name: web}", "metadata: {name: api, namespace: backend}").replace("web", "api")
    path = _write(tmp_path, FARGATE, POOL, CHART, other)
    plan = _plan(path, "--namespace", "apps")
    assert {p["name"]: p["namespace"] for p in plan["pods"]} == {
        "web-0": "apps", "web-1": "apps", "api-0": "backend", "api-1": "backend"}
    assert {n["nodePool"] for n in plan["nodes"] if n["capacityType"] != "fargate"} == {"default"}  # the pool is read


def test_the_namespaces_limit_range_gives_the_charts_containers_their_requests(tmp_path: Path) -> None:
    limits = """\
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
    - type: Container
      defaultRequest: {cpu: 300m, memory: 256Mi}
"""
    bare = CHART.replace("resources: {requests: {cpu: 250m, memory: 512Mi}}", "ports: [{containerPort: 80}]")
    path = _write(tmp_path, POOL, limits, bare)
    plan = _plan(path, "-n", "team-a")
    assert {p["name"]: p["requests"] for p in plan["pods"]}["web-0"] == {"cpu": "300m", "memory": "256Mi"}


def test_replicas_flag_without_a_namespace_means_the_namespace_given(tmp_path: Path) -> None:
    path = _write(tmp_path, POOL, CHART)
    plan = _plan(path, "-n", "apps", "--replicas", "web=5")
    assert len(plan["pods"]) == 5


def test_a_name_that_is_no_namespace_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", _write(tmp_path, POOL, CHART), "-n", "Team_A"])
    assert result.exit_code == 2
    assert "'Team_A' is not a namespace name" in result.stderr and not result.stdout


def test_lint_and_diff_name_the_objects_in_the_namespace_given(tmp_path: Path) -> None:
    privileged = CHART.replace("image: nginx", "image: nginx\n          securityContext: {privileged: true}")
    linted = runner.invoke(app, ["lint", _write(tmp_path, FARGATE, POOL, privileged), "-n", "apps", "-o", "json"])
    assert linted.exit_code == 1, linted.stderr  # Fargate, which takes the namespace's pods, refuses privileged ones
    refused = [f["object"] for f in json.loads(linted.stdout)["findings"] if f["rule"] == "fargate-incompatible"]
    assert refused == ["Deployment/apps/web"]
    elsewhere = runner.invoke(app, ["lint", str(tmp_path / "manifests.yaml"), "-o", "json"])
    assert "fargate-incompatible" not in elsewhere.stdout  # in `default`, no profile selects them
    path = _write(tmp_path, FARGATE, POOL, CHART)
    head = tmp_path / "head.yaml"
    head.write_text("---\n".join((FARGATE, POOL, CHART.replace("replicas: 2", "replicas: 3"))))
    diffed = runner.invoke(app, ["diff", path, str(head), "-n", "apps", "-o", "json"])
    assert diffed.exit_code == 0, diffed.stderr
    changed = [w for w in json.loads(diffed.stdout)["workloads"] if w["change"] == "changed"]
    assert [w["workload"] for w in changed] == ["Deployment/apps/web"]
    assert changed[0]["hourlyCostDelta"] > 0  # one more Fargate pod, priced as Fargate prices it


SNAPSHOT = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: ip-10-0-1-1.ec2.internal
    labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand, kubernetes.io/arch: amd64,
             kubernetes.io/os: linux, node.kubernetes.io/instance-type: m5.large, karpenter.sh/initialized: 'true',
             kubernetes.io/hostname: ip-10-0-1-1.ec2.internal, topology.kubernetes.io/zone: us-east-1a}
  spec: {providerID: 'aws:///us-east-1a/i-0000000000000001'}
  status:
    allocatable: {cpu: 1930m, memory: 7068672Ki, pods: '29'}
    capacity: {cpu: '2', memory: 7758848Ki, pods: '29'}
- apiVersion: v1
  kind: Node
  metadata:
    name: ip-10-0-2-2.ec2.internal
    labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand, kubernetes.io/arch: amd64,
             kubernetes.io/os: linux, node.kubernetes.io/instance-type: m5.large, karpenter.sh/initialized: 'true',
             kubernetes.io/hostname: ip-10-0-2-2.ec2.internal, topology.kubernetes.io/zone: us-east-1b}
  spec: {providerID: 'aws:///us-east-1b/i-0000000000000002'}
  status:
    allocatable: {cpu: 1930m, memory: 7068672Ki, pods: '29'}
    capacity: {cpu: '2', memory: 7758848Ki, pods: '29'}
- apiVersion: v1
  kind: Pod
  metadata:
    name: zookeeper-0
    namespace: data
    labels: {app: zookeeper}
    ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: zookeeper, controller: true}]
  spec:
    nodeName: ip-10-0-2-2.ec2.internal
    containers: [{name: zookeeper, image: zookeeper:3.9, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-7c9d-abcde
    namespace: data
    labels: {app: web}
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7c9d, controller: true}]
  spec:
    nodeName: ip-10-0-1-1.ec2.internal
    containers: [{name: web, image: nginx, resources: {requests: {cpu: 300m, memory: 512Mi}}}]
  status: {phase: Running}
"""
# the chart's PodDisruptionBudget, as rendered: no namespace
PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: zookeeper}
spec:
  maxUnavailable: 0
  selector: {matchLabels: {app: zookeeper}}
"""


def test_consolidate_reads_the_charts_pod_disruption_budget_in_the_namespace_given(tmp_path: Path) -> None:
    path = _write(tmp_path, SNAPSHOT, POOL, PDB)
    args = ["--color", "never", "consolidate", path, "--region", "us-east-1", "-o", "json"]
    guarded = runner.invoke(app, [*args, "-n", "data"])
    assert guarded.exit_code in (0, 1), guarded.stderr
    assert "pdb prevents pod evictions" in guarded.stdout.lower()
    unguarded = runner.invoke(app, args)
    assert unguarded.exit_code in (0, 1), unguarded.stderr
    assert "pdb prevents pod evictions" not in unguarded.stdout.lower()


def test_workloads_without_a_namespace_beside_a_namespaced_release_are_said_to_be_in_default(tmp_path: Path) -> None:
    # a rendered chart whose subchart writes `namespace: {{ .Release.Namespace }}` and whose own templates
    # write none (open-telemetry/opentelemetry-demo's kubernetes/opentelemetry-demo.yaml, before #3236)
    namespaced = CHART.replace("metadata: {name: web}", "metadata: {name: grafana, namespace: otel-demo}")
    path = _write(tmp_path, POOL, namespaced.replace("web", "grafana"), CHART)
    hinted = [w for w in _plan(path)["warnings"] if "name no namespace" in w]
    assert len(hinted) == 1
    assert "1 workload(s) name no namespace (Deployment/web)" in hinted[0]
    assert "plan with --namespace otel-demo" in hinted[0]
    assert not [w for w in _plan(path, "-n", "otel-demo")["warnings"] if "name no namespace" in w]
    # all in one namespace, or none named at all: nothing to say
    assert not [w for w in _plan(_write(tmp_path, POOL, CHART))["warnings"] if "name no namespace" in w]
