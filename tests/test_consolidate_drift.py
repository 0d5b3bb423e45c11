"""Drift, as the disruption controller runs it between Emptiness and consolidation (drift.go): a node whose
NodeClaim shows `Drifted=True` (`kubectl get nodeclaims -o yaml`, matched to its Node by `status.nodeName` or
`status.providerID`) is replaced whatever the price, or deleted when the nodes left take its pods, within the
`Drifted` budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_consolidate_semantics import node, nodepool, pod, reason, removed, run, write


def nodeclaim(name: str, node_name: str | None, provider: str | None = None,
              since: str = "2024-11-20T10:00:00Z") -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": [
        {"type": "Initialized", "status": "True", "lastTransitionTime": "2024-11-01T10:00:00Z", "reason": "Initialized"},
        {"type": "Drifted", "status": "True", "lastTransitionTime": since, "reason": "NodeClassDrift", "message": ""}]}
    if node_name is not None:
        status["nodeName"] = node_name
    if provider is not None:
        status["providerID"] = provider
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
            "status": status}


def _busy(tmp_path: Path, *extra: dict[str, Any], pools: tuple[dict[str, Any], ...] | None = None) -> Path:
    # "old" (m5.large) runs two 600m pods; "full" (m5.large) has no room for them: a drifted "old" needs a new
    # m5.large, no cheaper, which consolidation would never launch
    docs = [node("old"), pod("a", "old", cpu="600m"), pod("b", "old", cpu="600m"),
            node("full", zone="us-east-1b"), pod("c", "full", cpu="1800m", owner="ReplicaSet/c", labels={"app": "c"}),
            *extra]
    return write(tmp_path, *docs, pools=pools)


def test_a_drifted_node_is_replaced_though_no_cheaper(tmp_path: Path) -> None:
    report = run(_busy(tmp_path, nodeclaim("default-x1", "old")))
    assert removed(report) == {"old": ("drift", "replace")}
    action = report.actions[0]
    assert action.replacement is not None and action.replacement.instance_type == "m5.large"
    assert abs(action.savings) < 1e-9
    assert "full" not in removed(report)


def test_a_nodeclaim_names_its_node_by_provider_id(tmp_path: Path) -> None:
    old = node("old")
    old["spec"] = {"providerID": "aws:///us-east-1a/i-0abc"}
    docs = [old, pod("a", "old", cpu="600m"), pod("b", "old", cpu="600m"),
            node("full", zone="us-east-1b"), pod("c", "full", cpu="1800m", owner="ReplicaSet/c", labels={"app": "c"}),
            nodeclaim("default-x1", None, provider="aws:///us-east-1a/i-0abc")]
    assert removed(run(write(tmp_path, *docs))) == {"old": ("drift", "replace")}


def test_without_the_drifted_condition_nothing_happens(tmp_path: Path) -> None:
    claim = nodeclaim("default-x1", "old")
    claim["status"]["conditions"][1]["status"] = "False"
    report = run(_busy(tmp_path, claim))
    assert report.actions == []
    assert "Can't replace with a cheaper node" in reason(report, "old")


def test_a_drifted_budget_of_zero_blocks_drift_only(tmp_path: Path) -> None:
    pool = nodepool(budgets=[{"nodes": "0", "reasons": ["Drifted"]}])
    report = run(_busy(tmp_path, nodeclaim("default-x1", "old"), pools=(pool,)))
    assert report.actions == []
    assert "old" not in removed(report)


def test_an_empty_drifted_node_of_a_pool_that_never_consolidates_is_deleted_by_drift(tmp_path: Path) -> None:
    pool = nodepool(after="Never")
    docs = [node("idle"), nodeclaim("default-x2", "idle")]
    report = run(write(tmp_path, *docs, pools=(pool,)))
    assert removed(report) == {"idle": ("drift", "delete")}
