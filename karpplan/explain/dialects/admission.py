"""The kubelet refusing a pod the scheduler (or a controller) already bound to its node: admission's `OutOf<resource>`
(`OutOfnvidia.com/gpu`, `OutOfcpu`, `OutOfpods`), shown as the pod's STATUS in `kubectl get pods` and as its reason
(`Pod was rejected: Node didn't have enough resource: nvidia.com/gpu ...`). The pod is Failed and never retried.

The usual cause on an autoscaled cluster is a pod bound to a node before the node advertised the resource: a device
plugin (NVIDIA's, Neuron's) registers its devices only once it runs, and Karpenter before v0.11 bound pods to the nodes
it launched right away (aws/karpenter-provider-aws#1459); a pod with spec.nodeName set skips the scheduler the same
way.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TRIGGERS = ("OutOf", "Node didn't have enough resource")
CAUSE = "kubelet admission"
_STATUS = re.compile(r"(?:^|\s)OutOf(?P<res>[a-z][\w./-]*)(?=\s|$)")
_REJECTED = re.compile(r"Node didn't have enough resource: (?P<res>[\w./-]+)")
_POD_ROW = re.compile(r"^\s*(?:(?P<ns>[a-z0-9][-a-z0-9]*)\s+)?(?P<pod>[a-z0-9][-a-z0-9.]*)\s+\d+/\d+\s+OutOf")


class Rejected(NamedTuple):
    resource: str
    pod: str | None
    text: str


def parse(line: str) -> Rejected | None:
    """The kubelet's admission refusal `line` reports, if any."""
    if not any(t in line for t in TRIGGERS):
        return None
    m = _STATUS.search(line) or _REJECTED.search(line)
    if m is None:
        return None
    row = _POD_ROW.match(line)
    pod = (f"{row.group('ns')}/{row.group('pod')}" if row.group("ns") else row.group("pod")) if row else None
    return Rejected(m.group("res"), pod, line.strip())


def plain(r: Rejected) -> str:
    device = "/" in r.resource
    why = (f"the node did not advertise {r.resource} yet when the pod was bound to it: a device plugin registers "
           "its devices only once its pod runs on the node, and Karpenter before v0.11 bound pods to the nodes it "
           "launched at once (aws/karpenter-provider-aws#1459) - upgrade Karpenter, and check that the device plugin "
           "DaemonSet runs on that node (kubectl describe node shows the resource under Allocatable once it does)"
           if device else
           f"the node had less {r.resource} left than the scheduler or the binder thought - pods bound without the "
           "scheduler (spec.nodeName set by a controller or by hand), or a node whose allocatable shrank after a "
           "kubelet restart")
    return (f"the kubelet on the pod's node rejected it at admission (OutOf{r.resource}): {why}. The pod is Failed "
            "and is not retried: delete it so its controller makes a new one, which the scheduler places on a node "
            "that has the resource; a bare pod must be recreated.")
