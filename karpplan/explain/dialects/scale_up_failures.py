"""cluster-autoscaler lines that say a scale-up was tried and refused, or could not be computed, for a node group.

    Warning  FailedToScaleUpGroup  15s  cluster-autoscaler  Scale-up failed for group agentpool: Target size 5 requested outside Max: 10, Min: 6
    E0122 22:54:44.558783  1 static_autoscaler.go:283] Failed to scale up: Could not compute total resources: No node info for: nodepool1

Neither is about the pod: the first is a group below its own minimum (cluster-autoscaler of 2018 asked for one node
more than the group had, which the provider refused as below the new min; kubernetes/autoscaler#1348), the second a
group cluster-autoscaler has no template node for (no running node and none it can build; #1602).
"""

from __future__ import annotations

import re

from karpplan.explain.structure import NODE_FILTER, Reason

TRIGGERS = ("Scale-up failed for group", "Could not compute total resources")
_OUTSIDE = re.compile(r"Scale-up failed for group (?P<group>\S+?): Target size (?P<target>\d+) requested outside "
                      r"Max: (?P<max>\d+), Min: (?P<min>\d+)")
_NO_INFO = re.compile(r"Could not compute total resources: No node info for: (?P<group>\S+)")


def parse(message: str) -> list[Reason] | None:
    """The reason such a line gives, worded; or None."""
    if (m := _OUTSIDE.search(message)) is not None:
        target, low, high = int(m.group("target")), int(m.group("min")), int(m.group("max"))
        if target < low:
            why = (f"node group {m.group('group')} is below its own minimum: cluster-autoscaler asked for {target} "
                   f"nodes and the provider refused a size outside Min: {low}, Max: {high}. The group's min was "
                   "raised above its current size and cluster-autoscaler adds one node at a time: set the group's "
                   f"desired size to at least {low} yourself (or lower the min again), and upgrade cluster-autoscaler, "
                   "which brings a group up to its min on its own since.")
        else:
            why = (f"node group {m.group('group')}: the provider refused size {target} as outside Min: {low}, Max: "
                   f"{high} - the group's limits in the cloud and in cluster-autoscaler (--nodes) disagree; make "
                   "them the same.")
        return [Reason(NODE_FILTER, m.group(0), counts={}, total=0, cause=f"node group {m.group('group')}",
                       plain=why)]
    if (n := _NO_INFO.search(message)) is not None:
        return [Reason(NODE_FILTER, n.group(0), counts={}, total=0, cause=f"node group {n.group('group')}",
                       plain=(f"cluster-autoscaler cannot scale node group {n.group('group')} at all: it has no "
                              "template node for it (no node of the group runs, and it could not build one from the "
                              "cloud's description), so it cannot tell what a new node would offer. Scale the group "
                              "to one node by hand so a template exists, and upgrade cluster-autoscaler; on AWS, tag "
                              "the autoscaling group with k8s.io/cluster-autoscaler/node-template/* for what its "
                              "nodes carry. Nothing on the pod is wrong."))]
    return None
