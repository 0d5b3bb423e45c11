"""Karpenter leaving a pod alone because the pod asks not to run on its nodes: a node affinity term (required, or
only preferred: Karpenter reads the heaviest preferred term too) with `karpenter.sh/nodepool DoesNotExist`
(`karpenter.sh/provisioner-name` before v0.32). Karpenter logs it at debug and records no event:

    {"message":"ignoring pod, configured to not run on a Karpenter provisioned node via the karpenter.sh/nodepool DoesNotExist requirement", "pod":"ns/name"}   (v0.3x)
    {"message":"ignoring pod","error":"configured to not run on a Karpenter provisioned node", "Pod":{...}}                                                      (v1)

The pod then depends on nodes Karpenter did not launch (a node group, Fargate) alone (kubernetes-sigs/karpenter#1334).
"""

from __future__ import annotations

import re

TRIGGERS = ("configured to not run on a Karpenter provisioned node",)
CAUSE = "not for karpenter"
_KEY = re.compile(r"via the (?P<key>\S+) DoesNotExist requirement|requirement\\?\"?\s*:\s*\\?\"(?P<key2>\S+) DoesNotExist")


def parse(line: str) -> str | None:
    """The label key the pod's DoesNotExist term names, if `line` is that debug line."""
    if TRIGGERS[0] not in line:
        return None
    m = _KEY.search(line)
    return (m.group("key") or m.group("key2")) if m else "karpenter.sh/nodepool"


def plain(key: str) -> str:
    return (f"karpenter ignores it on purpose: its node affinity says {key} DoesNotExist - do not run on a node "
            "Karpenter launched - so Karpenter never launches a node for it, and only nodes it did not launch (a "
            "managed node group, Fargate) can take it. Karpenter reads a preferred (soft) term that way too, not "
            "only a required one (kubernetes-sigs/karpenter#1334): a pod that merely prefers other nodes is also "
            "left to them, and stays Pending when none of them has room (or none is in the zone its volume is in - "
            "then kube-scheduler says volume node affinity conflict). If Karpenter may serve the pod, remove that "
            f"term (or, for a preference, express it on a label of the node group's nodes instead of {key} "
            "DoesNotExist); otherwise give the node group room in the pod's zone.")
