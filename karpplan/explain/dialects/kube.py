"""kube-scheduler's FitError (`0/N nodes are available: ...`), cluster-autoscaler's NotTriggerScaleUp,
Karpenter's Nominated event, and the envelopes they come in (describe Events, get events rows, klog)."""

from __future__ import annotations

import re

from karpplan.explain.dialects.karpenter import parse_taint
from karpplan.explain.structure import NODE_FILTER, TAINT, Reason

FIT = re.compile(r"(?P<n>\d+)/(?P<m>\d+) nodes are available(?::\s*(?P<rest>.*))?", re.S)
SCALE_UP = re.compile(r"pod didn['’]t trigger scale-up(?: \((?P<why>[^)]*)\))?:?\s*(?P<rest>.*)", re.S)
NOMINATED = re.compile(r"Pod should schedule on:? (?P<target>.*)")
_ENTRY_SPLIT = re.compile(r",\s+(?=\d+ )")
_ENTRY = re.compile(r"^(?P<n>\d+) (?P<why>.+)$", re.S)
_UNTOLERATED = re.compile(r"had untolerated taint \{(?P<kv>[^}]*)\}?")
_UNTOLERATED_NEW = re.compile(r"had untolerated taint\(s\)")

# `kubectl describe pod` Events rows: Type  Reason  Age  From  Message
DESCRIBE_EVENT = re.compile(
    r"^\s*(?P<type>Normal|Warning)\s+(?P<reason>[A-Za-z]+)\s+(?P<age>\S+(?: \(x\d+ over \S+\))?)\s+"
    r"(?P<source>\S+(?:, \S+)?)\s+(?P<msg>\S.*)$")
# `kubectl get events` rows: [NAMESPACE] LAST SEEN TYPE REASON OBJECT MESSAGE
GET_EVENT = re.compile(
    r"^\s*(?:(?P<ns>[a-z0-9][-a-z0-9.]*)\s+)?(?P<age>\S+)\s+(?P<type>Normal|Warning)\s+(?P<reason>[A-Za-z]+)\s+"
    r"(?P<object>[a-z]+(?:\.[\w.]+)?/\S+)\s+(?P<msg>\S.*)$")
KLOG = re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w.-]+:\d+\] ")
CA_OBJECT = re.compile(r'Kind:"Pod", Namespace:"(?P<ns>[^"]*)", Name:"(?P<name>[^"]*)"')
KLOG_POD = re.compile(r'\bpod="(?P<pod>[^"]+)"|\bpod=(?P<bare>[\w.-]+/[\w.-]+)')


def _entries(rest: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for part in _ENTRY_SPLIT.split(rest.strip()):
        m = _ENTRY.match(part.strip().rstrip(".").strip())
        if m is not None:
            why = m.group("why").strip()
            counts[why] = counts.get(why, 0) + int(m.group("n"))
    return counts


def parse_fit_error(message: str) -> list[Reason] | None:
    """kube-scheduler's per-node counts; the preemption tail is dropped. None when not a FitError."""
    m = FIT.search(message)
    if m is None:
        return None
    rest = (m.group("rest") or "").split(". preemption:", 1)[0].split(" preemption:", 1)[0]
    counts = _entries(rest)
    text = message[m.start():].split(" preemption:", 1)[0].rstrip(". ")
    reasons = [Reason(NODE_FILTER, text, counts=counts, total=int(m.group("m")))]
    reasons.extend(_taints(counts))
    return reasons


def parse_scale_up(message: str) -> list[Reason] | None:
    m = SCALE_UP.search(message)
    if m is None:
        return None
    counts = _entries(m.group("rest") or "")
    reasons = [Reason(NODE_FILTER, message[m.start():].strip(), counts=counts, cause=m.group("why"))]
    reasons.extend(_taints(counts))
    return reasons


def _taints(counts: dict[str, int]) -> list[Reason]:
    out: list[Reason] = []
    for why in counts:
        t = _UNTOLERATED.search(why)
        if t is not None:
            key, _, value = t.group("kv").partition(":")
            out.append(Reason(TAINT, why, key=key.strip(), value=value.strip() or None))
        elif "taint" in why and (t2 := re.search(r"taint \{?([^}\s]+)\}?", why)) is not None and not _UNTOLERATED_NEW.search(why):
            key, value, effect = parse_taint(t2.group(1))
            out.append(Reason(TAINT, why, key=key, value=value or None, effect=effect or None))
    return out
