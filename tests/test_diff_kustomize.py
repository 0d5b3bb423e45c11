"""`karpplan diff` on a kustomize tree reads it as plan and lint read it (karpplan/diff/side.py)."""

from __future__ import annotations

import json
from pathlib import Path

from diff_helpers import deployment, karpplan, pool, write


def _diff(tmp_path: Path) -> tuple[int, dict[str, object]]:
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    assert "Traceback" not in out.stderr
    return out.returncode, json.loads(out.stdout)


def test_a_kustomize_tree_is_read_as_plan_and_lint_read_it(tmp_path: Path) -> None:
    # A GitOps PR on a kustomize tree: its patch file (a second Deployment web) exited 2 as "defined twice", and
    # the kustomization's namespace was not the workloads'
    kustomization = "resources: [app.yaml, pool.yaml]\nnamespace: shop\npatches:\n  - path: patch.yaml\n"
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n"
    for side, replicas in (("base", 2), ("head", 4)):
        write(tmp_path / side / "kustomization.yaml", kustomization)
        write(tmp_path / side / "pool.yaml", pool())
        write(tmp_path / side / "app.yaml", deployment("web", replicas, namespace="default"))
        write(tmp_path / side / "patch.yaml", patch)
    code, doc = _diff(tmp_path)
    assert code == 0
    workloads = {w["workload"]: w for w in doc["workloads"]}  # type: ignore[attr-defined]
    assert (workloads["Deployment/shop/web"]["podsBase"], workloads["Deployment/shop/web"]["podsHead"]) == (2, 4)
