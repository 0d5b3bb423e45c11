"""Well-known label keys (Kubernetes, Karpenter core, the AWS provider, EKS Auto Mode)."""

from __future__ import annotations

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
WINDOWS_BUILD = "node.kubernetes.io/windows-build"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
NODEPOOL = "karpenter.sh/nodepool"
PROVISIONER_NAME = "karpenter.sh/provisioner-name"
INITIALIZED = "karpenter.sh/initialized"
REGISTERED = "karpenter.sh/registered"
EC2NODECLASS = "karpenter.k8s.aws/ec2nodeclass"
COMPUTE_TYPE = "eks.amazonaws.com/compute-type"
FARGATE_PROFILE = "eks.amazonaws.com/fargate-profile"
ZONE_ID = "topology.k8s.aws/zone-id"
POD_TEMPLATE_HASH = "pod-template-hash"

AWS_PREFIX = "karpenter.k8s.aws/"
AUTO_PREFIX = "eks.amazonaws.com/"

# The AWS provider's instance labels (suffixes after the prefix), shared with EKS Auto Mode.
INSTANCE_LABEL_SUFFIXES = (
    "instance-category",
    "instance-generation",
    "instance-family",
    "instance-size",
    "instance-cpu",
    "instance-cpu-manufacturer",
    "instance-cpu-sustained-clock-speed-mhz",
    "instance-memory",
    "instance-ebs-bandwidth",
    "instance-network-bandwidth",
    "instance-hypervisor",
    "instance-encryption-in-transit-supported",
    "instance-local-nvme",
    "instance-gpu-name",
    "instance-gpu-manufacturer",
    "instance-gpu-count",
    "instance-gpu-memory",
    "instance-accelerator-name",
    "instance-accelerator-manufacturer",
    "instance-accelerator-count",
    "instance-tenancy",
    "instance-capability-flex",
    "nitro-sandbox",
)

CORE_WELL_KNOWN = frozenset(
    {NODEPOOL, ZONE, REGION, INSTANCE_TYPE, ARCH, OS, CAPACITY_TYPE, WINDOWS_BUILD, PROVISIONER_NAME}
)
WELL_KNOWN = (
    CORE_WELL_KNOWN
    | frozenset(AWS_PREFIX + s for s in INSTANCE_LABEL_SUFFIXES)
    | frozenset(AUTO_PREFIX + s for s in INSTANCE_LABEL_SUFFIXES)
    | frozenset({ZONE_ID, EC2NODECLASS, COMPUTE_TYPE, AWS_PREFIX + "instance-pods"})
)

# Deprecated aliases Karpenter normalises before comparing requirements.
ALIASES = {
    "failure-domain.beta.kubernetes.io/zone": ZONE,
    "failure-domain.beta.kubernetes.io/region": REGION,
    "beta.kubernetes.io/arch": ARCH,
    "beta.kubernetes.io/os": OS,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE,
    "topology.ebs.csi.aws.com/zone": ZONE,
}


# The deprecated aliases a real node carries besides the current keys: kubelet sets the beta arch and OS, the cloud
# node controller the beta instance type, zone and region (topology.ebs.csi.aws.com/zone only with the EBS CSI driver).
NODE_ALIASES = tuple((alias, key) for alias, key in ALIASES.items() if not alias.startswith("topology.ebs.csi"))


def normalize_key(key: str) -> str:
    """Map a deprecated alias to its current well-known key."""
    return ALIASES.get(key, key)

# What marks a self-managed cluster's control-plane nodes (kubeadm, kops). EKS runs its control plane itself: no
# node of an EKS cluster carries these, and a NodePool given them would pass its nodes off as the control plane.
CONTROL_PLANE_ROLE_KEYS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
ROLE = "kubernetes.io/role"
CONTROL_PLANE_ROLES = frozenset({"control-plane", "master"})


def marks_control_plane(key: str, values: frozenset[str] | None) -> bool:
    """Does a pod's requirement on `key` (its allowed values, None: any) select control-plane nodes?"""
    if key in CONTROL_PLANE_ROLE_KEYS:
        return True
    return key == ROLE and bool(values) and values is not None and values <= CONTROL_PLANE_ROLES
