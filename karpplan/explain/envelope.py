"""A record's envelope: the fields of a JSON log record (whole, cut off or pasted apart), the record a wrapper
(fluent-bit, Loki, journald, CloudWatch, GCP) holds, and who reported it. parse.py reads the message inside."""

from __future__ import annotations

import json
import re
from typing import Any

from karpplan.explain.record_pod import pod_in_text
from karpplan.explain.structure import CLUSTER_AUTOSCALER, KARPENTER, KUBE_SCHEDULER

FIELD = re.compile(r'"(?P<name>message|msg|error|pod|time|ts|level|logger)"\s*:\s*"')
_MAX_DECODE_TRIES = 8


def string_at(text: str, start: int) -> str:
    """A JSON string's value from just after its opening quote, tolerating a cut-off end."""
    i = start
    escaped = False
    while i < len(text):
        ch = text[i]
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            break
        i += 1
    raw = text[start:i]
    try:
        value = json.loads('"' + raw.rstrip("\\") + '"')
        return value if isinstance(value, str) else raw
    except ValueError:
        return raw.replace('\\"', '"').replace("\\\\", "\\")


def tolerant_fields(text: str) -> dict[str, Any]:
    """The fields a cut-off or pasted-apart JSON object still holds."""
    fields: dict[str, Any] = {}
    for m in FIELD.finditer(text):
        fields.setdefault(m.group("name"), string_at(text, m.end()))
    if (pod := pod_in_text(text)) is not None:
        fields["Pod"] = pod
    return fields


_DECODER = json.JSONDecoder()


def json_objects(text: str) -> tuple[dict[str, Any] | list[Any] | None, int, int]:
    """The first JSON document holding a log record (or the trailing fields object), with its span."""
    decoder = _DECODER
    trailing: tuple[dict[str, Any] | list[Any] | None, int, int] = (None, -1, -1)
    pos = text.find("{")
    if text.lstrip().startswith("["):
        pos = text.find("[")
    tries = 0
    while pos != -1 and tries < _MAX_DECODE_TRIES:
        tries += 1
        try:
            value, end = decoder.raw_decode(text, pos)
        except ValueError:
            pos = text.find('{"', pos + 1)
            continue
        if isinstance(value, dict) and set(value) == {"error"} and text.rfind('"errorCauses"', 0, pos) != -1:
            # one errorCauses entry of a record cut off after it: the record's own fields say more (its
            # "error" joins every cause, and its pod), so they are read from the cut text instead
            pos = text.find('{"', end)
            continue
        if isinstance(value, list) or (isinstance(value, dict) and is_record(value)):
            return value, pos, end
        if isinstance(value, dict) and not text[end:].strip():
            if text[:pos].rstrip().endswith(("=", "resources")):  # `resources={...}` ends the message itself
                break
            trailing = (value, pos, end)
            break
        pos = text.find('{"', end if isinstance(value, dict) and end > pos else pos + 1)
    return trailing


WRAPPERS = ("log", "line", "MESSAGE", "@message", "textPayload")  # fluent-bit, Loki JSON, journald, CloudWatch, GCP


def is_record(d: dict[str, Any]) -> bool:
    return any(k in d for k in ("message", "msg", "error", "errorCauses", "items", "involvedObject", *WRAPPERS))


def node_of(d: dict[str, Any]) -> str | None:
    """The node an event is about (`involvedObject` of kind Node)."""
    obj = d.get("involvedObject")
    if isinstance(obj, dict) and obj.get("kind") == "Node" and isinstance(obj.get("name"), str):
        return str(obj["name"])
    return None


def time_of(d: dict[str, Any]) -> str | None:
    for key in ("time", "ts", "timestamp", "lastTimestamp", "eventTime", "firstTimestamp"):
        value = d.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, (int, float)) and key == "ts":
            return str(value)
    return None


def error_text(d: dict[str, Any]) -> str:
    error = d.get("error")
    if isinstance(error, str) and error:
        return error
    causes = d.get("errorCauses")
    if isinstance(causes, list):
        return "; ".join(str(c.get("error")) for c in causes if isinstance(c, dict) and c.get("error"))
    return ""


def source_of(component: str) -> str | None:
    c = component.lower()
    if "autoscaler" in c:
        return CLUSTER_AUTOSCALER
    if "scheduler" in c:
        return KUBE_SCHEDULER
    if "karpenter" in c:
        return KARPENTER
    return None
