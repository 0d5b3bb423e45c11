"""A node Karpenter is already disrupting (its `karpenter.sh/disrupted:NoSchedule` taint, v1beta1's
`karpenter.sh/disruption=disrupting`) or that is being deleted (`metadata.deletionTimestamp`), as `kubectl get
nodes -o yaml` shows it mid-command: no candidate ("Node is deleting or marked for deletion", statenode.go
`ValidateNodeDisruptable`), no home for any pod, and its pods are placed by every consolidation simulation
(helpers.go `SimulateScheduling` adds `deletingNodePods`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_consolidate_semantics import node, nodepool, pod, reason, removed, run, write


def deleting(name: str, how: str) -> dict[str, Any]:
    doc = node(name)
    if how == "deletionTimestamp":
        doc["metadata"]["deletionTimestamp"] = "2024-02-27T22:32:12Z"
    elif how == "v1":
        doc["spec"] = {"taints": [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]}
    else:
        doc["spec"] = {"taints": [{"key": "karpenter.sh/disruption", "value": "disrupting", "effect": "NoSchedule"}]}
    return doc


@pytest.mark.parametrize("how", ["v1", "v1beta1", "deletionTimestamp"])
def test_a_node_being_disrupted_is_no_candidate_and_its_pods_need_room(tmp_path: Path, how: str) -> None:
    # One of "a" and "b" could take the other's pod and go. But "old" is going, and its 1.5 CPU pod fits nowhere
    # left: each simulation needs a new m5.large for it, not cheaper than the candidate, so Karpenter keeps both.
    # (A budget of 100%: the default 10% of 3 nodes is 1, which "old" itself uses up.)
    docs = [deleting("old", how), node("a"), node("b", zone="us-east-1b"),
            pod("leaving", "old", cpu="1500m", owner="ReplicaSet/leaving", labels={"app": "leaving"}),
            pod("wa", "a", cpu="1000m"), pod("wb", "b", cpu="500m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=[{"nodes": "100%"}]),)))
    assert reason(report, "old") == "Node is deleting or marked for deletion"
    assert report.actions == []
    assert "Can't replace with a cheaper node" in reason(report, "b")
    # under the default budget the node being disrupted takes the one disruption 10% of 3 nodes allows
    default = run(write(tmp_path, *docs))
    assert default.actions == []
    assert reason(default, "b") == ("No allowed disruptions for disruption reason Underutilized: NodePool \"default\"'s "
                                    "budget allows 1 at a time and 1 node(s) already disrupting or NotReady use it up "
                                    "(old)")


def test_without_the_disrupted_node_the_same_cluster_consolidates(tmp_path: Path) -> None:
    docs = [node("a"), node("b", zone="us-east-1b"), pod("wa", "a", cpu="1000m"), pod("wb", "b", cpu="500m")]
    assert list(removed(run(write(tmp_path, *docs))).values()) == [("single", "delete")]
