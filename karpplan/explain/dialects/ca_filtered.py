"""cluster-autoscaler's filter-out-schedulable step: before it scales up, it simulates the pending pods on the nodes
it already has - and on the nodes it already asked for (upcoming) - and leaves out of the scale-up every pod that
fits one of them (filter_out_schedulable.go; utils.go before 1.14):

    Pod web-1 marked as unschedulable can be scheduled on node template-node-for-ng-1-...-upcoming-5 (based on ...). Ignoring in scale up.
    Pod ns/web-2 marked as unschedulable can be scheduled on node ip-10-0-1-5.ec2.internal. Ignoring in scale up.
    Pod web-3 marked as unschedulable can be scheduled (based on simulation run for other pod owned by the same controller). Ignoring in scale up.

The pod is pending and no node is added for it: cluster-autoscaler believes a node it has (or awaits) takes it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TRIGGERS = ("marked as unschedulable can be scheduled",)
CAUSE = "scale-up skipped"
_LINE = re.compile(r"Pod (?P<pod>\S+) marked as unschedulable can be scheduled(?: on(?: node)? (?P<node>[^\s.(]+(?:\.[^\s.(]+)*)"
                   r")?")
# a node cluster-autoscaler asked for and awaits: its template node, named for the group (an Auto Scaling group's
# name, on EKS eks-<node group>-<uuid>), a hash and an index ("-upcoming-" from 1.2x on)
_UPCOMING = re.compile(r"template-node-for-(?P<group>.+?)-\d{6,}(?:-upcoming)?-\d+$")


class Skipped(NamedTuple):
    pod: str
    node: str | None  # None: judged by another pod of the same controller
    group: str | None  # the node group of an upcoming node


def parse(line: str) -> Skipped | None:
    if (m := _LINE.search(line)) is None:
        return None
    node, pod = m.group("node"), m.group("pod")
    if "/" not in pod and "." in pod:  # filter_out_schedulable.go names it <namespace>.<name> (no dot in a namespace)
        pod = pod.replace(".", "/", 1)
    up = _UPCOMING.match(node) if node else None
    return Skipped(pod, node, up.group("group") if up else None)


def plain(s: Skipped) -> str:
    if s.node is None:
        return ("cluster-autoscaler left it out of scale-up: it simulated another pending pod of the same controller, "
                "found it a place on a node that exists or is coming, and takes this one to fit the same way - look "
                "for that pod's 'can be scheduled on' line, which names the node.")
    if s.group is not None or "template-node-for-" in s.node:
        group = f" of node group {s.group}" if s.group else ""
        return (f"cluster-autoscaler left it out of scale-up: it counts the pod onto a node{group} it already asked "
                f"for ({s.node}: upcoming, not registered yet) and adds nothing else for it. When that node never "
                "comes - the group cannot launch it (no capacity for its instance type, its launch template, IAM, a "
                "group scaling from zero that fails) - cluster-autoscaler keeps waiting for it until "
                "--max-node-provision-time (15 minutes by default) passes, then backs the group off and tries another "
                "(kubernetes/autoscaler#5000). The group's scaling activity (on EKS the Auto Scaling group's activity "
                "history) says why its instances do not start or join.")
    return ("cluster-autoscaler left it out of scale-up: its simulation puts the pod on the existing node "
            f"{s.node}, so it adds no node, while kube-scheduler leaves it pending. cluster-autoscaler waits for the "
            "scheduler to place such pods before it scales up for them, so when the two disagree the pod stays "
            "pending with no new node: a constraint cluster-autoscaler does not simulate (another scheduler - the "
            "pod's spec.schedulerName - or its profile's plugins, volume binding, DRA), or a scheduler that is slow "
            "or stuck with many pending pods (kubernetes/autoscaler#1627). Compare the pod's FailedScheduling event, "
            "which says why that node refused it, with the node's free requests (kubectl describe node).")
