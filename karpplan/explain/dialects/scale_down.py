"""cluster-autoscaler's scale-down evaluation: it removes a node only once every pod on it fits on another node, and
its verbose log names the pod that fits nowhere and why each other node refused it:

    Evaluation ip-10-0-1-5.ec2.internal for test/tiller-7b58-vzbn4 -> PodFitsResources predicate mismatch, reason: Insufficient pods
    Fast evaluation: node ip-10-0-2-214.ec2.internal is not suitable for removal: failed to find place for test/tiller-7b58-vzbn4

A node kept this way is not a failure of the pod: the cluster stays larger than its requests need.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TRIGGERS = ("predicate mismatch, reason:", "is not suitable for removal")
CAUSE = "scale-down"
_EVALUATION = re.compile(r"Evaluation (?P<node>\S+) for (?P<pod>\S+) -> (?P<pred>\w+) predicate mismatch, reason: "
                         r"(?P<why>[^\n\"]+)")
_KEPT = re.compile(r"node (?P<node>\S+) is not suitable for removal: (?P<why>[^\n\"]+)")
_PLACE = re.compile(r"failed to find place for (?P<pod>\S+)")


class Kept(NamedTuple):
    node: str
    pod: str | None
    why: str  # the other node's refusal, or the reason the node is kept
    other: bool  # `why` is another node's refusal of the pod (an Evaluation line)


def parse(line: str) -> Kept | None:
    """The scale-down evaluation `line` reports, if any."""
    if (m := _EVALUATION.search(line)) is not None:
        return Kept(m.group("node"), m.group("pod"), m.group("why").strip(), True)
    if (m := _KEPT.search(line)) is not None:
        place = _PLACE.search(m.group("why"))
        return Kept(m.group("node"), place.group("pod") if place else None, m.group("why").strip(), False)
    return None


def plain(k: Kept) -> str:
    pod = k.pod or "a pod"
    if k.other:
        head = (f"cluster-autoscaler looked for another node for {pod} (to remove the node it runs on) and node "
                f"{k.node} refused it: {k.why}.")
    else:
        head = f"cluster-autoscaler keeps node {k.node}: {k.why} - no other node would take its pods."
    slots = (" 'Insufficient pods' means the other nodes already run as many pods as their maxPods allows (on EKS the "
             "instance type's ENI / IP limit, e.g. 29 on an m5.large), whatever CPU and memory they have free: the "
             "node stays until pod slots free up elsewhere - raise maxPods (prefix delegation) or use larger instance "
             "types." if "Insufficient pods" in k.why or "Too many pods" in k.why else
             " A node stays while one of its pods fits on no other node (its requests, selectors, taints, volumes, "
             "anti-affinity, or a PodDisruptionBudget).")
    return head + slots + " Nothing is pending because of this: the cluster is only larger than its pods need."
