"""Karpenter's debug line for a pod's volumes (`scheduling/volumetopology.go`): before it looks for a NodeClaim it
adds the zones the pod's bound volumes (and their StorageClasses' allowed topologies) are in to the pod's
requirements, and logs them:

    adding requirements derived from pod volumes, [{topology.ebs.csi.aws.com/zone In [us-east-1a]}]

Since v1.4 the line is `getting requirements from pod volumes` with the requirements in a field of their own
(`"requirements":"topology.ebs.csi.aws.com/zone In [us-east-1a]"`, Requirements.String without braces).

A user pastes it beside a pod that stays pending (kubernetes-sigs/karpenter#2458): it names the zone the pod is
pinned to, which is the fact the rest of the answer turns on.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TRIGGERS = ("adding requirements derived from pod volumes", "getting requirements from pod volumes")
CAUSE = "volume topology"
_REQUIREMENT = re.compile(r"\{(?P<key>[\w./-]+) (?P<op>In|NotIn|Exists|DoesNotExist) ?\[?(?P<values>[^\]}]*)\]?\}")

_FIELD = re.compile(r'"requirements"\s*:\s*"(?P<requirements>[^"]+)"')
_SPLIT = re.compile(r",\s*(?=[\w./-]+ (?:In|NotIn|Exists|DoesNotExist|Gt|Lt)\b)")


class Pinned(NamedTuple):
    key: str
    zones: tuple[str, ...]
    text: str  # the requirements as logged
    empty: bool = False  # a zone requirement with no value at all (`In []`): no node can meet it


def parse(line: str) -> Pinned | None:
    """The requirements Karpenter derived from the pod's volumes, if `line` is that debug line."""
    at = line.find(TRIGGERS[0])
    if at < 0:
        at = line.find(TRIGGERS[1])
        field = _FIELD.search(line, at) if at >= 0 else None
        if field is None:
            return None
        rest = "".join(f"{{{r}}}" for r in _SPLIT.split(field.group("requirements")))
    else:
        rest = line[at + len(TRIGGERS[0]):]
    found = [m for m in _REQUIREMENT.finditer(rest) if m.group("op") == "In"]
    if not found:
        return None
    zonal = [m for m in found if m.group("key").endswith("zone")] or found  # a region requirement beside it
    zones = tuple(dict.fromkeys(v for m in zonal for v in m.group("values").split()))
    text = ", ".join(m.group(0).strip("{}") for m in found)
    return Pinned(zonal[0].group("key"), zones, text, any(not m.group("values").strip() for m in zonal))


# the volume a zone key belongs to (the CSI driver's own topology key), and where its nodes come from
_DRIVERS = (("topology.ebs.csi.aws.com/", "an EBS volume", "EC2NodeClass subnets"),
            ("topology.disk.csi.azure.com/", "an Azure managed disk (a zonal one)", None),
            ("topology.gke.io/", "a persistent disk", None))


def plain(p: Pinned) -> str:
    volume, subnets = next(((v, n) for k, v, n in _DRIVERS if p.key.startswith(k)), ("an EBS volume", "EC2NodeClass subnets"))
    if p.empty:
        return (f"its volumes pin it to no zone at all: Karpenter read the pod's volumes and requires {p.text} - an "
                "empty list of zones, which no node can meet, so no NodePool can launch one for it (a debug line; the "
                "pod's `could not schedule pod` line follows). The volume or its StorageClass names no zone (a "
                "regional disk, or a StorageClass with no zone restriction) and the provider turned that into an "
                "empty requirement instead of none: a bug of that provider release (Azure/karpenter-provider-azure#497"
                " for the AKS default StorageClasses) - upgrade Karpenter's provider. The pod's requests and the "
                "NodePool are not the cause.")
    where = " or ".join(p.zones) if p.zones else "the volumes' zone"
    launch = (f"a NodePool whose topology.kubernetes.io/zone requirement and {subnets} include that zone" if subnets
              else "a NodePool whose topology.kubernetes.io/zone requirement includes that zone")
    return (f"its volumes pin it: Karpenter read the pod's volumes and requires {p.text} (a debug line, not a failure "
            f"by itself; a `could not schedule pod` line for the pod says whether it failed): the pod may only run in {where}, where its "
            f"bound volume is ({volume} never leaves its zone). A node for it can only be launched there: {launch}, "
            "with an instance type it allows on offer there. If none can, the pod stays pending; a StorageClass "
            "with volumeBindingMode: WaitForFirstConsumer lets a new claim be created in the pod's zone instead.")
