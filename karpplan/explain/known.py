"""What some well-known names in a scheduling message mean, so that they are not misread as the user's fault.

- Startup taints: put on a node by the kubelet, the cloud controller or Karpenter while it starts, and
  removed by them once it is ready / registered / initialised. A pod must not tolerate them: the answer
  is to wait, and when one stays on a Ready node, to find out why its owner did not remove it.
- Disruption taints: Karpenter taints a node it is about to remove; pods are meant to go elsewhere.
- `hostname-placeholder-…`: the hostname Karpenter gives a NodeClaim it is still launching.
- Node-group labels: labels only EKS managed node groups (or eksctl, or Fargate) put on their nodes;
  a Karpenter node never carries them, so a pod selecting one is meant for that capacity, not Karpenter's.
"""

from __future__ import annotations

from karpplan.model.node_group_labels import NODE_GROUP_LABELS as NODE_GROUP_LABELS  # one table, model's

# taint key -> (who removes it, when)
STARTUP_TAINTS = {
    "node.kubernetes.io/not-ready": ("the node lifecycle controller", "once the kubelet reports the node Ready"),
    "node.kubernetes.io/unreachable": ("the node lifecycle controller",
                                       "once the node's kubelet reports again (a node that never does must be replaced)"),
    "node.kubernetes.io/network-unavailable": ("the CNI / route controller", "once the node's network is set up"),
    "node.cloudprovider.kubernetes.io/uninitialized": ("the cloud controller manager", "once it has initialised the node"),
    "karpenter.sh/unregistered": ("Karpenter", "once the node has registered and been matched to its NodeClaim"),
    "karpenter.sh/not-ready": ("Karpenter", "once the node it launched is Ready (Karpenter v0.x)"),
    "node.kubernetes.io/unschedulable": ("whoever cordoned the node", "on kubectl uncordon, or when the node goes"),
    "node.cilium.io/agent-not-ready": ("the Cilium agent", "once it runs on the node"),
    "ebs.csi.aws.com/agent-not-ready": ("the EBS CSI node driver", "once it runs on the node"),
    "efs.csi.aws.com/agent-not-ready": ("the EFS CSI node driver", "once it runs on the node"),
}
DISRUPTION_TAINTS = {
    "karpenter.sh/disrupted": "Karpenter is removing the node (consolidation, drift or expiry)",
    "karpenter.sh/disruption": "Karpenter is removing the node (consolidation, drift or expiry)",
    "node.kubernetes.io/out-of-service": "the node was marked out of service",
    "ToBeDeletedByClusterAutoscaler": "cluster-autoscaler is removing the node",
    "DeletionCandidateOfClusterAutoscaler": "cluster-autoscaler may remove the node soon",
    "remediator.aks.microsoft.com/unschedulable": "AKS node auto-repair is remediating (reimaging) the node",
}

PLACEHOLDER = "hostname-placeholder-"

# v0.32's migration from Provisioners to NodePools taints each old Provisioner so that new pods go to a NodePool
LEGACY_TAINT = "karpenter.sh/legacy"


def legacy_taint_plain(where: str) -> str:
    return (f"{where} taints its nodes with {LEGACY_TAINT}=true:NoSchedule, the taint the v0.32 migration guide puts on "
            "an old Provisioner so that new pods go to a NodePool instead: do not tolerate it. The pod needs a NodePool "
            "that takes it (one for each Provisioner being replaced, with the same requirements, labels and taints - "
            "karpenter-convert writes them): if there is none for this pod, create it; if there is, its own clause in "
            "this message says why it refused the pod, and a NodePool with no clause was not considered (kubectl get "
            "nodepools: is it there and Ready, with a valid EC2NodeClass?).")



# taints the node lifecycle controller keeps on a node while its kubelet reports a pressure condition
PRESSURE_TAINTS = {
    "node.kubernetes.io/disk-pressure": (
        "DiskPressure: its root volume or image filesystem is nearly full (images, container logs, emptyDir data); "
        "it clears once the kubelet has freed space (image garbage collection, evictions). Free the disk, or give "
        "the nodes larger root volumes (the node group's disk size, the EC2NodeClass blockDeviceMappings)"),
    "node.kubernetes.io/memory-pressure": (
        "MemoryPressure: its pods use more memory than they request and the node is near its eviction threshold; it "
        "clears once the kubelet has evicted enough. Set memory requests close to what the pods really use, so that "
        "nodes are not packed past their memory"),
    "node.kubernetes.io/pid-pressure": (
        "PIDPressure: too many processes run on it; it clears once the kubelet has evicted enough. Find the pod "
        "that forks without bound, or set the kubelet's podPidsLimit"),
}


def pressure_taint(key: str | None) -> str | None:
    return PRESSURE_TAINTS.get(key or "")


def transient_taint(key: str | None) -> tuple[str, str] | None:
    """Who removes this taint and when (startup taints), or None."""
    return STARTUP_TAINTS.get(key or "")


def disruption_taint(key: str | None) -> str | None:
    return DISRUPTION_TAINTS.get(key or "")


def node_group_capacity(key: str | None) -> str | None:
    return NODE_GROUP_LABELS.get(key or "")


# Karpenter kept label domains the kubelet may not set on itself, and its own, out of a pool's labels and
# requirements (apis RestrictedLabelDomains / LabelDomainExceptions), its well-known labels aside; releases from late
# 2025 on (kubernetes-sigs/karpenter#2586) accept kubernetes.io and k8s.io ones, karpenter.sh stays reserved
_RESTRICTED_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh")
_DOMAIN_EXCEPTIONS = ("kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io")
_CONTROL_PLANE = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


def _under(domain: str, parents: tuple[str, ...]) -> bool:
    return any(domain == d or domain.endswith("." + d) for d in parents)


def restricted_label(key: str | None, *, v0: bool) -> str | None:
    """Why a pool cannot simply be given the label `key` (a sentence), or None when it may carry it. `v0`: the log
    is a Provisioner's (Karpenter v0.x), where the restriction certainly holds."""
    if not key or "/" not in key or key in ("karpenter.sh/provisioner-name", "karpenter.sh/nodepool"):
        return None
    domain = key.split("/", 1)[0]
    if not _under(domain, _RESTRICTED_DOMAINS) or _under(domain, _DOMAIN_EXCEPTIONS):
        return None
    if _under(domain, ("karpenter.sh",)):
        why = "A pool may not be given it: Karpenter reserves labels under karpenter.sh for itself."
    elif v0:
        why = ("A Provisioner may not be given it: Karpenter v0.x rejects labels under kubernetes.io and k8s.io in a "
               "pool's labels and requirements (the kubelet may not set them on itself), its well-known ones aside.")
    else:
        why = ("Whether a pool may be given it depends on the release: Karpenter rejected labels under kubernetes.io "
               "and k8s.io in a pool's labels and requirements (its well-known ones aside) until late 2025, and "
               "accepts them since (kubernetes-sigs/karpenter#2586).")
    if key in _CONTROL_PLANE:
        return (why + f" But {key} selects control-plane nodes, and EKS runs no control-plane node a pod can land "
                "on: remove that selector (often a Helm chart's nodeSelector, affinity or tolerations default) from "
                "the pod.")
    return why + " Where it may not, remove that selector from the pod, or select on a label of your own domain."


# the taints kubeadm, k3s / RKE2 and kops put on control-plane and etcd nodes
CONTROL_PLANE_TAINTS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master",
                        "node-role.kubernetes.io/etcd", "node-role.kubernetes.io/controlplane")


# default-scheduler saw only Fargate nodes: the pod was not handed to the fargate-scheduler
FARGATE_NODES = (" (eks.amazonaws.com/compute-type=fargate marks Fargate nodes: a Fargate profile, not a toleration, puts "
                 "a pod there - the fargate-scheduler takes a pod only if a profile selects its namespace and labels when "
                 "the pod is created, so pods made before their profile existed (CoreDNS on a new Fargate-only cluster) "
                 "stay with default-scheduler until restarted: kubectl rollout restart deployment coredns -n kube-system; "
                 "older EKS versions also gave CoreDNS the annotation eks.amazonaws.com/compute-type: ec2, which keeps it "
                 "off Fargate until removed)")


def control_plane_note(keys: list[str]) -> str:
    """What an untolerated control-plane / etcd taint (or the add-ons' CriticalAddonsOnly) means, with a leading
    space; or ''."""
    if "CriticalAddonsOnly" in keys:
        return (" CriticalAddonsOnly reserves those nodes for cluster add-ons (the system node group that EKS and its "
                "Terraform / blueprint examples make for Karpenter, CoreDNS and the like): an add-on's pod belongs there "
                "and needs the toleration (key: CriticalAddonsOnly, operator: Exists) - Karpenter's and CoreDNS's charts "
                "carry it by default, but Helm values that set tolerations replace that default list, so add it back; "
                "any other pod needs a node group or NodePool without the taint.")
    if not any(k in CONTROL_PLANE_TAINTS for k in keys):
        return ""
    return (" Those taints mark control-plane and etcd nodes, which keep ordinary pods off: when every node carries "
            "one, the cluster has no worker node at all - add worker nodes (a node pool without the control-plane / "
            "etcd role), or on a single-node cluster remove the taint from the node (kubectl taint nodes --all "
            "<key>-); a toleration belongs only on pods meant to run on the control plane.")
