"""The plan's summary panel: its cost, pods, bound and solver, next to Karpenter's plan, with the
preferences, catalog, zones and prices it was planned with, in plain words."""

from __future__ import annotations

from collections.abc import Sequence

from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from karpplan.plan import Plan, PlanPod, Summary
from karpplan.render.caveats import (
    catalog_line,
    existing_nodes_used,
    fargate_prices_line,
    new_nodes_note,
    nonempty,
    spot_prices_line,
    zones_note,
)
from karpplan.render.formatting import (
    ESTIMATED_MARK,
    abbreviate_counts,
    format_hourly,
    format_monthly,
    format_percent,
    plural,
    workload_counts,
    workload_label,
)
from karpplan.time_limit import TimeLimit


def _pods_line(summary: Summary, pods: Sequence[PlanPod]) -> Text:
    text = Text(f"{summary.pods} pending: ")
    text.append(f"{summary.scheduled} scheduled", style="green")
    text.append(", ")
    text.append(f"{summary.unschedulable} unschedulable", style="bold red" if summary.unschedulable else "")
    if summary.not_simulated:  # the time limit cut the plan: these are undecided, not unschedulable
        text.append(", ")
        text.append(f"{summary.not_simulated} not simulated (the time limit ran out)", style="bold yellow")
    extra = []
    if summary.gated:
        gated = abbreviate_counts(workload_counts(
            workload_label(p.key, {p.key: p}) for p in pods if p.gated))
        extra.append(f"{summary.gated} gated (not scheduled: {gated})" if gated else f"{summary.gated} gated")
    if summary.bound:
        extra.append(f"{summary.bound} already bound")
    if extra:
        text.append("; " + ", ".join(extra))
    return text


def _cost_line(summary: Summary) -> Text:
    text = Text(f"{format_hourly(summary.hourly_cost)}/h", style="bold")
    text.append(f"  ({format_monthly(summary.monthly_cost)}/month)")
    if summary.estimated_prices:
        text.append(f"  {ESTIMATED_MARK} includes estimated prices", style="yellow")
    return text


# Where the lower bound comes from (`Summary.bound_source`), in a platform engineer's words.
BOUND_SOURCES = {
    "cp-sat": "proven by CP-SAT",
    "fluid-lp": "from the LP relaxation",
    "configuration-lp": "from the configuration LP",
    "zone-lp": "from the zone-by-zone configuration LP",
    "whole-nodes": "from the whole nodes its spreads need in every domain",
}


def _bound_line(summary: Summary) -> Text:
    if summary.lower_bound is None:
        return Text("none proven", style="dim")
    text = Text(f"{format_hourly(summary.lower_bound)}/h")
    gap = summary.gap
    if gap is not None:
        text.append(f", gap {format_percent(gap)}", style="green" if gap <= 1e-9 else "yellow")
    if summary.bound_source is not None:
        text.append(f" ({BOUND_SOURCES.get(summary.bound_source, summary.bound_source)})", style="dim")
    return text


def _solver_line(summary: Summary) -> Text:
    text = Text(f"{summary.engine} engine")
    if summary.batches:
        text.append(f" in {plural(summary.batches, 'provisioning batch', 'provisioning batches')}")
    text.append(f", status {summary.status}, {summary.solve_seconds:.2f}s")
    details = []
    if summary.time_limit is not None:
        given = None if summary.time_limit_auto else summary.time_limit
        details.append(TimeLimit(given).describe(summary.time_limit))
    details.append(f"seed {summary.seed}")
    text.append(f" ({', '.join(details)})", style="dim")
    return text


def _karpenter_reach(summary: Summary) -> str:
    """What Karpenter's plan places, on how many new nodes, in how many provisioning batches."""
    nodes = summary.karpenter_new_nodes
    if summary.karpenter_scheduled is None:
        return "" if nodes is None else plural(nodes, "new node")
    scheduled = summary.karpenter_scheduled
    pods = f"{scheduled} of {summary.pods} pods" if scheduled != summary.pods else plural(scheduled, "pod")
    text = pods if nodes is None else f"{pods} on {plural(nodes, 'new node')}"
    if summary.karpenter_batches:
        text += f" in {plural(summary.karpenter_batches, 'provisioning batch', 'provisioning batches')}"
    return text


def _steady_text(summary: Summary) -> Text:
    """Where consolidation takes Karpenter's plan (`consolidates to $Y/h on K nodes (A commands)`), or why the
    steady state was not computed."""
    steady = summary.karpenter_steady
    if steady.hourly_cost is None:
        return Text(f"steady state {steady.note or 'not computed'}", style="yellow")
    actions = steady.actions or 0
    how = f" ({plural(actions, 'consolidation command')})" if actions else " (nothing to consolidate)"
    nodes = "" if steady.nodes is None else f" on {plural(steady.nodes, 'node')}"
    if steady.hourly_cost < 0:  # it removes more of the nodes running now than the plan launches
        to = "" if steady.nodes is None else f" to {plural(steady.nodes, 'node')}"
        text = Text(f"consolidates{to}{how}, {format_hourly(-steady.hourly_cost)}/h below what the nodes running "
                    "now cost")
    else:
        text = Text(f"consolidates to {format_hourly(steady.hourly_cost)}/h{nodes}{how}")
    if steady.note:
        text.append(f"\n{steady.note}", style="dim")
    return text


def _saving_text(summary: Summary) -> Text:
    """This plan against Karpenter's steady state (the honest baseline), or its launch when the steady state
    was not computed; never dearer without saying so."""
    steady = summary.karpenter_steady.hourly_cost
    baseline = summary.baseline_cost
    assert baseline is not None and summary.karpenter_cost is not None
    against = "Karpenter's steady state" if steady is not None else "Karpenter's launch (greedy plan)"
    difference = baseline - summary.hourly_cost
    mine = f"{summary.engine} {format_hourly(summary.hourly_cost)}/h"
    removed = summary.karpenter_steady.existing_removed
    if steady is not None and removed > 0:  # the steady state removes running nodes the plan keeps: not like for like
        return _launch_then_removed(summary, mine, removed)
    if round(difference, 6) == 0:
        return Text(f"{mine}: same cost as {against}", style="dim")
    share = f" ({format_percent(abs(difference) / baseline)})" if baseline > 0 else ""
    if difference > 0:
        text = Text(f"{mine} saves {format_hourly(difference)}/h{share} against {against}", style="bold green")
        if summary.preferences is not None and summary.preferences.policy == "drop":
            text.append(", which keeps the preferences this plan drops", style="yellow")
        return text
    text = Text(f"{mine} costs {format_hourly(-difference)}/h{share} more than {against}", style="yellow")
    launch_saving = summary.karpenter_cost - summary.hourly_cost
    if steady is not None and launch_saving > 1e-9:
        text.append(f" (it saves {format_hourly(launch_saving)}/h against the launch)", style="yellow")
    return text


def _launch_then_removed(summary: Summary, mine: str, removed: float) -> Text:
    """The plan against Karpenter's launch, and what its steady state removes besides: running nodes the plan keeps
    as they are (a plan prices what it launches; consolidating the cluster is `karpplan consolidate`'s)."""
    assert summary.karpenter_cost is not None
    launch = summary.karpenter_cost - summary.hourly_cost
    if round(launch, 6) == 0:
        text = Text(f"{mine}: same cost as Karpenter's launch", style="dim")
    elif launch > 0:
        text = Text(f"{mine} saves {format_hourly(launch)}/h against Karpenter's launch", style="bold green")
    else:
        text = Text(f"{mine} costs {format_hourly(-launch)}/h more than Karpenter's launch", style="yellow")
    text.append(f"; its steady state also removes {format_hourly(removed)}/h of running nodes this plan keeps "
                "(karpplan consolidate shows which, and why)", style="yellow")
    return text


def _greedy_line(summary: Summary) -> Text:
    """Karpenter's greedy plan next to this one, when its steady state was not asked for (a library caller)."""
    assert summary.karpenter_cost is not None
    greedy = summary.karpenter_cost
    text = Text(f"{format_hourly(greedy)}/h")
    reach = _karpenter_reach(summary)
    if reach:
        text.append(f", {reach}")
    if _not_like_for_like(summary, text):
        return text
    difference = greedy - summary.hourly_cost
    if round(difference, 6) == 0:
        text.append("; same cost as this plan", style="dim")
        return text
    share = f" ({format_percent(abs(difference) / greedy)})" if greedy > 0 else ""
    if difference > 0:
        text.append(f"\n{summary.engine} saves {format_hourly(difference)}/h{share} vs Karpenter's greedy plan",
                    style="bold green")
        if summary.preferences is not None and summary.preferences.policy == "drop":
            text.append(", which keeps the preferences this plan drops", style="yellow")
    else:
        text.append(f"\n{summary.engine} costs {format_hourly(-difference)}/h{share} more than Karpenter's greedy plan",
                    style="yellow")
    return text


def _not_like_for_like(summary: Summary, text: Text) -> bool:
    """When the plans schedule different numbers of pods, say so on `text` (no saving is quoted)."""
    if summary.like_for_like or summary.karpenter_scheduled is None:
        return False
    more = summary.scheduled - summary.karpenter_scheduled
    first, second = (summary.engine, "Karpenter") if more > 0 else ("Karpenter", summary.engine)
    text.append(f"\nnot like for like: {first} schedules {plural(abs(more), 'pod')} more than {second}, "
                "so no saving is quoted", style="yellow")
    return True


def _karpenter_line(summary: Summary) -> Text | None:
    """Karpenter's plan next to this one: what it launches, what consolidation makes of it, and the saving
    against that steady state when both schedule as many pods (otherwise the costs compare different things,
    and the line says so instead of quoting a saving)."""
    if summary.karpenter_cost is None:
        return None
    asked = summary.karpenter_steady.asked
    if summary.engine == "karpenter":  # this plan is Karpenter's launch: only where consolidation takes it
        return _steady_text(summary) if asked else None
    if not asked:
        return _greedy_line(summary)
    text = Text(f"launches {format_hourly(summary.karpenter_cost)}/h")
    reach = _karpenter_reach(summary)
    if reach:
        text.append(f", {reach}")
    text.append("\n")
    text.append_text(_steady_text(summary))
    if not _not_like_for_like(summary, text):
        text.append("\n")
        text.append_text(_saving_text(summary))
    return text


def zones_line(zones: Sequence[str], source: str) -> Text:
    """`us-east-1a, us-east-1b (from --zones)`, plainly: where the zones came from, or that they were assumed."""
    text = Text(", ".join(zones))
    note, assumed = zones_note(source)
    if note:
        text.append(f" ({note})", style="yellow" if assumed else "dim")
    return text


def _prices_line(plan: Plan) -> Text | None:
    """Where the prices that matter to this plan come from: spot (when it launches or prices spot nodes, or
    was given real spot prices) and Fargate (when it runs Fargate pods), in plain words."""
    summary = plan.summary
    # spot nodes it launches, or existing ones it prices (an eksctl node group's spot share)
    spot = any(n.capacity_type == "spot" and (n.new or n.hourly_price) for n in plan.nodes)
    lines = nonempty([spot_prices_line(summary.spot_prices, spot), fargate_prices_line(summary.fargate_prices or "", summary.region)])
    return Text("\n".join(lines)) if lines else None


def summary_panel(plan: Plan) -> Panel:
    summary = plan.summary
    fargate = sum(1 for n in plan.nodes if n.new and n.fargate is not None)
    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("Cost", _cost_line(summary))
    existing = existing_nodes_used({n.name for n in plan.nodes if not n.new}, ((p.node, p.bound) for p in plan.pods))
    note = new_nodes_note(summary.new_nodes - fargate, fargate, existing)
    new_nodes = Text(str(summary.new_nodes) + (f" {note}" if note else ""))
    grid.add_row("New nodes", new_nodes)
    grid.add_row("Pods", _pods_line(summary, plan.pods))
    grid.add_row("Lower bound", _bound_line(summary))
    grid.add_row("Solver", _solver_line(summary))
    karpenter = _karpenter_line(summary)
    if karpenter is not None:
        grid.add_row("Karpenter", karpenter)
    if summary.preferences is not None:
        grid.add_row("Preferences", Text(summary.preferences.describe(summary.hourly_cost)))
    grid.add_row("Catalog", Text(catalog_line(summary.catalog, summary.region, summary.region_source)))
    if summary.catalog_coverage:
        grid.add_row("", Text(summary.catalog_coverage, style="dim"))
    if summary.zones:
        grid.add_row("Zones", zones_line(summary.zones, summary.zones_source))
    prices = _prices_line(plan)
    if prices is not None:
        grid.add_row("Prices", prices)
    return Panel(grid, title=Text("Plan summary", style="bold"), title_align="left", expand=False)
