"""The report's cost section: by workload, namespace and NodePool from the plan's `costs` object, or,
for a plan document without one, by NodePool summed from its new nodes' prices.

The attribution rule (how a node's price is split among its pods) belongs to the plan; this only shows
what the document says, with the rule in its own words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karpplan.costs.showback import runs_to_completion
from karpplan.plan import HOURS_PER_MONTH
from karpplan.render.caveats import RUNS_ONLY
from karpplan.render.html.page import cost_bars, esc, hourly, monthly, number, section, table

MAX_WORKLOADS_SHOWN = 50  # the rest are counted; -o json has them all
FARGATE_POOL = "Fargate"
NO_POOL = "(no NodePool)"


def _rows(value: object) -> list[Mapping[str, Any]]:
    return [row for row in value if isinstance(row, Mapping)] if isinstance(value, list) else []


def _by_cost(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(rows, key=lambda r: -(number(r.get("hourlyCost")) or 0.0))


def _month(row: Mapping[str, Any]) -> str:
    """The workload's $/month, or `while running` for a Job's or CronJob's (its nodes are not paid all month),
    the figure for a whole month kept in the cell's title."""
    if runs_to_completion(str(row.get("workload"))):
        whole = f"{monthly(row.get('monthlyCost'))} if it ran all month"
        return f'<span class="muted" title="{esc(whole)}">{RUNS_ONLY}</span>'
    return esc(monthly(row.get("monthlyCost")))


def _workloads(rows: Sequence[Mapping[str, Any]]) -> str:
    ordered = _by_cost(rows)
    shown = ordered[:MAX_WORKLOADS_SHOWN]
    body = table(
        ["Workload", "Namespace", "Pods", "Cost per hour", "Cost per month"],
        ([f'<span class="mono">{esc(r.get("workload"))}</span>', esc(r.get("namespace")), esc(r.get("pods")),
          esc(hourly(r.get("hourlyCost"))), _month(r)] for r in shown),
        caption="By workload", numeric=(2, 3, 4),
    )
    batch = sum(number(r.get("hourlyCost")) or 0.0 for r in ordered if runs_to_completion(str(r.get("workload"))))
    if batch > 0:
        body += (f'<p class="muted" data-note="runs-to-completion">Jobs and CronJobs ({RUNS_ONLY}): '
                 f"{esc(hourly(batch))} of the attributed cost is paid only while their pods run, so a month "
                 "of it overstates them unless they run all month.</p>")
    hidden = len(ordered) - len(shown)
    if hidden > 0:
        body += f'<p class="muted">and {hidden} more workloads, the cheapest (<code>-o json</code> lists them all).</p>'
    return body


def _namespaces(rows: Sequence[Mapping[str, Any]]) -> str:
    return table(
        ["Namespace", "Cost per hour", "Cost per month"],
        ([esc(r.get("namespace")), esc(hourly(r.get("hourlyCost"))), esc(monthly(r.get("monthlyCost")))]
         for r in _by_cost(rows)),
        caption="By namespace", numeric=(1, 2),
    )


def _pools(rows: Sequence[Mapping[str, Any]]) -> str:
    ordered = _by_cost(rows)
    chart = cost_bars([(str(r.get("nodePool") or NO_POOL), number(r.get("hourlyCost")) or 0.0, "bar-cpu")
                       for r in ordered], "Cost per hour by NodePool")
    return chart + table(
        ["NodePool", "Cost per hour", "of which idle"],
        ([esc(r.get("nodePool") or NO_POOL), esc(hourly(r.get("hourlyCost"))), esc(hourly(r.get("idleHourlyCost")))]
         for r in ordered),
        caption="By NodePool (idle: the part of its nodes no pod requested)", numeric=(1, 2),
    )


def pool_costs_from_nodes(nodes: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, float]]:
    """(pool, new nodes, cost per hour) per NodePool, from the new nodes' prices; Fargate pods as one pool.
    Existing nodes are already paid for and cost the plan nothing (cli-contract.md)."""
    pools: dict[str, tuple[int, float]] = {}
    for node in nodes:
        if not node.get("new"):
            continue
        name = FARGATE_POOL if node.get("capacityType") == "fargate" else str(node.get("nodePool") or NO_POOL)
        count, cost = pools.get(name, (0, 0.0))
        pools[name] = (count + 1, cost + (number(node.get("hourlyPrice")) or 0.0))
    return sorted(((name, count, cost) for name, (count, cost) in pools.items()), key=lambda p: (-p[2], p[0]))


def _fallback(nodes: Sequence[Mapping[str, Any]]) -> str:
    pools = pool_costs_from_nodes(nodes)
    if not pools:
        return '<p class="muted">The plan launches no new nodes: it costs nothing more.</p>'
    chart = cost_bars([(name, cost, "bar-cpu") for name, _, cost in pools], "Cost per hour by NodePool")
    return (
        '<p class="muted">This plan document carries no cost attribution per workload; the cost by NodePool '
        "below is the sum of each pool's new nodes.</p>" + chart + table(
            ["NodePool", "New nodes", "Cost per hour", "Cost per month"],
            ([esc(name), str(count), esc(hourly(cost)), esc(monthly(cost * HOURS_PER_MONTH))] for name, count, cost in pools),
            caption="By NodePool", numeric=(1, 2, 3),
        )
    )


def costs_section(document: Mapping[str, Any]) -> str:
    """`<section id="costs">`: the document's `costs` when present, else the per-pool fallback."""
    costs = document.get("costs")
    nodes = _rows(document.get("nodes"))
    if not isinstance(costs, Mapping):
        return section("costs", "Cost by NodePool", _fallback(nodes))
    parts = []
    if costs.get("rule"):
        parts.append(f'<p class="muted">How cost is attributed: {esc(costs.get("rule"))}</p>')
    parts.append(f"<p>Attributed in all: <strong>{esc(hourly(costs.get('hourlyCost')))}</strong></p>")
    pools = _rows(costs.get("nodePools"))
    if pools:
        parts.append(_pools(pools))
    workloads = _rows(costs.get("workloads"))
    if workloads:
        parts.append(_workloads(workloads))
    namespaces = _rows(costs.get("namespaces"))
    if namespaces:
        parts.append(_namespaces(namespaces))
    return section("costs", "Cost by workload and NodePool", "".join(parts))


__all__ = ["costs_section", "pool_costs_from_nodes"]
