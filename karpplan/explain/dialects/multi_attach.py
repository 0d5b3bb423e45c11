"""The attach-detach controller refusing to attach a pod's volume (`FailedAttachVolume`, kube-controller-manager's
`reconciler.go`): the pod is already scheduled and bound, but its ReadWriteOnce volume is still attached elsewhere.

    Multi-Attach error for volume "pvc-..." Volume is already used by pod(s) web-7d9c-abcde
    Multi-Attach error for volume "pvc-..." Volume is already exclusively attached to one node and can't be attached to another

The pod waits in ContainerCreating; no scheduler or autoscaler is involved any more and a new node does not help.
The first shape names the pods that still use the volume on another node (a Deployment's RollingUpdate, a second
replica sharing one claim, a finished bootstrap pod: jaroslawhartman/withings-sync#248); the second a volume still
attached to another node, usually the one the pod left (drained, terminated or shut down before the volume was
unmounted and detached: openebs/openebs#2536, kubernetes-sigs/aws-ebs-csi-driver#1955 on Karpenter). cli-contract's
`source` has no value for kube-controller-manager: the item goes under `kube-scheduler` (a Kubernetes component's
event on a pod), kind `volume`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TRIGGERS = ("Multi-Attach error for volume",)
CAUSE = "volume attached elsewhere"
_VOLUME = re.compile(r'Multi-Attach error for volume \\?"(?P<volume>[^"\\]+)\\?"')
_USERS = re.compile(r"already used by pod\(s\) (?P<pods>[a-z0-9][-a-z0-9.]*(?:,\s*[a-z0-9][-a-z0-9.]*)*)")
_FROM_NODE = re.compile(r'from node \\?"(?P<node>[^"\\]+)\\?"')
# the pod the event is about: `kubectl get events`' `pod/NAME`, a controller's Event(v1.ObjectReference{...})
_OBJECT = re.compile(r"(?:^|\s|from )pod/(?P<pod>[a-z0-9][-a-z0-9.]*)")
_REFERENCE = re.compile(r'Kind:\\?"Pod\\?", Namespace:\\?"(?P<ns>[^"\\]+)\\?", Name:\\?"(?P<pod>[^"\\]+)\\?"')
_NAMESPACE_ROW = re.compile(r"^\s*(?P<ns>[a-z0-9][-a-z0-9]*)\s+\S+\s+Warning\s+FailedAttachVolume\s+pod/")


class Attached(NamedTuple):
    volume: str
    users: tuple[str, ...]  # the pods the controller says still use it (the first shape)
    node: str | None  # the node the pod waits on (the controller's own log line)
    pod: str | None
    text: str


def parse(line: str) -> Attached | None:
    """The Multi-Attach refusal `line` reports, if any."""
    m = _VOLUME.search(line)
    if m is None:
        return None
    users = _USERS.search(line, m.end())
    node = _FROM_NODE.search(line, m.end())
    pod = None
    if (ref := _REFERENCE.search(line)) is not None:
        pod = f"{ref.group('ns')}/{ref.group('pod')}"
    elif (obj := _OBJECT.search(line[:m.start()])) is not None:
        row = _NAMESPACE_ROW.match(line)
        pod = f"{row.group('ns')}/{obj.group('pod')}" if row else obj.group("pod")
    pods = tuple(p.strip() for p in users.group("pods").split(",")) if users else ()
    return Attached(m.group("volume"), pods, node.group("node") if node else None, pod, line[m.start():].strip())


def plain(a: Attached) -> str:
    head = (f"it was scheduled and bound to its node, but the attach-detach controller will not attach its volume "
            f"{a.volume} there (Multi-Attach error): a ReadWriteOnce volume (an EBS volume, an Azure or GCE disk) "
            "attaches to one node at a time")
    if a.users:
        who = ", ".join(a.users)
        return (f"{head}, and pod(s) {who} still use it on another node. A Deployment's RollingUpdate starts the new "
                "pod before the old one stops, a second replica shares the one claim, or a finished Job or bootstrap "
                f"pod still holds it; or that pod is stuck Terminating on a node that was shut down or is NotReady. "
                f"Fix: delete or scale down what holds it (kubectl get pod {a.users[0]} -o wide shows its node and "
                "state; on a node gone for good, taint it node.kubernetes.io/out-of-service=nodeshutdown:NoExecute or "
                "force-delete the pod); for a Deployment with one claim set strategy: Recreate (or maxSurge: 0), give each "
                "replica its own claim (a StatefulSet's volumeClaimTemplates), or use a ReadWriteMany volume (EFS) if "
                "pods must share it. Scheduling and capacity are not the cause: another node does not help.")
    return (f"{head}, and it is still attached to another node - usually the one its previous pod ran on, drained, "
            "terminated or shut down before the volume was unmounted and detached. Find it: kubectl get "
            f"volumeattachment | grep {a.volume} names the node. If that node still runs the old pod, the volume "
            "detaches once that pod is gone; if the node is gone or unreachable, the controller force-detaches after "
            "6 minutes (maxWaitForUnmountDuration), so the pod waits that long; for a node shut down for good, taint "
            "it node.kubernetes.io/out-of-service=nodeshutdown:NoExecute or delete it. On Karpenter, nodes terminated "
            "before the EBS CSI driver detached their volumes cause it (a 6-minute wait on every consolidation or drift "
            "of a StatefulSet's node): Karpenter v1.0 and later wait for a node's VolumeAttachments before they "
            "terminate the instance (kubernetes-sigs/karpenter#1294) - upgrade - and the EBS CSI node DaemonSet "
            "must tolerate Karpenter's disruption taint to run its pre-stop cleanup. Scheduling and "
            "capacity are not the cause: another node does not help.")
