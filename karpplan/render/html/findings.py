"""Lint findings and unschedulable pods in the report: what to fix, where (file:line), and how."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from karpplan.render.html.page import esc, section, signed_hourly, table

MAX_PODS_SHOWN = 5  # per row of unschedulable pods; the rest are counted
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def where(item: Mapping[str, Any]) -> str:
    """`apps/web.yaml:23` (the template named by Helm's `# Source:` beside it when there is one)."""
    file = item.get("file")
    if not file:
        return ""
    line = item.get("line")
    text = f"{file}:{line}" if line else str(file)
    source = item.get("source")
    return f"{text} ({source})" if source else text


def findings_table(findings: Sequence[Mapping[str, Any]], caption: str = "") -> str:
    ordered = sorted(findings, key=lambda f: (SEVERITY_ORDER.get(str(f.get("severity")), 3),
                                              str(f.get("file")), int(f.get("line") or 0)))
    rows = []
    for f in ordered:
        severity = str(f.get("severity") or "")
        fix = f.get("fix")
        message = esc(f.get("message")) + (f'<div class="muted">Fix: {esc(fix)}</div>' if fix else "")
        rows.append([
            f'<span class="sev-{esc(severity)}">{esc(severity)}</span>',
            f'<span class="mono">{esc(f.get("rule"))}</span> <span class="muted">{esc(f.get("code"))}</span>',
            f'<span class="mono">{esc(where(f))}</span>', esc(f.get("object")), message,
        ])
    return table(["Severity", "Rule", "Where", "Object", "Finding"], rows, caption=caption, css="findings")


def lint_section(lint: Mapping[str, Any] | None, note: str = "") -> str:
    """`<section id="lint">` from a LintReport document; `note` says why there is none when `lint` is None."""
    if lint is None:
        return section("lint", "Lint findings", f'<p class="muted">{esc(note or "Lint was not run.")}</p>')
    raw = lint.get("summary")
    summary: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    findings = [f for f in lint.get("findings") or [] if isinstance(f, Mapping)]
    counts = (f'{summary.get("error", 0)} error(s), {summary.get("warning", 0)} warning(s), '
              f'{summary.get("info", 0)} info, in {summary.get("objects", 0)} object(s) of '
              f'{summary.get("files", 0)} file(s)')
    body = f'<p data-lint-findings="{len(findings)}">{esc(counts)}.</p>'
    if findings:
        body += findings_table(findings)
    else:
        body += '<p class="ok">No findings.</p>'
    skipped = [s for s in summary.get("skipped") or [] if isinstance(s, Mapping)]
    if skipped:
        items = "".join(
            f'<li><span class="mono">{esc(s.get("rule"))}</span>'
            f'{" on " + esc(s.get("object")) if s.get("object") else ""}: {esc(s.get("reason"))}</li>'
            for s in skipped)
        body += f'<details><summary>{len(skipped)} rule(s) could not judge this input</summary><ul>{items}</ul></details>'
    return section("lint", "Lint findings", body)


def _fix(fix: Mapping[str, Any]) -> str:
    place = where(fix)
    delta = fix.get("hourlyCostDelta")
    text = esc(fix.get("action"))
    if place:
        text += f' <span class="mono muted">({esc(place)})</span>'
    if delta is not None:
        text += f" <span>cost {esc(signed_hourly(delta))}</span>"
    return f"<li>{text}</li>"


def _groups(items: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Pods of one workload that cannot be placed for the same reasons, with the same fixes, in plan order."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for item in items:
        key = json.dumps([item.get("workload"), item.get("reasons"), item.get("fixes")], sort_keys=True, default=str)
        groups.setdefault(key, []).append(item)
    return list(groups.values())


def _pods_cell(group: Sequence[Mapping[str, Any]]) -> str:
    names = [str(item.get("pod")) for item in group]
    shown = "".join(f'<div class="mono">{esc(name)}</div>' for name in names[:MAX_PODS_SHOWN])
    hidden = len(names) - MAX_PODS_SHOWN
    more = f'<div class="muted">+{hidden} more, {len(names)} pods in all</div>' if hidden > 0 else ""
    return shown + more


def unschedulable_section(items: Sequence[Mapping[str, Any]]) -> str:
    """Unschedulable pods, those of one workload with the same reasons and fixes in one row."""
    if not items:
        return section("unschedulable", "Unschedulable pods", '<p class="ok">Every pending pod is placed.</p>')
    rows = []
    for group in _groups(items):
        item = group[0]
        reasons = "".join(f"<li>{esc(r)}</li>" for r in item.get("reasons") or [])
        fixes = "".join(_fix(f) for f in item.get("fixes") or [] if isinstance(f, Mapping))
        rows.append([
            _pods_cell(group), esc(item.get("workload")),
            f'<ul class="reasons">{reasons}</ul>' if reasons else '<span class="muted">no reason given</span>',
            f'<ul class="fixes">{fixes}</ul>' if fixes else '<span class="muted">none found</span>',
        ])
    return section("unschedulable", f"Unschedulable pods ({len(items)})",
                   table(["Pods", "Workload", "Why", "Fixes (smallest first)"], rows, css="unschedulable"))


__all__ = ["findings_table", "lint_section", "unschedulable_section", "where"]
