"""A clause cut off mid-word: kubectl's events column, a dashboard or a chat window shortened the message, so its
last clause ends inside a label key, a value list or a taint (`label "node-role.kubernetes.io/control-p`,
`In [amd6…`, `{node-role.kubernetes.io/control-p`). What is left is not a key or a value of the cluster: it is
said as cut off, with what can be read of it and the key it most likely began, never parsed as a real key.
"""

from __future__ import annotations

import re

from karpplan.explain import known
from karpplan.explain import structure as reason_kind
from karpplan.explain.structure import Reason
from karpplan.model.labels import CONTROL_PLANE_ROLE_KEYS, HOSTNAME, WELL_KNOWN

_ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.)\s*$")
_LIKELY = tuple(sorted({*WELL_KNOWN, *known.CONTROL_PLANE_TAINTS, HOSTNAME, "node.kubernetes.io/not-ready",
                        "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
                        "node.kubernetes.io/memory-pressure", "node.cloudprovider.kubernetes.io/uninitialized",
                        "eks.amazonaws.com/nodegroup", "nvidia.com/gpu", "aws.amazon.com/neuron", "CriticalAddonsOnly"}))
_FULL = ("the rest was cut off by whatever showed it (kubectl's events column, a dashboard, a chat window); get the "
         "whole message before acting on it: kubectl get events -o yaml, kubectl describe pod, or the controller's log")


def cut_off(clause: str) -> bool:
    """Whether `clause` ends cut: a trailing ellipsis, or a quote, bracket, brace or parenthesis left open."""
    return bool(_ELLIPSIS.search(clause)) or _open(clause)


def _open(clause: str) -> bool:
    """A quote, bracket, brace or parenthesis left open: cut inside a word, not after a whole clause."""
    text = _ELLIPSIS.sub("", clause.strip())
    return (text.count('"') % 2 == 1 or text.count("[") > text.count("]") or text.count("{") > text.count("}")
            or text.count("(") > text.count(")"))


def _readable(text: str | None) -> str:
    return _ELLIPSIS.sub("", (text or "").strip()).rstrip("\\\"'").strip()


def likely_key(prefix: str) -> str | None:
    """The well-known key a cut one most likely began, when exactly one begins so."""
    if not prefix or len(prefix) < 4:
        return None
    found = [k for k in _LIKELY if k.startswith(prefix) and k != prefix]
    return found[0] if len(found) == 1 else None


def cut_plain(r: Reason, where: str) -> str | None:
    """A cut clause said as cut, with what can be read; None when `r` is not one this module words."""
    if not r.truncated:
        return None
    key = _readable(r.key)
    guess = likely_key(key)
    maybe = f" (most likely {guess})" if guess else ""
    seen = f"the message is cut off inside its last clause ({_readable(r.text)}…): "
    role = (f" {guess} marks control-plane nodes: on EKS no pod can run on one, so a selector or a missing "
            "toleration for it is not what a NodePool can fix." if guess in (*CONTROL_PLANE_ROLE_KEYS,
                                                                          *known.CONTROL_PLANE_TAINTS) else "")
    if r.kind == reason_kind.UNKNOWN_LABEL and key and r.key and not r.text.rstrip().endswith(r.key + '"'):
        return (seen + f'the pod selects on a label whose key begins "{key}"{maybe} and {where} launches no node '
                f"carrying it (Karpenter's \"label ... does not have known values\"); the key itself is not "
                f"readable: {_FULL}.{role}")
    if r.kind == reason_kind.TAINT and key and _open(r.text):
        return (seen + f'some nodes carry a taint whose key begins "{key}"{maybe} and the pod does not tolerate '
                f"it; the taint's full key, value and effect are not readable: {_FULL}."
                + known.control_plane_note([guess] if guess else []))
    if r.kind == reason_kind.REQUIREMENT_CONFLICT and key:
        sides = [s for s in (r.pod_side, r.pool_side) if s]
        read = f"; what can be read of it: {'; '.join(_readable(s) + ('…' if s is sides[-1] else '') for s in sides)}" \
            if sides else ""
        cut_key = not sides
        if not cut_key and not _open(r.text):
            return None  # whole, with only the clauses after it cut
        return (seen + (f'a requirement on a key that begins "{key}"{maybe}' if cut_key else f"a requirement on {key}")
                + f" does not match between the pod and {where}{read}. The values after the cut are not known, so "
                f"which side to change cannot be told from this text: {_FULL}.{role}")
    return None


# the words a clause of Karpenter's error starts with: a last clause that is only the first of them was cut after it
_CLAUSE_HEADS = ("incompatible with nodepool", "incompatible with provisioner", "incompatible requirements",
                 "did not tolerate", "no instance type", "unsatisfiable topology constraint", "daemonset overhead")


def unparsed_sentence(unparsed: tuple[str, ...]) -> str:
    """What the clauses no grammar read say: the last one cut after its first word(s) (`...; incompatible`) is the
    message's end lost, not a reason to read."""
    last = unparsed[-1].strip().rstrip(".").lower() if unparsed else ""
    cut = bool(last) and any(h.startswith(last) and h != last for h in _CLAUSE_HEADS)
    rest = unparsed[:-1] if cut else unparsed
    out = "Not understood: " + "; ".join(u[:160] for u in rest) + "." if rest else ""
    if cut:
        out += (f"{' ' if out else ''}The message ends in a clause cut after '{unparsed[-1].strip()}': Karpenter "
                "printed more (the reasons of one more pool, or the rest of this one's), which this copy of the line "
                "lost - log shippers and consoles cut long lines; kubectl logs on the controller shows it whole.")
    return out
