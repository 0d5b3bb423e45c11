"""The pod a structured log record names, wherever the logger put it:

- `"pod":"ns/name"` (Karpenter v0.3x, zap's sugared fields);
- `"Pod":{"name":"x","namespace":"ns"}` (v1: klog.KObj, whose namespace is left out when empty);
- an event's `involvedObject` of kind Pod;
- `"Pod.name":"x","Pod.namespace":"ns"` (or `pod_name`): the same object flattened by a log shipper (Datadog,
  Loki's json stage, Elasticsearch's dotted fields).
"""

from __future__ import annotations

import re
from typing import Any

_OBJECT = re.compile(r'"(?:Pod|pod)"\s*:\s*\{\s*"name"\s*:\s*"(?P<name>[^"]*)"(?:\s*,\s*"namespace"\s*:\s*"(?P<ns>[^"]*)")?')
_OBJECT_NS_FIRST = re.compile(r'"(?:Pod|pod)"\s*:\s*\{\s*"namespace"\s*:\s*"(?P<ns>[^"]*)"\s*,\s*"name"\s*:\s*"(?P<name>[^"]*)"')
_FLAT_NAME = re.compile(r'"(?:Pod|pod)[._]name"\s*:\s*"(?P<name>[^"]+)"')
_FLAT_NS = re.compile(r'"(?:Pod|pod)[._]namespace"\s*:\s*"(?P<ns>[^"]*)"')


def pod_in_text(text: str) -> dict[str, str] | None:
    """The pod object of a record whose JSON is cut off or pasted apart, as `{"name", "namespace"}`."""
    m = _OBJECT.search(text) or _OBJECT_NS_FIRST.search(text)
    if m is not None:
        return {"name": m.group("name"), "namespace": m.group("ns") or ""}
    if (fm := _FLAT_NAME.search(text)) is not None:
        nm = _FLAT_NS.search(text)
        return {"name": fm.group("name"), "namespace": nm.group("ns") if nm else ""}
    return None


def pod_of(d: dict[str, Any]) -> str | None:
    """`ns/name` (or `name`) of the pod record `d` names, if any."""
    pod = d.get("pod")
    if isinstance(pod, str) and pod:
        return pod
    for key in ("Pod", "pod"):
        name = d.get(f"{key}.name") or d.get(f"{key}_name")
        if isinstance(name, str) and name:
            ns = d.get(f"{key}.namespace") or d.get(f"{key}_namespace")
            return f"{ns}/{name}" if isinstance(ns, str) and ns else name
    for key in ("Pod", "pod", "involvedObject"):
        obj = d.get(key)
        if isinstance(obj, dict) and obj.get("name"):
            if key == "involvedObject" and str(obj.get("kind", "Pod")) != "Pod":
                return None
            ns = obj.get("namespace")
            return f"{ns}/{obj['name']}" if ns else str(obj["name"])
    return None
