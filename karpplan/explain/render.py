"""Renderers of an Explanation: json / yaml (the versioned document) and a rich table grouped by pod."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from karpplan.explain.report import Explanation
from karpplan.explain.structure import Item, PoolReasons, Reason, signed_hourly
from karpplan.render.documents import render_document

KIND_STYLE = {
    "taint": "magenta", "requirement-conflict": "yellow", "unknown-label": "bright_yellow",
    "no-instance-type": "cyan", "limits": "red", "excluded-types": "red", "topology": "blue",
    "volume": "green", "min-values": "bright_cyan", "unsupported": "bright_red", "node-filter": "white",
}


def render_text(explanation: Explanation, fmt: str) -> str:
    return render_document(explanation.to_document(), fmt)


class _Encoded(str):
    """JSON text already encoded at its level, written as it is."""


class _SharedText:
    """The JSON text of the pools and reasons items share (a log's thousands of items repeat a handful of
    them, one object each: report.Explanation._share), encoded once per object."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[object, _Encoded]] = {}

    def of(self, obj: PoolReasons | Reason, level: int) -> _Encoded:
        known = self._texts.get(id(obj))
        if known is None or known[0] is not obj:
            known = self._texts[id(obj)] = (obj, _Encoded(json_text(obj.to_document(), level)))
        return known[1]


def _item_json(item: Item, shared: _SharedText) -> str:
    """`json_text(item.to_document(), 2)`, its pools and reasons from `shared`."""
    doc = item.to_document()
    doc["nodePools"] = [shared.of(pool, 4) for pool in item.parsed.pools]
    doc["reasons"] = [shared.of(r, 4) for r in item.parsed.reasons]
    return json_text(doc, 2)


def _encode_json(value: Any, level: int, out: list[str]) -> None:
    """`value` as `json.dumps(indent=2, ensure_ascii=False)` writes it nested `level` deep, appended to `out`.

    The same text as `render_document` (NaN and infinities as null, mappings and sequences of any kind), three
    times faster than the standard library's indenting encoder, which is pure Python: a 1 GB log's 25,000
    items took seconds to write."""
    if isinstance(value, str):
        out.append(value if type(value) is _Encoded else encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(float.__repr__(value) if math.isfinite(value) else "null")
    elif isinstance(value, Mapping):
        if not value:
            out.append("{}")
            return
        inner = "\n" + "  " * (level + 1)
        sep = "{" + inner
        for key, item in value.items():
            out.append(sep + encode_basestring(str(key)) + ": ")
            _encode_json(item, level + 1, out)
            sep = "," + inner
        out.append("\n" + "  " * level + "}")
    elif isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        if not value:
            out.append("[]")
            return
        inner = "\n" + "  " * (level + 1)
        sep = "[" + inner
        for item in value:
            out.append(sep)
            _encode_json(item, level + 1, out)
            sep = "," + inner
        out.append("\n" + "  " * level + "]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def json_text(value: Any, level: int = 0) -> str:
    """`render_document(value, "json")` without its final newline, nested `level` deep (two spaces a level)."""
    out: list[str] = []
    _encode_json(value, level, out)
    return "".join(out)


def write_document(explanation: Explanation, fmt: str, out: IO[str]) -> None:
    """The same text as `render_text`, written item by item: the whole document is never built at once,
    so memory stays that of the items, whatever the size of their wording."""
    header = render_document(explanation.header(), fmt)
    items = explanation.item_list()
    if fmt == "json":
        out.write(header[:-len("\n}\n")] + ',\n  "items": ' + ("[" if items else "[]"))
        shared = _SharedText()
        for n, item in enumerate(items):
            out.write(("," if n else "") + "\n    " + _item_json(item, shared))
        if items:
            out.write("\n  ]")
        out.write(",\n" + render_document({"unrecognised": explanation.unrecognised_document()}, "json")[len("{\n"):-len("\n}\n")])
        if explanation.notes:
            out.write(",\n" + render_document({"notes": list(explanation.notes)}, "json")[len("{\n"):-len("\n}\n")])
        out.write("\n}\n")
        return
    if fmt != "yaml":
        raise ValueError(f"unknown document format {fmt!r}")
    out.write(header)
    if not items:
        out.write("items: []\n")
    for n, item in enumerate(items):
        text = render_document({"items": [item.to_document()]}, "yaml")
        out.write(text if n == 0 else text[len("items:\n"):])
    out.write(render_document({"unrecognised": explanation.unrecognised_document()}, "yaml"))
    if explanation.notes:
        out.write(render_document({"notes": list(explanation.notes)}, "yaml"))


def _rows(item: Item) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    for pool in item.parsed.pools:
        for r in pool.reasons:
            rows.append((pool.name, r.kind, r.key or "", r.plain))
    for r in item.parsed.reasons:
        rows.append((r.node_pool or "", r.kind, r.key or "", r.plain))
    if not rows:  # an event with no reasons (a node's: disruption, interruption): its node(s) in the key column
        rows.append(("", item.parsed.event, ", ".join(item.nodes[:2]) + (", ..." if len(item.nodes) > 2 else ""),
                     item.plain))
    return rows


def _plural(count: object, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render_table(explanation: Explanation, console: Console) -> None:
    items = explanation.item_list()
    by_pod: dict[str, list[Item]] = {}
    shown: set[str] = set()  # nodes whose simulation is printed in full (several items may name one node)
    for item in items:
        by_pod.setdefault(item.parsed.pod or "(no pod named in the log)", []).append(item)
    for pod, pod_items in by_pod.items():
        table = Table(title=Text(pod, style="bold"), title_justify="left", show_lines=False, expand=False)
        table.add_column("line", justify="right", no_wrap=True)
        table.add_column("source", no_wrap=True)
        table.add_column("pool", no_wrap=True)
        table.add_column("reason", no_wrap=True)
        table.add_column("key")
        seen: set[tuple[str, str, str]] = set()
        for item in pod_items:
            lines = f"{item.line}" + (f" (x{item.count})" if item.count > 1 else "")
            source = item.parsed.source + (f" {item.parsed.dialect}" if item.parsed.dialect else "")
            for pool, kind, key, _ in _rows(item):
                if (pool, kind, key) in seen and (item.parsed.pools or item.parsed.reasons):
                    continue  # a reason another item of the pod gave (an event of its own is a row each time)
                seen.add((pool, kind, key))
                # Text, never markup: pool names and keys are quoted from the log as written.
                table.add_row(Text(lines), Text(source), Text(pool), Text(kind, style=KIND_STYLE.get(kind, "")),
                              Text(key))
                lines, source = "", ""
        console.print(table)
        for item in pod_items:
            console.print(Text(item.plain), soft_wrap=False)
            for fix in item.fixes:
                delta = signed_hourly(fix.hourly_cost_delta)
                console.print(Text(f"  fix: {fix.action} ({fix.file}:{fix.line}, {delta})", style="green"))
            for note in item.fix_notes:
                console.print(Text(f"  note: {note}", style="dim"))
            for simulated in item.simulations:
                for line in simulated.lines(again=simulated.node in shown):
                    console.print(Text(f"  {line}", style="cyan"), soft_wrap=False)
                shown.add(simulated.node)
        console.print()
    s = explanation.summary()
    pods = s["pods"]
    told = f"{_plural(s['items'], 'item')}" + (f" for {_plural(pods, 'pod')}" if pods else " (no pod named)")
    framing = f", {s['context']} read as context (kubectl describe fields, headers)" if s.get("context") else ""
    console.print(Text(f"{s['lines']} lines: {s['explained']} explained, {s['unrecognised']} unrecognised{framing}; "
                       f"{told}", style="dim"))
    listed = explanation.unrecognised_lines
    if listed:
        first = ", ".join(explanation.unrecognised_spans()[:8]) + (", ..." if len(listed) > 8 else "")
        console.print(Text(f"unrecognised lines: {first} (-o json lists them). explain reads Karpenter controller lines "
                           "and events, kube-scheduler FailedScheduling, cluster-autoscaler NotTriggerScaleUp and "
                           "fargate-scheduler events; other lines (INFO logs, blank lines, headers) are skipped.",
                           style="dim"))
