"""`diff -o html`: a PlanDiff document (issue 28) as one self-contained page.

Base and head side by side with the deltas, the workloads and pools that changed, pods HEAD leaves
unschedulable that BASE placed, and lint findings HEAD adds or fixes. Like `render_html` it reads only the
JSON document, so a saved `diff -o json` renders the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karpplan.render.html.findings import findings_table, where
from karpplan.render.html.page import esc, hourly, monthly, number, page, section, signed_hourly, table

DASH = "\u2014"
CHANGE_ORDER = {"added": 0, "changed": 1, "removed": 2, "unchanged": 3}


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _rows(value: object) -> list[Mapping[str, Any]]:
    return [row for row in value if isinstance(row, Mapping)] if isinstance(value, list) else []


def _signed_count(value: object) -> str:
    amount = number(value)
    if amount is None:
        return DASH
    return f"{int(amount):+d}" if amount else "0"


def _signed_monthly(value: object) -> str:
    amount = number(value)
    if amount is None:
        return DASH
    if round(amount, 2) == 0:
        return "$0.00/month"
    return ("+" if amount > 0 else "-") + monthly(abs(amount))


def _headline(delta: Mapping[str, Any]) -> str:
    amount = number(delta.get("monthlyCost")) or 0.0
    css = "bad" if amount > 0.005 else "ok" if amount < -0.005 else "muted"
    word = "more" if amount > 0.005 else "less" if amount < -0.005 else "no change"
    text = (f"{_signed_monthly(amount)} ({signed_hourly(delta.get('hourlyCost'))}): HEAD costs {word}"
            if word != "no change" else "No cost change between BASE and HEAD.")
    return f'<p class="{css}" data-total="deltaMonthlyCost"><strong>{esc(text)}</strong></p>'


def _sides(document: Mapping[str, Any]) -> str:
    base = _mapping(document.get("base"))
    head = _mapping(document.get("head"))
    delta = _mapping(document.get("delta"))
    rows = [
        ["Cost per hour", esc(hourly(base.get("hourlyCost"))), esc(hourly(head.get("hourlyCost"))),
         esc(signed_hourly(delta.get("hourlyCost")))],
        ["Cost per month", esc(monthly(base.get("monthlyCost"))), esc(monthly(head.get("monthlyCost"))),
         esc(_signed_monthly(delta.get("monthlyCost")))],
        ["New nodes", esc(base.get("newNodes", DASH)), esc(head.get("newNodes", DASH)),
         esc(_signed_count(delta.get("newNodes")))],
        ["Pods", esc(base.get("pods", DASH)), esc(head.get("pods", DASH)), ""],
        ["Unschedulable", esc(base.get("unschedulable", DASH)), esc(head.get("unschedulable", DASH)),
         esc(_signed_count(delta.get("unschedulable")))],
    ]
    return _headline(delta) + table(["", "BASE", "HEAD", "Delta"], rows, numeric=(1, 2, 3), css="sides")


def _workloads(rows: Sequence[Mapping[str, Any]]) -> str:
    changed = [r for r in rows if r.get("change") != "unchanged"]
    same = len(rows) - len(changed)
    if not changed:
        return (f'<p class="muted">No workload changed ({same} unchanged).</p>' if rows
                else '<p class="muted">No workloads.</p>')
    ordered = sorted(changed, key=lambda r: (CHANGE_ORDER.get(str(r.get("change")), 4),
                                             -abs(number(r.get("hourlyCostDelta")) or 0.0), str(r.get("workload"))))
    body = table(
        ["Workload", "Change", "BASE", "HEAD", "Delta", "Where"],
        ([f'<span class="mono">{esc(r.get("workload"))}</span>',
          f'<span class="change-{esc(r.get("change"))}">{esc(r.get("change"))}</span>',
          esc(hourly(r.get("hourlyCostBase"))), esc(hourly(r.get("hourlyCostHead"))),
          esc(signed_hourly(r.get("hourlyCostDelta"))), f'<span class="mono">{esc(where(r))}</span>']
         for r in ordered),
        numeric=(2, 3, 4),
    )
    if same:
        body += f'<p class="muted">and {same} unchanged workload(s).</p>'
    return body


def _cell(key: str, value: object) -> str:
    if "cost" in key.lower() and number(value) is not None:
        return esc(signed_hourly(value) if key.lower().endswith("delta") else hourly(value))
    if isinstance(value, (list, tuple)):
        return esc(", ".join(str(v) for v in value))
    if isinstance(value, Mapping):
        return esc(", ".join(f"{k}: {v}" for k, v in value.items()))
    return esc(DASH if value is None else value)


def _pools(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return '<p class="muted">No NodePools.</p>'
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k not in ("name", "change") and k not in keys)
    return table(
        ["NodePool", "Change", *keys],
        ([esc(r.get("name")), f'<span class="change-{esc(r.get("change"))}">{esc(r.get("change"))}</span>',
          *(_cell(k, r.get(k)) for k in keys)] for r in rows),
    )


def _unschedulable(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return '<p class="ok">HEAD leaves no pod unschedulable that BASE placed.</p>'
    return table(["Pod", "Why"], (
        [f'<span class="mono">{esc(r.get("pod"))}</span>',
         '<ul class="reasons">' + "".join(f"<li>{esc(x)}</li>" for x in r.get("reasons") or []) + "</ul>"]
        for r in rows))


def _lint(lint: Mapping[str, Any]) -> str:
    new = _rows(lint.get("new"))
    fixed = _rows(lint.get("fixed"))
    parts = [findings_table(new, f"New in HEAD ({len(new)})") if new else '<p class="ok">No new findings.</p>']
    if fixed:
        parts.append(findings_table(fixed, f"Fixed by HEAD ({len(fixed)})"))
    return "".join(parts)


def render_diff_html(document: Mapping[str, Any], *, title: str = "karpplan diff") -> str:
    """The PlanDiff `document` as one HTML page."""
    engine = document.get("engine")
    newly = _rows(document.get("newlyUnschedulable"))
    header = (f"<header><h1>{esc(title)}</h1><p class=\"muted\">BASE against HEAD"
              f"{', planned with the ' + esc(engine) + ' engine' if engine else ''}.</p></header>")
    body = "".join([
        header,
        section("sides", "BASE and HEAD", _sides(document)),
        section("workloads", "Workloads", _workloads(_rows(document.get("workloads")))),
        section("pools", "NodePools", _pools(_rows(document.get("pools")))),
        section("newly-unschedulable", f"Newly unschedulable pods ({len(newly)})", _unschedulable(newly)),
        section("lint", "Lint findings", _lint(_mapping(document.get("lint")))),
    ])
    delta = _mapping(document.get("delta"))
    return page(f"{title}: {_signed_monthly(delta.get('monthlyCost'))}", body)


__all__ = ["render_diff_html"]
