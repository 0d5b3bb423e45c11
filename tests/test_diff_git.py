"""`karpplan diff --git REF PATH...`: PATH at a revision (no checkout) against the working tree, on a real repo."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from diff_helpers import deployment, karpplan, pool, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose first commit has k8s/all.yaml with web at 2 replicas."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "ci@example.com")
    _git(root, "config", "user.name", "ci")
    write(root / "k8s" / "all.yaml", pool(), deployment("web", 2))
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base")
    return root


def test_the_working_tree_against_a_revision(repo: Path) -> None:
    write(repo / "k8s" / "all.yaml", pool(), deployment("web", 4))  # uncommitted: HEAD of the diff
    out = karpplan("diff", "--git", "main", "k8s", "--region", "us-east-1", "-o", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["delta"]["hourlyCost"] == pytest.approx(0.192)  # two more m5.large
    web = doc["workloads"][0]
    assert web["workload"] == "Deployment/shop/web" and web["change"] == "changed"
    assert web["file"] == "k8s/all.yaml"  # named as in the working tree, not the temporary copy
    assert doc["base"]["paths"] == ["k8s"]
    again = karpplan("diff", "--git", "main", "k8s", "--region", "us-east-1", "-o", "json", cwd=repo)
    assert again.stdout == out.stdout


def test_a_revision_and_a_subdirectory_as_the_current_directory(repo: Path) -> None:
    write(repo / "k8s" / "all.yaml", pool(), deployment("web", 2), deployment("api", 1))
    _git(repo, "commit", "-qam", "api")
    out = karpplan("diff", "--git", "HEAD~1", ".", "--region", "us-east-1", "-o", "json", cwd=repo / "k8s")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    changes = {w["workload"]: w["change"] for w in doc["workloads"]}
    assert changes == {"Deployment/shop/web": "unchanged", "Deployment/shop/api": "added"}
    assert doc["workloads"][0]["file"] == "all.yaml"


def test_the_repository_is_the_paths_not_the_current_directorys(repo: Path, tmp_path: Path) -> None:
    """As `git -C`: run from outside the repository, `diff --git main ../repo/k8s` reads the repository holding
    the PATH (a new user ran it from a scratch directory and got "... is not inside a git repository")."""
    write(repo / "k8s" / "all.yaml", pool(), deployment("web", 4))
    elsewhere = tmp_path / "scratch"
    elsewhere.mkdir()
    out = karpplan("diff", "--git", "main", "../repo/k8s", "--region", "us-east-1", "-o", "json", cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["delta"]["hourlyCost"] == pytest.approx(0.192)
    assert doc["workloads"][0]["file"] == "../repo/k8s/all.yaml"  # named as the user named the PATH


def test_a_path_the_revision_lacks_is_an_empty_side_and_said_so(repo: Path) -> None:
    write(repo / "apps" / "api.yaml", deployment("api", 1))
    out = karpplan("diff", "--git", "main", "k8s", "apps", "--region", "us-east-1", "-o", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert any("apps does not exist at main" in note for note in doc["notes"])
    assert {w["workload"]: w["change"] for w in doc["workloads"]}["Deployment/shop/api"] == "added"


def test_unknown_revision_no_repository_and_missing_path_are_bad_input(repo: Path, tmp_path: Path) -> None:
    out = karpplan("diff", "--git", "no-such-branch", "k8s", cwd=repo)
    assert out.returncode == 2 and out.stdout == ""
    assert "no-such-branch" in out.stderr and "Traceback" not in out.stderr
    outside = tmp_path / "plain"
    outside.mkdir()
    out = karpplan("diff", "--git", "main", ".", cwd=outside)
    assert out.returncode == 2 and "not inside a git repository" in out.stderr
    out = karpplan("diff", "--git", "main", "nowhere", cwd=repo)
    assert out.returncode == 2 and "nowhere" in out.stderr and len(out.stderr.strip().splitlines()) == 1
