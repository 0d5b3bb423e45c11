"""Where a consolidation may move pods (kubernetes-sigs/karpenter v1.14 helpers.go `SimulateScheduling`,
provisioning/scheduling/scheduler.go): a candidate's pod the simulation puts on a node still initializing makes
the command invalid ("would schedule against uninitialized ..."), initialized nodes are tried first
(`sortExistingNodes`), and a consolidation (not drift) never moves a candidate's pod onto a node still inside its
NodePool's `consolidateAfter` (`IsConsolidationSimulation`, karpenter#3006). Nodes of a WhenEmpty NodePool or
annotated do-not-disrupt are no candidates but still take pods."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from test_consolidate_drift import nodeclaim
from test_consolidate_semantics import node, nodepool, pod, reason, removed, run, write

ALL = [{"nodes": "100%"}]
NOW = datetime(2024, 11, 20, 10, 0, 30, tzinfo=UTC)


def claim(name: str, on: str, initialized: bool = True, since: str = "2024-11-19T10:00:00Z",
          last_pod_event: str | None = None, pool: str = "default") -> dict[str, Any]:
    doc = nodeclaim(name, on)
    doc["metadata"]["labels"]["karpenter.sh/nodepool"] = pool
    doc["status"]["conditions"] = [{"type": "Initialized", "status": "True" if initialized else "False",
                                    "lastTransitionTime": since, "reason": "Initialized"}]
    if last_pod_event is not None:
        doc["status"]["lastPodEventTime"] = last_pod_event
    return doc


def starting(name: str, zone: str = "us-east-1a") -> dict[str, Any]:
    """A Karpenter node as `kubectl get node -o yaml` shows it registered but not yet initialized."""
    doc = node(name, zone=zone)
    labels = doc["metadata"]["labels"]
    del labels["karpenter.sh/initialized"]
    labels["karpenter.sh/registered"] = "true"
    doc["spec"] = {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}
    return doc


@pytest.mark.parametrize("shown_by", ["nodeclaim", "node"])
def test_pods_that_would_land_on_an_uninitialized_node_block_the_command(tmp_path: Path, shown_by: str) -> None:
    # consolidation_test.go It("won't delete node if it would require pods to schedule on an uninitialized node"):
    # "u" (2 pods) is not initialized; "i" (1 pod) could go, its pod fitting on "u": no command, and the events
    # "Not all pods would schedule" / "would schedule against uninitialized ..."
    u = node("u") if shown_by == "nodeclaim" else starting("u")
    docs = [u, node("i", zone="us-east-1b"), pod("p0", "u", cpu="300m"), pod("p1", "u", cpu="300m"),
            pod("p2", "i", cpu="300m")]
    if shown_by == "nodeclaim":
        docs += [claim("default-u", "u", initialized=False), claim("default-i", "i")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert report.actions == []
    assert reason(report, "u") == "Node isn't initialized"
    assert reason(report, "i") == "Not all pods would schedule, default/p2 => would schedule against uninitialized node/u"


def test_initialized_nodes_are_tried_before_uninitialized_ones(tmp_path: Path) -> None:
    # consolidation_test.go It("should consider initialized nodes before uninitialized nodes"): "m"'s pod fits on
    # both "a-starting" (first by name, not initialized) and "z-ready": it goes to "z-ready" and "m" is deleted
    docs = [starting("a-starting"), pod("s0", "a-starting", cpu="300m"),
            node("z-ready", zone="us-east-1b"), pod("r0", "z-ready", cpu="300m"), pod("r1", "z-ready", cpu="300m"),
            node("m", zone="us-east-1c"), pod("m0", "m", cpu="300m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert removed(report) == {"m": ("single", "delete")}
    assert report.actions[0].moves == {"default/m0": "z-ready"}


def _recent_destination(tmp_path: Path, pools: tuple[dict[str, Any], ...], dest_pool: str = "default",
                        drifted: bool = False) -> Path:
    # "src" has been quiet for a day; "dest" had a pod event 30 s before NOW
    source = claim("default-src", "src")
    if drifted:
        source["status"]["conditions"].append({"type": "Drifted", "status": "True", "reason": "NodeClassDrift",
                                               "lastTransitionTime": "2024-11-20T09:00:00Z"})
    docs = [node("src"), pod("ps", "src", cpu="300m"),
            node("dest", zone="us-east-1b", pool=dest_pool), pod("pd0", "dest", cpu="300m"),
            pod("pd1", "dest", cpu="300m"), source,
            claim("x-dest", "dest", last_pod_event="2024-11-20T10:00:00Z", pool=dest_pool)]
    return write(tmp_path, *docs, pools=pools)


def test_consolidation_moves_no_pod_onto_a_node_inside_consolidate_after(tmp_path: Path) -> None:
    # consolidation_test.go It("should not consolidate pods onto a destination node that is under its
    # consolidateAfter window"): "src"'s pod would fit on "dest", but "dest" is inside its 1m; a new m5.large is
    # not cheaper, so nothing happens -- and once the window has passed "src" goes
    path = _recent_destination(tmp_path, (nodepool(after="1m", budgets=ALL),))
    report = run(path, now=NOW)
    assert report.actions == []
    assert reason(report, "src") == "Can't replace with a cheaper node"
    later = run(path, now=datetime(2024, 11, 20, 10, 5, tzinfo=UTC))
    assert removed(later) == {"src": ("single", "delete")}


def test_a_node_whose_pool_never_consolidates_still_takes_pods(tmp_path: Path) -> None:
    # consolidation_test.go It("should consolidate pods onto a destination node with consolidateAfter set to Never")
    path = _recent_destination(tmp_path, (nodepool(after="1m", budgets=ALL), nodepool("keep", after="Never")),
                               dest_pool="keep")
    report = run(path, now=NOW)
    assert removed(report) == {"src": ("single", "delete")}
    assert reason(report, "dest") == 'NodePool "keep" has consolidation disabled'


def test_drift_may_fill_a_node_inside_consolidate_after(tmp_path: Path) -> None:
    # drift.go calls SimulateScheduling without IsConsolidationSimulation: the drifted node's pod moves to "dest"
    report = run(_recent_destination(tmp_path, (nodepool(after="1m", budgets=ALL),), drifted=True), now=NOW)
    assert removed(report) == {"src": ("drift", "delete")}
    assert report.actions[0].moves == {"default/ps": "dest"}


@pytest.mark.parametrize("mark", ["when-empty-pool", "do-not-disrupt-node"])
def test_nodes_that_are_no_candidates_still_take_pods(tmp_path: Path, mark: str) -> None:
    # consolidation_test.go It("can delete nodes, considers karpenter.sh/do-not-disrupt set to true on pods") and
    # statenode.go ValidateNodeDisruptable: what keeps a node from being disrupted does not keep pods off it
    pools = (nodepool(budgets=ALL), nodepool("batch", policy="WhenEmpty"))
    dest = (node("dest", zone="us-east-1b", pool="batch") if mark == "when-empty-pool" else
            node("dest", zone="us-east-1b", annotations={"karpenter.sh/do-not-disrupt": "true"}))
    docs = [node("src"), pod("ps", "src", cpu="300m"), dest,
            pod("pd", "dest", cpu="300m", owner="ReplicaSet/b", labels={"app": "b"})]
    report = run(write(tmp_path, *docs, pools=pools))
    assert removed(report) == {"src": ("single", "delete")}
    assert report.actions[0].moves == {"default/ps": "dest"}


def test_a_pool_at_its_limits_may_still_replace_a_node(tmp_path: Path) -> None:
    # SimulateScheduling leaves the candidates out of the scheduler's state nodes, so their capacity does not count
    # against the NodePool's limits (scheduler.go calculateExistingNodeClaims charges `remainingResources` for state
    # nodes only): at cpu 10 = m5.2xlarge 8 + m5.large 2, both nodes (2.4 CPU) still become one m5.xlarge (4 CPU)
    pool = nodepool(budgets=ALL)
    pool["spec"]["limits"] = {"cpu": "10"}
    docs = [node("big", itype="m5.2xlarge"), pod("b0", "big", cpu="900m", owner="ReplicaSet/b", labels={"app": "b"}),
            node("small", zone="us-east-1b"), pod("s0", "small", cpu="1500m")]
    report = run(write(tmp_path, *docs, pools=(pool,)))
    assert removed(report) == {"big": ("multi", "replace"), "small": ("multi", "replace")}
    replacement = report.actions[0].replacement
    assert replacement is not None and replacement.instance_type == "m5.xlarge"
