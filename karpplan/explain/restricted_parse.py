"""Reading the API server's refusal of a Karpenter object for a key in a restricted label domain (a NodeClaim made
from the pods' node selection, or the user's own NodePool) into reasons; restricted_domain.py words them."""

from __future__ import annotations

import re
from dataclasses import replace

from karpplan.explain import restricted_domain
from karpplan.explain.structure import KARPENTER, UNSUPPORTED, Parsed, Reason
from karpplan.explain.wording import reason_plain

# v0.33+: the API server rejects a NodeClaim whose requirements (from the pods' selectors) use a restricted domain
CLAIM_RESTRICTED = re.compile(r'NodeClaim(?:\.karpenter\.sh)? \\?"(?P<claim>[^"\\]+)\\?" is invalid: \[?(?P<field>spec\.requirements'
                              r'\[\d+\]\.key)[^\n]*?label domain \\?"(?P<domain>[^"\\]+)\\?" is restricted')


def refused_object(message: str, event: str | None) -> Parsed | None:
    """A NodeClaim (or the user's NodePool) the API server refused for a key in a restricted label domain."""
    if (cm := CLAIM_RESTRICTED.search(message)) is not None:
        return claim_rejected(cm, message, event)
    if (pm := restricted_domain.POOL_RESTRICTED.search(message)) is not None:
        reason = Reason(UNSUPPORTED, pm.group(0).replace('\\"', '"'), key=pm.group("domain"), node_pool=pm.group("pool"),
                        value=pm.group("field"), cause=restricted_domain.POOL_CAUSE)
        return Parsed(KARPENTER, event or "Rejected", message, reasons=(replace(reason, plain=reason_plain(reason)),))
    return None


def claim_rejected(cm: re.Match[str], message: str, event: str | None) -> Parsed:
    """NodeClaims the API server refused for a restricted label domain in their requirements: each claim the
    message names (one scheduling round's claims are joined with `; `), a domain said once."""
    reasons: list[Reason] = []
    for m in CLAIM_RESTRICTED.finditer(message, cm.start()):
        reason = Reason(UNSUPPORTED, m.group(0).replace('\\"', '"'), key=m.group("domain"), value=m.group("claim"),
                        cause=restricted_domain.CLAIM_CAUSE)
        if any(r.key == reason.key for r in reasons):
            reason = replace(reason, plain=f"The API server rejected NodeClaim {reason.value} too, for the same "
                                           f"restricted domain {reason.key}.")
        reasons.append(reason if reason.plain else replace(reason, plain=reason_plain(reason)))
    return Parsed(KARPENTER, event or "Log", message, reasons=tuple(reasons))
