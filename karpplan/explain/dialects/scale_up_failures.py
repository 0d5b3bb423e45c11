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

TRIGGERS = ("Scale-up failed for group", "Could not compute total resources", "Scale-up timed out for node group",
            "Disabling scale-up for node group", "is not ready for scaleup")
# clusterstate.go: the group's new nodes did not register within --max-node-provision-time, and its backoff
_TIMED_OUT = re.compile(r"Scale-up timed out for node group (?P<group>\S+) after (?P<after>\S+)")
_BACKOFF = re.compile(r"Disabling scale-up for node group (?P<group>\S+) until (?P<until>[^;]+?)(?:;\s*errorClass=(?P<cls>\w+)"
                      r"(?:;\s*errorCode=(?P<code>[\w.-]+))?)?\s*$")
# scale_up.go / orchestrator.go: a group skipped this round (backoff, or too many unready nodes)
_NOT_READY = re.compile(r"Node group (?P<group>\S+) is not ready for scaleup(?: - (?P<why>\w+))?")
_WHY_NO_NODE = (
    "the cloud could not launch the instances (no capacity for the instance type in that zone - "
    "InsufficientInstanceCapacity -, a vCPU quota, a launch template or subnet error: the autoscaling group's activity "
    "history says which) or they launched and never joined the cluster (bootstrap, the node role's access entry / "
    "aws-auth mapping, the subnet's route to the API server)")
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
    if (failure := _provision_failure(message)) is not None:
        return [failure]
    if (n := _NO_INFO.search(message)) is not None:
        return [Reason(NODE_FILTER, n.group(0), counts={}, total=0, cause=f"node group {n.group('group')}",
                       plain=(f"cluster-autoscaler cannot scale node group {n.group('group')} at all: it has no "
                              "template node for it (no node of the group runs, and it could not build one from the "
                              "cloud's description), so it cannot tell what a new node would offer. Scale the group "
                              "to one node by hand so a template exists, and upgrade cluster-autoscaler; on AWS, tag "
                              "the autoscaling group with k8s.io/cluster-autoscaler/node-template/* for what its "
                              "nodes carry. Nothing on the pod is wrong."))]
    return None


def _provision_failure(message: str) -> Reason | None:
    """A scale-up that timed out, the backoff it leads to, or a group skipped for it."""
    if (m := _TIMED_OUT.search(message)) is not None:
        why = (f"cluster-autoscaler grew node group {m.group('group')}, and no new node registered within "
               f"{m.group('after')} (--max-node-provision-time, 15 minutes by default): {_WHY_NO_NODE}. It then backs "
               "off the group and tries the others; give the pod another group it fits (another instance type or "
               "zone), or fix the one that failed. Nothing on the pod is wrong.")
    elif (m := _BACKOFF.search(message)) is not None:
        code = f" (errorClass={m.group('cls')}, errorCode={m.group('code')})" if m.group("cls") else ""
        timeout = m.group("code") == "timeout"
        why = (f"cluster-autoscaler backs off node group {m.group('group')} until {m.group('until').strip()}{code}: "
               "a scale-up of it failed" + (f" - its nodes did not register in time: {_WHY_NO_NODE}" if timeout else
                                            " (the error code says how; the autoscaling group's activity history why)")
               + ". Meanwhile pods only it fits stay Pending; the backoff grows while the cause stays.")
    elif (m := _NOT_READY.search(message)) is not None:
        why = (f"cluster-autoscaler skips node group {m.group('group')} this round: "
               + ("it is in backoff after a scale-up of it failed" if m.group("why") == "backoff" else
                  "a recent scale-up of it failed (backoff), or too many of its nodes are unready or unregistered")
               + " - kubectl get configmap cluster-autoscaler-status -n kube-system shows which (ScaleUp: Backoff, or "
               "the group unhealthy). A scale-up fails when the cloud cannot launch the instances or they never join; "
               "the autoscaling group's activity history says which. Nothing on the pod is wrong.")
    else:
        return None
    return Reason(NODE_FILTER, m.group(0).strip(), counts={}, total=0, cause=f"node group {m.group('group')}", plain=why)
