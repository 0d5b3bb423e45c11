"""A Karpenter nomination beside kube-scheduler's rejection of the same pod: the nominated node is one of the nodes the
rejection counts, and it sits in one of its reasons. Karpenter checks a node's taints before it nominates it, so an
untolerated taint (Fargate's, a dedicated group's) is some other node's; what it does not decide - binding the
pod's volume, the scheduler's own count of a node's free room - is where the nominated node can be refused. The
answer names those reasons as the ones to fix, and the others as nodes the pod need not fit."""

from __future__ import annotations

import re

from karpplan.explain.structure import TAINT, Reason

# taints a node carries while it starts (Karpenter ignores them on a node it launched, until it is initialized)
_STARTING_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "karpenter.sh/unregistered",
                    "node.cloudprovider.kubernetes.io/uninitialized", "node.kubernetes.io/network-unavailable")
_FARGATE_TAINT = "eks.amazonaws.com/compute-type"
_TOTAL = re.compile(r"0/(\d+) nodes are available")
_UNBOUND = ("didn't find available persistent volumes to bind", "unbound immediate PersistentVolumeClaims",
            "unbound PersistentVolumeClaims")

CAPACITY_DISPUTE = (" Here the two disagree on capacity: Karpenter counts that node as having room for the pod's "
                    "requests while kube-scheduler does not (Karpenter's estimate of its allocatable, or pods Karpenter "
                    "does not count there such as DaemonSet or static pods); check the node's Allocated resources "
                    "(kubectl describe node) and upgrade Karpenter, which fixed such estimates.")


def _short(text: str) -> bool:
    return text in ("Insufficient cpu", "Insufficient memory")


def counted(said: list[Reason]) -> dict[str, int]:
    """Each reason of the rejections with its node count (the largest of the rejections that repeat it)."""
    counts: dict[str, int] = {}
    for r in said:
        for text, n in (r.counts or {}).items():
            counts[text] = max(n, counts.get(text, 0))
    return counts


def other_nodes(said: list[Reason], counts: dict[str, int]) -> list[str]:
    """The reasons that cannot be the nominated node's: untolerated taints other than a starting node's."""
    tainted = {r.text for r in said if r.kind == TAINT and r.key and not r.key.startswith(_STARTING_TAINTS)}
    return [t for t in counts if t in tainted]


def _total(said: list[Reason]) -> int | None:
    totals = [int(m.group(1)) for r in said if (m := _TOTAL.search(r.text)) is not None]
    return max(totals) if totals else None


def _numbered(counts: dict[str, int], texts: list[str]) -> str:
    return "; ".join(f"{counts[t]} {t}" for t in texts)


def fix_clause(said: list[Reason], typed: list[Reason], line: int) -> str:
    """What to fix, named from the reasons: the ones that can be the nominated node's, and the others said as other
    nodes' (never a taint to remove: Fargate's nodes, a dedicated group's)."""
    counts = counted(said)
    others = other_nodes(said, counts)
    leads = [t for t in counts if t not in others]
    if not others or not leads:
        why = "; ".join(dict.fromkeys(r.text.rstrip(". ") for r in typed))
        return f"fix the cause of the rejection ({why}), said with line {line}."
    said_others = (f"The other reasons ({_numbered(counts, others)}) are other nodes: Karpenter does not nominate a "
                   "node whose taints the pod does not tolerate, so they need no change")
    if any(_FARGATE_TAINT in t for t in others):
        said_others += (" - a Fargate node (eks.amazonaws.com/compute-type: fargate) takes only the pods a Fargate "
                        "profile selects, and its taint is not one to tolerate")
    return (f"fix what keeps the scheduler off that node, which is among {_numbered(counts, leads)}, said with line {line}. "
            f"{said_others}.")


def leads_plain(said: list[Reason]) -> str:
    """The sentences on the reasons that can be the nominated node's: an unbound volume first, then a count of free
    room the two disagree on (the whole dispute when nothing else can be the node's)."""
    counts = counted(said)
    others = other_nodes(said, counts)
    leads = [t for t in counts if t not in others]
    short = [t for t in leads if _short(t)]
    unbound = [t for t in leads if any(u in t for u in _UNBOUND)]
    zone = any("volume node affinity conflict" in t for t in leads)
    out = ""
    if unbound:
        out += (" The lead is the pod's volume: its PersistentVolumeClaim is unbound, and no PersistentVolume can be "
                "bound or provisioned for it on that node. Binding the claim is the scheduler's check, not "
                "Karpenter's (which only follows a volume's zone): kubectl describe pvc shows its StorageClass and "
                "why it waits - no StorageClass or one without a provisioner (local volumes), a StorageClass whose "
                "allowedTopologies leave out the node's zone, or a PersistentVolume of another size or access mode.")
    if short and not zone:
        if len(short) == len(leads):
            out += CAPACITY_DISPUTE
        else:
            total = _total(said)
            n = max(counts[t] for t in short)
            of = f" of the {total} nodes" if total else (" node" if n == 1 else " nodes")
            out += (f" Only {n}{of} {'was' if n == 1 else 'were'} short of room ({_numbered(counts, short)}): "
                    "that is the nominated node only if Karpenter counted room on it the scheduler does not (kubectl "
                    "describe node, Allocated resources), so fix the volume first.") if unbound else CAPACITY_DISPUTE
    return out


def came_with_the_claim(rejections: list[list[Reason]]) -> dict[str, int] | None:
    """Between the first and the last rejection (oldest first, each its reasons), the reasons whose node count rose as
    the count of nodes did: the new nodes' reasons, the claim's node among them. None when the count did not rise."""
    first, last = rejections[0], rejections[-1]
    before, after = _total(first), _total(last)
    if before is None or after is None or after <= before:
        return None
    old, new = counted(first), counted(last)
    return {text: n - old.get(text, 0) for text, n in new.items() if n > old.get(text, 0)}


def cordoned_claim_plain(nominated: str, grown: dict[str, int]) -> str:
    """The claim's node came up cordoned (`node(s) were unschedulable` rose with the node count): it is being removed."""
    claim = nominated.split(",")[0].strip()
    n = sum(grown.values())
    return (f" The later rejection counts {n} node{'s' if n != 1 else ''} more, and what rose with {'them' if n != 1 else 'it'} "
            f"is node(s) were unschedulable: the node launched for {claim} came up and was cordoned - it is being "
            "removed, most often by Karpenter's consolidation judging the new node empty before the pod bound to it "
            "(aws/karpenter-provider-aws#4341), else by drift, expiry or an interruption; Karpenter's log ('disrupting', "
            "'deprovisioning', 'interruption') names which. The pod then waits for another node. If it repeats, a "
            "longer spec.disruption.consolidateAfter on the NodePool keeps new nodes from being removed at once, and "
            "the rejection's other reasons are the older nodes'.")


def volume_zone_plain(nominated: str) -> str:
    """The nominated node in conflict with the pod's volume: a node Karpenter launched in the wrong zone (a claim),
    or an existing node it judged able to take the pod."""
    target = nominated.split(",")[0].strip()
    if target.startswith(("nodeclaim/", "machine/")):
        return (" The node the scheduler finds in conflict with the pod's volume is most likely the one Karpenter "
                "launched for it: it went to a zone the pod's PersistentVolume is not in, and Karpenter replaces it with "
                "another in the wrong zone in a loop. Karpenter takes the zone from the PV's node affinity (kubectl get "
                "pv -o yaml): a PV pinned by a key it does not read as a zone, a claim bound only after the node was "
                "chosen, or a NodePool that cannot launch in that zone (no subnet there) leaves it in another zone - "
                "compare the PV's zone with the NodeClaim's (kubectl get nodeclaim -o wide).")
    return (" The node the scheduler finds in conflict with the pod's volume is most likely the nominated one: Karpenter "
            "counted that existing node as able to take the pod without the volume's zone. Releases before v0.20 added "
            "the volume's zone to the first of the pod's required nodeSelectorTerms only, and relaxing the terms (they "
            "are ORed) dropped it (aws/karpenter-provider-aws#2971, fixed by kubernetes-sigs/karpenter#104): with "
            "several terms, upgrade Karpenter or repeat the zone in each term. Compare the PV's zone (kubectl get pv "
            "-o yaml) with the node's (kubectl get node -L topology.kubernetes.io/zone).")



_CONDITIONS = {"node.kubernetes.io/memory-pressure": "MemoryPressure", "node.kubernetes.io/disk-pressure": "DiskPressure",
               "node.kubernetes.io/pid-pressure": "PIDPressure"}


def pressured_plain(who: str, this: str, claims: list[str], said: list[Reason]) -> str | None:
    """Claims nominated one after another beside a node under pressure: a claim did become a node, which its kubelet
    then fenced (aws/karpenter-provider-aws#5463), not a launch that failed."""
    keys = list(dict.fromkeys(r.key for r in said if r.kind == TAINT and r.key in _CONDITIONS))
    if not keys:
        return None
    if this in claims[1:]:  # the first nomination's item says it all
        return (f"{who}: Karpenter nominated {this} after {', '.join(claims[:claims.index(this)])}: another node for a "
                f"pod the earlier one could not keep ({', '.join(_CONDITIONS[k or ''] for k in keys)}, said with the "
                "first nomination); it binds once this one is ready unless that node fills up the same way.")
    return (f"{who}: Karpenter nominated {', then '.join(claims)} for the same pod. A node did come up: the scheduler's "
            f"rejection names {', '.join(k or '' for k in keys)}, a node whose kubelet reports "
            f"{', '.join(_CONDITIONS[k or ''] for k in keys)} - most likely an earlier claim's node, packed by pods "
            "that use more than they request, so no further pod may land there and Karpenter launches another. Set "
            "the pods' requests (memory above all) near what they really use (kubectl top pods), or give them "
            "limits; kubectl describe node shows the condition and the pods the kubelet evicts.")
