"""One record in, what it says out: the envelope (JSON, console, klog, describe Events, get events rows,
bare fragments) is peeled, then the message goes to its dialect's grammar."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from itertools import accumulate, compress, count, repeat
from operator import add, itemgetter
from typing import Any

from karpplan.explain.cut_clause import cut_off
from karpplan.explain.describe_pod import DESCRIBE_START, START_FIELDS, DescribeReader
from karpplan.explain.dialects import (
    admission,
    azure,
    ca_filtered,
    claim_rejected,
    disruption,
    fargate,
    interruption,
    kube,
    launch,
    multi_attach,
    nodeclass,
    not_for_karpenter,
    pod_network,
    relaxed,
    scale_down,
    scale_up_failures,
    volume_topology,
)
from karpplan.explain.dialects import karpenter as K
from karpplan.explain.envelope import (
    FIELD,
    WRAPPERS,
    error_text,
    is_record,
    json_objects,
    node_of,
    source_of,
    string_at,
    time_of,
    tolerant_fields,
)
from karpplan.explain.record_pod import pod_of
from karpplan.explain.restricted_parse import refused_object
from karpplan.explain.structure import (
    CLUSTER_AUTOSCALER,
    EXCLUDED_TYPES,
    KARPENTER,
    KUBE_SCHEDULER,
    LIMITS,
    MIN_VALUES,
    NO_INSTANCE_TYPE,
    NODE_FILTER,
    REQUIREMENT_CONFLICT,
    TAINT,
    UNSUPPORTED,
    VOLUME,
    DescribedPod,
    Parsed,
    PoolReasons,
    Reason,
)
from karpplan.explain.wording import capital, reason_plain, with_plain

# Anything worth a full parse contains one of these (bytes, for the fast path over huge logs).
TRIGGER_WORDS = (b"schedule pod", b"compute packing", b"nodes are available", b"fit in any node", b"fit failure", b"no nodes available", b"scale-up", b"incompatible", b"did not tolerate",
                 b"no instance type", b"should schedule on", b"topology constraint", b"limits", b"excluded because",
                 b"does not have known values", b"registering host port usage", b"minValues", b"not supported", b"filtered out all", b'"error"',
                 b"Name:", b"Namespace:", *START_FIELDS, b"lastTransitionTime:", b"lastProbeTime:", b"Events:", b"Type  ", b"----  ", b"LAST SEEN", b"nodepools found", b"provisioners found", b"exceeds node resources",
                 b"Fargate", b"predicate ", b"Skipping node group", b"unbound", b"Failed for reason", b"account is currently blocked", b"is restricted", b"Ignoring pod", b"node(s) had", b"node(s) didn't", b"node(s) exceed",
                 b"preemptionPolicy=Never", b"reserved offering", b"Pod provisioning timed out",
                 # node-class errors (a pool that resolves no instance types): dialects/nodeclass.py
                 b"resolving node class", b"unable to resolve instance types", b"NodeClassNotReady",
                 b"ignoring nodepool, not ready", b"nodeclass not ready", b"node class not ready",
                 b"no resolved instance types", b"NodeClass not found on cluster", b"awaiting reconciliation", b"binding volumes",
                 b"no storage class is set", b"Insufficient ", b"waiting for a volume to be created",
                 # EC2 launch failures of a NodeClaim: dialects/launch.py
                 *(t.encode() for t in launch.TRIGGERS), *(t.encode() for t in scale_up_failures.TRIGGERS),
                 *(t.encode() for t in azure.TRIGGERS),  # Azure's refusals of a NodeClaim: dialects/azure.py
                 *(t.encode() for t in azure.MARKERS),  # a paste on Azure (the parser remembers it)
                 # the API server refusing a NodeClaim, the kubelet refusing a bound pod: claim_rejected.py, admission.py
                 *(t.encode() for t in claim_rejected.TRIGGERS), *(t.encode() for t in admission.TRIGGERS),
                 *(t.encode() for t in multi_attach.TRIGGERS), *(t.encode() for t in pod_network.TRIGGERS), pod_network.UNSUPPORTED_TYPE.encode(),  # bound pods
                 *(t.encode() for t in scale_down.TRIGGERS), *(t.encode() for t in ca_filtered.TRIGGERS), *(t.encode() for t in volume_topology.TRIGGERS),
                 *(t.encode() for t in relaxed.TRIGGERS), *(t.encode() for t in not_for_karpenter.TRIGGERS),
                 *(t.encode() for t in kube.PLUGIN_TRIGGERS),  # a kube-scheduler plugin's error
                 # why a node is not consolidated or disrupted, and disruptions under way: dialects/disruption.py
                 *(t.encode() for t in disruption.TRIGGERS), *(t.encode() for t in interruption.TRIGGERS))


_ANY_TRIGGER_WORD = re.compile(b"|".join(re.escape(word) for word in TRIGGER_WORDS))
# the trigger words of a grammar's own message: a `kubectl describe` line holding one is parsed, not taken as context
# (a NodeClaim's condition Message under Conditions:, a pod's Message: under Status:)
_FRAMING = {b"Name:", b"Namespace:", *START_FIELDS, b"lastTransitionTime:", b"lastProbeTime:", b"Events:", b"Type  ",
            b"----  ", b"LAST SEEN", *(t.encode() for t in azure.MARKERS)}
_MESSAGE_WORD = re.compile(b"|".join(re.escape(word) for word in TRIGGER_WORDS if word not in _FRAMING))


def any_trigger_word(line: bytes) -> bool:
    """Whether one of TRIGGER_WORDS is in `line` (one regex search for them all: the pure-Python way)."""
    return _ANY_TRIGGER_WORD.search(line) is not None


def any_trigger_lines(lines: list[bytes]) -> list[int]:
    """The lines (ascending indexes) one of TRIGGER_WORDS is in (the regex, mapped in C)."""
    return list(compress(count(), map(_ANY_TRIGGER_WORD.search, lines)))


def _trigger_tests() -> tuple[Callable[[bytes], bool], Callable[[list[bytes]], list[int]]]:
    """`any_trigger_word` and `any_trigger_lines`, by an Aho-Corasick automaton (ahocorasick-rs, 4x faster than
    the regex over a log's lines) when that wheel is installed, else by the regex: a missing wheel never breaks
    explain."""
    try:  # local: an optional native wheel, with the regex as the fallback
        from ahocorasick_rs import MATCHKIND_LEFTMOST_FIRST, BytesAhoCorasick
    except ImportError:  # pragma: no cover - the wheel is a dependency; this is the fallback
        return any_trigger_word, any_trigger_lines
    find = BytesAhoCorasick(list(TRIGGER_WORDS), matchkind=MATCHKIND_LEFTMOST_FIRST).find_matches_as_indexes

    def native(line: bytes) -> bool:
        return bool(find(line))

    def native_lines(lines: list[bytes]) -> list[int]:
        # one search over the whole block (no trigger word holds a line end), each match's start placed among
        # the lines' ends: all in C
        ends = list(map(add, accumulate(map(len, lines)), count()))
        return list(dict.fromkeys(map(bisect_right, repeat(ends), map(itemgetter(1), find(b"\n".join(lines))))))

    return native, native_lines


worth_parsing, trigger_lines = _trigger_tests()
"""A cheap test that a line may hold something the grammars read (one of TRIGGER_WORDS in it), and the lines
of a block it passes."""


TRIGGER = re.compile(
    rb"schedule pod|nodes are available|no nodes available|scale-up|incompatible with|did not tolerate|no instance type|"
    rb"should schedule on|topology constraint|incompatible requirements|exceed(?:s)? (?:provisioner )?limits|"
    rb"limits have been exhausted|excluded because|does not have known values|minValues|not supported|"
    rb"filtered out all|\"error\"|^Name:|^Namespace:|Fargate|Pod provisioning timed out|waiting for a volume to be created|predicate |Ignoring pod|node\(s\) had|node\(s\) didn't|node\(s\) exceed|preemptionPolicy=Never|resolving node class|"
    rb"unable to resolve instance types|NodeClassNotReady|awaiting reconciliation|ignoring nodepool, not ready|no resolved instance types|"
    + b"|".join(re.escape(t.encode()) for t in (*launch.TRIGGERS, *azure.TRIGGERS, *scale_up_failures.TRIGGERS, *claim_rejected.TRIGGERS)))
_ERROR_FIELD = re.compile(r'"error(?:Causes)?"\s*:\s*(?:\[\s*\{\s*"error"\s*:\s*)?\\?"?\s*$')
_KARPENTER_ANCHOR = re.compile(
    r"(?:Could not|could not|Failed to|Unable to) schedule pod\b|Failed to compute packing, pod|incompatible with (?:nodepool|provisioner)\b|"
    r"compatible with nodepool \"|did not tolerate |no instance type |unsatisfiable topology constraint|"
    r"incompatible requirements|all available instance types exceed|node limits have been exhausted|"
    r"label \"[^\"]*\" does not have known values|pod didn['’]t schedule because NodePool|"
    r"incompatible volume requirements|[Nn]ode[Pp]ool requirements filtered out|satisfying updated nodeclaim|"
    r"one or more instance types with compatible reserved|pod has Dynamic Resource Allocation requirements|"
    r"\d+ out of \d+ instance types were excluded|Ignoring pod, pod anti-affinity is not supported|"
    r"Ignoring pod, label \S+ is restricted|invariant violated registering host port usage|"
    r"no (?:dynamic )?(?:nodepools|provisioners) found")
_QUOTED_LINES = re.compile(r"(?m)^(?:>[ \t]?)+")
_BOX_BORDER = re.compile(r"(?m)^[ \t]*[\u2502\u2503][ \t]?|(?:[ \t]*[\u2502\u2503])+[ \t]*$")  # a row's empty columns too
_MD_LINK = re.compile(r"\[([^\]\[]+)\]\(https?://[^)\s]*\)")
_RESTRICTED = re.compile(r"Ignoring pod, label (?P<key>\S+) is restricted")  # v0.1x, before scheduling
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_DESCRIBE_NAME = re.compile(r"^Name:\s+(\S+)\s*$")
_DESCRIBE_NS = re.compile(r"^Namespace:\s+(\S+)\s*$")


@lru_cache(maxsize=8192)
def _karpenter(text: str) -> tuple[str | None, tuple[PoolReasons, ...], tuple[Reason, ...], tuple[str, ...], str | None]:
    pod, pools, bare, unparsed, hint = K.parse_error(text)
    worded = with_plain(Parsed(KARPENTER, "", "", pools=tuple(pools), reasons=tuple(bare)))
    return pod, worded.pools, worded.reasons, tuple(unparsed), hint


@lru_cache(maxsize=4096)
def _kube(message: str) -> tuple[str, str, tuple[Reason, ...]] | None:
    if kube.FIT.search(message) is None and (m := kube.SCALE_UP.search(message)) is not None and m.start() > 0:
        # parse_scale_up reads from its match on (and no FitError comes first): the same answer for the text from
        # there, which repeats where a klog line's head (time, pod) does not
        return _kube(message[m.start():])
    reasons = kube.parse_fit_error(message)
    if reasons is not None:
        reasons = [replace(r, truncated=True) if r.kind == TAINT and cut_off(r.text) else r for r in reasons]
        return KUBE_SCHEDULER, "FailedScheduling", with_plain(Parsed(KUBE_SCHEDULER, "", "", reasons=tuple(reasons))).reasons
    reasons = kube.parse_scale_up(message)
    if reasons is not None:
        return CLUSTER_AUTOSCALER, "NotTriggerScaleUp", with_plain(
            Parsed(CLUSTER_AUTOSCALER, "", "", reasons=tuple(reasons))).reasons
    reasons = fargate.parse(message)
    if reasons is not None:
        return fargate.SOURCE, "FailedScheduling", with_plain(Parsed(fargate.SOURCE, "", "", reasons=tuple(reasons))).reasons
    return None


def classify(message: str, *, pod: str | None = None, time: str | None = None, source: str | None = None,
             event: str | None = None, json_message: str | None = None, age: str | None = None,
             reporter: str | None = None, node: str | None = None) -> Parsed | None:
    """A message (the text of an error, event or log line) as what it says, or None. `age` and `reporter` are
    an event row's Age (`18s (x6 over 10m)`) and the component that reported it; a kube-scheduler reporter is
    the scheduler that rejected the pod (default-scheduler, or the pod's own spec.schedulerName).

    A log repeats a few messages for many pods: what a message says is worked out once (`_classified`, which
    leaves the pod and time out) and each record gets a copy with its own pod and time."""
    found = _classified(message, source, event, json_message)
    if found is None:
        return None
    template, pod_from_message = found
    parsed: Parsed = object.__new__(Parsed)  # a copy of the frozen template, cheaper than dataclasses.replace
    parsed.__dict__.update(template.__dict__)
    parsed.__dict__["pod"] = (pod or template.pod) if pod_from_message else pod
    parsed.__dict__["time"] = time
    if template.event in disruption.EVENTS:  # the record's object is a node (`kubectl describe node`), not a pod
        parsed.__dict__["pod"] = None
        # the node it is about: the record's object (`node`), else those a `disrupting ...` log line names
        parsed.__dict__["nodes"] = (node,) if node else (interruption.nodes(message) if template.event == interruption.EVENT
                                                         else disruption.nodes_in(message))
    if age is not None:
        parsed.__dict__["age"] = age
    if reporter is not None and template.source == KUBE_SCHEDULER:
        parsed.__dict__["scheduler"] = reporter
    return parsed


@lru_cache(maxsize=4096)
def _classified(message: str, source: str | None, event: str | None,
                json_message: str | None) -> tuple[Parsed, bool] | None:
    """What `message` says, without a time and with the pod it names itself, if any, and whether that pod only
    stands in for a missing one (`pod or named`; else the record's own pod, even None, is the one)."""
    return _classify(message, source=source, event=event, json_message=json_message)


def _node_event(message: str, event: str | None) -> Parsed | None:
    """A message about a node, not a pod: EC2 taking its instance (dialects/interruption.py), or Karpenter keeping or
    removing it (dialects/disruption.py)."""
    if interruption.mentioned(message) and (interrupted := interruption.key(message, None, event)) is not None:
        return Parsed(KARPENTER, interruption.EVENT, interrupted)
    if (event in disruption.EVENTS or disruption.mentioned(message)) and (
            disrupted := disruption.parse(message, event)) is not None:
        return Parsed(KARPENTER, disrupted[0], disrupted[1])
    return None


def _classify(message: str, *, source: str | None, event: str | None,
              json_message: str | None) -> tuple[Parsed, bool] | None:
    message = message.strip()
    if not message:
        return None
    if (node_event := _node_event(message, event)) is not None:
        return node_event, False  # a node's, not a pod's: classify drops the pod
    if source != KARPENTER:
        kube_result = _kube(message)
        if kube_result is not None:
            src, ev, reasons = kube_result
            return Parsed(src, event or ev, message, reasons=reasons), False
        if (verbose := _autoscaler_line(message, event)) is not None:
            return verbose, True
    if (refused := refused_object(message, event)) is not None:
        return refused, False
    if any(t in message for t in claim_rejected.TRIGGERS) and (rejected := claim_rejected.parse_all(message)):
        reasons = tuple(Reason(MIN_VALUES if r.rule == "min-values" else UNSUPPORTED, r.text, value=r.claim,
                               cause=f"claim rejected: {r.rule}", plain=capital(claim_rejected.plain(r, tuple(rejected[:i]))))
                        for i, r in enumerate(rejected))
        return Parsed(KARPENTER, event or "Log", message, reasons=reasons), False
    nm = kube.NOMINATED.search(message)
    if nm is not None:
        return Parsed(KARPENTER, "Nominated", message, nominated=nm.group("target").strip()), False
    am = _KARPENTER_ANCHOR.match(message) or _KARPENTER_ANCHOR.search(message)
    if am is None:
        return None
    text = message[am.start():]
    if "\\\"" in text:
        text = text.replace('\\"', '"')
    if text.startswith("Ignoring pod, pod anti-affinity is not supported"):
        reason = Reason(UNSUPPORTED, "pod anti-affinity is not supported")
        reason = replace(reason, plain=reason_plain(reason))
        return Parsed(KARPENTER, event or "Log", message, dialect=K.V06, reasons=(reason,)), False
    if (rm := _RESTRICTED.match(text)) is not None:
        reason = Reason(UNSUPPORTED, text.removeprefix("Ignoring pod, ").strip(), key=rm.group("key"),
                        cause="restricted label")
        reason = replace(reason, plain=reason_plain(reason, dialect=K.V016))
        return Parsed(KARPENTER, event or "Log", message, dialect=K.V016, reasons=(reason,)), False
    env_pod, pools, bare, unparsed, hint = _karpenter(text)
    if not pools and not bare:
        return None
    if hint is None and bare and not pools and not any(r.kind in (LIMITS, EXCLUDED_TYPES) for r in bare) and (
            _ERROR_FIELD.search(message, 0, am.start()) is not None or json_message in ("could not schedule pod", "")):
        hint = K.V15  # a bare reason as v1's error value: before v1.5 each one began with its NodePool
    dialect = hint
    if json_message is not None and hint != K.V06:
        if json_message.startswith("Could not schedule pod"):
            dialect = hint if hint in (K.V016, K.V05) else K.V032
        elif json_message.lower().startswith("could not schedule pod") and hint in (K.V032, None):
            dialect = K.V10
    elif text.startswith("Could not schedule pod") and hint not in (K.V016, K.V06, K.V05):
        dialect = K.V032
    if all(r.kind == EXCLUDED_TYPES for r in bare) and not pools:
        dialect = K.V016 if hint == K.V016 else None
    if bare and dialect in (K.V05, K.V06, K.V016):  # bare reasons name Provisioner fields in these dialects
        bare = with_plain(Parsed(KARPENTER, "", "", dialect=dialect, reasons=bare)).reasons
    return Parsed(KARPENTER, event or ("FailedScheduling" if pools or bare else "Log"), message, dialect=dialect,
                  pod=env_pod, pools=pools, reasons=bare, unparsed=unparsed), True


def _autoscaler_line(message: str, event: str | None) -> Parsed | None:
    """cluster-autoscaler's verbose log lines about one node group: skipped at its max size, or its template node
    failing a predicate, or a scale-up the group refused or that could not be computed."""
    if (failed := scale_up_failures.parse(message)) is not None:
        return Parsed(CLUSTER_AUTOSCALER, event or "FailedToScaleUpGroup", message, reasons=tuple(failed))
    if (skipped := kube.parse_skipping(message)) is not None:
        worded = with_plain(Parsed(CLUSTER_AUTOSCALER, "", "", reasons=tuple(skipped))).reasons
        return Parsed(CLUSTER_AUTOSCALER, event or "NotTriggerScaleUp", message, reasons=worded)
    predicate = kube.parse_predicate(message)
    if predicate is None:
        return None
    named, found = predicate
    worded = with_plain(Parsed(CLUSTER_AUTOSCALER, "", "", reasons=tuple(found))).reasons
    return Parsed(CLUSTER_AUTOSCALER, event or "NotTriggerScaleUp", message, pod=named, reasons=worded)


def _node_class(e: nodeclass.NodeClassError, text: str) -> Parsed:
    """A NodePool whose node class is missing or not ready: a pool's error, no pod's (related.py words the
    'exceed limits' of its pods as the side effect)."""
    reason = Reason(NO_INSTANCE_TYPE, e.text, cause=e.state, node_pool=e.pool, plain=capital(nodeclass.plain(e)))
    tm = TIMESTAMP.search(text)
    return Parsed(KARPENTER, "Log", e.text, time=tm.group(0) if tm else None, reasons=(reason,))


def _launch_failed(e: launch.LaunchError | azure.AzureError, text: str, said: str | None = None) -> Parsed:
    """EC2 (or Azure) would not start a NodeClaim's instance: a launch's error, no pod's."""
    said = said or (launch.plain(e) if isinstance(e, launch.LaunchError) else azure.plain(e))
    reason = Reason(NO_INSTANCE_TYPE, e.text, cause=e.cause, plain=said)
    tm = TIMESTAMP.search(text)
    return Parsed(KARPENTER, "Log", e.text, time=tm.group(0) if tm else None, reasons=(reason,))


class RecordParser:
    """Parses records in order, remembering the pod a `kubectl describe pod` is about."""

    def __init__(self, node_taints: list[str] | None = None) -> None:
        self.describe_name: str | None = None
        self.describe_ns: str | None = None
        self.describe = DescribeReader(node_taints)  # the fields of a `kubectl describe pod` being read (describe_pod.py)
        self.on_azure = False  # the paste showed Karpenter's Azure provider (a NodeClaim's labels, AKSNodeClass)
        self.state: tuple[str | None, str | None, DescribedPod | None, bool] = (None, None, None, False)
        """What the parser remembers from earlier records (a line's answer depends on it)."""

    def _keep_state(self) -> None:
        self.state = (self.describe_name, self.describe_ns, self.describe.described, self.on_azure)

    def describe_line(self, text: str) -> bool:
        """Whether `text` is a line of the `kubectl describe` being read, other than its name, namespace and events
        (taken as context: its fields are kept for the answer)."""
        reader = self.describe
        if text[:1] == ">":  # quoted in an issue or e-mail, or shown in a k9s box: the describe inside
            text = _QUOTED_LINES.sub("", text)
        if "\u2502" in text or "\u2503" in text:
            text = _BOX_BORDER.sub("", text)
        data = text.encode()
        if not reader.active and DESCRIBE_START.match(data) is not None:
            reader.start(text)  # a paste cut above its Name: line
        if not reader.active or text.lstrip().startswith(("Name:", "Namespace:")) and text[:1] not in " \t":
            return False
        if _MESSAGE_WORD.search(data) is not None:
            return False  # a message a grammar reads (parse decides; a field it is not stays unrecognised)
        if not self.on_azure and any(m in text for m in azure.MARKERS):
            self.on_azure = True  # a NodeClaim's labels or node class, described
            self._keep_state()
        if not reader.line(text):
            return False
        if reader.described is not self.state[2]:
            self._keep_state()
        return True

    def _describe_pod(self) -> str | None:
        if self.describe_name is None:
            return None
        return f"{self.describe_ns}/{self.describe_name}" if self.describe_ns else self.describe_name

    def _record_pod(self, text: str) -> str | None:
        """The pod a record names (record_pod.py: JSON or a console line's fields), else the described pod's."""
        if "{" in text or '"pod' in text.lower():
            value, _, _ = json_objects(text)
            record = value if isinstance(value, dict) else tolerant_fields(text)
            for wrapper in WRAPPERS:
                inner = record.get(wrapper)
                if isinstance(inner, str) and inner.lstrip().startswith("{"):
                    inner_value, _, _ = json_objects(inner)
                    record = inner_value if isinstance(inner_value, dict) else tolerant_fields(inner)
                    break
            if (pod := pod_of(record)) is not None:
                return pod
        return self._describe_pod()

    def _bound_pod(self, text: str) -> Parsed | None:
        """A scheduled pod its node will not start: the kubelet's admission refusal, its CNI without an address, a
        volume attached elsewhere (cli-contract has no kubelet or controller-manager source: kube-scheduler's)."""
        if any(t in text for t in admission.TRIGGERS) and (ad := admission.parse(text)) is not None:
            reason = Reason(UNSUPPORTED, ad.text, key=ad.resource, cause=admission.CAUSE,
                            plain=capital(admission.plain(ad)))
            return Parsed(KUBE_SCHEDULER, "Rejected", ad.text, pod=ad.pod or self._record_pod(text), reasons=(reason,))
        if any(t in text for t in pod_network.TRIGGERS) and (na := pod_network.parse(text)) is not None:
            reason = Reason(UNSUPPORTED, na.text, key=na.plugin, cause=pod_network.CAUSE, plain=capital(pod_network.plain(na)))
            return Parsed(KUBE_SCHEDULER, "FailedCreatePodSandBox", na.text, pod=self._record_pod(text), reasons=(reason,))
        if pod_network.UNSUPPORTED_TYPE in text and (it := pod_network.unsupported_type(text)) is not None:
            reason = Reason(UNSUPPORTED, it, key="vpc.amazonaws.com/pod-eni", cause=pod_network.TYPE_CAUSE,
                            plain=pod_network.unsupported_plain(it))
            return Parsed(KUBE_SCHEDULER, "Unsupported", text.strip(), reasons=(reason,))
        if multi_attach.TRIGGERS[0] in text and (ma := multi_attach.parse(text)) is not None:  # contract: no KCM source
            reason = Reason(VOLUME, ma.text, key=ma.volume, cause=multi_attach.CAUSE, plain=capital(multi_attach.plain(ma)))
            return Parsed(KUBE_SCHEDULER, "FailedAttachVolume", ma.text, pod=ma.pod or self._record_pod(text), reasons=(reason,))
        return None

    def parse(self, text: str) -> list[Parsed]:
        if text[:1] == ">":  # a quoted paste (GitHub, e-mail): each line's `> ` marks
            text = _QUOTED_LINES.sub("", text)
        if "](http" in text:  # GitHub turned a label key into a link: `[nvidia.com/gpu](http://nvidia.com/gpu)`
            text = _MD_LINK.sub(r"\g<1>", text)
        if "\u2502" in text or "\u2503" in text:  # k9s' box: `│   Warning  FailedScheduling ...   │`
            text = _BOX_BORDER.sub("", text)
        if not self.on_azure and any(m in text for m in azure.MARKERS):
            self.on_azure = True
            self._keep_state()
        first = text.lstrip()
        if first.startswith(("Name:", "Namespace:")):
            if (m := _DESCRIBE_NAME.match(first)) is not None:
                self.describe_name, self.describe_ns = m.group(1), None
                self.describe.start(text)
            elif (m := _DESCRIBE_NS.match(first)) is not None:
                self.describe_ns = m.group(1)
            self._keep_state()
            return []
        if any(t in text for t in nodeclass.TRIGGERS) and (e := nodeclass.parse(text)) is not None:
            return [_node_class(e, text)]  # the whole record: the pool and the cause may stand in other fields
        if any(t in text for t in azure.TRIGGERS) and (ae := azure.parse(text)) is not None:
            return [_launch_failed(ae, text)]  # before EC2's: `creating instance` is both providers' word
        if any(t in text for t in launch.TRIGGERS) and (le := launch.parse(text)) is not None:
            if le.cause == launch.NOT_JOINED and self.on_azure:  # the same words from Karpenter's Azure provider
                return [_launch_failed(le, text, azure.NOT_JOINED)]
            return [_launch_failed(le, text)]
        if ca_filtered.TRIGGERS[0] in text and (skipped := ca_filtered.parse(text)) is not None:
            reason = Reason(NODE_FILTER, skipped.node or "same controller", cause=ca_filtered.CAUSE,
                            plain=capital(ca_filtered.plain(skipped)))
            return [Parsed(CLUSTER_AUTOSCALER, "ScaleUp", reason.text, pod=skipped.pod, reasons=(reason,))]
        if any(t in text for t in scale_down.TRIGGERS) and (kept := scale_down.parse(text)) is not None:
            reason = Reason(NODE_FILTER, kept.why, counts={kept.why: 1}, cause=scale_down.CAUSE,
                            plain=capital(scale_down.plain(kept)))
            return [Parsed(CLUSTER_AUTOSCALER, "ScaleDown", kept.why, pod=kept.pod, reasons=(reason,))]
        if any(t in text for t in volume_topology.TRIGGERS) and (pin := volume_topology.parse(text)) is not None:
            reason = Reason(VOLUME, pin.text, key=pin.key, cause=volume_topology.CAUSE,
                            plain=capital(volume_topology.plain(pin)))
            return [Parsed(KARPENTER, "Log", pin.text, pod=self._record_pod(text), reasons=(reason,))]
        if any(t in text for t in relaxed.TRIGGERS) and (relax := relaxed.parse(text)) is not None:
            reason = Reason(relaxed.KINDS.get(relax.field or "", TAINT), relax.what or "relaxing soft constraints",
                            key=relax.key, cause=relaxed.CAUSE, plain=capital(relaxed.plain(relax)))
            tm = TIMESTAMP.search(text)
            return [Parsed(KARPENTER, "Relaxed", relax.what, pod=self._record_pod(text), time=tm.group(0) if tm else None,
                           reasons=(reason,))]
        if (avoided := not_for_karpenter.parse(text)) is not None:
            reason = Reason(REQUIREMENT_CONFLICT, f"{avoided} DoesNotExist", key=avoided, cause=not_for_karpenter.CAUSE,
                            plain=not_for_karpenter.plain(avoided))
            return [Parsed(KARPENTER, "Ignored", reason.text, pod=self._record_pod(text), reasons=(reason,))]
        if (bound := self._bound_pod(text)) is not None:
            return [bound]
        if '{""' in text:  # CSV export (CloudWatch, spreadsheets): quotes doubled
            text = text.replace('""', '"')
        if "{" in text or '"error"' in text or '"message"' in text:
            parsed = self._parse_json(text)
            if parsed is not None:
                return parsed
        return self._parse_text(text)

    def _parse_text(self, text: str) -> list[Parsed]:
        line = text.strip()
        m = kube.GET_EVENT_NO_AGE.match(line) if "/" in line[:200] else None
        if m is not None:
            return self._get_event(m)
        m = kube.DESCRIBE_EVENT.match(line)
        if m is not None:
            component = m.group("source")
            result = classify(m.group("msg"), pod=self._describe_pod(),
                              source=source_of(component) if component else None,
                              event=m.group("reason"), age=m.group("age"), reporter=component,
                              node=self.describe_name if self.describe_ns is None else None)  # describe node
            if result is not None and self.describe.described is not None:
                result = replace(result, described=self.describe.described)
            return [result] if result else []
        m = kube.GET_EVENT.match(line)
        if m is not None:
            return self._get_event(m)
        pod = None
        if (cm := kube.CA_OBJECT.search(line)) is not None:
            pod = f"{cm.group('ns')}/{cm.group('name')}" if cm.group("ns") else cm.group("name")
        elif (km := kube.KLOG_POD.search(line)) is not None:
            pod = km.group("pod") or km.group("bare") or km.group("old")
        tm = TIMESTAMP.search(line[:64])
        message = line
        if line.startswith('"') and line.endswith('"') and len(line) > 1:
            message = string_at(line, 1)
        result = classify(message, pod=pod, time=tm.group(0) if tm else None)
        return [result] if result else []

    @staticmethod
    def _get_event(m: re.Match[str]) -> list[Parsed]:
        """A `kubectl get events` row: its object is the pod (or node) the message is about."""
        ns = m.groupdict().get("ns")
        kind, _, name = m.group("object").partition("/")
        pod = (f"{ns}/{name}" if ns else name) if kind.lower() == "pod" else None
        result = classify(m.group("msg"), pod=pod, event=m.group("reason"), age=m.groupdict().get("age"),
                          node=name if kind.lower() == "node" else None)
        return [result] if result else []

    def _parse_json(self, text: str) -> list[Parsed] | None:
        value, start, end = json_objects(text)
        if isinstance(value, list):
            out: list[Parsed] = []
            for entry in value:
                if isinstance(entry, dict):
                    out.extend(self._from_dict(entry))
            return out
        if isinstance(value, dict) and is_record(value):
            if "items" in value and isinstance(value["items"], list):
                items: list[Parsed] = []
                for entry in value["items"]:
                    if isinstance(entry, dict):
                        items.extend(self._from_dict(entry))
                return items
            return self._from_dict(value)
        if isinstance(value, dict):
            # console line: message, then a trailing fields object
            head = text[:start]
            pod = pod_of(value)
            tm = TIMESTAMP.search(head[:64])
            if interruption.mentioned(head) and (interrupted := interruption.key(head, value)) is not None:
                return [Parsed(KARPENTER, interruption.EVENT, interrupted, time=tm.group(0) if tm else None,
                               nodes=interruption.nodes(head, value))]
            result = classify(head, pod=pod, time=tm.group(0) if tm else None)
            return [result] if result else []
        if FIELD.search(text) is not None:
            fields = tolerant_fields(text)
            if fields.get("message") or fields.get("msg") or fields.get("error"):
                return self._from_dict(fields)
        return None

    def _from_dict(self, d: dict[str, Any]) -> list[Parsed]:
        for wrapper in WRAPPERS:
            inner = d.get(wrapper)
            if isinstance(inner, str) and not any(k in d for k in ("message", "msg", "error")):
                return self.parse(inner)
            if isinstance(inner, dict) and is_record(inner):
                return self._from_dict(inner)
        message = d.get("message") or d.get("msg") or d.get("eventMessage") or ""  # eventMessage: Datadog's events
        message = message if isinstance(message, str) else str(message)
        error = error_text(d)
        pod = pod_of(d)
        time = time_of(d)
        if interruption.mentioned(message) and (interrupted := interruption.key(
                message, d, d.get("reason") if isinstance(d.get("reason"), str) else None)) is not None:
            return [Parsed(KARPENTER, interruption.EVENT, interrupted, time=time,
                           nodes=interruption.nodes(message, d) or tuple(filter(None, [node_of(d)])))]
        if (disrupting := disruption.from_fields(message, d)) is not None:  # v1.x: reason, decision beside it
            return [Parsed(KARPENTER, disruption.DISRUPTING, disrupting, time=time,
                           nodes=disruption.nodes_of_fields(d) or disruption.nodes_in(message))]
        source = None
        src = d.get("source")
        if isinstance(src, dict) and src.get("component"):
            source = source_of(str(src["component"]))
        elif d.get("reportingComponent"):
            source = source_of(str(d["reportingComponent"]))
        event = d.get("reason") if isinstance(d.get("reason"), str) and "involvedObject" in d else None
        text = error or message
        if error and message and not message.lower().startswith("could not schedule pod"):
            text = message + ("; " + error if _KARPENTER_ANCHOR.search(error) else "")
        # json_message "": the record is a bare "error" value (an errorCauses entry), which says v1.x
        result = classify(text, pod=pod, time=time, source=source, event=event,
                          json_message=message or ("" if error else None), node=node_of(d))
        if result is None and error and message:
            result = classify(message, pod=pod, time=time, source=source, event=event)
        return [result] if result else []
