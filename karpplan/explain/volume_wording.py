"""What kube-scheduler's and Karpenter's volume reasons mean: a PersistentVolume pinned to another zone, a claim not
bound yet, no PersistentVolume to bind, a CSI driver's storage capacity, a node's volume attachment limit."""

from __future__ import annotations


def volume_plain(text: str, requirements: str = "spec.template.spec.requirements") -> str:
    low = text.lower()
    if "node affinity conflict" in low or "volume zone" in low:
        return (f"{text}: the pod's PersistentVolume is pinned (its spec.nodeAffinity) to a zone or node these nodes "
                "are not in, and a volume never moves. The pod needs a node in the volume's zone: let a node group or "
                f"NodePool launch there ({requirements} on topology.kubernetes.io/zone, and a subnet in that zone; "
                "for cluster-autoscaler, one node group per zone: a group spanning zones adds its node in any of them), "
                "or recreate the volume where your nodes are. kubectl get pv -o wide shows the zone; new volumes follow "
                "the pod with a StorageClass of volumeBindingMode: WaitForFirstConsumer. A pod that mounts several "
                "EBS volumes needs them all in one zone: two in different zones fit no node at all. If the PV's zone "
                "is one your nodes are in, compare the keys: a PV of the EBS CSI driver is pinned by "
                "topology.ebs.csi.aws.com/zone (or topology.kubernetes.io/zone), which a node carries only once the "
                "driver's node plugin (the ebs-csi-node DaemonSet) runs there - kubectl get csinode.")
    if (claim := _claim_plain(text, low)) is not None:
        return claim
    if "available persistent volumes to bind" in low:
        return (f"{text}: the pod's claim is unbound and no existing PersistentVolume matches it on those nodes "
                "(storageClassName, size, access modes, or the PV's node affinity); provision one, or give the claim a "
                "StorageClass that can create it. A StorageClass of local volumes (provisioner: "
                "kubernetes.io/no-provisioner) creates none: each node the pod may use needs its own PersistentVolume of "
                "that class, made by hand or by a local volume provisioner running on the node - kubectl get pv "
                "shows which nodes have one free.")
    if "enough free storage" in low:
        return (f"{text}: the claim's StorageClass belongs to a CSI driver that publishes storage capacity per node "
                "(CSIStorageCapacity - local volumes such as LVM, ZFS or TopoLVM), and none of those nodes has room for "
                "the size the claim requests: free or add space where the driver allocates (e.g. the volume group), "
                "or request less. If the nodes do have the space, the scheduler is reading no or stale capacity: the "
                "CSIDriver object says storageCapacity: true but the driver publishes no CSIStorageCapacity for its "
                "StorageClass (kubectl get csistoragecapacities -A) - upgrade the driver or turn its capacity "
                "tracking off.")
    if "max volume count" in low:
        return (f"{text}: those nodes already have as many volumes attached as they may (the CSI driver's per-node "
                "limit in CSINode: the instance type's EBS attachment slots, shared with ENIs on Nitro types, or the "
                "EBS CSI driver's --volume-attach-limit), so the pod needs a node with a free attachment - a new node, "
                "not smaller requests. If Karpenter or cluster-autoscaler adds none, it is not counting that limit "
                "(older Karpenter ignored --volume-attach-limit): spread such pods over more nodes (topology spread on "
                "kubernetes.io/hostname) or use instance types with more attachment slots. If new, empty nodes refuse it "
                "too (the count grows as nodes are added and none takes the pod), the pod by itself mounts more volumes "
                "than one node may attach (a Nitro instance has 28 attachment slots shared by its EBS volumes, root "
                "volume and network interfaces; older Xen types allow 39 volumes): no new node can help and an autoscaler that does not count the limit keeps adding nodes - "
                "split the volumes over more pods, or use fewer, larger volumes.")
    return (f"{text}: the pod's volumes (PersistentVolumeClaims) tie it to a zone or node the pool cannot launch in; "
            f"compare each volume's zone (kubectl get pv -o wide) with the pool's {requirements} on "
            "topology.kubernetes.io/zone.")


def _claim_plain(text: str, low: str) -> str | None:
    """A claim that is not bound: no class, a provisioner that makes no volume, or the scheduler waiting on it."""
    if "no storage class is set" in low:
        return (f"{text}: the pod's PersistentVolumeClaim names no storageClassName, the cluster has no default "
                "StorageClass, and no existing PersistentVolume matches it, so nothing will ever bind it (EKS clusters "
                "made on 1.30 or later mark no class default, and the old gp2 class's in-tree provisioner needs the EBS "
                "CSI driver since 1.23). Install the aws-ebs-csi-driver add-on, then set storageClassName on the claim "
                "(e.g. a gp3 class of provisioner ebs.csi.aws.com) or mark one class default with the annotation "
                "storageclass.kubernetes.io/is-default-class: \"true\"; a claim's class cannot be changed once made, "
                "so recreate it.")
    if "external provisioner" in low:
        return (f"{text}: the claim waits for its CSI driver to create the volume. For a few seconds this is normal; "
                "repeated for minutes (x100 over an hour), that provisioner is not running or cannot create volumes. "
                "For ebs.csi.aws.com - which EKS 1.23 and later use even for the gp2 class's in-tree kubernetes.io/"
                "aws-ebs provisioner - install the aws-ebs-csi-driver add-on and give its controller an IAM role with "
                "AmazonEBSCSIDriverPolicy (IRSA or Pod Identity); kubectl get pods -n kube-system -l "
                "app=ebs-csi-controller and its csi-provisioner container's log say which. The pod stays Pending "
                "until the claim binds; its requests and the nodes are not the cause.")
    if "binding volumes" in low:
        return (f"{text}: the scheduler chose a node and asked for the pod's claims to be provisioned for it, but no "
                "volume was made and bound in time - its provisioner is missing or failing. On EKS 1.23 and later the "
                "gp2 StorageClass's in-tree provisioner (kubernetes.io/aws-ebs) is migrated to the EBS CSI driver, so "
                "without the aws-ebs-csi-driver add-on (and its IAM role) no EBS volume is ever created: install it, "
                "or use a StorageClass whose provisioner runs. kubectl describe pvc shows the provisioner's events; "
                "the pod's requests and the nodes are not the cause.")
    if "unbound immediate" in low or "has unbound persistentvolumeclaims" in low:
        return (f"{text}: the pod's PersistentVolumeClaim is not bound yet and its StorageClass binds Immediately, so "
                "the scheduler waits for the volume. Check kubectl describe pvc: a StorageClass that does not exist, a "
                "provisioner / CSI driver that is not installed (e.g. ebs.csi.aws.com) or lacks IAM permissions keeps "
                "it Pending, and so does a claim that names no StorageClass in a cluster without a default one (EKS "
                "clusters made on 1.30 or later no longer mark gp2 as the default) when no PersistentVolume matches it. Use volumeBindingMode: WaitForFirstConsumer so the volume is made in the pod's zone.")
    return None
