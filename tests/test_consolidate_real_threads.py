"""`karpplan consolidate` on more "why did (or didn't) Karpenter disrupt this node?" threads (session 18): each
snapshot is built from what the thread shows, and the verdict and its reason are checked against what the thread
established, in Karpenter's own wording (kubernetes-sigs/karpenter pkg/controllers/disruption is the authority).
The budget threads are in test_consolidate_budgets.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_consolidate_drift import nodeclaim
from test_consolidate_semantics import node, nodepool, pod, reason, removed, run, write


def _daemon(name: str, on: str) -> dict[str, Any]:
    return pod(name, on, cpu="100m", memory="128Mi", owner="DaemonSet/node-exporter",
               labels={"app": "node-exporter"}, namespace="monitoring")


def test_a_node_left_with_daemonset_pods_only_is_empty(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/1475 "Consolidate node whenEmpty if only daemonsets are
    # left"; the maintainer: "Karpenter should already do this" (utils/pod/scheduling.go IsReschedulable leaves
    # DaemonSet pods out)
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), _daemon("exp-a", "a"), _daemon("exp-b", "b"),
                 pod("svc-0", "a", cpu="1", owner="StatefulSet/svc", labels={"app": "svc"}),
                 pools=(nodepool(policy="WhenEmpty"),))
    report = run(path)
    assert removed(report) == {"b": ("emptiness", "delete")}
    assert reason(report, "a") == 'NodePool "default" has consolidation policy WhenEmpty, but node is not empty'


def test_pods_an_operator_owns_are_not_daemonset_pods(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/3609 "running longhorn on karpenter managed nodes":
    # nodes left with only longhorn's instance-manager pods are never deleted; the maintainer: "The node isn't
    # considered empty unless all the pods running on a node are DaemonSets" -- those pods are owned by
    # longhorn's InstanceManager resource, so they must be rescheduled like any other
    manager = pod("instance-manager-e-3f1c", "b", cpu="240m", memory="256Mi", owner="InstanceManager/im-e-3f1c",
                  labels={"longhorn.io/component": "instance-manager"}, namespace="longhorn-system")
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), _daemon("exp-b", "b"), manager,
                 pools=(nodepool(policy="WhenEmpty"),))
    report = run(path)
    assert removed(report) == {"a": ("emptiness", "delete")}
    assert reason(report, "b") == 'NodePool "default" has consolidation policy WhenEmpty, but node is not empty'


def test_when_empty_never_packs_underutilized_nodes_and_says_so_per_node(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/7411 "No attempt by Karpenter to consolidate": after an
    # AMI drift a WhenEmpty NodePool ran 7 nodes for what 2 held, "Events: <none>"; the user: "I am still
    # expecting karpenter to tell me why". Karpenter v1's event (consolidation.go) is the reason here.
    docs: list[dict[str, Any]] = []
    for i in range(7):
        docs += [node(f"n{i}", zone=("us-east-1a", "us-east-1b", "us-east-1c")[i % 3]),
                 pod(f"api-{i}", f"n{i}", cpu="250m", memory="512Mi")]
    report = run(write(tmp_path, *docs, pools=(nodepool(policy="WhenEmpty"),)))
    assert report.actions == []
    assert {reason(report, f"n{i}") for i in range(7)} == {
        'NodePool "default" has consolidation policy WhenEmpty, but node is not empty'}
    assert report.summary.optimal < report.summary.current  # what WhenEmptyOrUnderutilized would have saved


def _grace(pool: dict[str, Any], period: str = "24h") -> dict[str, Any]:
    pool["spec"]["template"]["spec"]["terminationGracePeriod"] = period
    return pool


def _drifted_with_do_not_disrupt(tmp_path: Path, pool: dict[str, Any]) -> Path:
    guarded = pod("hello-world-nginx-5964768b4c-fnrxp", "old", cpu="600m",
                  owner="ReplicaSet/hello-world-nginx-5964768b4c", labels={"app": "hello-world-nginx"},
                  annotations={"karpenter.sh/do-not-disrupt": "true"})
    return write(tmp_path, node("old"), guarded, node("full", zone="us-east-1b"),
                 pod("c", "full", cpu="1800m", owner="ReplicaSet/c", labels={"app": "c"}),
                 nodeclaim("default-x1", "old"), pools=(pool,))


def test_a_termination_grace_period_lets_drift_take_a_node_a_pod_protects(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/1702 "Drifted NodeClaims with a TerminationGracePeriod
    # are not considered for disruption" (fixed: types.go NewCandidate keeps a node whose pods block eviction as
    # a candidate for eventual disruption when its NodeClaim has a terminationGracePeriod), and
    # https://github.com/aws/karpenter-provider-aws/issues/7708, the do-not-disrupt pods' node replaced for
    # AMIDrift; the CRD (kubernetes-sigs/karpenter#1961): "drifted nodes will begin draining even if there are
    # pods blocking eviction"
    report = run(_drifted_with_do_not_disrupt(tmp_path, _grace(nodepool())))
    assert removed(report) == {"old": ("drift", "replace")}


def test_without_a_termination_grace_period_the_pod_still_protects_its_drifted_node(tmp_path: Path) -> None:
    report = run(_drifted_with_do_not_disrupt(tmp_path, nodepool()))
    assert report.actions == []
    assert reason(report, "old") == ('Pod has "karpenter.sh/do-not-disrupt" annotation '
                                     '(Pod=default/hello-world-nginx-5964768b4c-fnrxp)')


def test_a_termination_grace_period_does_not_open_the_node_to_consolidation(tmp_path: Path) -> None:
    # consolidation is graceful disruption: suite_test.go "should not consider candidates that have do-not-disrupt
    # pods scheduled with a terminationGracePeriod set for graceful disruption"
    guarded = pod("batch-0", "b", cpu="200m", owner="Job/batch", labels={"app": "batch"},
                  annotations={"karpenter.sh/do-not-disrupt": "true"})
    path = write(tmp_path, node("a"), pod("web-1", "a"), pod("web-2", "a"), node("b", zone="us-east-1b"), guarded,
                 pools=(_grace(nodepool()),))
    report = run(path)
    assert removed(report) == {"a": ("single", "delete")}
    assert reason(report, "b") == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/batch-0)'


def test_consolidation_does_not_wait_out_a_grace_period_for_a_do_not_disrupt_pod(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/2855 "Karpenter did not consolidate do-not-disrupt
    # workload with terminationGracePeriod in NodePool": two underutilized nodes, one inflate replica each with
    # do-not-disrupt, terminationGracePeriod 1h, a 100% Underutilized budget open; the NodeClaims' events read
    # 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/inflate-...)': consolidation is graceful
    anti = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "inflate"}},
                                            "topologyKey": "kubernetes.io/hostname"}}]}}}
    inflate = [pod(f"inflate-7d9f-{s}", n, cpu="1", owner="ReplicaSet/inflate-7d9f", labels={"app": "inflate"},
                   annotations={"karpenter.sh/do-not-disrupt": "true"}, spec=anti)
               for s, n in (("x1", "a"), ("x2", "b"))]
    pool = _grace(nodepool(budgets=[{"nodes": "100%", "reasons": ["Underutilized"]}]), "1h")
    report = run(write(tmp_path, node("a", itype="m5.xlarge"), node("b", itype="m5.xlarge", zone="us-east-1b"),
                       *inflate, pools=(pool,)))
    assert report.actions == []
    assert reason(report, "b") == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/inflate-7d9f-x2)'


def test_a_do_not_disrupt_duration_protects_until_it_runs_out(tmp_path: Path) -> None:
    # kubernetes-sigs/karpenter#2874 (the RFC's example: a 5 minute do-not-disrupt on a small pod beside a large
    # one that goes): `karpenter.sh/do-not-disrupt: "5m"` protects from the pod's startTime for 5 minutes
    # (IsDoNotDisruptActive); past it the node may go. Asked at a time, the report says which.
    from datetime import UTC, datetime

    from test_consolidate_budgets import at

    small = pod("small-pod-5min-grace", "b", cpu="200m", owner="ReplicaSet/small", labels={"app": "small"},
                annotations={"karpenter.sh/do-not-disrupt": "5m"})
    small["status"]["startTime"] = "2026-02-27T19:45:25Z"
    path = write(tmp_path, node("a"), pod("web-1", "a"), pod("web-2", "a"), node("b", zone="us-east-1b"), small)
    during = at(path, datetime(2026, 2, 27, 19, 48, tzinfo=UTC))
    assert reason(during, "b") == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/small-pod-5min-grace)'
    after = at(path, datetime(2026, 2, 27, 19, 51, tzinfo=UTC))
    assert removed(after) == {"b": ("single", "delete")}
    assert any("ran out at 2026-02-27T19:50:25Z" in w and "no longer protects node b" in w for w in after.warnings)
    # without a time the duration is taken as not yet run out
    assert "b" not in removed(run(path))


_SOFT_SPREAD = {"topologySpreadConstraints": [
    {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
     "nodeTaintsPolicy": "Honor", "labelSelector": {"matchLabels": {}},
     "matchLabelKeys": ["pod-template-hash", "app"]},
    {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
     "nodeTaintsPolicy": "Honor", "labelSelector": {"matchLabels": {}},
     "matchLabelKeys": ["pod-template-hash", "app"]}]}


def _api_cluster(tmp_path: Path, spread: bool) -> Path:
    docs: list[dict[str, Any]] = []
    for i, zone in enumerate(("us-east-1a", "us-east-1b", "us-east-1c") * 2):
        docs.append(node(f"n{i}", zone=zone))
        docs += [pod(f"api-5f7c-{i}{j}", f"n{i}", cpu="200m", owner="ReplicaSet/api-5f7c",
                     labels={"app": "api", "pod-template-hash": "5f7c"}, spec=_SOFT_SPREAD if spread else None)
                 for j in range(2)]
    return write(tmp_path, *docs)


def test_schedule_anyway_spreads_hold_nodes_consolidation_would_otherwise_pack(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/759: the constraints as pasted (zone maxSkew 1 and
    # hostname maxSkew 3, both ScheduleAnyway, matchLabelKeys pod-template-hash/app); "Karpenter won't
    # consolidate if it will cause a constraint to be broken even if it is a ScheduleAnyway constraint ... our
    # cluster utilization has decreased from ~80% to ~50%". Twelve 200m pods on six m5.large: packed they need
    # two nodes; with the preferences kept, none goes. Karpenter's hostname spread counts a global minimum of 0
    # ("Karpenter can always create a new domain"), so a node holds at most 3 api pods: a deleted node's two pods
    # cannot both stay in its zone, and moving one out skews the zones past 1.
    bare = run(_api_cluster(tmp_path, spread=False))
    assert len(bare.actions) == 4
    spread = run(_api_cluster(tmp_path, spread=True))
    assert spread.actions == []
    assert len(spread.nodes) == 6 and not any(v.consolidatable for v in spread.nodes)


def test_a_provisioner_era_node_is_said_to_be_outside_karpenter_v1(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/3455 "daemonset-only nodes are not draining": a
    # v1alpha5 Provisioner with consolidation disabled and no ttlSecondsAfterEmpty; the maintainer: "Empty nodes
    # are only terminated if consolidation.enabled: true or ttlSecondsAfterEmpty is set". Karpenter v1 does not
    # manage such a node at all; the report says so in v1's words, and the warning says what v0.x needed.
    old = node("ip-10-0-1-5")
    old["metadata"]["labels"].pop("karpenter.sh/nodepool")
    old["metadata"]["labels"]["karpenter.sh/provisioner-name"] = "default"
    provisioner = {"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": {"name": "default"},
                   "spec": {"providerRef": {"name": "default"}, "requirements": [
                       {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]}}
    report = run(write(tmp_path, old, _daemon("exp-1", "ip-10-0-1-5"), pools=(provisioner,)))
    assert report.actions == []
    assert reason(report, "ip-10-0-1-5") == "Node isn't managed by karpenter"
    [warning] = [w for w in report.warnings if "provisioner-name" in w]
    assert "karpenter.sh/provisioner-name=default" in warning
    assert "consolidation.enabled: true" in warning and "ttlSecondsAfterEmpty" in warning
