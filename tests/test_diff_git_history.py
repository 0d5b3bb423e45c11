"""`karpplan diff --git REF PATH...` over real commits of aws-samples/karpenter-blueprints (session 19), each
repository rebuilt from the files as the commit had them (condensed), read as a reviewer reads the answer: what
exists only at REF is named `REF:PATH` (git's notation: the working tree's PATH is another file, or none), and a
finding that left with its workload is not "fixed"."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from diff_helpers import karpplan

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)


def _commit(repo: Path, files: dict[str, list[dict[str, Any]]], message: str) -> None:
    for name, docs in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "karpenter-blueprints"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "ci@example.com")
    _git(root, "config", "user.name", "ci")
    return root


def _pool(name: str, family: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"limits": {"cpu": "20"}, "template": {"metadata": {"labels": {"intent": "apps", **labels}}, "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": [family]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]}}}}


def _deployment(name: str, replicas: int, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {
                         "nodeSelector": {"intent": "apps"},
                         "containers": [{"name": name, "image": "public.ecr.aws/eks-distro/kubernetes/pause:3.9",
                                         "resources": {"requests": {"cpu": cpu, "memory": "512Mi"}}}]}}}}


def test_a_renamed_blueprint_names_what_left_at_the_revision(tmp_path: Path) -> None:
    # commit 9ffc292 "Add reserved capacity blueprint to include ODCR (#40)": blueprints/saving-plans became
    # blueprints/reserved-capacity, its Deployment reserved-first (20 x 950m) became savings-workload (25 x 1)
    repo = _repo(tmp_path)
    _commit(repo, {"blueprints/saving-plans/savings-plans.yaml": [_pool("savings-plans", "c4")],
                   "blueprints/saving-plans/workload.yaml": [_deployment("reserved-first", 20, "950m")]}, "saving plans")
    (repo / "blueprints" / "saving-plans" / "workload.yaml").unlink()
    (repo / "blueprints" / "saving-plans" / "savings-plans.yaml").unlink()
    _commit(repo, {"blueprints/reserved-capacity/savings-plans.yaml": [_pool("savings-plans", "c5")],
                   "blueprints/reserved-capacity/workload-savings.yaml": [_deployment("savings-workload", 25, "1")]},
            "reserved capacity")
    out = karpplan("diff", "--git", "HEAD^", "blueprints/saving-plans", "blueprints/reserved-capacity",
                   "-o", "json", cwd=repo)
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    # the emptied directory git leaves behind (README.md, untracked files) is an empty HEAD side, not bad input
    assert "blueprints/saving-plans holds no manifest in the working tree: HEAD is empty there (everything in it " \
           "is removed)" in doc["notes"]
    by_name = {w["workload"]: w for w in doc["workloads"]}
    # the removed Deployment lives only at HEAD^: a reviewer opening blueprints/saving-plans/workload.yaml finds nothing
    assert by_name["Deployment/default/reserved-first"]["change"] == "removed"
    assert by_name["Deployment/default/reserved-first"]["file"] == "HEAD^:blueprints/saving-plans/workload.yaml"
    assert by_name["Deployment/default/savings-workload"]["file"] == "blueprints/reserved-capacity/workload-savings.yaml"
    # replicas-without-spread left with reserved-first and came back on savings-workload: nothing was fixed
    assert doc["lint"]["fixed"] == []
    [gone] = doc["lint"]["removedWithObject"]
    assert (gone["rule"], gone["object"], gone["file"]) == (
        "replicas-without-spread", "Deployment/default/reserved-first", "HEAD^:blueprints/saving-plans/workload.yaml")
    assert any(f["object"] == "Deployment/default/savings-workload" for f in doc["lint"]["new"])
    markdown = karpplan("diff", "--git", "HEAD^", "blueprints/saving-plans", "blueprints/reserved-capacity",
                        "-o", "markdown", cwd=repo).stdout
    assert "0 fixed, 1 gone with their objects" in markdown
    assert "### Lint findings gone with their objects (1: removed or renamed, not fixed)" in markdown
    assert "### Lint findings fixed" not in markdown


def test_bad_input_at_the_revision_is_named_at_the_revision(tmp_path: Path) -> None:
    # commit be1fe4f "Update SOCI snapshotter blueprint (#51)": before it, blueprints/soci-snapshotter held both
    # soci-snapshotter.yaml and soci-snapshotter-automode.yaml, each defining NodePool soci-snapshotter (pick one
    # to apply); the commit moved the Auto Mode one to auto-mode/. The duplicate is BASE's, in a file the working
    # tree no longer has: the message must say so, or the reviewer looks for it in vain.
    repo = _repo(tmp_path)
    _commit(repo, {"blueprints/soci-snapshotter/soci-snapshotter-automode.yaml": [_pool("soci-snapshotter", "m6i")],
                   "blueprints/soci-snapshotter/soci-snapshotter.yaml": [_pool("soci-snapshotter", "m5")]}, "soci")
    (repo / "blueprints" / "soci-snapshotter" / "soci-snapshotter-automode.yaml").unlink()
    _commit(repo, {"blueprints/soci-snapshotter/workload.yaml": [_deployment("soci", 2, "500m")]}, "auto mode moved")
    out = karpplan("diff", "--git", "HEAD^", "blueprints/soci-snapshotter", cwd=repo)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == ("HEAD^:blueprints/soci-snapshotter/soci-snapshotter.yaml:1: NodePool "
                                  "soci-snapshotter is defined twice (first at "
                                  "HEAD^:blueprints/soci-snapshotter/soci-snapshotter-automode.yaml:1)")


def test_without_any_capacity_on_either_side_no_pod_is_newly_unschedulable(tmp_path: Path) -> None:
    # commit b3cadd0 "doc(Static Capacity): add note to blueprint about static capacity (#44)": the overprovision
    # blueprint's Deployment workload goes from 10 to 14 replicas; the blueprint relies on the cluster's default
    # NodePool, which the repository keeps in Terraform. Both sides leave every pod unschedulable for want of any
    # NodePool: the 4 added replicas are no regression of the change, and the check must not fail on them.
    repo = _repo(tmp_path)
    workload = _deployment("workload", 10, "512m")
    _commit(repo, {"blueprints/overprovision/workload.yaml": [workload]}, "overprovision")
    workload["spec"]["replicas"] = 14
    _commit(repo, {"blueprints/overprovision/workload.yaml": [workload]}, "static capacity note")
    out = karpplan("diff", "--git", "HEAD^", "blueprints/overprovision", "-o", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["newlyUnschedulable"] == [] and doc["gate"]["reasons"] == []
    assert any(n.startswith("BASE and HEAD have no NodePool") for n in doc["notes"])
    assert {w["workload"]: w["change"] for w in doc["workloads"]} == {"Deployment/default/workload": "changed"}
