"""`karpplan consolidate` on "why did (or didn't) Karpenter consolidate this node?" threads of 2024-2026 (session 19):
each snapshot is built from what the thread shows, and the verdict and its reason are checked against what the
thread established, in Karpenter's own wording (kubernetes-sigs/karpenter v1.14 pkg/controllers/disruption)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_consolidate_semantics import node, nodepool, pdb, pod, reason, removed, run, write

ALL = [{"nodes": "100%"}]
DO_NOT_DISRUPT = {"karpenter.sh/do-not-disrupt": "true"}


def test_two_nodes_are_not_merged_into_one_that_costs_the_same(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/5903 "Consolidation to a larger node if price is the
    # same": two c6a.2xlarge ($0.306 each) would fit one c6a.4xlarge ($0.612); the maintainer: "Karpenter should
    # not consolidate nodes if we see that the price is the same"
    docs = [node("n1", itype="c6a.2xlarge"), pod("w1", "n1", cpu="5", memory="4Gi"),
            node("n2", itype="c6a.2xlarge", zone="us-east-1a"), pod("w2", "n2", cpu="5", memory="4Gi")]
    report = run(write(tmp_path, *docs, pools=(nodepool(families=("c6a",), budgets=ALL),)))
    assert report.actions == []
    assert reason(report, "n1") == reason(report, "n2") == "Can't replace with a cheaper node"
    assert report.summary.optimal == pytest.approx(report.summary.current)  # nothing cheaper exists at all


def _crash_looping(tmp_path: Path, policy: str | None) -> Path:
    api = pod("api-7d9c6-x2kfz", "a", cpu="300m", owner="ReplicaSet/api-7d9c6", labels={"app": "api"},
              namespace="shop")
    api["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}]
    budget = pdb("api", "api", 0, namespace="shop")  # currentHealthy 0 < minAvailable 1: disruptionsAllowed 0
    budget["spec"] = {"minAvailable": 1, "selector": {"matchLabels": {"app": "api"}}}
    if policy is not None:
        budget["spec"]["unhealthyPodEvictionPolicy"] = policy
    docs = [node("a"), api, node("b", zone="us-east-1b"), pod("w1", "b", cpu="300m"), pod("w2", "b", cpu="300m"),
            budget]
    return write(tmp_path, *docs, pools=(nodepool(budgets=ALL),))


@pytest.mark.parametrize("policy", [None, "IfHealthyBudget"])
def test_a_crash_looping_pod_s_pdb_blocks_its_node(tmp_path: Path, policy: str | None) -> None:
    # https://github.com/convox/convox/pull/993 "Fix Karpenter consolidation: PDB eviction": "When a pod enters
    # CrashLoopBackOff, its PodDisruptionBudget reports disruptionsAllowed: 0 because currentHealthy drops to 0"
    report = run(_crash_looping(tmp_path, policy))
    assert reason(report, "a") == "Pdb prevents pod evictions (PodDisruptionBudget=[shop/api])"
    assert "a" not in removed(report)


def test_always_allow_lets_the_unhealthy_pod_s_node_go(tmp_path: Path) -> None:
    # the same PR's fix, "unhealthyPodEvictionPolicy: AlwaysAllow, allowing unhealthy pods to be evicted during
    # consolidation" (utils/pdb/pdb.go canAlwaysEvictUnhealthyPods: a pod with Ready=False is evictable)
    report = run(_crash_looping(tmp_path, "AlwaysAllow"))
    assert removed(report) == {"a": ("single", "delete")}
    assert report.actions[0].moves == {"shop/api-7d9c6-x2kfz": "b"}


def test_single_pod_deployments_behind_blocking_pdbs_keep_their_nodes(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/2245: "we deploy a blocking PDB for such pods ...
    # blocking PDBs currently generate DisruptionBlocked events on the node, and Karpenter will not consider such a
    # node for consolidation"
    docs: list[dict[str, Any]] = []
    for i, zone in enumerate(("us-east-1a", "us-east-1b")):
        app = f"tenant-{i}"
        docs += [node(f"n{i}", zone=zone),
                 pod(f"{app}-5f7d8-abcde", f"n{i}", cpu="250m", owner=f"ReplicaSet/{app}-5f7d8", labels={"app": app}),
                 pdb(app, app, 0)]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert report.actions == []
    assert reason(report, "n0") == "Pdb prevents pod evictions (PodDisruptionBudget=[default/tenant-0])"
    assert reason(report, "n1") == "Pdb prevents pod evictions (PodDisruptionBudget=[default/tenant-1])"


def test_an_expired_node_held_by_do_not_disrupt_pods_blocks_nothing_else(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/1789: past expireAfter the node is tainted
    # karpenter.sh/disrupted and deleting, "Cannot disrupt Node: state node is marked for deletion", its
    # do-not-disrupt pods waiting; SimulateScheduling places only the pods of deleting nodes that will move
    # (IsCurrentlyReschedulable), so the other nodes still consolidate
    expired = node("expired", zone="us-east-1c")
    expired["metadata"]["deletionTimestamp"] = "2024-10-30T10:00:00Z"
    expired["spec"] = {"taints": [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]}
    runners = [pod(f"runner-{i}", "expired", cpu="800m", owner="ReplicaSet/runner", labels={"app": "runner"},
                   annotations=DO_NOT_DISRUPT) for i in range(2)]
    docs = [expired, *runners, node("a"), pod("wa", "a", cpu="1000m"),
            node("b", zone="us-east-1b"), pod("wb", "b", cpu="500m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert reason(report, "expired") == "Node is deleting or marked for deletion"
    assert len(report.actions) == 1 and list(removed(report).values()) == [("single", "delete")]


def _spot(tmp_path: Path, itype: str, families: tuple[str, ...] = ("m5",)) -> Path:
    docs = [node("s", itype=itype, capacity="spot"), pod("w", "s", cpu="500m")]
    return write(tmp_path, *docs, pools=(nodepool(families=families, capacity=("spot",), budgets=ALL),))


def test_spot_to_spot_needs_fifteen_cheaper_types(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/1124 "SpotToSpotConsolidation requires 15 cheaper instance
    # type options than the current candidate to consolidate, got 1": with the gate on, an m5.xlarge spot node in
    # an m5-only NodePool has one cheaper m5 that fits (m5.large)
    report = run(_spot(tmp_path, "m5.xlarge"), spot_to_spot=True)
    assert report.actions == []
    assert reason(report, "s") == ("SpotToSpotConsolidation requires 15 cheaper instance type options than the "
                                   "current candidate to consolidate, got 1")


def test_spot_to_spot_is_off_by_default(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/7699 "spot to spot consolidation is disabled": the
    # feature gate defaults to false; with it on and a flexible NodePool the node is replaced
    families = ("m5", "c5", "m6i", "c6i", "r5", "m5a", "c5a", "m6a", "c6a", "r6i", "t3", "m7i", "c7i")
    off = run(_spot(tmp_path, "m5.2xlarge", families))
    assert off.actions == []
    assert reason(off, "s") == "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
    on = run(_spot(tmp_path, "m5.2xlarge", families), spot_to_spot=True)
    assert removed(on) == {"s": ("single", "replace")}


def test_one_node_is_never_replaced_by_two(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/6635 "Spot instances are not being consolidated": the
    # maintainer, "Karpenter will not consolidate one node into two nodes"; two replicas with preferred hostname
    # anti-affinity share the node, and Karpenter's simulation honours the preference (one new node each)
    spread = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                            "labelSelector": {"matchLabels": {"app": "web"}}}}]}}}
    docs = [node("s", itype="m5.2xlarge", capacity="spot"), pod("w1", "s", cpu="500m", spec=spread),
            pod("w2", "s", cpu="500m", spec=spread)]
    report = run(write(tmp_path, *docs, pools=(nodepool(capacity=("spot",), budgets=ALL),)), spot_to_spot=True)
    assert report.actions == []
    assert reason(report, "s") == "Can't remove without creating 2 candidates"


def test_do_not_disrupt_pods_bound_during_consolidate_after_keep_the_node(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/3185 "Empty consolidation disrupts nodes that became
    # non-empty during consolidateAfter": "Every pod bound in that window carries karpenter.sh/do-not-disrupt:
    # "true", so neither node should have been eligible for voluntary disruption"
    jobs = [pod(f"etl-{i}", "batch-a", cpu="200m", owner="Job/etl", labels={"app": "etl"}, annotations=DO_NOT_DISRUPT)
            for i in range(8)]
    report = run(write(tmp_path, node("batch-a"), *jobs, node("idle", zone="us-east-1b"),
                       pools=(nodepool(budgets=ALL),)))
    assert removed(report) == {"idle": ("emptiness", "delete")}
    assert reason(report, "batch-a") == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/etl-0)'


def test_a_registered_node_not_yet_initialized_is_no_candidate(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/2922 "Premature Consolidatable condition triggers
    # create-delete cycle on uninitialized nodes": "An uninitialized node has no pods scheduled yet, so it appears
    # empty"; statenode.go ValidateNodeDisruptable refuses it ("node isn't initialized") until Karpenter labels it
    # karpenter.sh/initialized. The Node as kubectl shows it: registered, still tainted not-ready.
    fresh = node("ip-10-0-12-7.ec2.internal")
    del fresh["metadata"]["labels"]["karpenter.sh/initialized"]
    fresh["metadata"]["labels"]["karpenter.sh/registered"] = "true"
    fresh["spec"] = {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}
    report = run(write(tmp_path, fresh, node("busy", zone="us-east-1b"), pod("w", "busy", cpu="1500m"),
                       pools=(nodepool(budgets=ALL),)))
    assert report.actions == []
    assert reason(report, "ip-10-0-12-7.ec2.internal") == "Node isn't initialized"
    # nor a home yet for the other node's pod (helpers.go UninitializedNodeError)
    assert reason(report, "busy") == ("Not all pods would schedule, default/w => would schedule against "
                                      "uninitialized node/ip-10-0-12-7.ec2.internal")
