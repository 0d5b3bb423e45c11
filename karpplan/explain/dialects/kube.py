"""kube-scheduler's FitError (`0/N nodes are available: ...`), cluster-autoscaler's NotTriggerScaleUp,
Karpenter's Nominated event, and the envelopes they come in (describe Events, get events rows, klog)."""

from __future__ import annotations

import re

from karpplan.explain.dialects import plugin_error
from karpplan.explain.dialects.karpenter import parse_taint
from karpplan.explain.dialects.predicates import FIT_10, FIT_14_HEAD, fit_14_counts, named, old_fit_counts
from karpplan.explain.structure import LIMITS, NODE_FILTER, TAINT, TOPOLOGY, VOLUME, Reason

PLUGIN_TRIGGERS = plugin_error.TRIGGERS  # what the fast path looks for: dialects/plugin_error.py

# the total may be redacted by the one who pasted it (`0/x nodes are available`)
FIT = re.compile(r"(?P<n>\d+)/(?P<m>\d+|[xXnN?]) nodes are available(?::\s*(?P<rest>.*))?", re.S)
SCALE_UP = re.compile(r"pod didn['’]t trigger scale-up(?: \((?P<why>[^)]*)\))?:?\s*(?P<rest>.*)", re.S)
NOMINATED = re.compile(r"Pod should schedule on:? (?P<target>.*)")
# a count may be redacted like the total (`X node(s) had ...`): read as 0, shown as X
_ENTRY_SPLIT = re.compile(r",\s+(?=(?:\d+|[xXnN]) )")
_ENTRY = re.compile(r"^(?P<n>\d+|[xXnN]) (?P<why>.+)$", re.S)
# `had untolerated taint {k: v}` (kube-scheduler 1.23+) and the older `had taint {k: v}, that the pod didn't tolerate`
_UNTOLERATED = re.compile(r"had (?:untolerated )?taint \{(?P<kv>[^}]*)\}?")
# cluster-autoscaler's predicate line prints the node's taints as Go structs
_GO_TAINT = re.compile(r'Taint\{Key:"(?P<key>[^"]*)", Value:"(?P<value>[^"]*)", Effect:"(?P<effect>[^"]*)"')
# `0/N nodes are available` with no node at all: the scheduler's own sentence
# the per-node list pasted without its `0/N nodes are available:` head (`1 Insufficient cpu, 1 node(s) had ...`)
BARE_LIST = re.compile(r"^(?:[^\n\d]*?:\s+)?[\s`'\">]*(?P<rest>\d+ (?:node\(s\) |Insufficient |Too many pods)[^`]*?node\(s\) .*)$", re.S)
# one per-node reason a person quotes without the FitError around it (`node(s) had volume node affinity conflict`)
BARE_REASON = re.compile(r"(?:(?P<n>\d+) )?(?P<why>node\(s\) (?:had volume node affinity conflict|had no available "
                         r"volume zone|exceed max volume count|didn't have free ports for the requested pod ports|"
                         r"didn't find available persistent volumes to bind|"
                         r"had (?:untolerated )?taint \{[^}]*\}(?:, that the pod didn't tolerate)?|had untolerated taint\(s\)|"
                         r"had taints that the pod didn't tolerate|didn't match pod topology spread constraints|"
                         r"were unschedulable))")
# only the preemption half of a FitError pasted: what the pod may not do, not why it does not fit
PREEMPTION_NEVER = re.compile(r"not eligible due to preemptionPolicy=Never")
# kube-scheduler before 1.17 said this alone (no node counts) while a claim waited for its volume
UNBOUND = re.compile(r"pod has unbound (?:immediate )?PersistentVolumeClaims", re.I)
# one per-node shortage quoted alone, without the FitError around it: `Insufficient ephemeral-storage`
LONE_SHORTAGE = re.compile(r"^[\s`'\"]*(?P<why>Insufficient [a-z][\w./-]*|Too many pods)[\s`'\".]*$")
# the PersistentVolume controller's FailedBinding on a claim with no class, in a cluster with no default class
NO_CLASS = re.compile(r"no persistent volumes available for this claim and no storage class is set")
# the PersistentVolume controller's ExternalProvisioning on a claim whose CSI provisioner has not made its volume yet
EXTERNAL = re.compile(r'waiting for a volume to be created,? either by external provisioner \\?"(?P<prov>[^"\\]+)\\?" '
                      r"or manually created by system administrator")
# the scheduler's PreBind: it chose a node and waited for the pod's claims to be provisioned and bound there
PREBIND = re.compile(r'running PreBind plugin \\?"VolumeBinding\\?": binding volumes: [^"\n]*')
PREEMPTION_NEVER_CAUSE = "preemption: not eligible (preemptionPolicy=Never)"
NO_VICTIMS_CAUSE = "preemption: no victims found"
# the preemption sentence's node counts, when some nodes are ones eviction cannot help: `preemption: N not helpful, M no
# victims` (node_filter_wording.preemption_counted words it)
PREEMPTION_COUNTED = "preemption:"
_PREEMPTION_COUNT = re.compile(r"(\d+) (Preemption is not helpful for scheduling|No preemption victims found)")
NO_NODES = re.compile(r"\bno nodes available to schedule pods\b")
_UNTOLERATED_NEW = re.compile(r"had untolerated taint\(s\)")

# `kubectl describe pod` Events rows: Type  Reason  Age  From  Message
DESCRIBE_EVENT = re.compile(
    r"^\s*(?P<type>Normal|Warning)\s+(?P<reason>[A-Za-z]+)\s+(?P<age>(?!\d+/\d+ nodes )\S+(?: \(x\d+ over \S+\))?)\s+"
    r"(?:(?P<source>(?!\d+/\d+ nodes )\S+(?:, \S+)?)\s+)?(?P<msg>\S.*)$")  # older kubectl: no From
# `kubectl get events` rows: [NAMESPACE] LAST SEEN TYPE REASON OBJECT MESSAGE (`kubectl events`: `2m (x3 over 9m)`)
GET_EVENT = re.compile(
    r"^\s*(?:(?P<ns>[a-z0-9][-a-z0-9.]*)\s+)?(?P<age>(?:\d\S*|<\S+>)(?: \(x\d+ over \S+\))?)\s+(?P<type>Normal|Warning)\s+(?P<reason>[A-Za-z]+)\s+"
    r"(?P<object>[A-Za-z]+(?:\.[\w.]+)?/\S+)\s+(?P<msg>\S.*)$")
# the same rows pasted without LAST SEEN (the first column cut, or the header and age dropped): TYPE REASON OBJECT
# MESSAGE - an object (`pod/x`) where a describe row has its Age, which never holds a `/`
GET_EVENT_NO_AGE = re.compile(
    r"^\s*(?:(?![\dsmhdy]+\s)(?P<ns>[a-z0-9][-a-z0-9.]*)\s+)?(?P<type>Normal|Warning)\s+(?P<reason>[A-Za-z]+)\s+"
    r"(?P<object>[A-Za-z]+(?:\.[\w.]+)?/[^\s/]+)\s+(?P<msg>\S.*)$")  # (a namespace, never an age: `2m21s`)
KLOG = re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w.-]+:\d+\] ")
CA_OBJECT = re.compile(r'Kind:"Pod", Namespace:"(?P<ns>[^"]*)", Name:"(?P<name>[^"]*)"')
# klog's `pod="ns/name"`, and the FitError of kube-scheduler before 1.9: `pod (name) failed to fit in any node`
KLOG_POD = re.compile(r'\bpod="(?P<pod>[^"]+)"|\bpod=(?P<bare>[\w.-]+/[\w.-]+)|\bpod \((?P<old>[\w./-]+)\) failed to fit')
# cluster-autoscaler's verbose per-node-group line (scale_up.go / orchestrator.go)
PREDICATE = re.compile(r"(?:Pod (?P<pod>\S+) can't be scheduled on (?P<group>[^,\s]+), )?predicate "
                       r"(?:checking error|failed): (?P<why>.*)$", re.S)  # pasted alone, from `predicate` on
# A FitError's list ends at the first sentence end; what follows (`no new claims to deallocate`, the
# preemption report) is another sentence, not a per-node reason.
_SENTENCE_END = re.compile(r"\.(?:[\s*_`'\"]|$)")  # (a paste's markdown or quotes may close it: `bind.*`)
# per-node reasons that are really about the pod's own constraints, as contract kinds
_TOPOLOGY_WHY = (
    (re.compile(r"affinity/anti-affinity", re.I), "pod affinity"),  # the umbrella: either rule, see UMBRELLA
    (re.compile(r"anti-affinity", re.I), "pod anti-affinity"),
    (re.compile(r"pod affinity|affinity/anti-affinity", re.I), "pod affinity"),
    (re.compile(r"topology spread", re.I), "topology spread"),
)
_VOLUME_WHY = re.compile(r"volume node affinity conflict|persistent ?volumes? to bind|unbound immediate "
                         r"PersistentVolumeClaims|volume zone|max volume count|volume(?:s)? (?:are|is) already|"
                         r"persistentvolumeclaim|enough free storage", re.I)
# `max limit reached` is how cluster-autoscaler before 1.16 said `max node group size reached` (autoscaler#2160)
_GROUP_MAX = re.compile(r"max node group size reached|max limit reached|max (?:cluster|total) (?:cpu|memory|nodes?|cores)",
                        re.I)


def _entries(rest: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for part in _ENTRY_SPLIT.split(rest.strip()):
        # a paste's closing ``` or quote stays off the reason
        m = _ENTRY.match(part.strip().strip("`").rstrip("\"'").rstrip(".").strip())
        if m is not None:
            why = named(m.group("why").strip())
            counts[why] = counts.get(why, 0) + (int(m.group("n")) if m.group("n").isdigit() else 0)
    return counts


def parse_fit_error(message: str) -> list[Reason] | None:
    """kube-scheduler's per-node counts; the preemption tail is dropped. None when not a FitError."""
    if "''" in message:  # quoted in a YAML single-quoted scalar (a pod's status.conditions): `didn''t`
        message = message.replace("''", "'")
    m = FIT.search(message)
    if m is None:
        if (old := old_fit_counts(message)) is not None:  # kube-scheduler 1.8-1.9 names the failed predicates
            return [Reason(NODE_FILTER, message.strip().rstrip(". "), counts=old), *derived(old)]
        if (old := fit_14_counts(message)) is not None:  # 1.2-1.6: a line per node
            return [Reason(NODE_FILTER, message.strip().rstrip(". "), counts=old), *derived(old)]
        if (first := FIT_10.search(message)) is not None:  # 1.0-1.1: one predicate named, the others not
            return [Reason(NODE_FILTER, f"Failed for reason {named(first.group('why'))} and possibly others",
                           counts={}, total=0)]
        if (head := FIT_14_HEAD.search(message)) is not None:  # the event alone, its per-node lines not pasted
            return [Reason(NODE_FILTER, head.group(0), counts={}, total=0)]
        if SCALE_UP.search(message) is None and (bare := BARE_LIST.match(message)) is not None and (listed := _entries(
                _SENTENCE_END.split(bare.group("rest").rstrip("`'\" "), 1)[0])):
            return [Reason(NODE_FILTER, bare.group("rest").rstrip("`'\" ."), counts=listed), *derived(listed)]
        if (SCALE_UP.search(message) is None and "predicate " not in message  # cluster-autoscaler's own lines
                and (alone := BARE_REASON.search(message)) is not None):  # one per-node reason quoted alone
            why = alone.group("why")
            if alone.group("n"):
                return [Reason(NODE_FILTER, alone.group(0), counts={why: int(alone.group("n"))}), *derived({why: 1})]
            return [Reason(NODE_FILTER, why, counts={}, total=0), *derived({why: 1})]
        if (lone := LONE_SHORTAGE.match(message)) is not None:
            return [Reason(NODE_FILTER, lone.group("why"), counts={}, total=0), *derived({lone.group("why"): 1})]
        if (no_class := NO_CLASS.search(message) or EXTERNAL.search(message)) is not None:
            return [Reason(VOLUME, no_class.group(0).replace('\\"', '"'))]
        if (prebind := PREBIND.search(message)) is not None:
            return [Reason(VOLUME, prebind.group(0).replace('\\"', '"'))]
        if SCALE_UP.search(message) is None and (unbound := UNBOUND.search(message)) is not None:
            return [Reason(VOLUME, unbound.group(0))]  # (cluster-autoscaler's own wording of it: parse_scale_up)
        if PREEMPTION_NEVER.search(message) is not None:
            return [Reason(NODE_FILTER, "not eligible due to preemptionPolicy=Never", counts={}, total=0)]
        if NO_NODES.search(message) is not None:  # a cluster with no node the scheduler may use at all
            return [Reason(NODE_FILTER, "no nodes available to schedule pods", counts={}, total=0)]
        if (failed := plugin_error.parse(message)) is not None:  # a plugin's other errors: no verdict on the nodes
            return [failed]
        return None
    before = message[:m.start()].rstrip()
    if before.endswith("preemption:") and (cut := _cut_head(before.removesuffix("preemption:"), m)) is not None:
        return cut  # the paste lost `0/N nodes are available: K` before the reason; the preemption half follows it
    rest, _, preemption = (m.group("rest") or "").partition(" preemption:")
    end = _SENTENCE_END.search(rest)
    if end is not None:
        rest = rest[:end.start()]
    counts = _entries(rest)
    text = (message[m.start():m.start("rest")] + rest) if m.group("rest") is not None else message[m.start():]
    total = int(m.group("m")) if m.group("m").isdigit() else None
    reasons = [Reason(NODE_FILTER, text.rstrip(". "), counts=counts, total=total, cause=preemption_said(preemption))]
    reasons.extend(derived(counts))
    return reasons


def _cut_head(head: str, preemption: re.Match[str]) -> list[Reason] | None:
    """`Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: ...`: the reasons before `preemption:`, whose
    counts the paste cut off (one reason alone held on every node the preemption half counts)."""
    parts = [p.strip().rstrip(".").strip() for p in re.split(r",\s+", head.strip().rstrip(".")) if p.strip()]
    parts = [re.sub(r"^\d+\s+", "", p) for p in parts if p and not p.startswith(("0/", "`"))]
    if not parts or any(len(p) > 120 for p in parts):
        return None
    total = int(preemption.group("m")) if preemption.group("m").isdigit() else None
    counts = {named(p): total if len(parts) == 1 and total else 1 for p in parts}
    text = head.strip().rstrip(".")
    return [Reason(NODE_FILTER, text, counts=counts, total=total,
                   cause=preemption_said(preemption.group("rest") or "")), *derived(counts)]


def preemption_said(tail: str) -> str | None:
    """What the FitError's preemption sentence adds, when it says something about the pod: it may not preempt,
    or nothing it could evict would make room."""
    if PREEMPTION_NEVER.search(tail):
        return PREEMPTION_NEVER_CAUSE
    if re.search(r"No preemption victims found", tail) and not re.search(r"\d+ Preemption is not helpful", tail):
        return NO_VICTIMS_CAUSE
    counts = {why.split()[0]: int(n) for n, why in _PREEMPTION_COUNT.findall(tail)}
    if counts:  # `20 Preemption is not helpful for scheduling, 7 No preemption victims found for incoming pod`
        return f"{PREEMPTION_COUNTED} {counts.get('Preemption', 0)} not helpful, {counts.get('No', 0)} no victims"
    return None


def parse_scale_up(message: str) -> list[Reason] | None:
    m = SCALE_UP.search(message)
    if m is None:
        return None
    counts = _entries(m.group("rest") or "")
    reasons = [Reason(NODE_FILTER, message[m.start():].strip(), counts=counts, cause=m.group("why"))]
    reasons.extend(derived(counts))
    return reasons


# cluster-autoscaler's verbose line for a node group it will not grow (scale_up.go / orchestrator.go)
SKIPPING = re.compile(r"Skipping node group (?P<group>\S+?) - (?P<why>max size reached|not ready for scale-?up|"
                      r"backoff|[^\n]*?max (?:cluster|total)[^\n]*)", re.I)


def parse_skipping(message: str) -> list[Reason] | None:
    """`Skipping node group X - max size reached`: the group is at the max size cluster-autoscaler holds for it."""
    if "Skipping node group" not in message or (m := SKIPPING.search(message)) is None:
        return None
    why = m.group("why").strip()
    text = m.group(0).strip()
    if "max size" in why:
        return [Reason(LIMITS, f"node group {m.group('group')}: max node group size reached ({text})")]
    return [Reason(NODE_FILTER, text, counts={why: 1}, cause=f"node group {m.group('group')}")]


def parse_predicate(message: str) -> tuple[str | None, list[Reason]] | None:
    """cluster-autoscaler's `Pod P can't be scheduled on GROUP, predicate checking error: ...` line."""
    if "predicate " not in message:
        return None
    m = PREDICATE.search(message)
    if m is None:
        return None
    why = m.group("why").strip()
    # `<reason>; predicateName=X; reasons: <r1>, <r2>; debugInfo=...`, or the older `... predicate mismatch, reason: <r>`
    listed = re.search(r"(?:reasons?: |predicateReasons=\[)(?P<r>.*?)\]?\)?(?:; debugInfo=.*)?$", why, re.S)
    parts = [p.strip().rstrip(",;").strip() for p in _split_outside_braces(listed.group("r") if listed else why.split(";", 1)[0])
             if p.strip().rstrip(",;")]
    counts = {named(p): 1 for p in parts} if parts else {why: 1}  # a predicate's name (1.1x) with what it means
    text = message[m.start():].split("; debugInfo=", 1)[0].strip()
    # CA 1.0-1.2: `Scale-up predicate failed: X predicate mismatch, cannot put ns/pod on template-node-for-GROUP-123`
    template = re.search(r"on template-node-for-(?P<g>\S+?)-\d+(?:,|\s|$)", why)
    group = m.group("group") or (template.group("g") if template else "(the pasted line does not name it)")
    reasons = [Reason(NODE_FILTER, text, counts=counts, cause=f"node group {group}")]
    reasons.extend(derived(counts))
    put = re.search(r"cannot put (?P<pod>\S+) on ", why)  # CA 1.0-1.2 names the pod there, not in a prefix
    return m.group("pod") or (put.group("pod") if put else None), reasons


def _split_outside_braces(text: str) -> list[str]:
    """`a, b{x, y}, c` -> [a, b{x, y}, c]: a reason list split at its commas, never inside a printed Go struct."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{(":
            depth += 1
        elif ch in "})":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0 and text[i + 1:i + 2] == " ":
            parts.append(text[start:i])
            start = i + 2
    parts.append(text[start:])
    return parts


# kube-scheduler before 1.20 printed `didn't match pod affinity/anti-affinity` beside the rule that failed
UMBRELLA = re.compile(r"didn't match pod affinity/anti-affinity", re.I)
_SPECIFIC_AFFINITY = re.compile(r"pod (?:anti-)?affinity rules|existing pods anti-affinity", re.I)


def derived(counts: dict[str, int]) -> list[Reason]:
    """The typed reasons a per-node count list holds: taints, topology, volumes, node groups at their max."""
    out = _taints(counts)
    specific = any(_SPECIFIC_AFFINITY.search(why) for why in counts)
    for why in counts:
        if specific and UMBRELLA.search(why):
            continue  # the same nodes as the specific rule beside it, not a second reason
        if _VOLUME_WHY.search(why):
            out.append(Reason(VOLUME, why))
        elif _GROUP_MAX.search(why):
            out.append(Reason(LIMITS, why))
        else:
            for pattern, constraint in _TOPOLOGY_WHY:
                if pattern.search(why):
                    out.append(Reason(TOPOLOGY, why, constraint=constraint))
                    break
    return out


def _taints(counts: dict[str, int]) -> list[Reason]:
    out: list[Reason] = []
    for why in counts:
        t = _UNTOLERATED.search(why)
        if t is not None:
            key, _, value = t.group("kv").partition(":")
            out.append(Reason(TAINT, why, key=key.strip(), value=value.strip() or None))
        elif (gs := _GO_TAINT.findall(why)):
            for key, value, effect in dict.fromkeys(gs):
                out.append(Reason(TAINT, f"{key}={value}:{effect}", key=key, value=value or None, effect=effect or None))
        elif "taint" in why and (t2 := re.search(r"taint \{?([^}\s]+)\}?", why)) is not None and not _UNTOLERATED_NEW.search(why):
            key, value, effect = parse_taint(t2.group(1))
            out.append(Reason(TAINT, why, key=key, value=value or None, effect=effect or None))
    return out
