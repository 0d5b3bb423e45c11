"""The ConsolidationReport and a node's explanation as tables (rich), readable at 100 columns."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from karpplan.consolidate.explain import Explanation
from karpplan.consolidate.report import Report
from karpplan.render.caveats import spot_prices_line
from karpplan.render.formatting import ESTIMATED_MARK
from karpplan.render.names import ec2_domain
from karpplan.render.wrap import fold_at_boundaries
from karpplan.time_limit import TimeLimit


def _money(value: float) -> str:
    return f"${value:.4f}/h"


NODE_COLUMN = 34  # the node column's widest


def _names(report: Report, out: Console) -> tuple[dict[str, str], str]:
    """How the tables show each node's name, and the note that says so: without the EC2 domain its names share
    (`.ap-southeast-2.compute.internal`) when a name would not fit the node column whole, else as they are."""
    names = [v.node.name for v in report.nodes]
    domains = {ec2_domain(n) for n in names}
    longest = max((len(n) for n in names), default=0)
    if len(domains) != 1 or "" in domains or (longest <= NODE_COLUMN and out.width >= 100):
        return {n: n for n in names}, ""
    domain = domains.pop()
    note = f"node names without the EC2 domain they share ({domain}); -o json has them whole"
    return {n: n.removesuffix(domain) for n in names}, note


def render_report(report: Report, out: Console) -> None:
    shown, note = _names(report, out)
    nodes = Table(title="Nodes", title_justify="left", expand=False)
    nodes.add_column("node", overflow="fold", max_width=NODE_COLUMN)
    nodes.add_column("type", no_wrap=True)
    nodes.add_column("$/h", justify="right", no_wrap=True)
    nodes.add_column("verdict", no_wrap=True)
    nodes.add_column("reason", overflow="fold", ratio=1)
    for v in report.nodes:
        n = v.node
        kind = f"{n.instance_type or '?'}" + (" spot" if n.capacity_type == "spot" else "")
        verdict = ("replaced" if v.removed_by is not None and report.actions[v.removed_by - 1].replacement
                   else "deleted" if v.removed_by is not None else "kept")
        # unpriced: not a free node (see the warning); estimated: marked as plan marks it
        price = "?" if n.price is None else (ESTIMATED_MARK if n.name in report.estimated else "") + f"{n.cost:.4f}"
        # Text, not markup: Karpenter's reasons carry brackets ("PodDisruptionBudget=[ns/name]")
        nodes.add_row(Text(shown[n.name] + (" (new)" if n.replacement else "")), Text(kind), price, verdict,
                      Text(v.reason))
    out.print(fold_at_boundaries(nodes, out))
    if report.actions:
        actions = Table(title="Actions, in order", title_justify="left")
        actions.add_column("#", justify="right")
        actions.add_column("method", no_wrap=True)
        actions.add_column("decision", no_wrap=True)
        actions.add_column("nodes", overflow="fold")
        actions.add_column("replacement", overflow="fold")
        actions.add_column("saves", justify="right", no_wrap=True)
        for i, a in enumerate(report.actions, start=1):
            repl = "" if a.replacement is None else (
                f"{a.replacement.instance_type} {a.replacement.zone} {a.replacement.capacity_type} "
                f"({len(a.options)} type(s) fit)")
            names = ", ".join(shown.get(n.name, n.name) for n in a.nodes)
            actions.add_row(str(i), a.method, Text(a.decision), Text(names), Text(repl), _money(a.savings))
        out.print(fold_at_boundaries(actions, out))
    else:
        out.print("No consolidation applies: Karpenter would leave this cluster as it is.")
    if note:
        out.print(note, style="dim", markup=False)
    _price_notes(report, out)
    s = report.summary
    unpriced = sum(1 for v in report.nodes if v.node.price is None and not v.node.replacement)
    out.print(f"Cost now:                       {_money(s.current)}"
              + (f"  (without {unpriced} unpriced node{'' if unpriced == 1 else 's'}: see the warnings)"
                 if unpriced else ""))
    count = len(report.actions)
    out.print(f"After Karpenter consolidation:  {_money(s.karpenter)}  ({count} action{'' if count == 1 else 's'}, "
              f"{_money(s.current - s.karpenter)} saved)")
    if s.karpenter_note:
        out.print(f"  {s.karpenter_note}", style="yellow", markup=False)
    # A bound of nothing is no bound: the LP found none (or the clock cut it), and a 100% gap says nothing.
    bound = (f"lower bound {_money(s.lower_bound)}, gap {s.gap * 100:.1f}%" if s.lower_bound and s.lower_bound > 0
             else "no lower bound proven")
    out.print(f"After an optimal re-pack:       {_money(s.optimal)}  ({bound}, {s.optimal_status})")
    if s.optimal_note:
        out.print(f"  {s.optimal_note}", style="dim", markup=False)
    if s.time_limit is not None:
        said = TimeLimit(None if s.time_limit_auto else s.time_limit).describe(s.time_limit)
        out.print(f"{said[0].upper()}{said[1:]}.", style="dim")
    if s.simulated_at:
        out.print(f"Disruption budgets and consolidateAfter judged at {s.simulated_at}.", style="dim", markup=False)


def _price_notes(report: Report, out: Console) -> None:
    """The `~` mark explained, and once where spot prices came from (as plan's summary says it)."""
    if report.estimated:
        out.print(f"{ESTIMATED_MARK} estimated price: the catalog has no published price for this offering",
                  style="dim", markup=False)
    spot = any(v.node.capacity_type == "spot" and v.node.price is not None for v in report.nodes)
    line = spot_prices_line(report.summary.spot_prices, spot)
    if line:
        out.print(f"Prices: {line}", style="dim", markup=False)


def render_explanation(e: Explanation, out: Console) -> None:
    out.print(f"Node {e.node} ({e.instance_type or 'unknown type'}, {_money(e.price)})", markup=False)
    head = Table.grid(padding=(0, 1))
    head.add_column(no_wrap=True)
    head.add_column(overflow="fold", ratio=1)
    rows = [("candidate:", e.candidate), ("decision:", e.decision)]
    if e.steady_state != e.decision:
        rows.append(("steady state:", e.steady_state))
    for label, text in rows:
        head.add_row(f"  {label}", Text(text))
    out.print(head)
    pods = Table(title="Pods", title_justify="left")
    pods.add_column("pod", overflow="fold")
    pods.add_column("workload", overflow="fold")
    pods.add_column("where it would go, or what stops it", overflow="fold", ratio=1)
    for f in e.pods:
        pods.add_row(Text(f.pod), Text(f.workload), Text(f.outcome))
    out.print(fold_at_boundaries(pods, out))
