"""A repository holding alternative bundles of the same objects (GoogleCloudPlatform/microservices-demo's
kubernetes-manifests/ and release/; argo-cd's install.yaml and ha/install.yaml), linted as a platform engineer
runs it (`karpplan lint .`): every object is judged, and the second definition of an object is a warning at its
own file:line naming the first. `plan` cannot plan two definitions of one object and refuses them (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app

runner = CliRunner()
TREE = Path(__file__).resolve().parent.parent / "fixtures" / "real-survey" / "microservices-demo-release"
SPLIT = TREE / "kubernetes-manifests" / "frontend.yaml"
RELEASE = TREE / "release" / "kubernetes-manifests.yaml"


def test_lint_of_a_repository_with_a_release_bundle_reports_the_second_definition() -> None:
    result = runner.invoke(app, ["lint", str(TREE), "-o", "json"])
    assert result.exit_code == 0, result.stdout + result.stderr  # exited 2, nothing linted
    findings = json.loads(result.stdout)["findings"]
    twice = [f for f in findings if "defined twice" in f["message"]]
    assert [(f["file"], f["line"], f["severity"], f["object"]) for f in twice] == [
        (str(RELEASE), 22, "warning", "Deployment/default/frontend")]
    assert f"(first at {SPLIT}:15)" in twice[0]["message"]
    assert f"karpplan lint {RELEASE}" in twice[0]["fix"]


def test_each_bundle_on_its_own_has_no_such_finding() -> None:
    for path in (SPLIT, RELEASE):
        result = runner.invoke(app, ["lint", str(path), "-o", "json"])
        assert result.exit_code == 0
        assert not [f for f in json.loads(result.stdout)["findings"] if "defined twice" in f["message"]]


def test_a_copy_in_one_stream_is_a_warning_too_and_plan_still_refuses_it() -> None:
    text = SPLIT.read_text()
    other = text.replace("image: frontend", "image: frontend:v0.10.6")  # the same written twice is one object
    result = runner.invoke(app, ["lint", "-", "-o", "json"], input=text + "\n---\n" + other)
    assert result.exit_code == 0, result.stdout + result.stderr
    twice = [f for f in json.loads(result.stdout)["findings"] if "defined twice" in f["message"]]
    assert len(twice) == 1 and twice[0]["fix"] == "keep one definition of the object"
    planned = runner.invoke(app, ["plan", str(TREE), "--region", "us-east-1"])
    assert planned.exit_code == 2 and planned.stdout == ""
    assert "Deployment default/frontend is defined twice" in planned.stderr


def test_a_bundle_repeating_many_objects_is_one_finding_at_its_first(tmp_path: Path) -> None:
    # argo-cd's manifests/ (install.yaml, ha/install.yaml, namespace-install.yaml, core-install.yaml, ...): 64
    # second definitions read as 64 warnings; one per file names the first three and counts the rest.
    deployment = SPLIT.read_text().split("\n---\n")[0]
    bundle = "\n---\n".join(deployment.replace("name: frontend\n", f"name: frontend-{i}\n", 1) for i in range(5))
    (tmp_path / "install.yaml").write_text(bundle)
    (tmp_path / "ha").mkdir()
    (tmp_path / "ha" / "install.yaml").write_text(bundle.replace("image: frontend", "image: frontend:ha"))
    result = runner.invoke(app, ["lint", str(tmp_path), "-o", "json"])
    twice = [f for f in json.loads(result.stdout)["findings"] if "defined" in f["message"]]
    assert len(twice) == 1, twice
    assert twice[0]["message"].startswith("5 objects of this file are defined earlier in the input too: Deployment "
                                          "default/frontend-0 (first at ")
    assert " and 2 more: " in twice[0]["message"]


def test_an_object_written_the_same_in_two_files_is_one_object(tmp_path: Path) -> None:
    # cert-manager deploy/manifests: Namespace cert-manager in 01-namespace.yaml and namespace.yaml, the same.
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cert-manager\n"
    (tmp_path / "01-namespace.yaml").write_text("---\n" + namespace)
    (tmp_path / "namespace.yaml").write_text(namespace)
    (tmp_path / "web.yaml").write_text(SPLIT.read_text())
    linted = runner.invoke(app, ["lint", str(tmp_path), "-o", "json"])
    assert linted.exit_code == 0 and "defined" not in linted.stdout
    planned = runner.invoke(app, ["plan", str(tmp_path), "--region", "us-east-1", "-o", "json"])
    assert planned.exit_code in (0, 1), planned.stderr  # exited 2: "Namespace cert-manager is defined twice"


def test_a_namespaced_objects_finding_names_its_namespace(tmp_path: Path) -> None:
    # stefanprodan/podinfo deploy/bases/database/pvc-primary.yaml: "PersistentVolumeClaim/database-primary" named
    # no namespace, though a claim is in one (as every workload's finding says it).
    (tmp_path / "pvc.yaml").write_text("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n"
                                       "  namespace: db\nspec:\n  accessModes: [ReadWriteOnce]\n"
                                       "  resources: {requests: {storage: 1Gi}}\n")
    (tmp_path / "sts.yaml").write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: db}\nspec:\n  replicas: 1\n"
        "  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n"
        "      containers: [{name: c, image: pg}]\n      volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]\n")
    result = runner.invoke(app, ["lint", str(tmp_path), "-o", "json"])
    objects = {f["object"] for f in json.loads(result.stdout)["findings"]}
    assert "PersistentVolumeClaim/db/data" in objects, objects
