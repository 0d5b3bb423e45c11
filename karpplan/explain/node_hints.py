"""What a kube-scheduler per-node reason means when it is about the node, not the pod's own constraints.

kube-scheduler's FitError counts nodes per reason (`3 Too many pods, 1 node(s) were unschedulable, ...`). Taints,
volumes and topology get their own typed reasons (dialects/kube.py); the reasons here say something about the
nodes themselves - full of pods, cordoned, not candidates at all, absent - and each needs a sentence of its own,
because the usual fix ("lower the requests", "add a toleration") is the wrong one for them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from karpplan.explain.host_ports import node_ports_hint

# (pattern over one per-node reason, what it means): the first match words the reason, once per message
_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Too many pods$|^Insufficient pods$", re.I),
     "Too many pods: those nodes already run as many pods as they may (the kubelet's maxPods; on EKS it follows the "
     "instance type's ENI / IP limit, e.g. 29 on an m5.large without prefix delegation), whatever CPU and memory is "
     "left. Lowering the pod's requests does not help: it needs another node (or prefix delegation, or larger "
     "instance types that allow more pods). When the nodes' CPU and memory are far from used, their maxPods is what "
     "to raise - eksctl's maxPodsPerNode, the EC2NodeClass's kubelet.maxPods, the node group's bootstrap "
     "--max-pods - once the CNI can give that many pods an address (prefix delegation, or an overlay CNI)."),
    (re.compile(r"didn't have free ports", re.I), node_ports_hint(every_node=False)),
    (re.compile(r"cannot allocate all claims", re.I),
     "Cannot allocate all claims (dynamic resource allocation): no device those nodes publish is free and matches "
     "the pod's ResourceClaims - their deviceClassName, selectors and count. kubectl get resourceslices shows what "
     "the DRA driver published per node (none: its kubelet plugin is not running there), kubectl get resourceclaims "
     "-A which claims already hold the devices; a claim shared by several pods needs all of them on nodes that can "
     "reach its devices."),
    (re.compile(r"is in the process of being allocated", re.I),
     "The pod's ResourceClaim is being allocated for another pod that shares it, so the scheduler waits for that "
     "allocation to finish and retries. If the retries never end (thousands of events), kube-scheduler is stuck on "
     "a claim shared by pods that must be scheduled together (kubernetes/kubernetes#137617): give each pod its own "
     "claim (spec.resourceClaims[].resourceClaimTemplateName), or upgrade kube-scheduler past the fix."),
    (re.compile(r"^Insufficient ephemeral-storage$", re.I),
     "Insufficient ephemeral-storage: the pod's ephemeral-storage requests exceed what those nodes have left, and a "
     "node's ephemeral-storage is its root volume (kubectl describe node shows it under Allocatable; 20Gi on EKS "
     "nodes unless the node group's disk size, its launch template or the EC2NodeClass blockDeviceMappings set "
     "more), not a property of the instance size. Lower the request, or give the nodes a larger root volume; "
     "larger instance types alone do not help. If Karpenter keeps launching nodes that the scheduler then refuses "
     "for it, Karpenter counts more ephemeral-storage than the kubelet reports (an instance-store RAID0 volume, "
     "kubernetes-sigs/karpenter#3253): leave headroom between the request and the node's size."),
    (re.compile(r"failed to fit in any node$", re.I),
     "Pod failed to fit in any node: kube-scheduler before 1.6 gave its reasons only on the lines under this event "
     "('fit failure on node (<node>): <reason>') or in its own log, not in the event itself. Most often it is "
     "Insufficient cpu / memory: compare the pod's requests with each node's Allocatable less its Allocated "
     "resources (kubectl describe node), then its nodeSelector and the nodes' taints."),
    (re.compile(r"^Insufficient (?:cpu|memory)$|PodFitsResources", re.I),
     "Insufficient cpu / memory counts requests, not use: those nodes have less CPU or memory left unrequested "
     "(kubectl describe node, Allocated resources) than the pod requests, however idle they look; and a node's "
     "Allocatable is below its capacity (the kubelet's and the system's reservations), so a pod that requests all "
     "of an instance's CPUs or memory (cpu: 4 on a 4-vCPU node) fits no node of that size. A new node is "
     "what Karpenter or cluster-autoscaler adds for such a pod when it fits a type they may launch; their own "
     "messages say why they did not."),
    (re.compile(r"didn't match service affinity", re.I),
     "CheckServiceAffinity (OpenShift's service affinity): the pod must run on nodes whose label (e.g. region or "
     "zone) has the same value as the nodes already running its service's pods; those nodes carry another value or "
     "none - give the nodes the same label values, or drop the serviceAffinity rule from the scheduler policy."),
    (re.compile(r"had taints that the pod didn't tolerate|had untolerated taint\(s\)", re.I),
     "This form of the message does not name the taints (node(s) had taints that the pod didn't tolerate / had "
     "untolerated taint(s)): kubectl describe node shows each node's Taints; add a toleration only if the pod may "
     "run on those nodes. On a cluster whose nodes are all control-plane nodes (a single-node kubeadm, kind or "
     "kubespray cluster) it is node-role.kubernetes.io/control-plane (master before 1.24): remove that taint from "
     "the node to run workloads there; node.kubernetes.io/not-ready means the node is not Ready yet (no CNI), and "
     "node.kubernetes.io/disk-pressure (or memory-pressure) that the node's disk (or memory) is nearly full - free it "
     "rather than tolerate it."),
    (re.compile(r"were unschedulable", re.I),
     "Node(s) were unschedulable: those nodes are cordoned (spec.unschedulable - kubectl cordon / drain, or Karpenter "
     "or cluster-autoscaler removing them) and take no new pods; this clears when they are uncordoned or gone, "
     "nothing on the pod causes it."),
    (re.compile(r"filtered out by the prefilter result", re.I),
     "Node(s) filtered out by the prefilter result were never candidates: the pod may only go to the node(s) it names "
     "before filtering - a DaemonSet pod targets exactly one node (node affinity on metadata.name), as does "
     "spec.nodeName - so look at the reason the remaining node gives. A DaemonSet pod stays Pending when its node is "
     "full, and DaemonSets do not run on Fargate nodes at all."),
    (re.compile(r"preemptionPolicy=Never"),
     "Not eligible due to preemptionPolicy=Never is only the preemption part of the scheduler's message: the pod's "
     "PriorityClass has preemptionPolicy: Never, so it evicts no lower-priority pod to make room - which is not why "
     "it does not fit. The reason is the part before 'preemption:' (0/N nodes are available: ...; kubectl describe "
     "pod shows it whole): usually no node has room, and the fix is more capacity (a node group, NodePool or "
     "cluster-autoscaler that can add a node the pod fits), not the policy."),
    (re.compile(r"no nodes available to schedule pods", re.I),
     "No nodes available to schedule pods: the scheduler has no node to consider at all (none in the cluster, or "
     "none it may use). With Karpenter or cluster-autoscaler a pending pod should bring one up - check that the "
     "autoscaler runs and that a NodePool / node group fits the pod. On EKS Fargate, a pod that no Fargate profile "
     "selected when it was created goes to default-scheduler and waits here: add a profile matching its namespace "
     "and labels, then recreate the pod. CoreDNS's pods wait here on a Fargate-only cluster even with a kube-system "
     "profile until the eks.amazonaws.com/compute-type: ec2 annotation is removed from the coredns Deployment's pod "
     "template (eksctl --fargate and the EKS guide do it; if that step failed: kubectl patch deployment coredns -n "
     "kube-system --type json -p='[{\"op\": \"remove\", \"path\": "
     "\"/spec/template/metadata/annotations/eks.amazonaws.com~1compute-type\"}]', then kubectl rollout restart -n "
     "kube-system deployment coredns)."),
)


_SPREAD = re.compile(r"didn't match pod topology spread constraints", re.I)
_TAINTED = re.compile(r"had (?:untolerated )?taint|were unschedulable", re.I)
_SPREAD_OVER_TAINTS = (
    "tainted nodes the pod may not use - a control-plane node, a cordoned node "
    "(node.kubernetes.io/unschedulable) - still count as domains of its topology spread (nodeTaintsPolicy: Ignore is "
    "the default), so with a kubernetes.io/hostname spread such a node stays at 0 matching pods and, once every usable "
    "node holds maxSkew more, none may take the next pod. Set nodeTaintsPolicy: Honor on the constraint (Kubernetes "
    "1.26+; nodeAffinityPolicy: Honor, the default, does the same for nodes its node affinity excludes), make it "
    "whenUnsatisfiable: ScheduleAnyway, or remove the cordoned node (finish its drain).")


_SELECTOR = re.compile(r"didn't match (?:Pod's )?node (?:affinity|selector)|MatchNodeSelector", re.I)
_SELECTOR_ONLY = (
    "No node carries what the pod's spec.nodeSelector / required node affinity asks for: compare the pod's "
    "Node-Selectors (kubectl describe pod) with kubectl get nodes --show-labels, key and value exactly - a node "
    "group's name in eks.amazonaws.com/nodegroup, a label only some nodes were given, or a deprecated beta label "
    "(beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/zone) newer nodes may not carry (use kubernetes.io/os, "
    "topology.kubernetes.io/zone). With an autoscaler, the pod waits until a group or NodePool that sets that label "
    "can launch a node for it.")


def node_hints(counts: Mapping[str, int], total: int | None = None) -> str:
    """The sentences the per-node reasons in `counts` call for (each hint once), with a leading space; or ''.
    `total` is the number of nodes the message counted, when it says."""
    out: list[str] = []
    for why in counts:
        for pattern, hint in _HINTS:
            if pattern.search(why.strip()) and hint not in out:
                if total and total > 1 and counts[why] == total and "free ports" in why:
                    hint = node_ports_hint(every_node=True)  # the port is taken everywhere: a DaemonSet's
                out.append(hint)
                break
    if counts and all(_SELECTOR.search(why) for why in counts):
        out.append(_SELECTOR_ONLY)  # every node fails on the pod's own selector: the label, not the capacity
    if any(_SPREAD.search(why) for why in counts) and any(_TAINTED.search(why) for why in counts):
        # the spread's domains and the taints meet: the usual deadlock, said first - and said as the cause when no
        # other reason (a full node) could hold the spread's minimum
        alone = all(_SPREAD.search(why) or _TAINTED.search(why) or _SELECTOR.search(why) for why in counts)
        out = [h for h in out if not h.startswith("Node(s) were unschedulable")]  # said here, as a spread domain
        out.insert(0, ("The spread is what blocks it: " if alone else "If the spread is what blocks it: ")
                   + _SPREAD_OVER_TAINTS)
    return "".join(" " + hint for hint in out)
