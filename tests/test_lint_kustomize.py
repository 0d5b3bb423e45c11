"""lint on a kustomize tree given as a directory (`karpplan lint manifests/`, as a GitOps repo's CI runs it): the
files its kustomizations name as patches are no objects of their own, so they are neither "defined twice" nor
unreadable, and the kustomization says to lint `kustomize build`'s output for the merged objects. The tree is
kubernetes-sigs/metrics-server manifests/ (abridged)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.core import Severity
from karpplan.lint.run import LintOptions, lint

runner = CliRunner()

FILES = {
    "base/kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
commonLabels:
  k8s-app: metrics-server
resources:
  - deployment.yaml
""",
    "base/deployment.yaml": """\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  selector:
    matchLabels:
      k8s-app: metrics-server
  template:
    metadata:
      labels:
        k8s-app: metrics-server
    spec:
      priorityClassName: system-cluster-critical
      containers:
      - name: metrics-server
        image: registry.k8s.io/metrics-server/metrics-server:v0.7.2
        resources:
          requests:
            cpu: 100m
            memory: 200Mi
""",
    "components/high-availability/kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
- pdb.yaml
patchesStrategicMerge:
- patch.yaml
""",
    "components/high-availability/pdb.yaml": """\
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  minAvailable: 1
  selector:
    matchLabels:
      k8s-app: metrics-server
""",
    "components/high-availability/patch.yaml": """\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  replicas: 2
  template:
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels:
                k8s-app: metrics-server
            namespaces:
            - kube-system
            topologyKey: kubernetes.io/hostname
""",
    "components/high-availability-1.21+/kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
components:
- ../high-availability
patches:
- path: patch-pdb-version.yaml
  target:
    kind: PodDisruptionBudget
""",
    "components/high-availability-1.21+/patch-pdb-version.yaml": """\
- op: replace
  path: "/apiVersion"
  value: policy/v1
""",
    "overlays/release-ha-1.21+/kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../base
components:
- ../../components/high-availability-1.21+
""",
}


def tree(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / "manifests" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "manifests"


def test_a_kustomize_tree_lints_without_its_patches_read_as_objects(tmp_path: Path) -> None:
    result = runner.invoke(app, ["lint", str(tree(tmp_path))])
    # Read as objects, the strategic merge patch was Deployment metadata-server "defined twice" and the JSON 6902
    # patch "a list, not a mapping": exit 2 on a tree kustomize builds fine.
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "defined twice" not in result.stdout + result.stderr


def test_the_kustomizations_say_their_patches_are_not_merged_and_how_to_lint_the_build(tmp_path: Path) -> None:
    root = tree(tmp_path)
    report = lint(LintOptions(paths=(str(root),)))
    notes = [f for f in report.findings if "kustomize patch" in f.message]
    assert [(Path(f.file).relative_to(root).as_posix(), f.line, f.severity) for f in notes] == [
        ("components/high-availability-1.21+/kustomization.yaml", 6, Severity.info),
        ("components/high-availability/kustomization.yaml", 6, Severity.info)]
    assert "kustomize build OVERLAY | karpplan lint -" in notes[0].fix  # a component builds within an overlay
    # The base's Deployment is still linted as written.
    assert "Deployment/kube-system/metrics-server" in report.object_names


def test_a_patch_named_by_no_kustomization_in_the_input_is_read_as_written(tmp_path: Path) -> None:
    # Given as a file of its own, the patch is read as an object: a second Deployment metrics-server, which lint
    # reports at the patch (naming the base's line) and plan refuses.
    root = tree(tmp_path)
    paths = [str(root / "base"), str(root / "components/high-availability/patch.yaml")]
    result = runner.invoke(app, ["lint", *paths, "-o", "json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    twice = [f for f in json.loads(result.stdout)["findings"] if "defined twice" in f["message"]]
    assert [(Path(f["file"]).name, f["severity"]) for f in twice] == [("patch.yaml", "warning")]
    assert f"(first at {root / 'base' / 'deployment.yaml'}:2)" in twice[0]["message"]
    planned = runner.invoke(app, ["plan", *paths, "--region", "us-east-1"])
    assert planned.exit_code == 2 and "defined twice" in planned.stderr and planned.stdout == ""


def test_commonlabels_not_applied_are_said_once_at_the_field(tmp_path: Path) -> None:
    """base/kustomization.yaml sets commonLabels: lint and plan read the Deployment with the labels its file
    writes; both said nothing of it (only a kustomization's namespace is applied)."""
    root = tree(tmp_path)
    report = lint(LintOptions(paths=(str(root),)))
    said = [f for f in report.findings if "commonLabels" in f.message]
    assert [(Path(f.file).relative_to(root).as_posix(), f.line, f.severity) for f in said] == [
        ("base/kustomization.yaml", 3, Severity.info)]
    assert "kustomize build" in said[0].fix
    result = runner.invoke(app, ["plan", str(root / "base"), "--region", "us-east-1", "-o", "json"])
    warnings = [w for w in json.loads(result.stdout)["warnings"] if "commonLabels" in w]
    assert len(warnings) == 1 and "kustomization.yaml:3" in warnings[0], warnings


def test_plan_reads_the_tree_as_lint_does_and_says_what_it_left_out(tmp_path: Path) -> None:
    """`karpplan plan` on the same tree exited 2 ("document is a list", "Deployment defined twice"): its patch
    files are left out as lint leaves them out (one home, `inputs/kustomize.py`), and a warning says the
    objects were planned unpatched and how to plan the build."""
    result = runner.invoke(app, ["plan", str(tree(tmp_path)), "--region", "us-east-1", "--time-limit", "5",
                                 "-o", "json"])
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    said = " ".join(json.loads(result.stdout)["warnings"])
    assert "a kustomize tree: the patch files its kustomizations name are not objects" in said
    assert "| karpplan plan -" in said


# ---------------------------------------------------------------------------------------- kustomize namespace
SURVEY = Path(__file__).resolve().parent.parent / "fixtures" / "real-survey" / "eks-workshop-retail-store"


def _planned_namespaces(*paths: str) -> dict[str, str]:
    result = runner.invoke(app, ["plan", *paths, "-o", "json"])
    assert result.exit_code in (0, 1), result.stdout
    return {p["workload"]: p["namespace"] for p in json.loads(result.stdout)["pods"]}


def test_a_kustomizations_namespace_is_the_namespace_of_its_resources() -> None:
    # eks-workshop-v2 base-application: each component's kustomization sets `namespace:`, its files write none
    assert _planned_namespaces(str(SURVEY)) == {"Deployment/carts": "carts", "Deployment/carts-dynamodb": "carts",
                                                "Deployment/ui": "ui"}


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


APP = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: written}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
"""


def test_the_outermost_kustomizations_namespace_wins(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "kustomization.yaml": "namespace: outer\nresources: [app]\n",
        "app/kustomization.yaml": "namespace: inner\nresources: [deployment.yaml]\n",
        "app/deployment.yaml": APP})
    assert _planned_namespaces(str(root)) == {"Deployment/web": "outer"}


def test_a_base_two_overlays_put_in_different_namespaces_stays_as_written(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "base/kustomization.yaml": "resources: [deployment.yaml]\n",
        "base/deployment.yaml": APP,
        "overlays/dev/kustomization.yaml": "namespace: dev\nresources: [../../base]\n",
        "overlays/prod/kustomization.yaml": "namespace: prod\nresources: [../../base]\n"})
    assert _planned_namespaces(str(root)) == {"Deployment/web": "written"}
    assert _planned_namespaces(str(root / "base"), str(root / "overlays" / "prod")) == {"Deployment/web": "prod"}


def test_a_kustomization_that_writes_no_kind_is_skipped_as_a_kustomization(tmp_path: Path) -> None:
    # argocd-example-apps sock-shop/kustomization.yaml is `resources:` only: plan listed it as
    # "1 (no kind) (not a Kubernetes object)"
    root = _tree(tmp_path, {"kustomization.yaml": "resources: [app.yaml]\n", "app.yaml": APP})
    result = runner.invoke(app, ["plan", str(root), "-v", "-o", "json"])
    assert result.exit_code in (0, 1), result.stdout
    assert "1 Kustomization" in result.stderr and "(no kind)" not in result.stderr


def test_a_replicas_transformer_not_applied_is_said_at_its_field(tmp_path: Path) -> None:
    # An overlay's `replicas:` (kustomize's ReplicaCountTransformer) sets what plan would plan: not applied, it is
    # said, not left silent.
    root = tree(tmp_path)
    overlay = root / "overlays" / "prod"
    overlay.mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(
        "resources:\n- ../../base\nreplicas:\n- name: metrics-server\n  count: 3\n")
    report = lint(LintOptions(paths=(str(overlay), str(root / "base"))))
    said = [f for f in report.findings if f.file == str(overlay / "kustomization.yaml")]
    assert [(f.line, f.field) for f in said] == [(3, "replicas")]
    assert "sets the replicas of the workloads its replicas field names" in said[0].message
