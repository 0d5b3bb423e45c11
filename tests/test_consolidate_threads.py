"""`karpplan consolidate` on the clusters users describe in "why doesn't Karpenter consolidate this node?"
threads: each snapshot is built from what the thread shows (NodePool, pods, PDBs, annotations), and the
verdict and its reason are checked against what the thread established, in Karpenter's own wording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_consolidate_semantics import node, nodepool, pod, reason, removed, run, write

from karpplan.consolidate.explain import explain_node
from karpplan.consolidate.run import ConsolidateOptions


def _pdb_min_available(name: str, namespace: str, app: str) -> dict[str, Any]:
    # as `kubectl get pdb -o yaml` prints one whose status the snapshot left out: Karpenter's count is then
    # computed from the spec and the pods (minAvailable 1 of one healthy pod allows none)
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}}}


def _istiod(name: str, on: str) -> dict[str, Any]:
    return pod(name, on, cpu="500m", memory="2Gi", owner="ReplicaSet/istiod-7f9c", labels={"app": "istiod"},
               namespace="istio-system")


def test_a_single_istiod_under_its_pdb_keeps_its_node(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/3854 "Istiod Prevents Consolidation": the event was
    # "pdb istio-system/istiod prevents pod evictions" (v1: "Pdb prevents pod evictions (PodDisruptionBudget=
    # [istio-system/istiod])"); istio's PDB (minAvailable 1) over one istiod replica allows no eviction.
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), pod("web-1", "a"), pod("web-2", "a"),
                 _istiod("istiod-1", "b"), _pdb_min_available("istiod", "istio-system", "istiod"))
    report = run(path)
    assert reason(report, "b") == "Pdb prevents pod evictions (PodDisruptionBudget=[istio-system/istiod])"
    assert "b" not in removed(report)
    # ...so Karpenter removes the other node instead, moving web onto the istiod node
    assert removed(report) == {"a": ("single", "delete")}


def test_a_second_istiod_replica_lets_the_node_go(tmp_path: Path) -> None:
    # the same thread's answer: "I scaled the deployment to 2 ... Once the istiod pod on the consolidation
    # candidate was removed the node was terminated": with two replicas the PDB allows one eviction.
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), pod("web-1", "a"), _istiod("istiod-1", "a"),
                 _istiod("istiod-2", "b"), _pdb_min_available("istiod", "istio-system", "istiod"))
    report = run(path)
    assert removed(report) == {"b": ("single", "delete")}


def test_do_not_evict_no_longer_protects_and_the_report_says_so(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/6861 "Nodes with do-not-evict:true pods get
    # consolidated" after the upgrade to 1.0: v1alpha5's karpenter.sh/do-not-evict was renamed
    # karpenter.sh/do-not-disrupt (aws/karpenter-provider-aws#1327) and v1 reads only the new name.
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), pod("web-1", "a"), pod("web-2", "a"),
                 pod("runner-0", "b", owner="Job/ci", labels={"app": "ci"},
                     annotations={"karpenter.sh/do-not-evict": "true"}))
    report = run(path)
    assert removed(report) == {"b": ("single", "delete")}  # as Karpenter v1 does
    [warning] = [w for w in report.warnings if "do-not-evict" in w]
    assert "default/runner-0" in warning and 'karpenter.sh/do-not-disrupt: "true"' in warning
    assert warning.startswith(f"{path}:")


def test_do_not_disrupt_beside_the_old_name_is_not_warned_about(tmp_path: Path) -> None:
    annotations = {"karpenter.sh/do-not-evict": "true", "karpenter.sh/do-not-disrupt": "true"}
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), pod("web-1", "a"),
                 pod("runner-0", "b", owner="Job/ci", labels={"app": "ci"}, annotations=annotations))
    report = run(path)
    assert "b" not in removed(report)
    assert not [w for w in report.warnings if "do-not-evict" in w]


def test_too_few_cheaper_spot_types_keep_an_oversized_spot_node(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/1653 (and #1124, "got 1"): with the
    # SpotToSpotConsolidation gate on, a near-empty spot node stays with "SpotToSpotConsolidation requires 15
    # cheaper instance type options than the current candidate to consolidate, got 6"; the maintainers: it is
    # the intended floor (not a bug). Here the NodePool allows m5 and c5: the types cheaper than an m5.2xlarge
    # that hold the pod are c5.large, c5.xlarge, c5.2xlarge, m5.large, m5.xlarge: 5.
    path = write(tmp_path, node("s", itype="m5.2xlarge", capacity="spot"), pod("worker-1", "s"),
                 pools=(nodepool(families=("m5", "c5"), capacity=("spot",)),))
    assert reason(run(path), "s") == ("SpotToSpotConsolidation is disabled, can't replace a spot node with a spot "
                                      "node")
    gated = run(path, spot_to_spot=True)
    assert removed(gated) == {}
    assert reason(gated, "s") == ("SpotToSpotConsolidation requires 15 cheaper instance type options than the "
                                  "current candidate to consolidate, got 5")


def test_pods_that_need_two_new_nodes_keep_their_node(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/1442 and aws/karpenter-provider-aws#6635: the event
    # "Can't remove without creating 2 candidates"; the maintainer: "Karpenter will not consolidate one node
    # into two nodes". Two replicas with a *preferred* hostname anti-affinity (as many charts ship) share the
    # node; Karpenter's scheduler keeps preferences while a new node can honour them, so their simulation
    # opens one new node each.
    anti = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "cache"}},
                                            "topologyKey": "kubernetes.io/hostname"}}]}}}
    path = write(tmp_path, node("big", itype="m5.2xlarge"),
                 *(pod(f"cache-{i}", "big", labels={"app": "cache"}, spec=anti) for i in range(2)))
    report = run(path)
    assert removed(report) == {}
    assert reason(report, "big") == "Can't remove without creating 2 candidates"


def _claimed(zone_key: str) -> tuple[dict[str, Any], ...]:
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data-db-0", "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                      "storageClassName": "gp3", "volumeName": "pvc-3f1c"}, "status": {"phase": "Bound"}}
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pvc-3f1c"},
              "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                       "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-0a1b"},
                       "claimRef": {"name": "data-db-0", "namespace": "default"},
                       "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                           {"key": zone_key, "operator": "In", "values": ["us-east-1b"]}]}]}}}}
    return claim, volume


def test_a_running_pod_s_ebs_volume_holds_it_to_its_zone(tmp_path: Path) -> None:
    # Karpenter injects a re-scheduled pod's volume topology (provisioning/scheduling/volumetopology.go), as
    # the kube-scheduler's VolumeZone filter would refuse the move ("volume node affinity conflict"): db-0's
    # EBS volume is in us-east-1b, so the m5.xlarge there cannot be deleted onto the 1a node; it is replaced
    # by an m5.large in 1b, and then the 1a node's web pod joins it.
    for key in ("topology.ebs.csi.aws.com/zone", "topology.kubernetes.io/zone"):
        mount = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]}
        path = write(tmp_path, node("a"), node("b", itype="m5.xlarge", zone="us-east-1b"), pod("web-1", "a"),
                     pod("db-0", "b", owner="StatefulSet/db", labels={"app": "db"}, spec=mount), *_claimed(key))
        report = run(path)
        assert removed(report) == {"b": ("single", "replace"), "a": ("single", "delete")}, key
        new = report.actions[0].replacement
        assert new is not None and (new.instance_type, new.zone) == ("m5.large", "us-east-1b")
        options = ConsolidateOptions(paths=(str(path),), region="us-east-1", time_limit=2.0)
        [fate] = [f for f in explain_node(options, "b").pods if f.pod == "default/db-0"]
        assert "its volumes hold it to us-east-1b (PVC data-db-0)" in fate.outcome


def _coredns(name: str, on: str) -> dict[str, Any]:
    # the CoreDNS pod spec the threads paste (EKS add-on): preferred hostname anti-affinity on k8s-app kube-dns
    anti = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname", "labelSelector": {
            "matchExpressions": [{"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]}}}]}}}
    return pod(name, on, cpu="100m", memory="70Mi", owner="ReplicaSet/coredns-799c5565b4",
               labels={"k8s-app": "kube-dns"}, namespace="kube-system", spec=anti)


def test_a_node_holding_one_coredns_replica_is_kept_and_node_says_which_preference(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/6426 (the reproduction: a t3.xlarge-only NodePool,
    # a node left with one coredns pod and its DaemonSets is never consolidated) and #3753 (same, v0.27);
    # the maintainers (#5685): "consolidation will always respect preferences".
    pool = nodepool(families=("t3",))
    pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["xlarge"]})
    daemons = [pod(f"aws-node-{i}", f"n{i}", cpu="50m", memory="64Mi", owner="DaemonSet/aws-node",
                   labels={"k8s-app": "aws-node"}, namespace="kube-system") for i in (1, 2, 3)]
    path = write(tmp_path, *(node(f"n{i}", itype="t3.xlarge", zone=z) for i, z in
                             ((1, "us-east-1a"), (2, "us-east-1b"), (3, "us-east-1c"))),
                 *(_coredns(f"coredns-{i}", f"n{i}") for i in (1, 2, 3)), *daemons,
                 pod("app-1", "n1", cpu="1500m", memory="4Gi"), pod("app-2", "n2", cpu="1500m", memory="4Gi"),
                 pools=(pool,))
    report = run(path)
    assert removed(report) == {}
    assert reason(report, "n3") == "Can't replace with a cheaper node"
    fates = {f.pod: f.outcome for f in explain_node(ConsolidateOptions(paths=(str(path),), region="us-east-1",
                                                                        time_limit=2.0), "n3").pods}
    assert "preferred podAntiAffinity on kubernetes.io/hostname keeps it off node n" in fates["kube-system/coredns-3"]
    assert fates["kube-system/aws-node-3"].startswith("DaemonSet pod")


def test_without_the_preference_the_lone_replica_moves(tmp_path: Path) -> None:
    path = write(tmp_path, node("n1"), node("n2", zone="us-east-1b"),
                 pod("dns-1", "n1", cpu="100m", memory="70Mi", labels={"k8s-app": "kube-dns"}),
                 pod("dns-2", "n2", cpu="100m", memory="70Mi", labels={"k8s-app": "kube-dns"}))
    report = run(path)
    assert len(removed(report)) == 1


def test_the_old_node_opt_out_and_the_autoscaler_s_are_named_too(tmp_path: Path) -> None:
    # v1alpha5's node annotation karpenter.sh/do-not-consolidate went the same way as do-not-evict
    # (aws/karpenter-provider-aws#1327); the Cluster Autoscaler's safe-to-evict "false" was never Karpenter's.
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b",
                                           annotations={"karpenter.sh/do-not-consolidate": "true"}),
                 pod("web-1", "a"), pod("web-2", "a"),
                 pod("db-0", "b", owner="StatefulSet/db", labels={"app": "db"},
                     annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}))
    report = run(path)
    assert removed(report) == {"b": ("single", "delete")}
    old = [w for w in report.warnings if "do-not-consolidate" in w]
    autoscaler = [w for w in report.warnings if "safe-to-evict" in w]
    assert len(old) == 1 and "node b has karpenter.sh/do-not-consolidate: \"true\"" in old[0]
    assert len(autoscaler) == 1 and "pod default/db-0" in autoscaler[0] and "Cluster Autoscaler" in autoscaler[0]
