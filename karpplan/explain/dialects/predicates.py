"""kube-scheduler's predicate names, as its messages printed them before 1.11.

`No nodes are available that match all of the predicates: Insufficient cpu (2), PodToleratesNodeTaints (3)`
(1.8-1.9) and the early `0/3 nodes are available: 1 ExistingPodsAntiAffinityRulesNotMatch, 2 CheckServiceAffinity`
name the failed predicate instead of saying what failed. Each name is read as the sentence later releases print
for it, so the reason is typed and worded as that sentence is; the name stays in the text the user pasted.
"""

from __future__ import annotations

import re

# predicate name -> the per-node reason a current kube-scheduler prints for it
MODERN = {
    "MatchNodeSelector": "node(s) didn't match node selector",
    "PodToleratesNodeTaints": "node(s) had taints that the pod didn't tolerate",
    "PodToleratesNodeNoExecuteTaints": "node(s) had taints that the pod didn't tolerate",
    "PodFitsHostPorts": "node(s) didn't have free ports for the requested pod ports",
    "PodFitsPorts": "node(s) didn't have free ports for the requested pod ports",  # its name before 1.2
    "PodFitsResources": "Insufficient cpu / memory",
    "HostName": "node(s) didn't match the requested hostname",
    "NoVolumeZoneConflict": "node(s) had no available volume zone",
    "CheckVolumeBinding": "node(s) had volume node affinity conflict",
    "NoDiskConflict": "node(s) had no available disk",
    "MaxEBSVolumeCount": "node(s) exceed max volume count",
    "MaxGCEPDVolumeCount": "node(s) exceed max volume count",
    "MaxAzureDiskVolumeCount": "node(s) exceed max volume count",
    "MaxCSIVolumeCountPred": "node(s) exceed max volume count",
    "CheckNodeUnschedulable": "node(s) were unschedulable",
    "CheckNodeCondition": "node(s) were not ready",
    "CheckNodeMemoryPressure": "node(s) had memory pressure",
    "CheckNodeDiskPressure": "node(s) had disk pressure",
    "CheckNodePIDPressure": "node(s) had pid pressure",
    "MatchInterPodAffinity": "node(s) didn't match pod affinity/anti-affinity",
    "PodAffinityRulesNotMatch": "node(s) didn't match pod affinity rules",
    "PodAntiAffinityRulesNotMatch": "node(s) didn't match pod anti-affinity rules",
    "ExistingPodsAntiAffinityRulesNotMatch": "node(s) didn't satisfy existing pods anti-affinity rules",
    "CheckServiceAffinity": "node(s) didn't match service affinity",
}
OLD_FIT = re.compile(r"No nodes are available that match all of the (?:following )?predicates:*\s*(?P<rest>.*)",
                     re.S | re.I)
_OLD_ENTRY = re.compile(r"(?P<why>[^,()]+?)\s*\((?P<n>\d+)\)")


# kube-scheduler 1.2-1.6: `pod (x) failed to fit in any node` and one `fit failure on node (n): <reason>` line per node,
# or (1.5-1.6) `fit failure summary on nodes : Insufficient cpu (4), MatchNodeSelector (2)`
FIT_14 = re.compile(r"failed to fit in any node|fit failure (?:on node \(|summary on nodes)", re.I)
# kube-scheduler 1.0-1.1: `Failed for reason PodFitsResources and possibly others` (the first failed predicate only)
FIT_10 = re.compile(r"Failed for reason (?P<why>[A-Za-z]+)(?: and possibly others)?")
FIT_14_HEAD = re.compile(r"pod \((?P<pod>[^)]*)\) failed to fit in any node", re.I)
_FIT_14_NODE = re.compile(r"fit failure on node \((?P<node>[^)]*)\):\s*(?P<why>[^\n]*?)\s*(?=fit failure on node \(|\n|$)", re.I)
_FIT_14_SUMMARY = re.compile(r"fit failure summary on nodes\s*:\s*(?P<rest>[^\n]*)", re.I)


def named(why: str) -> str:
    """`ExistingPodsAntiAffinityRulesNotMatch` -> `ExistingPodsAntiAffinityRulesNotMatch (node(s) didn't satisfy ...)`;
    any other reason as it is."""
    modern = MODERN.get(why.strip())
    return f"{why.strip()} ({modern})" if modern else why


def old_fit_counts(message: str) -> dict[str, int] | None:
    """The per-node counts of a pre-1.10 `No nodes are available that match all of the predicates` message."""
    m = OLD_FIT.search(message)
    if m is None:
        return None
    counts: dict[str, int] = {}
    for e in _OLD_ENTRY.finditer(m.group("rest")):
        why = named(e.group("why").strip())
        counts[why] = counts.get(why, 0) + int(e.group("n"))
    return counts


def fit_14_counts(message: str) -> dict[str, int] | None:
    """The per-node counts of a kube-scheduler 1.2-1.6 `failed to fit in any node` message: one line per node
    (counted here per reason) or the summary line."""
    if FIT_14.search(message) is None:
        return None
    counts: dict[str, int] = {}
    if (s := _FIT_14_SUMMARY.search(message)) is not None:
        for e in _OLD_ENTRY.finditer(s.group("rest")):
            why = named(e.group("why").strip(" ,.:"))
            counts[why] = counts.get(why, 0) + int(e.group("n"))
        return counts or None
    for node in _FIT_14_NODE.finditer(message):
        for why in {w.strip(" .`") for w in node.group("why").split(",") if w.strip(" .`")}:
            counts[named(why)] = counts.get(named(why), 0) + 1
    return counts or None
