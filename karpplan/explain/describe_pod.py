"""A whole `kubectl describe pod` read as one record: its fields frame the Events' FailedScheduling rows.

kubectl's describe (k8s.io/kubectl/pkg/describe, describePod) prints the pod's fields at the left margin
(`Labels:`, `Node-Selectors:`, `Tolerations:`, `Topology Spread Constraints:`, ...; a field with several values
continues on indented lines), its containers indented below `Containers:` (each container's `Requests:` block two
levels deeper), then `Events:`. Those lines are context, never unrecognised noise; the fields a scheduling failure
turns on are kept (`DescribedPod`) and make its answer concrete: what the pod requests, its node selector, which
of its tolerations falls short of the taint.
"""

from __future__ import annotations

import re

from karpplan.explain.structure import NODE_FILTER, TAINT, TOPOLOGY, DescribedPod, Reason

# a field at the describe's margin: words of letters joined by spaces or hyphens, a colon ("I0815 10:22:06" is not)
_FIELD = re.compile(r"^(?P<name>[A-Z][A-Za-z]*(?:[ -][A-Za-z]+)*):(?:\s+(?P<value>.*))?$")
_SUB = re.compile(r"^(?P<name>[\w./-]+):\s*(?P<value>.*)$")
_MULTI = ("Labels", "Node-Selectors", "Tolerations", "Topology Spread Constraints", "Taints")
_TOLERATION = re.compile(r"^(?P<key>[^=:\s]*)(?:=(?P<value>[^:\s]*))?(?::(?P<effect>\w+))?(?:\s+op=(?P<op>\w+))?")
# fields only `kubectl describe pod` prints: a paste cut above its `Name:` line is still read from one of them on
START_FIELDS = (b"Node-Selectors:", b"Tolerations:", b"QoS Class:", b"Topology Spread Constraints:", b"Conditions:",
                b"Volumes:", b"Containers:", b"Init Containers:", b"Controlled By:", b"Priority Class Name:",
                b"Service Account:", b"Taints:")
# (at a line's start, after any `> ` quoting or a k9s box border)
DESCRIBE_START = re.compile(rb"(?:[\s>]|\xe2\x94[\x82\x83])*(?:" + b"|".join(re.escape(f) for f in START_FIELDS)
                            + rb")(?:\s|$)")
_EVENT_ROW = re.compile(r"(?:Warning|Normal)\s{2,}\S")  # an Events row, even without its Events: header
MAX_VALUES = 20  # values kept per field (a pod's labels can be many)


class DescribeReader:
    """Reads the lines of one `kubectl describe` after its `Name:` line (`start`), until a line no describe prints."""

    def __init__(self, taints: list[str] | None = None) -> None:
        self.active = False
        # every described node's Taints in the paste (`kubectl describe node`), kept in the caller's list
        self.taints: list[str] = [] if taints is None else taints
        self._margin = 0
        self._reset()

    def _reset(self) -> None:
        self._field: str | None = None
        self._container: str | None = None
        self._in_requests = False
        self._values: dict[str, list[str]] = {name: [] for name in (*_MULTI, "Requests")}
        self._seen: list[str] = []
        self.described: DescribedPod | None = None

    def start(self, line: str) -> None:
        self.active = True
        self._margin = len(line) - len(line.lstrip())
        self._reset()

    def stop(self) -> None:
        self.active = False

    def line(self, raw: str) -> bool:
        """Whether `raw` is a line of the describe being read (taken as context); the fields kept are updated."""
        if not self.active:
            return False
        text = raw.rstrip()
        if not text.strip():
            return True
        indent = len(text) - len(text.lstrip())
        body = text.strip()
        if indent <= self._margin:
            m = _FIELD.match(body)
            if m is None:
                self.active = False
                return False
            self._field = m.group("name")
            self._container = None
            self._in_requests = False
            value = (m.group("value") or "").strip()
            if self._field not in self._seen:
                self._seen.append(self._field)
                self._add(self._field, "<none>")  # the field was shown (kept in `seen`)
            if self._field in _MULTI and value:
                self._add(self._field, value)
            return True
        if self._field in (None, "Events") or _EVENT_ROW.match(body):
            return False  # the event rows and their header: the parser's (and report's) to read
        if self._field in _MULTI:
            self._add(self._field, body)
        elif self._field in ("Containers", "Init Containers"):
            self._container_line(indent - self._margin, body)
        return True

    def _container_line(self, depth: int, body: str) -> None:
        if depth <= 2 and body.endswith(":"):
            self._container, self._in_requests = body[:-1], False
        elif depth <= 4:
            self._in_requests = body == "Requests:"
        elif self._in_requests and (m := _SUB.match(body)) is not None:
            kind = "init container" if self._field == "Init Containers" else "container"
            self._add("Requests", f"{m.group('name')} {m.group('value')} ({kind} {self._container})")

    def _add(self, field: str, value: str) -> None:
        if field == "Taints" and value != "<none>" and value not in self.taints and len(self.taints) < MAX_VALUES:
            self.taints.append(value)
        values = self._values.get(field, [])
        if value != "<none>" and len(values) < MAX_VALUES:
            values.append(value)
        v = self._values
        self.described = DescribedPod(tuple(v["Requests"]), tuple(v["Node-Selectors"]), tuple(v["Tolerations"]),
                                      tuple(v["Topology Spread Constraints"]), tuple(v["Labels"]), tuple(self._seen))


def _tolerates(toleration: str, key: str | None, value: str | None) -> bool:
    m = _TOLERATION.match(toleration)
    if m is None:
        return False
    if not m.group("key"):
        return m.group("op") == "Exists"  # an empty key with Exists tolerates every taint
    if m.group("key") != key:
        return False
    if m.group("op") is None and m.group("value") is None:
        return True  # kubectl before op= was printed: a bare key is an Exists toleration (or Equal "")
    return m.group("op") == "Exists" or (m.group("value") or "") == (value or "")


def _taint_sentence(d: DescribedPod, r: Reason) -> str | None:
    if r.key is None or any(_tolerates(t, r.key, r.value) for t in d.tolerations):
        return None
    taint = r.key + (f"={r.value}" if r.value else "")
    same_key = [t for t in d.tolerations if t.split("=")[0].split(":")[0].split(" ")[0] == r.key]
    if same_key:
        return (f"The pod's Tolerations name {r.key} but not the taint's value ({'; '.join(same_key)} against {taint}): "
                "its toleration needs value " + (r.value or '""') + " (operator Equal) or operator Exists.")
    listed = "; ".join(d.tolerations) if d.tolerations else "none"
    return (f"The pod's Tolerations (kubectl describe pod) are {listed}: none tolerates {taint}, which is the "
            "toleration missing.")


_TAINT = re.compile(r"^(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?(?::(?P<effect>\w+))?$")
_UNNAMED = ("untolerated taint(s)", "taints that the pod didn't tolerate")


def node_taints_sentence(taints: list[str], d: DescribedPod | None, reasons: tuple[Reason, ...]) -> str | None:
    """The taints a pasted `kubectl describe node` shows, for a message that names none (untolerated taint(s))."""
    if not taints or not any(r.kind == NODE_FILTER and any(u in t for t in (r.counts or {}) for u in _UNNAMED)
                             for r in reasons):
        return None
    untolerated = [t for t in taints if (m := _TAINT.match(t)) is not None and not (
        d is not None and any(_tolerates(x, m.group("key"), m.group("value")) for x in d.tolerations))]
    if not untolerated:
        return None
    return ("The pasted node description shows the taints: " + ", ".join(untolerated) + " - the ones the pod "
            "would need a toleration of (key, value and effect as shown) to run on those nodes; add it only if the pod "
            "belongs there, else it needs nodes without them.")


def _counted(r: Reason, *words: str) -> bool:
    return r.kind == NODE_FILTER and any(w in text for text in (r.counts or {}) for w in words)


def context_sentences(d: DescribedPod | None, reasons: tuple[Reason, ...]) -> list[str]:
    """What the described pod's own fields add to the reasons: the concrete values each reason is about."""
    if d is None:
        return []
    out: list[str] = []
    for r in reasons:
        if r.kind == TAINT and "Tolerations" in d.seen and (said := _taint_sentence(d, r)) is not None:
            out.append(said)
    if "Node-Selectors" in d.seen and any(_counted(r, "node affinity", "node selector", "MatchNodeSelector")
                                          for r in reasons):
        if d.node_selectors:
            out.append("The pod's Node-Selectors are " + ", ".join(d.node_selectors) + ": a node must carry every "
                       "one of these labels with exactly that value (kubectl get nodes -L with each key shows "
                       "which do), and its required node affinity, which describe does not print, must hold too.")
        else:
            out.append("The pod's Node-Selectors are <none>, so the mismatch is its required node affinity "
                       "(spec.affinity.nodeAffinity; kubectl get pod -o yaml shows it, describe does not).")
    if "Containers" in d.seen and any(_counted(r, "Insufficient") for r in reasons):
        init = any("(init container" in r for r in d.requests)
        out.append("The pod requests " + (", ".join(d.requests) if d.requests else "nothing explicitly (no "
                   "Requests under its containers)") + "; a node fits only with at least that much unrequested" + (
                   " (the containers' sum, or an init container's own requests where they are larger: init "
                   "containers run one at a time)." if init else "."))
    if any(r.kind == TOPOLOGY and r.constraint == "topology spread" for r in reasons) and d.spread:
        soft = all("ScheduleAnyway" in s for s in d.spread)
        out.append("The pod's Topology Spread Constraints are " + "; ".join(d.spread) + "." + (
            " All of them are ScheduleAnyway, by which kube-scheduler only scores nodes, never filters one out; "
            "Karpenter honours them at first and relaxes them only when it cannot, so its verdict on them is not "
            "final either."
            if soft else " Only the DoNotSchedule ones filter nodes; ScheduleAnyway ones only score them."))
    return out
