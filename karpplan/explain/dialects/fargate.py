"""The EKS Fargate scheduler's refusals (`fargate-scheduler` events).

`Pod not supported on Fargate: <refusal>, <refusal>...` lists what in the pod spec Fargate refuses
(`fields not supported: HostNetwork`, `invalid SecurityContext fields: Privileged`, `port contains HostIP
or HostPort`, `volumes not supported: <name> ...`); `Misconfigured Fargate Profile: fargate profile X blocked
for new launches due to: ...` is the profile's own fault (pod execution role, subnets). Each refusal is an
`unsupported` reason; the field it points at is the one lint's fargate-incompatible rule names.
"""

from __future__ import annotations

import re

from karpplan.explain.structure import UNSUPPORTED, Reason

SOURCE = "fargate-scheduler"
NOT_SUPPORTED = re.compile(r"Pod not supported on Fargate:\s*(?P<rest>.*)$", re.S)
MISCONFIGURED = re.compile(r"Misconfigured Fargate Profile:\s*(?:fargate profile (?P<name>\S+) )?(?P<rest>.*)$",
                           re.S | re.I)
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
    if "Fargate" not in message:
        return None
    m = NOT_SUPPORTED.search(message)
    if m is not None:
        # the paste's own quoting (`...`, "...") closes after the last refusal; it is not part of it
        rest = m.group("rest").strip().rstrip(")`'\"").strip()
        parts = [p.strip() for p in _SPLIT.split(rest) if p.strip()] or [rest]
        return [Reason(UNSUPPORTED, p, key=_field_of(p), cause="Pod not supported on Fargate") for p in parts]
    m = MISCONFIGURED.search(message)
    if m is not None:
        return [Reason(UNSUPPORTED, m.group(0).strip(), value=m.group("name"),
                       cause="Misconfigured Fargate Profile")]
    if ZONE.search(message):
        return [Reason(UNSUPPORTED, message.strip(), cause="zone")]
    return None
