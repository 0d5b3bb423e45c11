"""NodeClaims whose Node has not registered yet, as Karpenter's disruption sees them (kubernetes-sigs/karpenter
state/statenode.go, state/cluster.go `Synced`, disruption/helpers.go `SimulateScheduling`): a launched one
(status.providerID set) is a destination with the NodeClaim's labels and allocatable, and a candidate's pod the
simulation puts there makes the command invalid ("would schedule against uninitialized nodeclaim/NAME"); one not
launched yet is said to hold Karpenter's disruption back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_consolidate_semantics import _allocatable, node, nodepool, pod, reason, removed, run, write

ALL = [{"nodes": "100%"}]


def launched(name: str, itype: str = "m5.large", zone: str = "us-east-1b", provider: bool = True) -> dict[str, Any]:
    """A NodeClaim as `kubectl get nodeclaims -o yaml` shows it between launch and registration."""
    alloc = _allocatable(itype)
    status: dict[str, Any] = {"conditions": [
        {"type": "Launched", "status": "True" if provider else "Unknown", "reason": "Launched",
         "lastTransitionTime": "2024-11-20T10:00:00Z"},
        {"type": "Registered", "status": "Unknown", "reason": "AwaitingReconciliation",
         "lastTransitionTime": "2024-11-20T10:00:00Z"},
        {"type": "Initialized", "status": "Unknown", "reason": "AwaitingReconciliation",
         "lastTransitionTime": "2024-11-20T10:00:00Z"}]}
    if provider:
        status.update({"providerID": f"aws:///{zone}/i-0{name[-4:]}", "capacity": alloc, "allocatable": alloc,
                       "imageID": "ami-0123"})
    labels = {"karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": "on-demand",
              "node.kubernetes.io/instance-type": itype, "topology.kubernetes.io/zone": zone,
              "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "labels": labels},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                     "requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}]},
            "status": status}


def test_a_candidates_pods_landing_on_a_launched_nodeclaim_block_the_command(tmp_path: Path) -> None:
    # "big" (m5.2xlarge) runs one small pod: alone it would be replaced by a cheaper type; the pending pod's
    # m5.large NodeClaim is launched but not registered, and the small pod fits there, so the command is invalid
    docs = [node("big", itype="m5.2xlarge"), pod("p0", "big", cpu="300m"), launched("default-abcd")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert report.actions == []
    assert reason(report, "big") == ("Not all pods would schedule, default/p0 => would schedule against "
                                     "uninitialized nodeclaim/default-abcd")
    # statenode.go ValidateNodeDisruptable: "nodeclaim does not have an associated node"
    assert reason(report, "default-abcd") == "Nodeclaim does not have an associated node"


def test_without_the_nodeclaim_the_node_is_replaced(tmp_path: Path) -> None:
    docs = [node("big", itype="m5.2xlarge"), pod("p0", "big", cpu="300m")]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert removed(report) == {"big": ("single", "replace")}


def test_a_nodeclaim_not_launched_yet_is_said_to_hold_disruption_back(tmp_path: Path) -> None:
    docs = [node("big", itype="m5.2xlarge"), pod("p0", "big", cpu="300m"), launched("default-wxyz", provider=False)]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    said = [w for w in report.warnings if "default-wxyz" in w]
    assert len(said) == 1 and "not launched yet" in said[0] and "disrupts nothing" in said[0]
