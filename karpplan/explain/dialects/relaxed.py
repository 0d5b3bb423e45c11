"""Karpenter's debug line for a preference it dropped (`scheduling/preferences.go`, `Preferences.Relax`). Its
scheduler first treats every preference of a pod as required; when the pod then fits nowhere it drops one, logs
it, and tries again:

    relaxing soft constraints for pod since it previously failed to schedule, removing: spec.topologySpreadConstraints = {...}
    {"message":"relaxing soft constraints for pod since it previously failed to schedule","reason":"removing: ..."}

(`Relaxing ...` in v0.2x; the reason inside the message until v1.4, in its own `reason` field since.) What can be
dropped, in order: the first of several required nodeSelectorTerms (terms are ORed: the others remain), the
heaviest preferred pod affinity, pod anti-affinity or node affinity term, a ScheduleAnyway topology spread, and
(when a NodePool's template has a PreferNoSchedule taint) a toleration of PreferNoSchedule taints is added. The line is not a failure: the
pod is usually placed with the preference gone. A failure, if any, is the `could not schedule pod` line after it.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from karpplan.explain.structure import REQUIREMENT_CONFLICT, TOPOLOGY

TRIGGERS = ("elaxing soft constraints for pod",)
CAUSE = "relaxed preference"
KINDS = {"topologySpreadConstraints": TOPOLOGY, "podAffinity": TOPOLOGY, "podAntiAffinity": TOPOLOGY,
         "nodeAffinity": REQUIREMENT_CONFLICT}  # the reason kind of what was dropped; a toleration: taint
_LINE = re.compile(r"[Rr]elaxing soft constraints for pod(?: since it previously failed to schedule)?")
_WHAT = re.compile(r"(?P<verb>removing|adding):\s*(?P<what>.+)")
_FIELD = re.compile(r"spec\.(?:affinity\.)?(?P<field>\w+)(?:\.(?P<sub>\w+))?(?:\[\d+\])?\s*=\s*(?P<term>.*)")
_REASON_FIELD = re.compile(r'"reason"\s*:\s*"(?P<reason>(?:[^"\\]|\\.)*)"')
_KEY = re.compile(r'\\?"(?:topologyKey|key)\\?"\s*:\s*\\?"(?P<key>[^"\\]+)')

_MEANS = {
    ("topologySpreadConstraints", None): (
        "a topology spread constraint with whenUnsatisfiable: ScheduleAnyway",
        "the pod may now land where it skews the spread; a ScheduleAnyway spread is only a preference, so this "
        "is how it is meant to work"),
    ("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution"): (
        "its heaviest preferred pod affinity term",
        "the pod may now run away from the pods it prefers to be near"),
    ("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"): (
        "its heaviest preferred pod anti-affinity term",
        "the pod may now share a node (or zone) with the pods it prefers to avoid"),
    ("nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution"): (
        "its heaviest preferred node affinity term",
        "the pod may now run on nodes that term did not prefer"),
    ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"): (
        "the first of its required nodeSelectorTerms",
        "required terms are ORed, so Karpenter tries the next one; the pod still needs a node matching one of the "
        "terms left"),
}


_IN_JSON = re.compile(r'(?P<rest>(?:[^"\\]|\\.)*)"\s*[,}]')


def _unquoted(text: str) -> str:
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return text.replace('\\"', '"')
    return value if isinstance(value, str) else text


class Relaxed(NamedTuple):
    what: str  # the field dropped (or the toleration added), as logged
    field: str | None  # spec field: topologySpreadConstraints, podAffinity, ...; None: the toleration
    sub: str | None
    key: str | None  # the dropped term's topologyKey / key, when the line has it


def parse(line: str) -> Relaxed | None:
    """The preference Karpenter dropped, if `line` is its relaxing line."""
    m = _LINE.search(line)
    if m is None:
        return None
    rest = line[m.end():]
    reason = _REASON_FIELD.search(rest)
    if reason is not None:
        text = _unquoted(reason.group("reason"))
    elif (quoted := _IN_JSON.match(rest)) is not None:  # the message is a JSON string: up to its closing quote
        text = _unquoted(quoted.group("rest"))
    else:  # a console line: the message ends where its fields object begins
        text = re.split(r"\t\{|\s{2,}\{\s*\"", rest)[0]
    wm = _WHAT.search(text)
    if wm is None:
        return Relaxed("", None, None, None)
    what = wm.group("what").strip()
    km = _KEY.search(what)
    fm = _FIELD.match(what)
    if wm.group("verb") == "adding" or fm is None:
        return Relaxed(f"{wm.group('verb')}: {what}", None, None, km.group("key") if km else None)
    return Relaxed(f"removing: {what}", fm.group("field"), fm.group("sub"), km.group("key") if km else None)


def plain(r: Relaxed) -> str:
    head = ("an earlier try placed it nowhere with all its preferences treated as required, so Karpenter relaxed "
            "one of its soft constraints (a preference, not a requirement) and tried again. ")
    tail = (" This line is not a failure by itself: the pod is usually placed once the preference is gone. If it "
            "still stays Pending, the cause is in the `could not schedule pod` line that follows for it (that one "
            "is computed without the dropped preferences).")
    if not r.what:
        return head + "The line does not say which one (the rest of it was cut off)." + tail
    if r.field is None:
        if "PreferNoSchedule" in r.what:
            return head + ("It added a toleration for PreferNoSchedule taints (it does so when a NodePool's "
                           "template has such a taint): the pod may now go to nodes tainted PreferNoSchedule, as "
                           "that effect allows." + tail)
        return head + f"What it changed: {r.what}." + tail
    said, means = _MEANS.get((r.field, r.sub), (f"spec.{r.field}", "the pod is now scheduled without it"))
    on = f" on {r.key}" if r.key and r.field != "nodeAffinity" else ""
    return head + f"It removed {said}{on} ({r.what}): {means}." + tail
