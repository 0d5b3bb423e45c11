"""`karpplan consolidate` on disruption threads not covered before (session 21): each snapshot rebuilds what the
thread shows, and the verdict and its reason are checked against what the thread established (a maintainer's
answer, or the reporter's confirmed cause), in Karpenter's own wording (kubernetes-sigs/karpenter
pkg/controllers/disruption)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from test_consolidate_drift import nodeclaim
from test_consolidate_semantics import node, nodepool, pdb, pod, reason, removed, run, write

from karpplan.consolidate.explain import explain_node
from karpplan.consolidate.run import ConsolidateOptions

ALL = [{"nodes": "100%"}]


def _daemon(name: str, on: str) -> dict[str, Any]:
    return pod(name, on, cpu="100m", memory="128Mi", owner="DaemonSet/calico-node",
               labels={"k8s-app": "calico-node"}, namespace="kube-system")


def test_a_calico_typha_replica_keeps_a_when_empty_node(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/5469 "Karpenter v0.33.1 does not delete node": the
    # answer, "You have not only DaemonSets but also Calico Typha Deployment on karpenter node, so it doesn't
    # consider it empty"; the node with DaemonSet pods only is empty and goes
    typha = pod("calico-typha-6d8f7-x2kfz", "a", cpu="100m", owner="ReplicaSet/calico-typha-6d8f7",
                labels={"k8s-app": "calico-typha"}, namespace="calico-system")
    docs = [node("a"), _daemon("calico-node-a1", "a"), typha, node("b", zone="us-east-1b"), _daemon("calico-node-b1", "b")]
    report = run(write(tmp_path, *docs, pools=(nodepool(policy="WhenEmpty", budgets=ALL),)))
    assert removed(report) == {"b": ("emptiness", "delete")}
    assert reason(report, "a") == 'NodePool "default" has consolidation policy WhenEmpty, but node is not empty'


def test_required_anti_affinity_does_not_exempt_a_node(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/9295 (docs PR #9296): "required anti-affinity only
    # constrains where evicted pods may be rescheduled — it does not make a node ineligible for consolidation";
    # db-1 moves to the node that runs no db replica, and its node goes
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}]}}}
    docs = [node("a"), pod("db-0", "a", cpu="300m", owner="StatefulSet/db", labels={"app": "db"}, spec=anti),
            pod("web-1", "a", cpu="300m"),
            node("b", zone="us-east-1b"), pod("db-1", "b", cpu="300m", owner="StatefulSet/db", labels={"app": "db"},
                                              spec=anti),
            node("c", zone="us-east-1c"), pod("web-2", "c", cpu="300m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert removed(report) == {"b": ("single", "delete")}
    assert report.actions[0].moves == {"default/db-1": "c"}  # never next to db-0
    assert reason(report, "a") == reason(report, "c") == "Can't replace with a cheaper node"


def test_an_on_demand_node_goes_back_to_spot(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/7490, the maintainer: "Even if we pick the on-demand
    # instance, we should go back to spot when it becomes available" (consolidation.go: a replacement of an
    # on-demand node that may be spot or on-demand is made spot, priced as spot)
    docs = [node("od", itype="m5.large"), pod("w", "od", cpu="500m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(capacity=("spot", "on-demand"), budgets=ALL),)))
    assert removed(report) == {"od": ("single", "replace")}
    replacement = report.actions[0].replacement
    assert replacement is not None and replacement.capacity_type == "spot"
    assert report.actions[0].savings > 0


def test_the_same_on_demand_node_stays_when_the_pool_is_on_demand_only(tmp_path: Path) -> None:
    # the contrast of #7490: with no spot allowed, an m5.large is already the cheapest m5 that fits
    docs = [node("od", itype="m5.large"), pod("w", "od", cpu="500m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert report.actions == []
    assert reason(report, "od") == "Can't replace with a cheaper node"


def test_schedule_anyway_host_spread_is_respected_by_consolidation(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/5685 "consolidation stopped working" after a hostname
    # topologySpreadConstraint with whenUnsatisfiable: ScheduleAnyway; the maintainer: "consolidation will always
    # respect preferences. This may result in consolidation not taking place when you believe it should"
    spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                             "whenUnsatisfiable": "ScheduleAnyway",
                                             "labelSelector": {"matchLabels": {"app": "api"}}}]}
    docs: list[dict[str, Any]] = []
    for i in range(3):
        docs += [node(f"h{i}"), pod(f"api-{i}", f"h{i}", cpu="300m", labels={"app": "api"}, spec=spread)]
    path = write(tmp_path, *docs, pools=(nodepool(budgets=ALL),))
    report = run(path)
    assert report.actions == []  # three pods on one m5.large would fit, but skew 2 breaks the preference
    assert {reason(report, f"h{i}") for i in range(3)} == {"Can't replace with a cheaper node"}
    # `--node h1` names the preference that keeps the pod off a node with room
    [fate] = explain_node(ConsolidateOptions(paths=(str(path),), region="us-east-1", time_limit=2.0), "h1").pods
    assert "topologySpreadConstraint on kubernetes.io/hostname (ScheduleAnyway) keeps it off node" in fate.outcome


def test_consolidate_after_never_keeps_one_pool_while_another_consolidates(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/7593 "deactivate spot to spot consolidation for a
    # specific nodepool?": the feature gate is global, "But yes, consolidationPolicy and consolidateAfter can be
    # applied for every nodepool and affect all types of consolidation"
    families = ("m5", "c5", "m6i", "c6i", "r5", "m5a", "c5a", "m6a", "c6a", "r6i", "t3", "m7i", "c7i")
    jobs = nodepool("jobs", families=families, capacity=("spot",), after="Never", budgets=ALL)
    web = nodepool("web", families=families, capacity=("spot",), budgets=ALL)
    docs = [node("j", itype="m5.2xlarge", pool="jobs", capacity="spot"),
            pod("etl-0", "j", cpu="500m", owner="Job/etl", labels={"app": "etl"}),
            node("w", itype="m5.2xlarge", pool="web", capacity="spot", zone="us-east-1b"),
            pod("web-0", "w", cpu="500m", labels={"app": "web", "pool": "web"},
                spec={"nodeSelector": {"karpenter.sh/nodepool": "web"}})]
    report = run(write(tmp_path, *docs, pools=(jobs, web)), spot_to_spot=True)
    assert reason(report, "j") == 'NodePool "jobs" has consolidation disabled'
    assert removed(report) == {"w": ("single", "replace")}


def _volume(claim: str, zone: str) -> list[dict[str, Any]]:
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": "default"},
           "spec": {"volumeName": f"pv-{claim}", "storageClassName": "gp3", "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "10Gi"}}},
           "status": {"phase": "Bound"}}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{claim}"},
          "spec": {"capacity": {"storage": "10Gi"}, "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
                   "claimRef": {"name": claim, "namespace": "default"},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": [zone]}]}]}}}}
    return [pvc, pv]


def test_a_pod_with_a_zonal_volume_is_replaced_in_its_zone(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/4192, the maintainer: an EBS volume's zone becomes a
    # zonal requirement of its pod ("We add a zonal requirement to the pod for each one"); db-0's volume is in
    # us-east-1a, so the roomy node in us-east-1b cannot take it: its m5.xlarge is replaced by an m5.large there
    mount = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]}
    docs = [node("a", itype="m5.xlarge"), pod("db-0", "a", cpu="300m", owner="StatefulSet/db", labels={"app": "db"},
                                              spec=mount),
            *_volume("data-db-0", "us-east-1a"),
            node("b", zone="us-east-1b", annotations={"karpenter.sh/do-not-disrupt": "true"}), pod("w", "b", cpu="300m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert removed(report) == {"a": ("single", "replace")}
    replacement = report.actions[0].replacement
    assert replacement is not None and replacement.instance_type == "m5.large"
    assert replacement.zone == "us-east-1a"


def test_drift_replaces_a_node_of_a_pool_whose_consolidation_is_never(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/7049 "Karpenter is always disrupting node via drift"
    # though the NodePool has `consolidateAfter: Never`: drift is not consolidation ("disrupting via drift replace")
    docs = [node("old"), pod("a", "old", cpu="600m"), nodeclaim("default-x1", "old")]
    report = run(write(tmp_path, *docs, pools=(nodepool(after="Never"),)))
    assert removed(report) == {"old": ("drift", "replace")}


def test_a_blocking_pdb_holds_a_drifted_node(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/6351, the maintainer: "There's nothing special about
    # drift compared to other forms of voluntary disruption ... Pod disruption budgets" hold it as they hold
    # consolidation
    docs = [node("old"), pod("api-0", "old", cpu="600m", owner="ReplicaSet/api", labels={"app": "api"}),
            pdb("api", "api", 0), nodeclaim("default-x1", "old")]
    report = run(write(tmp_path, *docs, pools=(nodepool(),)))
    assert report.actions == []
    assert reason(report, "old") == "Pdb prevents pod evictions (PodDisruptionBudget=[default/api])"


def test_nodes_pasted_without_their_nodepool_are_kept_and_the_user_is_told(tmp_path: Path) -> None:
    # the paste most threads start with, `kubectl get nodes,pods -A -o yaml`, has no NodePool: Karpenter keeps a
    # node whose NodePool does not exist ("NodePool not found"), and the warning says the input lacks it
    path = tmp_path / "snapshot.yaml"
    items = [node("a"), pod("w1", "a"), node("b", zone="us-east-1b"), pod("w2", "b")]
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    report = run(path)
    assert report.actions == []
    assert reason(report, "a") == "NodePool not found (NodePool=default)"
    missing = [w for w in report.warnings if "which no input defines" in w]
    assert len(missing) == 1 and "node a (and 1 other node(s)) belongs to NodePool 'default'" in missing[0]
    assert "kubectl get nodepools" in missing[0]


def test_a_defined_nodepool_raises_no_such_warning(tmp_path: Path) -> None:
    report = run(write(tmp_path, node("a"), pod("w1", "a"), pools=(nodepool(budgets=ALL),)))
    assert not any("which no input defines" in w for w in report.warnings)


def test_spot_nodes_are_deleted_into_each_other_but_never_replaced(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/3229, the maintainer: "If they are all three spot nodes,
    # then only if all of the pods will fit on a single spot node. Karpenter currently won't replace a spot node
    # with another spot node": three 1-CPU inflate replicas on three spot m5.xlarge fit one of them; the node left
    # is not shrunk to a cheaper spot type with the feature gate off
    docs: list[dict[str, Any]] = []
    for i, zone in enumerate(("us-east-1a", "us-east-1b", "us-east-1c")):
        docs += [node(f"s{i}", itype="m5.xlarge", zone=zone, capacity="spot"),
                 pod(f"inflate-{i}", f"s{i}", cpu="1", owner="ReplicaSet/inflate", labels={"app": "inflate"})]
    report = run(write(tmp_path, *docs, pools=(nodepool(capacity=("spot",), budgets=ALL),)))
    gone = removed(report)
    assert len(gone) == 2 and all(decision == "delete" for _, decision in gone.values())
    [kept] = {"s0", "s1", "s2"} - set(gone)
    assert reason(report, kept) == "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"


def test_an_almost_empty_big_node_held_by_a_bad_pdb(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/2238: "we have a 16xl node that is running almost empty
    # but karpenter only says 'marking consolidatable' / 'removing consolidatable status condition' ... loop
    # forever ... because there is a pod with a bad pdb sitting on it"
    docs = [node("big", itype="m5.16xlarge"),
            pod("ledger-0", "big", cpu="250m", owner="StatefulSet/ledger", labels={"app": "ledger"}),
            pdb("ledger", "ledger", 0),
            node("small", zone="us-east-1b"), pod("w", "small", cpu="250m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert reason(report, "big") == "Pdb prevents pod evictions (PodDisruptionBudget=[default/ledger])"
    assert removed(report) == {"small": ("single", "delete")}  # the small node's pod moves onto the big one
