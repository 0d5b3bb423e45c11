"""`plan -o html`: the Plan document (cli-contract.md) as one self-contained page.

`render_html` reads only the JSON document (never the `Plan` object), so whatever holds a Plan document
(a saved `plan -o json`, one side of `diff`) renders the same. Sections: the totals, Karpenter's plan beside
this one, nodes by zone with CPU and memory bars, cost by workload and NodePool, unschedulable pods with
reasons and fixes, lint findings on the same input, and the plan's warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from karpplan.plan import HOURS_PER_MONTH
from karpplan.render.caveats import (
    catalog_line,
    existing_nodes_used,
    fargate_prices_line,
    new_nodes_note,
    spot_prices_line,
    zones_note,
)
from karpplan.render.formatting import format_hourly, format_monthly, plural
from karpplan.render.html.costs import costs_section
from karpplan.render.html.findings import lint_section, unschedulable_section
from karpplan.render.html.nodes import nodes_section
from karpplan.render.html.page import cost_bars, esc, hourly, monthly, number, page, percent, section

DASH = "\u2014"  # an unknown value

# Where the lower bound comes from (`summary.boundSource`), as the table's summary panel says it.
BOUND_SOURCES = {
    "cp-sat": "proven by CP-SAT",
    "fluid-lp": "from the LP relaxation",
    "configuration-lp": "from the configuration LP",
    "zone-lp": "from the zone-by-zone configuration LP",
    "whole-nodes": "from the whole nodes its spreads need in every domain",
}


def _summary(document: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = document.get("summary")
    return raw if isinstance(raw, Mapping) else {}


def dollars(value: object, fmt: Callable[[float], str]) -> str:
    amount = number(value)
    return DASH if amount is None else fmt(amount)


def _total(label: str, value: str, key: str, note: str = "") -> str:
    small = f"<small>{esc(note)}</small>" if note else ""
    return f'<div><dt>{esc(label)}</dt><dd data-total="{esc(key)}">{esc(value)}{small}</dd></div>'


def _bound(summary: Mapping[str, Any]) -> tuple[str, str]:
    bound = summary.get("lowerBound")
    if number(bound) is None:
        return "none proven", ""
    source = summary.get("boundSource")
    return hourly(bound), BOUND_SOURCES.get(str(source), str(source)) if source else ""


def _new_nodes_note(document: Mapping[str, Any]) -> str:
    """`19 EC2, 3 Fargate; pods placed on 2 existing nodes too`, as the table's summary says it."""
    nodes = [n for n in document.get("nodes") or [] if isinstance(n, Mapping)]
    fargate = sum(1 for n in nodes if n.get("new") and n.get("capacityType") == "fargate")
    pods = [p for p in document.get("pods") or [] if isinstance(p, Mapping)]
    existing = existing_nodes_used({n.get("name") for n in nodes if not n.get("new")},
                                   ((p.get("node"), p.get("bound")) for p in pods))
    new = sum(1 for n in nodes if n.get("new"))
    return new_nodes_note(new - fargate, fargate, existing).removeprefix("(").replace(")", "", 1)


def _text(summary: Mapping[str, Any], key: str) -> str:
    value = summary.get(key)
    return str(value) if isinstance(value, str) else ""


def planned_with(document: Mapping[str, Any]) -> str:
    """What the plan was planned with, as the table's summary panel says it: the catalog and where its region
    came from, its coverage and price date, the zones and their source, and where spot and Fargate prices
    came from (`data-caveat` names each line)."""
    summary = _summary(document)
    zones = [str(z) for z in summary.get("zones") or []]
    zone_note, assumed = zones_note(_text(summary, "zonesSource"))
    spot = any(n.get("capacityType") == "spot" and (n.get("new") or number(n.get("hourlyPrice")))
               for n in document.get("nodes") or [] if isinstance(n, Mapping))
    rows = [
        ("catalog", "Catalog", catalog_line(_text(summary, "catalog"), _text(summary, "region"),
                                            _text(summary, "regionSource")), ""),
        ("coverage", "", _text(summary, "catalogCoverage"), ""),
        ("zones", "Zones", ", ".join(zones) + (f" ({zone_note})" if zone_note and zones else ""),
         "warn" if assumed else ""),
        ("spot", "Prices", spot_prices_line(_text(summary, "spotPrices"), spot), ""),
        ("fargate", "", fargate_prices_line(_text(summary, "fargatePrices"), _text(summary, "region")), ""),
    ]
    items = "".join(f'<dt>{esc(label)}</dt><dd data-caveat="{key}"' + (f' class="{css}"' if css else "")
                    + f">{esc(text)}</dd>" for key, label, text, css in rows if text)
    return f'<dl class="caveats" aria-label="Planned with">{items}</dl>' if items else ""


def _header(summary: Mapping[str, Any], document: Mapping[str, Any]) -> str:
    pods = summary.get("pods", 0)
    unschedulable = number(summary.get("unschedulable")) or 0
    placed = f"{summary.get('scheduled', 0)} of {pods}"
    extras = []
    if summary.get("gated"):
        extras.append(f"{summary.get('gated')} gated")
    if summary.get("bound"):
        extras.append(f"{summary.get('bound')} already bound")
    bound, source = _bound(summary)
    status = str(summary.get("status") or "")
    engine = str(summary.get("engine") or "")
    seconds = number(summary.get("solveSeconds"))
    totals = "".join([
        _total("Cost per hour", dollars(summary.get("hourlyCost"), format_hourly), "hourlyCost",
               "includes estimated prices" if summary.get("estimatedPrices") else ""),
        _total("Cost per month", dollars(summary.get("monthlyCost"), format_monthly), "monthlyCost",
               f"{HOURS_PER_MONTH} hours"),
        _total("Status", status, "status", f"{engine} engine" + (f", {seconds:.2f}s" if seconds is not None else "")),
        _total("Lower bound", bound.removesuffix("/h"), "lowerBound", source),
        _total("Gap", percent(summary.get("gap")), "gap", "to the lower bound"),
        _total("New nodes", str(summary.get("newNodes", 0)), "newNodes", _new_nodes_note(document)),
        _total("Pods placed", placed, "scheduled", ", ".join(extras)),
        _total("Unschedulable", str(int(unschedulable)), "unschedulable",
               "pods no node can take" if unschedulable else "every pending pod is placed"),
    ])
    where = ", ".join(str(x) for x in (summary.get("region"), summary.get("catalog")) if x)
    subtitle = f"{plural(int(number(pods) or 0), 'pod')} planned" + (f" in {where}" if where else "")
    verdict = ('<p class="bad"><strong>Some pods cannot be scheduled</strong> (see below).</p>' if unschedulable
               else "")
    return (f'<header><h1>karpplan plan</h1><p class="muted">{esc(subtitle)}</p>{verdict}'
            f'<dl class="totals" aria-label="Totals">{totals}</dl>{planned_with(document)}</header>')


def _panel(title: str, rows: list[tuple[str, str]], side: str) -> str:
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows)
    return f'<div class="panel" data-plan="{esc(side)}"><h3>{esc(title)}</h3><dl>{items}</dl></div>'


def _verdict(summary: Mapping[str, Any], karpenter: Mapping[str, Any]) -> str:
    """The saving over Karpenter's plan, or why none is quoted (the two place different numbers of pods)."""
    mine = number(summary.get("hourlyCost")) or 0.0
    steady = number(karpenter.get("steadyStateHourlyCost"))
    # The honest baseline is what Karpenter's cluster settles at once it consolidates, when that was computed.
    greedy = steady if steady is not None else number(karpenter.get("hourlyCost")) or 0.0
    baseline = "Karpenter's steady state (after consolidation)" if steady is not None else "Karpenter's plan"
    engine = str(summary.get("engine") or "this plan")
    if karpenter.get("likeForLike") is False:
        theirs = number(karpenter.get("scheduled")) or 0
        more = (number(summary.get("scheduled")) or 0) - theirs
        first, second = (engine, "Karpenter") if more > 0 else ("Karpenter", engine)
        return (f'<p class="warn">Not like for like: {esc(first)} schedules {esc(plural(int(abs(more)), "pod"))} '
                f"more than {esc(second)}, so no saving is quoted.</p>")
    difference = greedy - mine
    if round(difference, 6) == 0:
        return f'<p class="muted">Same cost as {esc(baseline)}.</p>'
    share = f" ({percent(abs(difference) / greedy)})" if greedy > 0 else ""
    if difference > 0:
        return (f'<p class="ok"><strong>{esc(engine)} saves {esc(hourly(difference))}{esc(share)}, '
                f"{esc(monthly(difference * HOURS_PER_MONTH))}</strong> against {esc(baseline)}.</p>")
    return (f'<p class="warn">{esc(engine)} costs {esc(hourly(-difference))}{esc(share)} more than '
            f"{esc(baseline)}.</p>")


def compare_section(summary: Mapping[str, Any]) -> str:
    """This plan beside Karpenter's (greedy) plan of the same input: nodes, pods and cost."""
    karpenter = summary.get("karpenter")
    engine = str(summary.get("engine") or "")
    mine = [("Cost per hour", hourly(summary.get("hourlyCost"))), ("Cost per month", monthly(summary.get("monthlyCost"))),
            ("New nodes", str(summary.get("newNodes", DASH))),
            ("Pods placed", f"{summary.get('scheduled', 0)} of {summary.get('pods', 0)}")]
    title = "This plan (Karpenter's provisioning, simulated)" if engine == "karpenter" else f"This plan ({engine})"
    if engine == "karpenter" or not isinstance(karpenter, Mapping):
        note = ("This plan is Karpenter's own; plan without --engine karpenter to see the optimal plan beside it."
                if engine == "karpenter" else "The plan document carries no Karpenter plan to compare with.")
        return section("compare", "Karpenter's plan and this one",
                       f'<div class="compare">{_panel(title, mine, engine or "plan")}</div><p class="muted">{esc(note)}</p>')
    greedy = number(karpenter.get("hourlyCost"))
    theirs = [("Cost per hour", hourly(greedy)),
              ("Cost per month", monthly(None if greedy is None else greedy * HOURS_PER_MONTH)),
              ("New nodes", str(karpenter.get("newNodes", DASH))),
              ("Pods placed", f"{karpenter.get('scheduled')} of {summary.get('pods', 0)}"
               if karpenter.get("scheduled") is not None else DASH)]
    if karpenter.get("batches"):
        theirs.append(("Provisioning batches", str(karpenter.get("batches"))))
    steady = number(karpenter.get("steadyStateHourlyCost"))
    if steady is not None:
        theirs.append(("After consolidation", f"{hourly(steady)} on {karpenter.get('steadyStateNodes', DASH)} nodes"))
    elif karpenter.get("steadyStateNote"):
        theirs.append(("After consolidation", str(karpenter.get("steadyStateNote"))))
    costs = [(f"{engine} (this plan)", number(summary.get("hourlyCost")) or 0.0, "bar-opt"),
             ("Karpenter", greedy or 0.0, "bar-karp")]
    if steady is not None:
        costs.append(("Karpenter, consolidated", steady, "bar-karp"))
    chart = cost_bars(costs, "Cost per hour: this plan and Karpenter's") if any(c for _, c, _ in costs) else ""
    body = (f'<div class="compare">{_panel(title, mine, engine or "plan")}'
            f"{_panel('Karpenter (greedy provisioning, simulated)', theirs, 'karpenter')}</div>"
            + _verdict(summary, karpenter) + chart)
    return section("compare", "Karpenter's plan and this one", body)


def _warnings(document: Mapping[str, Any]) -> str:
    warnings = [w for w in document.get("warnings") or [] if isinstance(w, str)]
    if not warnings:
        return ""
    return section("warnings", "Warnings", "<ul>" + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>")


def render_html(document: Mapping[str, Any], *, lint: Mapping[str, Any] | None = None, lint_note: str = "",
                title: str = "karpplan plan") -> str:
    """The Plan `document` as one HTML page; `lint` is the LintReport document of the same input (or None,
    with `lint_note` saying why)."""
    summary = _summary(document)
    cost = hourly(summary.get("hourlyCost"))
    body = "".join([
        _header(summary, document),
        compare_section(summary),
        nodes_section(document),
        costs_section(document),
        unschedulable_section([u for u in document.get("unschedulable") or [] if isinstance(u, Mapping)]),
        lint_section(lint, lint_note),
        _warnings(document),
    ])
    return page(f"{title}: {cost}", body)


__all__ = ["compare_section", "render_html"]
