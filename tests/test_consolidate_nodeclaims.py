"""NodeClaims pasted with the nodes (`kubectl get nodes,nodeclaims -o yaml`) say what the Node does not: a
NodeClaim not yet `Initialized` makes no candidate ("Node isn't initialized", statenode.go), and one whose
`Consolidatable` condition is not True (consolidateAfter has not passed since its pods changed) is left
alone by Emptiness and consolidation (emptiness.go, consolidation.go `ShouldDisrupt`). Without NodeClaims every
node is taken as initialized and consolidatable, as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_consolidate_drift import nodeclaim
from test_consolidate_semantics import node, pod, reason, removed, run, write


def claim(node_name: str, **conditions: str) -> dict[str, Any]:
    doc = nodeclaim(f"default-{node_name}", node_name)
    doc["status"]["conditions"] = [{"type": kind, "status": status, "reason": kind,
                                    "lastTransitionTime": "2024-11-20T10:00:00Z"} for kind, status in conditions.items()]
    return doc


def test_an_empty_node_not_yet_consolidatable_stays(tmp_path: Path) -> None:
    docs = [node("idle"), node("fresh", zone="us-east-1b"),
            claim("idle", Initialized="True", Consolidatable="True"),
            claim("fresh", Initialized="True", Consolidatable="False")]
    report = run(write(tmp_path, *docs))
    assert removed(report) == {"idle": ("emptiness", "delete")}
    assert "not Consolidatable yet" in reason(report, "fresh")


def test_an_underutilized_node_not_yet_consolidatable_stays(tmp_path: Path) -> None:
    docs = [node("a"), node("b", zone="us-east-1b"), pod("wa", "a", cpu="300m"), pod("wb", "b", cpu="300m"),
            claim("a", Initialized="True", Consolidatable="False"),
            claim("b", Initialized="True", Consolidatable="False")]
    report = run(write(tmp_path, *docs))
    assert report.actions == []
    assert "not Consolidatable yet" in reason(report, "a") and "not Consolidatable yet" in reason(report, "b")


def test_a_node_not_initialized_is_no_candidate(tmp_path: Path) -> None:
    docs = [node("new"), claim("new", Initialized="False")]
    report = run(write(tmp_path, *docs))
    assert report.actions == []
    assert reason(report, "new") == "Node isn't initialized"
