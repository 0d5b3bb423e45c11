"""The API server refusing a NodeClaim Karpenter made: the NodeClaim CRD's validation rules (CEL, and the schema's
limits) reject its spec.requirements, so the claim is never created and its pods stay pending, whatever Karpenter's
scheduling simulation decided. Karpenter logs it as `creating node claim, NodeClaim.karpenter.sh "x" is invalid:
...` (older: `NodeClaim "x" is invalid`), often pasted wrapped over several lines.

The restricted label domain (`label domain "k" is restricted`) is read by parse.py; this module reads the others:

- `requirements with 'minValues' must have at least that many values specified in the 'values' field`: a NodePool
  requirement with minValues (zone In [a b], minValues: 2) that the pod narrowed to fewer values (its bound volume's
  zone, a zone topology spread), created as it was even under minValuesPolicy BestEffort
  (kubernetes-sigs/karpenter#2999, fixed by #3170);
- `Too many: N: must have at most 30 items`: more requirements than the CRD of Karpenter before mid-2024 allowed
  (kubernetes-sigs/karpenter#1344 raised it to 100);
- any other rule of the CRD: quoted, with what follows from it (no node for the pods) and where the requirement
  comes from.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_CLAIM = re.compile(r'NodeClaim(?:\.karpenter\.sh)?\s+\\?"(?P<claim>[^"\\]+)\\?"\s+is\s+invalid:|(?=spec\.requirements:\s+Too\s+many:)')
_RULES = (
    ("min-values", re.compile(r"requirements\s+with\s+'minValues'\s+must\s+have\s+at\s+least\s+that\s+many\s+values"
                            r"(?:\s+specified\s+in\s+the\s+'values'\s+field)?")),
    ("too-many", re.compile(r"spec\.requirements:\s+Too\s+many:\s+(?P<n>\d+|#):\s+must\s+have\s+at\s+most\s+(?P<max>\d+)\s+"
                            r"items")),
    ("other", re.compile(r"spec\.(?:requirements|taints|startupTaints|nodeClassRef)[^\n]*")),
)
TRIGGERS = ("is invalid: ", "spec.requirements: Too many: ")
CAUSES = tuple(f"claim rejected: {name}" for name, _ in _RULES)


class ClaimRejected(NamedTuple):
    claim: str
    rule: str  # one of the _RULES names
    text: str  # the rejection, from the NodeClaim's name on, on one line
    had: int | None = None  # too-many: the requirements the claim had
    limit: int | None = None  # too-many: the most the CRD allows


def parse(message: str) -> ClaimRejected | None:
    """The (first) NodeClaim rejection `message` reports, if it is one this module reads."""
    found = parse_all(message)
    return found[0] if found else None


def parse_all(message: str) -> list[ClaimRejected]:
    """Every NodeClaim rejection `message` reports (Karpenter joins the claims of one scheduling round with `; `:
    `creating node claim, NodeClaim.karpenter.sh "a" is invalid: ...; creating node claim, ... "b" is invalid: ...`),
    each once."""
    starts = list(_CLAIM.finditer(message))
    named = [m for m in starts if m.group("claim") is not None]
    starts = named or starts[:1]  # a bare CRD message (no claim named): its one cap
    out: list[ClaimRejected] = []
    for i, cm in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(message)
        if (one := _one(cm, message[cm.end():end])) is not None and one not in out:
            out.append(one)
    return out


def _one(cm: re.Match[str], rest: str) -> ClaimRejected | None:
    for name, rule in _RULES:
        m = rule.search(rest)
        if m is None:
            continue
        text = " ".join((cm.group(0) + rest[:m.end()]).replace('\\"', '"').split())
        if name == "too-many":
            n = m.group("n")
            return ClaimRejected(cm.group("claim") or "", name, text, int(n) if n.isdigit() else None, int(m.group("max")))
        if cm.group("claim") is None:
            return None  # a bare CRD message is read only for the requirement cap, whose wording it carries whole
        return ClaimRejected(cm.group("claim"), name, text)
    return None


def plain(r: ClaimRejected, before: tuple[ClaimRejected, ...] = ()) -> str:
    """What was rejected, why Karpenter made such a claim, and the fix; a claim after others (`before`, of the same
    message) rejected by the same rule is named with its own numbers, its cause and fix not said again."""
    if any(b.rule == r.rule for b in before):
        many = f": {r.had} requirements" if r.rule == "too-many" and r.had else ""
        return f"The API server rejected NodeClaim {r.claim or '(unnamed)'} too, by the same rule{many} ({r.text})."
    head = (f"the API server rejected {'NodeClaim ' + r.claim if r.claim else 'a NodeClaim'} ({r.text}), so Karpenter could not create the node it had "
            "planned for the pending pods: they stay Pending although the scheduling simulation found room for them. ")
    if r.rule == "min-values":
        return head + (
            "One of the claim's requirements carries minValues but fewer values than that: a NodePool requirement with "
            "minValues (typically topology.kubernetes.io/zone In [a b] with minValues: 2) that the pods narrowed to fewer "
            "values - the zone of a PersistentVolume they have bound, a topology spread on zone, their own zone "
            "selector. Under minValuesPolicy: BestEffort Karpenter should relax minValues then (under Strict, refuse the "
            "pods in its simulation), but it counted the instance types' offered values instead of the narrowed "
            "requirement and created the claim as it was "
            "(kubernetes-sigs/karpenter#2999, fixed by kubernetes-sigs/karpenter#3170): upgrade to a release with "
            "that fix. Until then remove minValues from the requirement such pods narrow (the NodePool's "
            "spec.template.spec.requirements[].minValues on topology.kubernetes.io/zone), or give those pods a "
            "NodePool without it; the pod's request is not what to change.")
    if r.rule == "too-many":
        many = f"{r.had} requirements" if r.had else "more requirements than allowed"
        return head + (
            f"The claim has {many}, above the {r.limit or 30} its CRD allows: a NodeClaim carries one requirement per "
            "NodePool requirement, template label and key of the pods' node selectors / required affinity. The "
            "NodeClaim CRD of Karpenter before mid-2024 allowed 30 (kubernetes-sigs/karpenter#1344 raised it to 100): "
            "upgrade Karpenter together with its CRDs (the limit lives in the CRD, so a new controller with the old "
            "CRDs is still refused), or trim the NodePool's spec.template.metadata.labels and requirements.")
    return head + (
        "A NodeClaim's spec comes from its NodePool's spec.template (requirements, labels, taints) joined with the "
        "pods' nodeSelector and required node affinity: find the field the message names there and make it pass "
        "the rule; the NodePool itself was accepted because a NodePool is validated alone, before any pod is "
        "joined to it.")
