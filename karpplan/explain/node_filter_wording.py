"""Say plainly why existing nodes, or the node groups cluster-autoscaler could grow, did not take the pod.

A kube-scheduler FitError counts nodes per reason and cluster-autoscaler's NotTriggerScaleUp counts node groups (their
template nodes); both come to wording here, with what each count usually means for the one who pasted it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from karpplan.explain.advice import how_to_get
from karpplan.explain.dialects.kube import NO_VICTIMS_CAUSE, PREEMPTION_NEVER_CAUSE
from karpplan.explain.node_hints import node_hints
from karpplan.explain.structure import Reason

_SELECTOR_MISMATCH = re.compile(r"didn't match (?:Pod's )?node (?:affinity|selector)", re.I)


def node_filter_plain(r: Reason, source: str) -> str:
    counts = r.counts or {}
    if source == "cluster-autoscaler":
        hints = _group_hints(counts)
        if r.cause and r.cause.startswith("node group "):
            return f"{r.cause} cannot take the pod: {'; '.join(counts) or r.text}." + hints
        parts = [f"{n or 'X'} {_as_groups(why)}" for why, n in counts.items()]
        head = "of the node groups cluster-autoscaler could grow, "
        if r.cause:
            head = f"cluster-autoscaler says {r.cause}; " + head
        if not parts and r.cause and "wouldn't fit" in r.cause:
            return (r.text.rstrip(". ") + ". Cluster-autoscaler says the same when the node groups the pod would fit "
                    "are all at their maximum size, so check the groups' max sizes first, then that one has an "
                    "instance type large enough for the pod's requests (after DaemonSets) and the labels and "
                    "tolerated taints it needs." + hints)
        return (head + "; ".join(parts) + "." if parts else r.text) + hints
    parts = [f"{n or 'X'} {why}" for why, n in counts.items()]  # 0: a count the paste redacted
    nodes = f"of {r.total} nodes, " if r.total is not None else ""
    if not parts and r.total == 0:
        return node_hints({r.text: 0}).strip()
    return (("no existing node fits: " + nodes + "; ".join(parts) + "." if parts else r.text.rstrip(". ") + ".")
            + _device_hints(counts)
            + node_hints(counts or {r.text: 0}, r.total) + _preemption(r) + _one_node_short(r)
            + _zone_full(counts or {}))


_SHORTAGE = re.compile(r"^Insufficient |^Too many pods$")


def _preemption(r: Reason) -> str:
    if (m := _COUNTED.match(r.cause or "")) is not None:
        return preemption_counted(int(m.group("unhelpful")), int(m.group("victims")))
    said = _PREEMPTION.get(r.cause or "", "")
    short = sum(n for why, n in (r.counts or {}).items() if _SHORTAGE.search(why))
    if r.cause == NO_VICTIMS_CAUSE and (short != 1 or r.total == 1):
        said = said.split(" A DaemonSet's pod", 1)[0]  # only one node short of room looks like a DaemonSet's pod
    return said


_COUNTED = re.compile(r"^preemption: (?P<unhelpful>\d+) not helpful, (?P<victims>\d+) no victims$")


def preemption_counted(unhelpful: int, victims: int) -> str:
    """kube-scheduler's preemption sentence with its node counts (`preemption: 0/27 nodes are available: 20 Preemption is
    not helpful for scheduling, 7 No preemption victims found for incoming pod`): why the pod's priority did not win
    it a place either. The PostFilter tries to evict lower-priority pods only on nodes whose failure eviction can cure
    (a shortage of room, a pod (anti-)affinity or spread counted on other pods); a node failing for its labels, taints
    or a volume's zone is UnschedulableAndUnresolvable, `not helpful`."""
    out = (" Preemption did not help either (the part after 'preemption:'): the scheduler would evict pods of lower "
           "priority than this one to make room, but")
    parts = []
    if victims:
        parts.append(f"on {victims} node{'s' if victims != 1 else ''} no set of lower-priority pods frees enough room "
                     "(the pods there have the same or a higher priority, or evicting all of the lower ones would still "
                     "leave the pod short)")
    if unhelpful:
        parts.append(f"on {unhelpful} node{'s' if unhelpful != 1 else ''} evicting pods cannot help at all: they fail "
                     "for reasons no eviction changes (the pod's node affinity / selector, an untolerated taint, a "
                     "volume's zone, a node not ready or cordoned)")
    out += " " + "; and ".join(parts) + "."
    if victims:
        out += (" With PriorityClasses, preemption only takes room from pods of lower spec.priority on nodes the pod "
                "may otherwise use: compare the priorities (kubectl get pods -A -o custom-columns=NAME:.metadata.name,"
                "PRIORITY:.spec.priority,NODE:.spec.nodeName) on the nodes short of room, and give the pod a "
                "PriorityClass above the pods it should displace (a pod with preemptionPolicy: Never never evicts). "
                "Otherwise it needs a new node, which Karpenter or cluster-autoscaler adds.")
    else:
        out += (" The pod's priority makes no difference here: it needs a node it may use, which Karpenter or "
                "cluster-autoscaler adds, or the rule that shuts it out of the existing ones changed.")
    return out


_VOLUME_ZONE = re.compile(r"volume node affinity conflict|NoVolumeZoneConflict|no available volume zone", re.I)


def _zone_full(counts: Mapping[str, int]) -> str:
    """Nodes outside the pod's volume zone beside nodes short of room: the nodes in that zone are the full ones."""
    if not any(_VOLUME_ZONE.search(why) for why in counts) or not any(_SHORTAGE.search(why) for why in counts):
        return ""
    return (" With a volume pinning the pod to one zone, only nodes in that zone can ever take it (the scheduler "
            "names a node's first failing check, so the nodes short of room may be there or elsewhere): make room on "
            "the nodes in the volume's zone, or let the autoscaler add a node in that zone (a node group or NodePool "
            "with a subnet in it; cluster-autoscaler needs one node group per zone for this) - a node added in another "
            "zone does not help.")


_SELECTOR = re.compile(r"node affinity|node selector|had (?:untolerated )?taint|had taints", re.I)


def _one_node_short(r: Reason) -> str:
    """One node short of room and every other node ruled out by selector or taint, with no preemption tail to say
    more: the shape of a DaemonSet's pod, which targets its one node (kubernetes-sigs/karpenter#390)."""
    counts = r.counts or {}
    short = sum(n for why, n in counts.items() if _SHORTAGE.search(why))
    if r.cause == NO_VICTIMS_CAUSE or _COUNTED.match(r.cause or "") or short != 1 or not r.total or r.total < 2 or any(
            not _SHORTAGE.search(why) and not _SELECTOR.search(why) for why in counts):
        return ""
    if sum(counts.values()) < r.total:  # a paste cut before its last reasons: the other nodes are not all accounted
        return ""
    return (" Only one node is short of room and every other node is ruled out by the pod's node affinity / selector "
            "or a taint. If the pod is a DaemonSet's (it targets its one node by node affinity on metadata.name), a "
            "new node does not help it: it waits for room on its node - give the DaemonSet a PriorityClass above the "
            "workloads' (system-node-critical) so it evicts them, or make room there (Karpenter sizes a node for the "
            "DaemonSets that exist when it launches it, so one added or grown later may not fit). Any other pod "
            "needs a node its selector allows with room, which an autoscaler adds.")


# what the FitError's preemption sentence adds (dialects/kube.py preemption_said)
_PREEMPTION = {
    PREEMPTION_NEVER_CAUSE: (
        " Preemption: not eligible due to preemptionPolicy=Never - the pod's PriorityClass forbids it to evict "
        "lower-priority pods, so it waits until room frees up or a node is added for it; a PriorityClass with "
        "preemptionPolicy: PreemptLowerPriority would let it take the room of lower-priority pods."),
    NO_VICTIMS_CAUSE: (
        " Preemption found no victims: no pod of lower priority on those nodes would free enough room if evicted. "
        "A DaemonSet's pod in this state (it may run on its one node only) waits until that node has room - neither "
        "Karpenter nor cluster-autoscaler adds a node for it: give the DaemonSet a PriorityClass above the workloads' "
        "(system-node-critical) so it evicts them, or make room on the node."),
}


def _device_hints(counts: Mapping[str, int]) -> str:
    """What an `Insufficient <extended resource>` on existing nodes usually means."""
    out = ""
    for why in counts:
        name = why.removeprefix("Insufficient ").strip() if why.startswith("Insufficient ") else ""
        if "/" in name or name.startswith("hugepages-"):
            how = how_to_get(name)
            out += (f" No node has {name} free: a node advertises it only when its device plugin (or controller) has "
                    "registered it, so a new node of the right type must come up and be ready first. If a node that "
                    f"has the device already runs, kubectl describe node shows no {name} under Allocatable until its "
                    "plugin registers: look at the plugin's DaemonSet pod on that node and its log."
                    + (" For NVIDIA GPUs the container runtime must use the NVIDIA runtime (nvidia-container-toolkit), "
                       "and the EKS-optimized accelerated (NVIDIA) AL2 / AL2023 AMIs do not run the device plugin: on "
                       "them install the NVIDIA device plugin (or the GPU Operator) yourself; Bottlerocket's NVIDIA "
                       "variants and EKS Auto Mode's GPU nodes run it already, so there look at the node's type and "
                       "the pool's limits instead." if name == "nvidia.com/gpu" else "")
                    + (f" {how}" if how else ""))
    return out


_POD_AFFINITY = re.compile(r"didn't match pod affinity|MatchInterPodAffinity|PodAffinityRulesNotMatch", re.I)
_TEMPLATE_POD_AFFINITY = (
    " A node group's template node is a new node with no pod on it but the DaemonSets' (which older cluster-autoscaler "
    "releases did not even place there), so the pod's required spec.affinity.podAffinity finds no pod to run next to "
    "on it and cluster-autoscaler never adds a node for it. A pod that must run beside a DaemonSet's pod needs no pod "
    "affinity - every node the DaemonSet selects runs one, so select those nodes (nodeSelector / node affinity) "
    "instead; otherwise make the term preferredDuringSchedulingIgnoredDuringExecution, or start the pod it follows "
    "first.")


def _group_hints(counts: Mapping[str, int]) -> str:
    out = ""
    if any(_SELECTOR_MISMATCH.search(why) for why in counts) and all(
            _SELECTOR_MISMATCH.search(why) or "taint" in why for why in counts):  # no group is the pod's: templates
        out += (" cluster-autoscaler judges a node group by a template node: a running node of the group, or, for a "
                "group at zero nodes, one it builds from the autoscaling group's tags - "
                "k8s.io/cluster-autoscaler/node-template/label/<key>: <value> for each label and "
                "k8s.io/cluster-autoscaler/node-template/taint/<key>: <value>:<effect> for each taint. Labels set only "
                "by the node's bootstrap (kubelet --node-labels, user data) are unknown to it until a node runs - and an "
                "older release's template for a group at zero may lack even kubernetes.io/os or kubernetes.io/arch - so "
                "a group scaled to 0 never matches the pod's nodeSelector / node affinity: tag the autoscaling group of "
                "the group the pod belongs on with every label the pod selects (for an EKS managed node group, set "
                "them as the node group's Kubernetes labels / taints, which cluster-autoscaler reads with "
                "eks:DescribeNodegroup). If the group the pod is meant for is not among them at all, it no longer "
                "exists (a deleted node group leaves nothing to grow: recreate it, or change the pod's selector), or "
                "it is at its max size - cluster-autoscaler's log then says 'Skipping node group <name> - max size "
                "reached' and judges only the other groups: raise that group's max size.")
    if any(_POD_AFFINITY.search(why) for why in counts):
        out += _TEMPLATE_POD_AFFINITY
    if any("volume node affinity conflict" in why or "volume zone" in why for why in counts):
        out += (" For a pod whose volume is pinned to one zone, cluster-autoscaler grows only a node group whose "
                "template node is in that zone: a group spanning several zones may add its node elsewhere, so give "
                "each zone its own node group (one autoscaling group per zone, --balance-similar-node-groups) with "
                "the labels the pod selects. If each zone already has its own group, the template node lacks the "
                "zone label the volume is pinned by: a group scaled from zero is known only from its tags - tag the "
                "autoscaling group k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone (and "
                "topology.ebs.csi.aws.com/zone for EBS CSI volumes) with its zone - and older cluster-autoscaler "
                "releases put no zone label on Azure scale-set templates (upgrade).")
    for why in counts:
        if "backoff" in why:
            out += (" A node group in backoff had a scale-up fail recently (no capacity for its instance type, a "
                    "quota, a launch template or subnet error): its autoscaling group's activity history says which; "
                    "it is retried after the backoff.")
        elif "not ready for scale-up" in why:
            out += " A node group not ready for scale-up is still settling a previous change; this is transient."
        name = why.removeprefix("Insufficient ").strip() if why.startswith("Insufficient ") else None
        if name is None:
            continue
        if name == "ephemeral-storage":
            out += (" Insufficient ephemeral-storage: for a group at zero nodes cluster-autoscaler builds the template node from "
                    "the group's tags, and without k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage "
                    "(on AWS; other providers have their own tag) it assumes none, so no pod that requests it triggers "
                    "a scale-up from zero: add that tag with the node's disk size, or keep one node in the group.")
        elif "/" in name:
            out += (f" The node group's template node offers no {name}: cluster-autoscaler knows an extended resource "
                    "of a group only from a running node or, for a group at zero nodes, from the autoscaling group tag "
                    f"k8s.io/cluster-autoscaler/node-template/resources/{name}; use a group whose instance type has it "
                    "and add that tag.")
        else:
            out += (f" {name}: the node group's instance type is too small for the pod's requests (after "
                    "DaemonSets); use a group with a larger instance type, or lower the requests.")
    return out


def _as_groups(why: str) -> str:
    """cluster-autoscaler counts node groups (their template nodes), though its words say node(s)."""
    return why.replace("node(s)", "node group(s)").replace("nodes", "node groups")
