"""Session 21's sweep of real manifests: what a platform engineer saw wrong, fixed, in small self-made fixtures
shaped as the repositories write them.

* kubeflow/manifests applications/model-registry/upstream/options/controller/overlays/base: a kustomization's
  `replacements: - path: replacements.yaml` names a file holding a list of replacements; `karpplan lint .` on the
  repository exited 2 ("document is a list, not a mapping").
* open-telemetry/opentelemetry-helm-charts charts/*/examples/*/rendered (helm template output): the chart's
  `helm.sh/hook: test` pods and `pre-delete` Job were planned as pending pods of the install.
* open-telemetry/opentelemetry-demo src/load-generator/people.json, delimitrou/DeathStarBench hotelReservation/data/
  *.json, prometheus-operator/kube-prometheus kubescape-exceptions.json: `karpplan lint .` on the repository exited
  2 on a JSON list of data ("document is a list"), though a mapping without kind there is skipped.
* prometheus-operator/kube-prometheus examples/alertmanager-config-with-template.yaml (badly indented): the YAML
  error was blamed on "an unrendered Helm template" because a quoted `'{{ template "slack.title" . }}'` sat on the
  failing line, with a `helm template` command for a file no chart holds.
* the same charts' opentelemetry-kube-stack renders an OpenTelemetryCollector (mode daemonset): its collector pods
  were planned nowhere (lint said the resource was not read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from derived_helpers import findings, line_of, plan, pods_of
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
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}
---
"""

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {cpu: 500m, memory: 512Mi}}}
"""


# ------------------------------------------------------------------ kustomize replacements files
def _kustomize_tree(root: Path) -> Path:
    base = root / "overlays" / "base"
    base.mkdir(parents=True)
    (root / "deployment.yaml").write_text(WEB)
    (root / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n")
    (base / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../..\n"
        "replacements:\n- path: replacements.yaml\n")
    # A list of replacements, as kubeflow's model-registry overlay writes it: no Kubernetes object.
    (base / "replacements.yaml").write_text(
        "- source:\n    kind: ConfigMap\n    name: params\n    fieldPath: data.NAMESPACE\n"
        "  targets:\n  - select:\n      kind: Deployment\n      name: web\n"
        "    fieldPaths:\n    - spec.template.spec.containers.[name=web].env.[name=NS].value\n")
    return root


def test_a_kustomize_replacements_file_is_not_bad_input(tmp_path: Path) -> None:
    tree = _kustomize_tree(tmp_path)
    linted = runner.invoke(app, ["lint", str(tree)])
    assert linted.exit_code != 2, linted.stdout + linted.stderr
    assert "not a mapping" not in linted.stderr
    planned = runner.invoke(app, ["plan", str(tree), "-o", "json"])
    assert planned.exit_code in (0, 1), planned.stdout + planned.stderr
    assert len([p for p in json.loads(planned.stdout)["pods"] if p["workload"] == "Deployment/web"]) == 2


def test_the_replacements_file_named_alone_is_still_bad_input(tmp_path: Path) -> None:
    tree = _kustomize_tree(tmp_path)
    linted = runner.invoke(app, ["lint", str(tree / "overlays" / "base" / "replacements.yaml")])
    assert linted.exit_code == 2
    assert linted.stdout == ""
    assert "replacements.yaml:1: document is a list, not a mapping" in linted.stderr


# ------------------------------------------------------------------ Helm and Argo CD hooks
# charts/opentelemetry-operator templates/tests/test-service-connection.yaml and opentelemetry-kube-stack
# templates/hooks.yaml, as `helm template` renders them.
HOOKS = """\
---
# Source: opentelemetry-operator/templates/tests/test-service-connection.yaml
apiVersion: v1
kind: Pod
metadata:
  name: "example-opentelemetry-operator-metrics-test"
  namespace: apps
  annotations:
    "helm.sh/hook": test
spec:
  containers:
    - name: wget
      image: "busybox:latest"
      resources: {requests: {cpu: "3", memory: 4Gi}}
---
# Source: opentelemetry-kube-stack/templates/hooks.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: opentelemetry-kube-stack-pre-delete-job
  namespace: apps
  annotations:
    "helm.sh/hook": pre-delete
    "helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: kubectl
        image: bitnami/kubectl
        resources: {requests: {cpu: "3", memory: 4Gi}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: apps
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: migrate, image: app, resources: {requests: {cpu: 100m, memory: 64Mi}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: skipped-by-argo
  namespace: apps
  annotations:
    argocd.argoproj.io/hook: Skip
spec:
  containers:
  - {name: x, image: x, resources: {requests: {cpu: "3", memory: 4Gi}}}
"""


def test_helm_test_and_delete_hooks_are_not_planned_as_pods_of_the_install() -> None:
    out = plan(POOL + WEB + HOOKS)
    workloads = {p["workload"] for p in out["pods"]}
    assert "Deployment/web" in workloads
    assert "Job/migrate" in workloads  # a pre-install hook runs at install: planned
    assert not workloads & {"Pod/example-opentelemetry-operator-metrics-test",
                            "Job/opentelemetry-kube-stack-pre-delete-job", "Pod/skipped-by-argo"}
    # Nothing asks for 3 CPUs: the plan launches no node sized for the hooks.
    assert all(float(n["requested"]["cpu"].rstrip("m")) < 3000 if n["requested"]["cpu"].endswith("m")
               else float(n["requested"]["cpu"]) < 3 for n in out["nodes"])
    said = " ".join(str(w) for w in out["warnings"])
    assert "3 hook object(s) not planned" in said
    assert "helm test" in said and "helm uninstall" in said


def test_the_skipped_hooks_are_listed_with_when_they_run() -> None:
    result = runner.invoke(app, ["plan", "-"], input=POOL + WEB + HOOKS)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "(a hook run only at helm test)" in result.stderr
    assert "(a hook run only at helm uninstall)" in result.stderr


# ------------------------------------------------------------------ OpenTelemetryCollector
# charts/opentelemetry-kube-stack/examples/default/rendered/collector.yaml (config left out)
DAEMON = """\
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: example-daemon
  namespace: apps
  labels:
    app.kubernetes.io/instance: example
spec:
  managementState: managed
  mode: daemonset
  config: {}
  resources:
    limits: {cpu: 200m, memory: 500Mi}
    requests: {cpu: 100m, memory: 250Mi}
  tolerations:
  - {operator: Exists}
"""

# opentelemetry-operator docs: a gateway collector as a Deployment scaled by its autoscaler.
GATEWAY = """\
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: gateway
  namespace: apps
spec:
  replicas: 1
  autoscaler:
    minReplicas: 3
    maxReplicas: 6
  resources:
    requests: {cpu: 250m, memory: 1Gi}
  config: {}
"""

SIDECAR = """\
apiVersion: opentelemetry.io/v1alpha1
kind: OpenTelemetryCollector
metadata:
  name: sidecar-for-my-app
  namespace: apps
spec:
  mode: sidecar
  config: |
    receivers: {}
"""


def _daemon_pods(out: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for n in out["nodes"] for p in n["pods"] if "example-daemon-collector" in str(p)]


def test_a_daemonset_collector_runs_on_every_planned_node() -> None:
    out = plan(POOL + WEB + "---\n" + DAEMON)
    assert out["nodes"]
    for node in out["nodes"]:
        overhead = node["daemonSetRequests"]
        assert overhead.get("cpu") in ("100m", "0.1"), node
    assert not pods_of(out, "OpenTelemetryCollector/example-daemon")


def test_a_deployment_collector_runs_at_least_its_autoscalers_minimum() -> None:
    out = plan(POOL + GATEWAY)
    pods = pods_of(out, "OpenTelemetryCollector/gateway")
    assert len(pods) == 3
    assert pods[0]["requests"] == {"cpu": "250m", "memory": "1Gi"}
    assert pods[0]["labels"]["app.kubernetes.io/component"] == "opentelemetry-collector"
    assert pods[0]["labels"]["app.kubernetes.io/instance"] == "apps.gateway"


def test_a_sidecar_collector_makes_no_pods_of_its_own() -> None:
    out = plan(POOL + WEB + "---\n" + SIDECAR)
    assert {p["workload"] for p in out["pods"]} == {"Deployment/web"}


def test_lint_judges_the_collectors_pods_at_the_resources_lines() -> None:
    text = POOL + GATEWAY.replace("  config: {}\n", "  config: {}\n  nodeSelector: {kubernetes.io/arch: s390x}\n")
    found = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert found, [f.rule for f in findings(text)]
    assert found[0].line == line_of(text, "nodeSelector")
    assert found[0].object.startswith("OpenTelemetryCollector")
    # No more "a custom resource karpplan does not read": its pods are derived, so judged.
    assert not [f for f in findings(POOL + DAEMON) if "does not read" in f.message]


def test_a_running_helm_test_pod_in_a_cluster_dump_still_holds_its_node() -> None:
    node = """\
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-1-1.ec2.internal
  labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux, topology.kubernetes.io/zone: us-east-1a,
           node.kubernetes.io/instance-type: m5.large, karpenter.sh/capacity-type: on-demand}
status:
  allocatable: {cpu: 1930m, memory: 7Gi, pods: "29"}
---
"""
    running = HOOKS.split("---\n# Source: opentelemetry-kube-stack")[0].replace(
        "spec:\n  containers:", "spec:\n  nodeName: ip-10-0-1-1.ec2.internal\n  containers:", 1).replace(
        'cpu: "3"', "cpu: 1500m", 1)
    out = plan(node + running + "---\n" + WEB)
    bound = [p for p in out["pods"] if p["workload"] == "Pod/example-opentelemetry-operator-metrics-test"]
    assert bound and bound[0]["bound"], out["pods"]
    # The 1500m it holds leaves no room for a 500m web pod on that node.
    assert all(p["node"] != "ip-10-0-1-1.ec2.internal" for p in pods_of(out, "Deployment/web"))


# ------------------------------------------------------------------ a repository's data files
def test_a_json_list_of_data_in_a_linted_directory_is_skipped_not_refused(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "web.yaml").write_text(WEB)
    (tmp_path / "deploy" / "pool.yaml").write_text(POOL)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "people.json").write_text('[{"firstName": "Ada", "email": "ada@example.com"}]\n')
    (tmp_path / "kubescape-exceptions.json").write_text('[{"name": "exclude-kube-system", "policyType": "x"}]\n')
    linted = runner.invoke(app, ["lint", str(tmp_path)])
    assert linted.exit_code == 0, linted.stdout + linted.stderr
    planned = runner.invoke(app, ["plan", str(tmp_path), "-o", "json", "-v"])
    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert len(json.loads(planned.stdout)["pods"]) == 2
    assert "people.json:1: (no kind)" in planned.stderr  # listed as skipped with -v: not silently


def test_the_same_list_named_on_the_command_line_is_still_refused(tmp_path: Path) -> None:
    data = tmp_path / "people.json"
    data.write_text('[{"firstName": "Ada"}]\n')
    result = runner.invoke(app, ["lint", str(data)])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{data}:1: document is a list, not a mapping" in result.stderr


def test_objects_written_as_a_bare_list_in_a_directory_are_still_refused(tmp_path: Path) -> None:
    (tmp_path / "pods.yaml").write_text("- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n")
    result = runner.invoke(app, ["plan", str(tmp_path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert "pods.yaml:1: document is a list, not a mapping" in result.stderr


ALERTMANAGER_CONFIG = """\
global:
  resolve_timeout: 10m
receivers:
- name: slack
slack_configs:
- channel: '#alertmanager-testing'
  send_resolved: true
   title: '{{ template "slack.title" . }}'
    text: '{{ template "slack.text" . }}
"""


def test_a_yaml_error_beside_a_quoted_template_is_not_blamed_on_helm(tmp_path: Path) -> None:
    path = tmp_path / "alertmanager-config-with-template.yaml"
    path.write_text(ALERTMANAGER_CONFIG)
    result = runner.invoke(app, ["lint", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{path}:8: invalid YAML: mapping values are not allowed" in result.stderr
    assert "Helm" not in result.stderr


def test_an_unquoted_action_is_still_blamed_on_helm(tmp_path: Path) -> None:
    path = tmp_path / "deployment.yaml"
    path.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"x.fullname\" . }}\n")
    result = runner.invoke(app, ["lint", str(path)])
    assert result.exit_code == 2
    assert f"{path}:4: unrendered Helm template" in result.stderr


# ------------------------------------------------------------------ CloudFormation beside the manifests
# kubernetes-sigs/karpenter's getting-started cloudformation.yaml, aws/karpenter-provider-aws
# test/cloudformation/*.yaml, eksctl's cfn templates: local tags (`!Ref`, `!Sub`, `!GetAtt`) that Kubernetes' YAML
# reader (go-yaml v2) reads as plain values; karpplan refused the whole directory ("could not determine a
# constructor for the tag '!Ref'").
CLOUDFORMATION = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  ClusterName: {Type: String}
Resources:
  KarpenterNodeRole:
    Type: "AWS::IAM::Role"
    Properties:
      RoleName: !Sub "KarpenterNodeRole-${ClusterName}"
      Path: /
      Tags:
        - Key: cluster
          Value: !Ref ClusterName
      Arn: !GetAtt [KarpenterNodeRole, Arn]
      Condition: !If
        - IsGovCloud
        - arn:aws-us-gov
        - arn:aws
"""


def test_a_cloudformation_template_in_the_directory_is_read_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "cloudformation.yaml").write_text(CLOUDFORMATION)
    (tmp_path / "pool.yaml").write_text(POOL)
    (tmp_path / "web.yaml").write_text(WEB)
    linted = runner.invoke(app, ["lint", str(tmp_path)])
    assert linted.exit_code == 0, linted.stdout + linted.stderr
    planned = runner.invoke(app, ["plan", str(tmp_path), "-o", "json"])
    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert len(json.loads(planned.stdout)["pods"]) == 2


def test_a_local_tag_in_a_manifest_reads_as_its_text() -> None:
    out = plan(POOL + WEB.replace("    metadata: {labels: {app: web}}", "    metadata: {labels: {app: web, tier: !front 1}}"))
    pods = pods_of(out, "Deployment/web")
    assert len(pods) == 2
    assert pods[0]["labels"]["tier"] == "1"  # text, as go-yaml keeps a locally tagged scalar


# ------------------------------------------------------------------ OSS label keys against EKS Auto Mode pools
# aws-samples/karpenter-blueprints blueprints/nvidia-gpu-workload: gpu-nodepool-automode.yaml, gpu-nodeclass-automode.yaml
# and the README's workload, whose `karpenter.k8s.aws/instance-gpu-name: t4` the README says to rewrite for Auto Mode.
AUTO_GPU = """\
apiVersion: eks.amazonaws.com/v1
kind: NodeClass
metadata: {name: gpu}
spec:
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    metadata: {labels: {nvidia.com/gpu.present: "true"}}
    spec:
      nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: gpu}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: eks.amazonaws.com/instance-category, operator: In, values: [g]}
        - {key: eks.amazonaws.com/instance-gpu-manufacturer, operator: In, values: [nvidia]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
---
apiVersion: v1
kind: Pod
metadata: {name: nvidia-smi}
spec:
  nodeSelector:
    nvidia.com/gpu.present: "true"
    karpenter.k8s.aws/instance-gpu-name: "t4"
  containers:
  - name: nvidia-smi
    image: public.ecr.aws/amazonlinux/amazonlinux:2023-minimal
    resources:
      requests: {memory: 8Gi, cpu: 3500m}
      limits: {memory: 8Gi, nvidia.com/gpu: 1}
  tolerations: [{key: nvidia.com/gpu, effect: NoSchedule, operator: Exists}]
"""


def test_an_oss_instance_label_against_auto_mode_pools_names_the_auto_mode_key() -> None:
    (found,) = [f for f in findings(AUTO_GPU) if f.rule == "no-pool-can-launch"]
    assert found.line == line_of(AUTO_GPU, "karpenter.k8s.aws/instance-gpu-name")
    assert "select eks.amazonaws.com/instance-gpu-name instead" in found.fix
    fixed = AUTO_GPU.replace("karpenter.k8s.aws/instance-gpu-name", "eks.amazonaws.com/instance-gpu-name")
    assert not [f for f in findings(fixed) if f.rule == "no-pool-can-launch"]
    assert len(pods_of(plan(fixed), "Pod/nvidia-smi")) == 1


def test_lint_says_at_the_hook_annotation_that_the_hook_is_not_judged() -> None:
    text = POOL + WEB + HOOKS
    hooks = [f for f in findings(text) if "a hook run only at" in f.message]
    assert [(f.line, f.severity.value) for f in hooks] == [
        (line_of(text, '"helm.sh/hook": test'), "info"),
        (line_of(text, '"helm.sh/hook": pre-delete'), "info"),
        (line_of(text, "argocd.argoproj.io/hook: Skip"), "info"),
    ]
    assert "helm uninstall" in hooks[1].message
    assert not [f for f in findings(text) if f.severity.value != "info" and "migrate" in f.object]


# ------------------------------------------------------------------ FlinkDeployment
# awslabs/data-on-eks data-stacks/flink-on-eks/examples/flink-sample-job.yaml (flinkConfiguration trimmed)
FLINK = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: basic-example
  namespace: flink-team-a
spec:
  image: docker.io/library/flink:2.0.0-java17
  flinkVersion: v2_0
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
  serviceAccount: flink-team-a
  podTemplate:
    apiVersion: v1
    kind: Pod
    metadata:
      name: pod-template
    spec:
      nodeSelector:
        NodeGroupType: "StreamingOptimized"
      containers:
        - name: flink-main-container
          env:
            - {name: ENABLE_BUILT_IN_PLUGINS, value: "flink-s3-fs-presto-2.0.0.jar"}
  jobManager:
    resource:
      memory: "2048m"
      cpu: 1
  taskManager:
    replicas: 2
    resource:
      memory: "2048m"
      cpu: 1
  job:
    jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar
    parallelism: 2
    upgradeMode: stateless
"""

STREAMING_POOL = POOL.replace("metadata: {name: default}", "metadata: {name: streaming}").replace(
    "  template:\n    spec:", "  template:\n    metadata: {labels: {NodeGroupType: StreamingOptimized}}\n    spec:")


def test_a_flink_deployment_is_planned_as_its_jobmanager_and_taskmanagers() -> None:
    out = plan(STREAMING_POOL + FLINK)
    managers = pods_of(out, "Deployment/basic-example")
    workers = pods_of(out, "ReplicaSet/basic-example-taskmanager")
    assert len(managers) == 1 and len(workers) == 2
    # Flink's "2048m" is 2048 MiB (MemorySize), not 2048 millibytes
    assert workers[0]["requests"] == {"cpu": "1", "memory": "2Gi"}
    assert workers[0]["labels"]["component"] == "taskmanager"


def test_flink_taskmanagers_follow_the_parallelism_when_replicas_are_not_written() -> None:
    text = FLINK.replace("    replicas: 2\n", "").replace("parallelism: 2", "parallelism: 5")
    assert len(pods_of(plan(STREAMING_POOL + text), "ReplicaSet/basic-example-taskmanager")) == 3  # ceil(5 / 2)
    session = text[:text.index("  job:")]
    assert not pods_of(plan(STREAMING_POOL + session), "ReplicaSet/basic-example-taskmanager")


def test_lint_blames_the_flink_pod_templates_node_selector_at_its_line() -> None:
    found = [f for f in findings(POOL + FLINK) if f.rule == "no-pool-can-launch"]
    assert found
    assert {f.line for f in found} == {line_of(FLINK, 'NodeGroupType: "StreamingOptimized"') + POOL.count("\n")}
    assert "podTemplate.spec.nodeSelector" in found[0].field
