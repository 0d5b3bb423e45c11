"""The pieces every HTML report is made of: escaping, the page shell, tables, numbers and SVG bars.

Every string that came from the user's input (pod, node, workload names, reasons, file names) goes
through `esc` before it is written; markup is only ever written by this package. The page loads nothing:
its stylesheet is inline and its charts are inline SVG, so it opens the same offline, attached to an
e-mail or from a CI artifact.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from karpplan import __version__
from karpplan.render.formatting import format_hourly, format_monthly, format_percent
from karpplan.render.html.style import STYLESHEET

BAR_WIDTH = 96
BAR_HEIGHT = 10


def esc(value: object) -> str:
    """`value` as text safe in element content and in quoted attribute values."""
    return html.escape("" if value is None else str(value), quote=True)


def number(value: object) -> float | None:
    """A finite JSON number, else None (null, missing, a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def hourly(value: object) -> str:
    """`$0.1876/h`, or an em dash for an unknown amount."""
    amount = number(value)
    return "\u2014" if amount is None else f"{format_hourly(amount)}/h"


def monthly(value: object) -> str:
    amount = number(value)
    return "\u2014" if amount is None else f"{format_monthly(amount)}/month"


def signed_hourly(value: object) -> str:
    """`+$0.0960/h`, `-$0.0120/h`, `$0.0000/h`."""
    amount = number(value)
    if amount is None:
        return "\u2014"
    if round(amount, 6) == 0:
        return f"{format_hourly(0.0)}/h"
    sign = "+" if amount > 0 else "-"
    return f"{sign}{format_hourly(abs(amount))}/h"


def percent(value: object) -> str:
    fraction = number(value)
    return "\u2014" if fraction is None else format_percent(fraction)


def usage_bar(used: float | None, total: float | None, kind: str, label: str, detail: str) -> str:
    """An inline SVG bar with its percentage beside it, `kind` is `cpu` or `mem` (its colour).

    Over 100% the bar is full and drawn in the warning colour; the SVG's title and aria-label carry the
    whole sentence (`CPU 75%: 1450m of 1930m`) for screen readers and tooltips.
    """
    if used is None or total is None or total <= 0:
        return f'<span class="muted">{esc(label)} n/a</span>'
    ratio = used / total
    shown = f"{ratio * 100:.0f}%"
    width = BAR_WIDTH if ratio >= 1 else max(1 if used > 0 else 0, round(ratio * BAR_WIDTH))
    css = "bar-over" if ratio > 1 else f"bar-{kind}"
    text = f"{label} {shown}: {detail}"
    return (
        f'<span class="usage"><svg width="{BAR_WIDTH}" height="{BAR_HEIGHT}" viewBox="0 0 {BAR_WIDTH} {BAR_HEIGHT}" '
        f'role="img" aria-label="{esc(text)}"><title>{esc(text)}</title>'
        f'<rect class="bar-track" width="{BAR_WIDTH}" height="{BAR_HEIGHT}" rx="2"/>'
        f'<rect class="{css}" width="{width}" height="{BAR_HEIGHT}" rx="2"/></svg>'
        f"<span>{esc(shown)}</span></span>"
    )


def cost_bars(rows: Sequence[tuple[str, float, str]], caption: str) -> str:
    """A small horizontal bar chart (inline SVG) of costs: (label, amount, css class) per row."""
    if not rows:
        return ""
    top = max((amount for _, amount, _ in rows), default=0.0) or 1.0
    line = 22
    label_width = 150
    width = 420
    height = line * len(rows)
    parts = [f'<svg width="100%" viewBox="0 0 {width} {height}" role="img" aria-label="{esc(caption)}" '
             f'preserveAspectRatio="xMinYMin meet" style="max-width:{width}px"><title>{esc(caption)}</title>']
    for index, (label, amount, css) in enumerate(rows):
        y = index * line
        length = max(1.0, (width - label_width - 90) * amount / top) if amount > 0 else 0.0
        parts.append(
            f'<text x="0" y="{y + 15}" fill="currentColor" font-size="12">{esc(label)}</text>'
            f'<rect class="{css}" x="{label_width}" y="{y + 4}" width="{length:.1f}" height="14" rx="2"/>'
            f'<text x="{label_width + length + 6:.1f}" y="{y + 15}" fill="currentColor" font-size="12">'
            f"{esc(hourly(amount))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, caption: str = "",
          numeric: Sequence[int] = (), row_attrs: Sequence[str] | None = None, css: str = "") -> str:
    """A table whose cells are already HTML (escape user text first); `numeric` columns align right.
    `row_attrs[i]` is extra attribute text for row i (already escaped); `css` the table's class."""
    def align(i: int) -> str:
        return ' class="num"' if i in numeric else ""

    head = "".join(f'<th scope="col"{align(i)}>{esc(h)}</th>' for i, h in enumerate(headers))
    body = []
    for index, row in enumerate(rows):
        attrs = row_attrs[index] if row_attrs is not None else ""
        cells = "".join(f"<td{align(i)}>{cell}</td>" for i, cell in enumerate(row))
        body.append(f"<tr{attrs}>{cells}</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    klass = f' class="{esc(css)}"' if css else ""
    return f"<table{klass}>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def section(ident: str, title: str, body: str) -> str:
    return f'<section id="{esc(ident)}" aria-labelledby="{esc(ident)}-h"><h2 id="{esc(ident)}-h">{esc(title)}</h2>{body}</section>'


def page(title: str, body: str) -> str:
    """A whole HTML document: inline stylesheet, nothing fetched."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="karpplan {esc(__version__)}">\n'
        f"<title>{esc(title)}</title>\n<style>{STYLESHEET}</style>\n</head>\n<body>\n"
        '<a class="skip" href="#main">Skip to the report</a>\n'
        f'<main id="main">\n{body}\n'
        f'<footer>Made by karpplan {esc(__version__)}; a self-contained file: it loads nothing.</footer>\n'
        "</main>\n</body>\n</html>\n"
    )


__all__ = [
    "cost_bars", "esc", "hourly", "monthly", "number", "page", "percent", "section", "signed_hourly", "table",
    "usage_bar",
]
