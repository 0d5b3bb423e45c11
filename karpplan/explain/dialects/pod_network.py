"""The kubelet failing to give a bound pod its network (`FailedCreatePodSandBox`): the CNI plugin had no IP address
for it on its node. The pod is scheduled and waits in ContainerCreating; no scheduler or autoscaler sees it.

    Failed to create pod sandbox: ... plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container
    Failed to create pod sandbox: ... plugin type="cilium-cni" name="cilium" failed (add): unable to allocate IP via local cilium agent: [POST /ipam][502] postIpamFailure range is full

The node's pod capacity (the kubelet's maxPods, which the scheduler and Karpenter count) is above the addresses its
CNI can hand out: a maxPods set by hand or by custom networking the count does not know (aws/karpenter-provider-aws
#3903, #6353), a per-node pod CIDR smaller than maxPods (Cilium's cluster-pool IPAM: #4557), or a subnet out of free
addresses. cli-contract's `source` has no kubelet value: the item goes under `kube-scheduler` (a Kubernetes
component's event on a pod), kind `unsupported`, as the kubelet's admission refusals do.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TRIGGERS = ("failed to assign an IP address to container", "postIpamFailure",
            "failed to allocate for range", "no IP addresses available in range")
# the VPC resource controller's event on a node of a type its trunk-ENI table does not list (security groups for pods)
UNSUPPORTED_TYPE = "is not supported yet by the vpc resource controller"
_TYPE = re.compile(r"The instance type (?P<type>[\w.-]+) " + UNSUPPORTED_TYPE)
CAUSE = "pod network"
TYPE_CAUSE = "pod-eni type unsupported"  # a node's event, no pod's
_PLUGIN = re.compile(r'plugin type=\\?"(?P<type>[\w.-]+)\\?"')


def unsupported_type(line: str) -> str | None:
    """The instance type the VPC resource controller cannot give branch ENIs, if `line` is its event."""
    m = _TYPE.search(line)
    return m.group("type") if m else None


def unsupported_plain(instance_type: str) -> str:
    family = instance_type.split(".")[0]
    return (f"The VPC resource controller (EKS's, for security groups for pods) does not support {instance_type} yet: "
            "it attaches no trunk ENI to such a node, so the node never offers vpc.amazonaws.com/pod-eni and pods that "
            "request it (their namespace has a SecurityGroupPolicy) stay Pending with 'Insufficient "
            "vpc.amazonaws.com/pod-eni' while the node runs other pods. Karpenter judges pod-eni from its own copy of "
            "the controller's table, so it can launch a family the cluster's controller does not list yet "
            "(kubectl get nodes -L vpc.amazonaws.com/has-trunk-attached shows the nodes without a trunk): keep such families out of the NodePool that serves those pods "
            f"(karpenter.k8s.aws/instance-family NotIn [{family}]) until EKS's controller supports them.")


class NoAddress(NamedTuple):
    plugin: str | None  # aws-cni, cilium-cni, ...
    text: str


def parse(line: str) -> NoAddress | None:
    """The CNI's address failure `line` reports, if any."""
    trigger = next((t for t in TRIGGERS if t in line), None)
    if trigger is None:
        return None
    plugin = _PLUGIN.search(line)
    start = line.find("Failed to create pod sandbox")
    return NoAddress(plugin.group("type") if plugin else None,
                     line[start if start >= 0 else line.find(trigger):].strip().rstrip('"}'))


def plain(n: NoAddress) -> str:
    head = ("it was scheduled and bound to its node, but the kubelet cannot start it: the CNI plugin had no IP address "
            f"for it ({n.plugin or 'the CNI'}), so it stays in ContainerCreating. The node's pod capacity (the "
            "kubelet's maxPods, which the scheduler and Karpenter count) is above the addresses it can hand out, "
            "so neither sees a full node and no autoscaler adds one")
    if n.plugin and "cilium" in n.plugin:
        return (f"{head}. With Cilium's cluster-pool IPAM each node gets a pod CIDR (a /25 gives 126 addresses, "
                "kubectl get ciliumnode <node> -o yaml shows it): set the kubelet's maxPods at or below it (the "
                "EC2NodeClass's spec.kubelet.maxPods; kubeletConfiguration.maxPods of a Provisioner), or give "
                "nodes larger CIDRs (clusterPoolIPv4MaskSize); in ENI mode (ipam: eni) the addresses are the "
                "instance type's ENI limits, so set maxPods to those. Another node does not help while the "
                "scheduler and Karpenter keep packing pods by the larger maxPods.")
    return (f"{head}. On the AWS VPC CNI a node's addresses come from its ENIs (the instance type's ENI and "
            "IPs-per-ENI limits; fewer with custom networking, whose primary ENI serves no pods): a maxPods set "
            "above that (kubelet maxPods in the node class, --max-pods in user data, 110 on a small type) or a "
            "subnet out of free addresses leaves pods without one - the node's ipamd log "
            "(/var/log/aws-routed-eni/ipamd.log) says which. Set maxPods to what the CNI really gives (the EKS AMI's "
            "max-pods-calculator.sh, with --cni-custom-networking-enabled or --cni-prefix-delegation-enabled as "
            "you run it), enable prefix delegation (ENABLE_PREFIX_DELEGATION=true on aws-node) for many more "
            "addresses per ENI, or give the nodes' subnets more free addresses. Nothing on the pod is wrong.")
