"""The EKS Fargate scheduler's refusals (`fargate-scheduler` events).

`Pod not supported on Fargate: <refusal>, <refusal>...` lists what in the pod spec Fargate refuses
(`fields not supported: HostNetwork`, `invalid SecurityContext fields: Privileged`, `port contains HostIP
or HostPort`, `volumes not supported: <name> ...`); `Misconfigured Fargate Profile: fargate profile X blocked
for new launches due to: ...` is the profile's own fault (pod execution role, subnets). Each refusal is an
`unsupported` reason; the field it points at is the one lint's fargate-incompatible rule names.
"""

from __future__ import annotations

import re

from karpplan.explain.structure import FARGATE_SCHEDULER, UNSUPPORTED, Reason

SOURCE = FARGATE_SCHEDULER
NOT_SUPPORTED = re.compile(r"Pod not supported on Fargate:\s*(?P<rest>.*)$", re.S)
MISCONFIGURED = re.compile(r"Misconfigured Fargate Profile:\s*(?:fargate profile (?P<name>\S+) )?(?P<rest>.*)$",
                           re.S | re.I)
BLOCKED = re.compile(r"Your AWS account is currently blocked[^\n]*", re.I)
# fargate-scheduler's retry when a selected pod's microVM did not start in time
TIMED_OUT = re.compile(r"Pod provisioning timed out(?: \(will retry\))?", re.I)
ZONE = re.compile(r"Fargate.*?(?:availability zone|not supported in (?:the )?(?:zone|az))", re.S | re.I)
# a new refusal starts with one of these heads (values such as HostNetwork are capitalised, heads are not)
_SPLIT = re.compile(r",\s+(?=(?:fields not supported|invalid |port contains|volumes? not supported|"
                    r"[a-z][\w ]* not supported|pod |daemonset)\b)", re.I)

# the refused value -> the pod-spec field a user changes (field paths as lint's fargate rule writes them)
FIELDS = {
    "HostNetwork": "spec.hostNetwork",
    "HostPID": "spec.hostPID",
    "HostIPC": "spec.hostIPC",
    "Privileged": "containers[].securityContext.privileged",
    "AllowPrivilegeEscalation": "containers[].securityContext.allowPrivilegeEscalation",
    "Capabilities": "containers[].securityContext.capabilities",
    "HostPort": "containers[].ports[].hostPort",
}


def _field_of(refusal: str) -> str | None:
    if refusal.startswith("port contains"):
        return FIELDS["HostPort"]
    if refusal.startswith("volume"):
        return "spec.volumes"
    for value, path in FIELDS.items():
        if re.search(rf"\b{value}\b", refusal):
            return path
    return None


def parse(message: str) -> list[Reason] | None:
    """The refusals a fargate-scheduler message lists, or None when it is not one."""
    if (timed_out := TIMED_OUT.search(message)) is not None:
        return [Reason(UNSUPPORTED, timed_out.group(0), cause="timed out")]
    if "Fargate" not in message:
        return None
    m = NOT_SUPPORTED.search(message)
    if m is not None:
        # the paste's own quoting (`...`, "...") closes after the last refusal, and what follows a closing backtick
        # is the user's prose (`...not bound` but the pvc is bound): neither is part of a refusal
        rest = m.group("rest").split("`", 1)[0].strip().rstrip(")'\"").strip()
        parts = [p.strip() for p in _SPLIT.split(rest) if p.strip()] or [rest]
        return [Reason(UNSUPPORTED, p, key=_field_of(p), cause="Pod not supported on Fargate") for p in parts]
    m = MISCONFIGURED.search(message)
    if m is not None:
        return [Reason(UNSUPPORTED, m.group(0).strip(), value=m.group("name"),
                       cause="Misconfigured Fargate Profile")]
    if (blocked := BLOCKED.search(message)) is not None:
        return [Reason(UNSUPPORTED, blocked.group(0).strip().rstrip("."), cause="account blocked")]
    if ZONE.search(message):
        return [Reason(UNSUPPORTED, message.strip(), cause="zone")]
    return None


def volume_note(refusal: str) -> str:
    """What Fargate mounts, after a refused volume (with a leading space), or ''."""
    if not refusal.lower().startswith("volume"):
        return ""
    note = (" Of persistent volumes, Fargate Pods mount Amazon EFS ones only (a statically provisioned PV bound to the "
            "claim); Amazon EBS volumes can't be mounted to Fargate Pods, and hostPath, CSI inline volumes and claims "
            "still waiting for a volume are refused (emptyDir, configMap, secret and projected volumes are fine).")
    if "not found" in refusal and "persistentvolumeclaim" in refusal.lower():
        note += (" The claim did not exist when the pod was created (applied together with it, or in another "
                 "namespace), and fargate-scheduler judges a pod once, when it is created: if kubectl get pvc -n "
                 "<namespace> now shows the claim, Bound to an EFS volume, the message is stale - delete the pod so "
                 "that its controller recreates it and it is judged again (or wait: the pod may still start), and "
                 "create claims before the pods that mount them.")
    if "not bound" in refusal:
        note += (" fargate-scheduler judges a pod once, when it is created, and does not retry: if kubectl get pvc now "
                 "shows the claim Bound (to an EFS volume), delete the pod so that its controller recreates it and it "
                 "is judged again. A claim left to a StorageClass such as gp2 / gp3 (EBS) never binds for a Fargate "
                 "pod: give it a static EFS PersistentVolume, or run the pod on EC2 nodes.")
    return note


def claim_not_ready(refusal: str) -> bool:
    """Whether Fargate refused a volume because its claim did not exist yet, not for the volume's kind (a claim
    not bound may be one Fargate can never mount: EBS)."""
    low = refusal.lower()
    return low.startswith("volume") and "persistentvolumeclaim" in low and "not found" in low


def injected_note(refusal: str) -> str:
    """Where a refused field comes from when the user did not write it (with a leading space), or ''."""
    if "NET_ADMIN" in refusal or "NET_RAW" in refusal:
        return (" NET_ADMIN / NET_RAW are usually added by a service mesh's sidecar injector (its init container sets "
                "up the pod's traffic redirection: App Mesh, Istio, Linkerd): if your pod spec has no such capability, "
                "upgrade or configure the injector for Fargate (its CNI mode or Fargate support) or exclude the "
                "namespace from injection.")
    if "HostNetwork" in refusal and ("Privileged" in refusal or "HostPort" in refusal):
        return (" A pod that asks for the host's network and privileges is a node agent - a CSI driver's node or "
                "controller pod (EFS, EBS), a CNI, log or monitoring agent - and none can run on Fargate: run it on EC2 "
                "nodes (keep its namespace out of the Fargate profiles), or leave it out where Fargate does the job "
                "itself - Fargate mounts Amazon EFS volumes without the EFS CSI driver's pods, so a Fargate-only "
                "cluster needs only the static EFS PersistentVolume and claim.")
    if "Capabilities added" in refusal or "Privileged" in refusal:
        return (" When your own values leave securityContext empty, the field comes from the chart's defaults or a "
                "mutating webhook: check the rendered pod (kubectl get pod -o yaml), not only your values.")
    return ""
