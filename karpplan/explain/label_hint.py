"""Karpenter's own guess at a label it does not know, and what a log says beside it.

`label "K" does not have known values (typo of "X"?)` is Karpenter's guess, not a finding: it names the first
well-known label, or key among the pool's requirements, that contains K or ends with K's name after its prefix
(kubernetes-sigs/karpenter pkg/scheduling/requirements.go, labelHint). A label spelled as meant is "a typo" of any
other label with the same name under another prefix (`example.io/stable` of `node-role.example.io/stable`), so the
guess is repeated as Karpenter's, with how to tell, never as the fix.

The usual real cause, when the same record has a pool at its limits (kubernetes-sigs/karpenter#2123): Karpenter
checks a pool's limits before the pod's requirements, so a pool that "exceeds limits" was never compared with the
pod and may be the very pool that sets the label; the other pools' "does not have known values" then only says they
are not meant for the pod.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.explain import structure as reason_kind
from karpplan.explain.structure import PoolReasons, Reason


def guess_plain(key: str | None, suggestion: str) -> str:
    """Karpenter's typo hint, as Karpenter's, with how to tell whether it is right."""
    return (f' Karpenter adds a guess, "typo of {suggestion}?": it is made from the spelling alone (a label of the pool '
            f"or a well-known one that contains \"{key}\" or ends with the same name), not from what you meant. If "
            f'"{suggestion}" is the label you meant, correct the pod\'s nodeSelector / nodeAffinity; if "{key}" is spelled '
            "as intended, ignore the guess: the label is simply one this pool does not set.")


def _limited_pools(reasons: Sequence[Reason], pools: Sequence[PoolReasons]) -> list[str]:
    named = [r.node_pool for r in reasons if r.kind == reason_kind.LIMITS and r.node_pool]
    named += [p.name for p in pools if p.reasons and all(r.kind == reason_kind.LIMITS for r in p.reasons)]
    return list(dict.fromkeys(named))


def waiting_on_limits(reasons: Sequence[Reason], pools: Sequence[PoolReasons]) -> str:
    """When some pools lack a label the pod selects and another pool is at its limits: that pool was never compared
    with the pod, and may be the one that sets the label (empty otherwise)."""
    keys = list(dict.fromkeys(r.key for p in pools for r in p.reasons if r.kind == reason_kind.UNKNOWN_LABEL and r.key))
    limited = _limited_pools(reasons, pools)
    if not keys or not limited:
        return ""
    labels = " / ".join(f'"{k}"' for k in keys)
    names = ", ".join(f'"{n}"' for n in limited)
    one = len(limited) == 1
    return (f"NodePool{'' if one else 's'} {names} {'was' if one else 'were'} never compared with the pod: Karpenter "
            "stops at a pool whose limits are used up before it looks at the pod's requirements. If "
            f"{'that pool' if one else 'one of them'} is the one whose nodes carry {labels}, the pod is waiting for room "
            f"there, and the other pools' \"does not have known values\" only says they are not meant for it: raise "
            f"the limits in that pool's spec (kubectl get nodepool {limited[0]} -o yaml shows them beside "
            "status.resources, what its nodes already use), or free its capacity. A pod with several nodeSelectorTerms is tried one term at a time "
            "(Karpenter drops a term that failed: 'relaxing soft constraints ... removing: spec.affinity.nodeAffinity."
            "requiredDuringSchedulingIgnoredDuringExecution[0]' in its log), so the label comes from the term it was trying when it logged this.")
