"""Karpenter's launch failures: the pod was scheduled onto a NodeClaim (Machine, node before v0.28), and EC2
would not start the instance for it. Nothing is wrong with the pod; the cause is EC2 capacity, the account's
quotas, or the node class's subnets / IAM / launch settings.

    {"message":"failed launching nodeclaim", ..., "error":"insufficient capacity, all requested instance types were unavailable during launch"}
    creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient m7g.8xlarge capacity in the Availability Zone you requested (eu-west-1c). ...
    launching nodeclaim, creating instance, with fleet error(s), InvalidParameterValue: ...
    Launching node, creating cloud provider instance, with fleet error(s), UnfulfillableCapacity: ...     (v0.1x)
    creating scheduler, getting instance types, no subnets matched selector map[karpenter.sh/discovery:demo]
    no subnets exist given constraints [{map[karpenter.sh/discovery:xxx] }]
    getting instance types, no subnets found via [{"Name":"tag-key","Values":[...]}]

A node Karpenter launched whose kubelet never reported a resource: the node's `FailedConsistencyCheck` event
`expected resource "cpu" didn't register on the node` (Karpenter v0.2x-v0.3x). Pods nominated to it wait on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CAPACITY = "insufficient capacity"  # also the reason's `cause`
QUOTA = "quota exceeded"
SUBNETS = "no subnets"
REFUSED = "launch refused"
UNREGISTERED = "resource not registered"
NOT_JOINED = "node not registered"  # the NodeClaim's Registered condition: NodeNotFound
NO_STARTUP_TAINT = "no unregistered taint"  # v1: the node registered without karpenter.sh/unregistered
SHORT = "resource short"  # the node registered less of a resource than Karpenter planned with
CAUSES = (CAPACITY, QUOTA, SUBNETS, REFUSED, UNREGISTERED, NOT_JOINED, NO_STARTUP_TAINT, SHORT)
AVOIDED = "offering avoided"  # an insufficient-capacity error's offering, kept out of Karpenter's choices a while

TRIGGERS = ("launching nodeclaim", "launching machine", "Launching node", "creating instance", "creating cloud provider "
            "instance", "insufficient capacity", "InsufficientInstanceCapacity", "UnfulfillableCapacity",
            "no subnets matched", "no subnets exist", "no subnets found", "VcpuLimitExceeded",
            "MaxSpotInstanceCountExceeded", "InstanceLimitExceeded", "didn't register on the node",
            "nominated for this pod failed to launch", "Node not registered with cluster",
            "missing required startup taint", "creating fleet", "Could not launch node", "% of expected)",
            "removing offering from offerings")
_UNREGISTERED = re.compile(r'expected resource \\?"(?P<res>[^"\\]+)\\?" didn\'t register on the node', re.I)
# Karpenter's consistency check (v0.2x inflight checks, v0.3x+ nodeshape): a resource the node registered below 90%
# of what Karpenter launched it for: `Expected 234 of resource pods, but found 50 (21.4% of expected)`
_SHORTFALL = re.compile(r"[Ee]xpected (?P<want>\S+) of resource (?P<res>[\w./-]+), but found (?P<got>\S+) "
                        r"\((?P<pct>[\d.]+)% of expected\)")
# the resources every kubelet reports itself; any other (nvidia.com/gpu, ...) comes from a device plugin
_KUBELET_RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage")
_CAPACITY = re.compile(r"insufficient capacity|InsufficientInstanceCapacity|UnfulfillableCapacity|"
                       r"InsufficientCapacityError|all requested instance types were unavailable", re.I)
_QUOTA = re.compile(r"VcpuLimitExceeded|MaxSpotInstanceCountExceeded|InstanceLimitExceeded|"
                    r"SpotMaxPriceTooLow")
_SUBNETS = re.compile(r"no subnets (?:matched selector|exist given constraints|found via)\s*(?P<sel>(?:map)?\[.*?\](?:\s*\}\])?)?"
                      r"(?=[;\"\t]|\s*\{|\s*$)", re.I)
_SHORT = re.compile(r"We currently do not have sufficient (?P<type>\S+) capacity in the Availability Zone you requested "
                    r"\((?P<zone>[^)]+)\)")
_AMIS = re.compile(r"no instance types satisfy requirements of amis? (?P<amis>\[?[\w\-, ]+\]?)")
_FLEET = re.compile(r"(?:with fleet error\(s\),|creating fleet) (?P<code>[A-Z][\w.]+): (?P<msg>[^;\"\t{]*)")
# the pod event of kubernetes-sigs/karpenter#3143: `InsufficientCapacityError  NodeClaim X, nominated for this pod failed
# to launch: InsufficientInstanceCapacity: We currently do not have sufficient ...`
_ANCHOR = re.compile(r"(?:failed )?launching (?:nodeclaim|machine)|Launching node|creating instance|creating cloud "
                     r"provider instance|insufficient capacity|no subnets|creating scheduler|Could not launch node|"
                     r"creating machine|creating fleet|"
                     r"NodeClaim \S+, nominated for this pod failed to launch", re.I)
# The offering a launch found no capacity for, which Karpenter keeps out of its choices for a while (its unavailable
# offerings cache): v0.5-v0.2x `InsufficientInstanceCapacity for offering { instanceType: g4dn.xlarge, zone: us-east-1c,
# capacityType: spot }, avoiding for 45s`; later `removing offering from offerings` with reason InsufficientInstanceCapacity
_AVOIDED = re.compile(r"InsufficientInstanceCapacity for offering \{ ?instanceType: (?P<type>[\w.-]+), zone: "
                      r"(?P<zone>[\w-]+), capacityType: [\w-]+ ?\}, avoiding for \S+|removing offering from offerings"
                      r'.*?"reason"\s*:\s*"InsufficientInstanceCapacity".*?"instance-type"\s*:\s*"(?P<type2>[\w.-]+)"'
                      r'.*?"zone"\s*:\s*"(?P<zone2>[\w-]+)"')
_NOMINATED_CLAIM = re.compile(r"NodeClaim (?P<name>\S+?), nominated for this pod")
_END = re.compile(r'\t\{|","|"\}|"$|\s\{"commit')
_NODECLAIM = re.compile(r'\\?"(?:NodeClaim|nodeclaim|Machine|machine)\\?"\s*:\s*(?:\{\s*\\?"name\\?"\s*:\s*)?\\?"(?P<name>[^"\\]+)')


@dataclass(frozen=True)
class LaunchError:
    cause: str  # one of CAUSES
    text: str  # the error, from its first words on
    nodeclaim: str | None = None
    instance_type: str | None = None
    zone: str | None = None
    selector: str | None = None
    code: str | None = None
    detail: str | None = None  # EC2's own words after the error code


def parse(line: str) -> LaunchError | None:
    """The launch failure a log line (console or JSON) reports, or None."""
    if not any(t in line for t in TRIGGERS):
        return None
    if "Node not registered with cluster" in line:
        return LaunchError(NOT_JOINED, "Node not registered with cluster")
    if (tm := re.search(r"missing required startup taint, (?P<key>[\w./-]+)", line)) is not None:
        return LaunchError(NO_STARTUP_TAINT, tm.group(0), detail=tm.group("key"))
    if (sm := _SHORTFALL.search(line)) is not None:
        return LaunchError(SHORT, sm.group(0), detail=sm.group("res"), code=sm.group("want"), selector=sm.group("got"))
    if (um := _UNREGISTERED.search(line)) is not None:
        return LaunchError(UNREGISTERED, um.group(0).replace('\\"', '"'), detail=um.group("res"))
    text = line.replace('\\"', '"')
    if (om := _AVOIDED.search(text)) is not None:  # the offering EC2 had no capacity for, kept out a while
        return LaunchError(CAPACITY, om.group(0), instance_type=om.group("type") or om.group("type2"),
                           zone=om.group("zone") or om.group("zone2"), code="InsufficientInstanceCapacity",
                           detail=AVOIDED)
    m = _ANCHOR.search(text)
    if m is None:
        return None
    error = _END.split(text[m.start():], 1)[0].strip().rstrip('"').strip()
    if (em := re.search(r'"error"\s*:\s*"(?P<e>[^"]*)', text)) is not None and len(em.group("e")) > 8:
        error = em.group("e") if not error.startswith(("creating", "launching", "Launching")) else error
    claim = _NODECLAIM.search(line) or _NOMINATED_CLAIM.search(text)
    short = _SHORT.search(text)
    fleet = _FLEET.search(text)
    code = fleet.group("code") if fleet else None
    if (sm := _SUBNETS.search(text)) is not None:
        return LaunchError(SUBNETS, error, claim.group("name") if claim else None,
                           selector=(sm.group("sel") or "").strip() or None)
    if _QUOTA.search(text):
        return LaunchError(QUOTA, error, claim.group("name") if claim else None, code=code)
    if _CAPACITY.search(text):
        return LaunchError(CAPACITY, error, claim.group("name") if claim else None,
                           short.group("type") if short else None, short.group("zone") if short else None, code=code)
    if fleet is not None or "launching nodeclaim" in text.lower() or "launching machine" in text.lower():
        return LaunchError(REFUSED, error, claim.group("name") if claim else None, code=code,
                           detail=fleet.group("msg").split("\\n")[0].split("\n")[0].strip() if fleet else None)
    return None


_NOT_JOINED_PLAIN = ("A NodeClaim's instance was launched but its node never registered with the cluster (the NodeClaim's "
    "Registered condition: NodeNotFound, Node not registered with cluster): the kubelet cannot join - the "
    "node role's access entry (type EC2 Linux) or aws-auth mapping, an AMI whose bootstrap does not match "
    "the node class's amiFamily / user data, no route from the subnet to the API server (private endpoint, "
    "NAT, security groups). The instance's system log (EC2 console, Get system log) shows the kubelet's "
    "error; Karpenter deletes the NodeClaim after 15 minutes and tries again. (Those are EKS's causes; with "
    "Karpenter's Azure provider the same words mean the VM's bootstrap or its subnet's route to the API "
    "server failed - its boot diagnostics show why.) Nothing on the pod is wrong.")


def plain(e: LaunchError) -> str:
    """What the launch failure means and the smallest fix."""
    claim = f"NodeClaim {e.nodeclaim}" if e.nodeclaim else "A NodeClaim Karpenter created for pending pods"
    if e.cause == SUBNETS:
        sel = f" ({e.selector})" if e.selector else ""
        return (f"Karpenter can launch no node: the node class's subnet selector{sel} matches no subnet. Tag the "
                "cluster's private subnets with exactly that tag key and value (e.g. karpenter.sh/discovery: "
                "<cluster name>), or fix the selector - spec.subnetSelectorTerms of the EC2NodeClass "
                "(spec.subnetSelector of an AWSNodeTemplate / Provisioner provider). Nothing on the pod is wrong.")
    if e.cause == QUOTA:
        return (f"{claim} could not start: EC2 refused it for the account's quota ({e.code or e.text}). Request a higher "
                "EC2 quota (Service Quotas: Running On-Demand / All Spot Instance Requests, in vCPUs) or lower the "
                "NodePool's spec.limits so Karpenter stays under it. Nothing on the pod is wrong.")
    if e.cause == NOT_JOINED:
        return _NOT_JOINED_PLAIN
    if e.cause == NO_STARTUP_TAINT:
        return (f"A node joined without the taint {e.detail} ({e.text}): Karpenter v1 requires every node it launches "
                "to register with karpenter.sh/unregistered:NoExecute and removes it itself, and a node without it is "
                "never marked registered. The AMI families Karpenter knows add it; with amiFamily: Custom (or your own "
                "bootstrap) the user data must pass --register-with-taints=karpenter.sh/unregistered:NoExecute to the "
                "kubelet (nodeadm's kubelet flags on AL2023). Nothing on the pod is wrong.")
    if e.cause == SHORT:
        return _short_plain(e)
    if e.cause == UNREGISTERED:
        if e.detail in _KUBELET_RESOURCES:
            return (f"A node Karpenter launched never reported {e.detail} in its status (FailedConsistencyCheck: "
                    f"{e.text}): its kubelet did not finish registering, so the node is broken, not full - kubectl "
                    "describe node shows its Ready condition and the kubelet's events (bootstrap / user data, the "
                    "node role, the CNI). Karpenter keeps nominating pending pods to it meanwhile; delete its "
                    "NodeClaim (kubectl delete nodeclaim <name>, or the node) so a new one is launched, and fix the "
                    "node class if the next one fails the same way. Nothing on the pod is wrong.")
        return (f"A node Karpenter launched never advertised {e.detail} (FailedConsistencyCheck: {e.text}): the device "
                "plugin that registers it (the NVIDIA device plugin / GPU operator, the Neuron or EFA plugin) is not "
                "running on that node, or the AMI lacks its driver. The node stays uninitialised and pods that "
                "request the resource wait on it: run the plugin's DaemonSet there (its tolerations and node "
                "selector must match the node) or use an AMI with the driver. Nothing on the pod is wrong.")
    if e.cause == CAPACITY and e.detail == AVOIDED:
        return (f"EC2 had no capacity for {e.instance_type} in {e.zone}, so Karpenter keeps that offering out of its "
                "choices for a while (its unavailable-offerings cache) and launches from the others: the launch error "
                "it comes with says what failed. Only when every offering a NodePool allows is kept out does a pod "
                "wait; a NodePool that allows more instance types, zones and capacity types gives Karpenter "
                "somewhere else to go.")
    if e.cause == CAPACITY:
        where = (f" (no {e.instance_type} capacity in {e.zone})" if e.instance_type and e.zone else "")
        if "all requested instance types were unavailable" in e.text:  # no CreateFleet call was made at all
            where += (": every instance type and zone it allowed was already marked unavailable after recent "
                      "insufficient-capacity errors, so Karpenter did not even ask EC2")
        return (f"{claim} could not start: EC2 had no capacity for the instance types and zones it allowed{where} "
                "(InsufficientInstanceCapacity / UnfulfillableCapacity). Karpenter marks those offerings unavailable "
                "for a few minutes and retries with the others, so this often clears on its own; when it keeps "
                "failing, the NodePool allows too few choices - widen its requirements (more instance families, sizes "
                "and generations, more zones with subnets, spot and on-demand). Nothing on the pod is wrong, and "
                "lowering its requests only helps if it lets smaller types qualify.")
    if (am := _AMIS.search(e.text)) is not None:  # Karpenter's own check, before any EC2 call
        return _no_ami_pair(claim, e.text, am.group("amis").strip("[] "))
    if (why := next((w for words, w in _REFUSALS if words in e.text), None)) is not None:
        return f"{claim} could not start: EC2 refused the launch ({e.code}: {e.detail}). {why} Nothing on the pod is wrong."
    return (f"{claim} could not start: EC2 refused the launch ({f'{e.code}: {e.detail}' if e.code and e.detail else e.text}). That is "
            "about the node class or the AWS account (the node IAM role and iam:PassRole, the launch template, AMI, "
            "security groups, tags), not the pod; Karpenter retries, so a transient AWS error clears on its own.")


# why a node registers less of a resource than Karpenter launched it for, by resource
_SHORT_WHY = {
    "pods": ("Karpenter launched it for {want} pods (its own max-pods figure: the ENI-limited count, or the "
             "kubelet maxPods it was given) but the kubelet registered {got}: the AMI's bootstrap or your user data "
             "set another --max-pods (a custom AMI or launch template, Bottlerocket's settings.kubernetes.max-pods, "
             "prefix delegation assumed on one side only). Karpenter packs pods onto the node by its own figure, so "
             "pods it planned there stay pending (Too many pods). Make the two agree: set the kubelet maxPods Karpenter "
             "uses (EC2NodeClass spec.kubelet.maxPods in v1; spec.template.spec.kubelet in a v1beta1 NodePool; "
             "kubeletConfiguration.maxPods in a Provisioner) to what the node really allows, or drop the override."),
    "ephemeral-storage": (
        "Karpenter sized it from the node class's blockDeviceMappings ({want}) but the kubelet's filesystem has "
        "{got}: the mapping enlarged a volume the kubelet does not use - the wrong deviceName for the AMI "
        "(/dev/xvda is the root volume of AL2 and AL2023, Bottlerocket keeps pods' data on /dev/xvdb), a custom AMI "
        "or launch template whose root device is named otherwise, or a filesystem not grown to its volume. Put "
        "the size on the device the kubelet's filesystem is on."),
}


def _short_plain(e: LaunchError) -> str:
    """A node that registered less of a resource than Karpenter planned with."""
    res, want, got = e.detail or "", e.code or "?", e.selector or "?"
    why = _SHORT_WHY.get(res, "").format(want=want, got=got) or (
        f"Karpenter launched it expecting {want} of {res} and the node reports {got}: "
        + ("Karpenter's estimate of what the instance keeps for itself (its VM memory overhead estimate, "
           "VM_MEMORY_OVERHEAD_PERCENT) is too low for this type, or huge pages carve memory out"
           if res in ("memory", "cpu") else "its device plugin registered fewer devices than the type has (a "
           "plugin sharing or partitioning them, or devices the driver did not bring up)") + ".")
    return (f"A node Karpenter launched registered {got} of {res}, where Karpenter planned with {want} ({e.text}; a consistency "
            f"check on the node, FailedConsistencyCheck / FailedInflightCheck). {why} The node stays and runs what "
            "fits; nothing on the pods is wrong.")


# EC2's refusals whose cause is in the node class's launch settings (the words EC2 answers with, what they mean)
_REFUSALS = (
    ("'amiIdList' cannot be empty",
     "The launch template Karpenter was given names no AMI: with your own launch template (a Provisioner's "
     "launchTemplate, an AWSNodeTemplate's launchTemplateName) Karpenter takes the AMI from the template, so it must "
     "set one (ImageId) - the launch template of an EKS managed node group never does (EKS adds the AMI itself). "
     "Put the AMI in the template, or drop the launch template and let Karpenter build its own from amiFamily / "
     "amiSelector and userData (launch templates were removed from Karpenter's API in v0.32)."),
    ("InvalidLaunchTemplateName.NotFoundException",
     "The launch template is gone. A Karpenter-<cluster>-<hash> template is Karpenter's own: it caches the "
     "templates it made, and when one is deleted (by hand, by its cleanup of templates unused for a while, or by "
     "another Karpenter replica) it keeps using the cached name until the cache expires - restart the Karpenter "
     "controller (its leader) to drop the cache, and upgrade Karpenter (later releases re-create a missing "
     "template). A template you named yourself must exist in the cluster's region and account."),
    ("InvalidAMIID",
     "The AMI does not exist in this region or account, or the node role may not use it: an AMI id is per region; "
     "check the node class's AMI selection (kubectl describe ec2nodeclass lists the AMIs it resolved)."),
)


def _no_ami_pair(claim: str, text: str, amis: str) -> str:
    """Karpenter's launch-template step found no instance type of the claim that an AMI of the node class runs."""
    return (f"{claim} was never sent to EC2: Karpenter found no instance type the claim allows that one of the "
            f"node class's AMIs ({amis}) can run ({text}). Each AMI carries requirements - "
            "its architecture (amd64 / arm64), and for the accelerated variants a GPU or Neuron device - so AMIs "
            "of one architecture (amiSelectorTerms by id or name, or a Custom family) with a NodePool or pod that "
            "allows only the other, or a GPU-only AMI with types that have none, leave no pair. Select AMIs for "
            "every architecture the NodePool allows (or an alias such as al2023@latest), or restrict the NodePool's "
            "kubernetes.io/arch to the AMIs'; kubectl describe ec2nodeclass lists the AMIs and their requirements. "
            "Nothing on the pod's size is wrong.")
