"""A PlanDiff as a pull-request comment (GitHub-flavoured Markdown): the monthly delta in one line, the
two sides side by side, the workloads and pools whose cost or definition changed, pods the change leaves
unschedulable with their reasons, and lint's new findings. Everything shown comes from the PlanDiff.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karpplan.costs import RULE
from karpplan.costs.apportion import MICRO
from karpplan.diff.model import (
    CostChange,
    NewlyUnschedulable,
    PlanDiff,
    PoolChange,
    WorkloadChange,
    by_workload,
)
from karpplan.plan import HOURS_PER_MONTH

MAX_ROWS = 50  # per table; the JSON document has every row


def signed_monthly(micros: int) -> str:
    """An hourly delta in micro-dollars as a signed monthly amount: `+$210.24`, `-$5.00`, `$0.00`."""
    amount = micros * HOURS_PER_MONTH / MICRO
    if round(amount, 2) == 0:
        return "$0.00"
    return f"{'+' if amount > 0 else '-'}${abs(amount):,.2f}"


def monthly(micros: int) -> str:
    return f"${micros * HOURS_PER_MONTH / MICRO:,.2f}"


def hourly(micros: int) -> str:
    return f"${micros / MICRO:,.4f}"


def signed_hourly(micros: int) -> str:
    """`+$0.2880`, `-$0.1920`, `$0.0000`."""
    if micros == 0:
        return hourly(0)
    return f"{'+' if micros > 0 else '-'}{hourly(abs(micros))}"


def signed_count(value: int) -> str:
    return f"+{value}" if value > 0 else str(value)


def cell(text: object) -> str:
    """A table cell: pipes escaped, one line."""
    return str(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _where(file: str, line: int) -> str:
    return f"`{cell(file)}:{line}`" if file and line else (f"`{cell(file)}`" if file else "")


def headline(diff: PlanDiff) -> str:
    """`karpplan diff: +$210.24/month (+100.0%)`, `..., 2 pods newly unschedulable`."""
    percent = diff.gate.increase_percent
    change = f" ({percent:+.1f}%)" if percent is not None and diff.delta_micros else ""
    if diff.base_micros == 0 and diff.delta_micros > 0:
        change = " (from nothing)"
    # a saving made by pods HEAD no longer runs is no saving: said in the same line
    lost = len(diff.newly_unschedulable)
    left = f", {lost} pod{'s' if lost > 1 else ''} newly unschedulable" if lost else ""
    jobs = diff.gate.jobs_delta_micros
    jobs_text = (f", of which {signed_monthly(jobs)} Jobs/CronJobs if they ran all month"
                 if jobs and diff.delta_micros else "")
    return f"karpplan diff: {_estimate_mark(diff)}{signed_monthly(diff.delta_micros)}/month{change}{jobs_text}{left}" \
        + _estimate_note(diff)


def _estimated(diff: PlanDiff) -> bool:
    return bool(diff.head.get("estimatedPrices") or diff.base.get("estimatedPrices"))


def _estimate_mark(diff: PlanDiff) -> str:
    """`~` before a figure some of whose nodes are priced by estimate, as every table marks such a price."""
    return "~" if _estimated(diff) and diff.delta_micros else ""


def _estimate_note(diff: PlanDiff) -> str:
    """Where the estimate comes from, in the headline itself (a saving built on 0.4 x on-demand spot prices read as
    real in the terminal and in GitHub's annotation)."""
    if not _estimated(diff) or not diff.delta_micros:
        return ""
    spot = str(diff.head.get("spotPrices") or diff.base.get("spotPrices") or "")
    if spot.startswith("estimated"):
        return f"; prices partly estimated (spot {spot.removeprefix('estimated: ')}; --spot-prices FILE for real ones)"
    return "; prices partly estimated (~ in the tables)"


def _summary_table(diff: PlanDiff) -> list[str]:
    base, head = diff.base, diff.head
    return [
        "| | BASE | HEAD | Change |",
        "|---|---:|---:|---:|",
        _row("Cost per month", *cost_cells(diff)),
        f"| Cost per hour | {hourly(diff.base_micros)} | {hourly(diff.head_micros)} | "
        f"{signed_hourly(diff.delta_micros)} |",
        f"| New nodes | {base['newNodes']} | {head['newNodes']} | {signed_count(diff.new_nodes_delta)} |",
        f"| Unschedulable pods | {base['unschedulable']} | {head['unschedulable']} | "
        f"{signed_count(diff.unschedulable_delta)} |",
        f"| Lint findings | {base['lintFindings']} | {head['lintFindings']} | "
        f"{len(diff.lint_new)} new, {len(diff.lint_fixed)} fixed"
        + (f", {len(diff.lint_removed)} gone with their objects" if diff.lint_removed else "") + " |",
    ]


def cost_cells(change: CostChange) -> tuple[str, str, str]:
    """BASE's and HEAD's monthly cost and the signed change, as a workload's or a pool's row shows them."""
    return monthly(change.base_micros), monthly(change.head_micros), signed_monthly(change.delta_micros)


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _capped(rows: Sequence[str], total: int) -> list[str]:
    out = list(rows[:MAX_ROWS])
    if total > MAX_ROWS:
        out.append(f"\n_and {total - MAX_ROWS} more (`-o json` lists them all)_")
    return out


def _pods(w: WorkloadChange) -> str:
    return str(w.pods_head) if w.pods_base == w.pods_head else f"{w.pods_base} → {w.pods_head}"


def fields_cell(fields: Sequence[str]) -> str:
    """What a changed definition changed, one field a line."""
    return "<br>".join(f"`{cell(f)}`" for f in fields)


JOBS_NOTE = ("Job and CronJob rows: their nodes run only while they do; the monthly figures are what they would "
             "cost running all month (read the hourly figure per hour of run).")


def change_cell(w: WorkloadChange) -> str:
    """The row's change, and "now placed" when its pods went from unplaced to placed."""
    return f"{w.change}, {w.placement}" if w.placement else w.change


def _workloads_table(workloads: Sequence[WorkloadChange]) -> list[str]:
    if not workloads:
        return ["No workload changed, and none costs more or less."]
    rows = [_row(f"`{cell(w.workload)}`", change_cell(w), _pods(w), *cost_cells(w), "<br>".join(filter(None, (fields_cell(w.fields), cell(w.note)))),
                 _where(w.file, w.line)) for w in workloads]
    jobs = ["", f"<sub>{JOBS_NOTE}</sub>"] if any(w.runs_to_completion for w in workloads) else []
    return ["| Workload | Change | Pods | BASE $/month | HEAD $/month | Change $/month | What changed | Defined at |",
            "|---|---|---:|---:|---:|---:|---|---|", *_capped(rows, len(rows)), *jobs]


def _pools_table(pools: Sequence[PoolChange]) -> list[str]:
    rows = [_row(f"`{cell(p.name)}`", p.change, f"{p.nodes_base} → {p.nodes_head}", *cost_cells(p),
                 monthly(p.idle_head_micros),
                 "<br>".join(filter(None, (fields_cell(p.fields), cell(p.launch_note() or ""), cell(p.idle_note() or ""),
                                          cell(p.note)))))
            for p in pools]
    return ["| NodePool | Change | New nodes | BASE $/month | HEAD $/month | Change $/month | HEAD idle $/month "
            "| What changed |",
            "|---|---|---:|---:|---:|---:|---:|---|", *_capped(rows, len(rows))]


def _unschedulable_table(pods: Sequence[NewlyUnschedulable]) -> list[str]:
    """Pods of one workload left out for the same reasons share a row."""
    rows = []
    for members in by_workload(pods):
        names = ", ".join(f"`{cell(p.pod)}`" for p in members[:4]) + (
            f" and {len(members) - 4} more" if len(members) > 4 else "")
        why = "<br>".join(cell(r) for r in members[0].reasons) or "(no reason recorded)"
        rows.append(_row(names, f"`{cell(members[0].workload)}`", why, _where(members[0].file, members[0].line)))
    return ["| Pods | Workload | Why | Defined at |", "|---|---|---|---|", *_capped(rows, len(rows))]


def _findings_table(findings: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = [_row(str(f["severity"]), f"`{f['rule']}`", _where(str(f["file"]), int(f["line"])), cell(f["object"]),
                 cell(f["message"])) for f in findings]
    return ["| Severity | Rule | Where | Object | Message |", "|---|---|---|---|---|", *_capped(rows, len(rows))]


def render_markdown(diff: PlanDiff) -> str:
    lines = [f"## {headline(diff)}", ""]
    if diff.gate.reasons:
        lines += [f"**This change fails the check:** {'; '.join(diff.gate.reasons)}.", ""]
    lines += [f"> {cell(note)}" for note in diff.notes]
    if diff.notes:
        lines.append("")
    lines += [*_summary_table(diff), ""]
    changed = diff.changed_workloads
    lines += [f"### Workloads ({len(changed)} changed or costing differently)", "", *_workloads_table(changed), ""]
    pools = diff.changed_pools
    if pools:
        lines += [f"### NodePools ({len(pools)})", "", *_pools_table(pools), ""]
    if diff.newly_unschedulable:
        lines += [f"### Newly unschedulable pods ({len(diff.newly_unschedulable)})", "",
                  *_unschedulable_table(diff.newly_unschedulable), ""]
    if diff.lint_new:
        lines += [f"### New lint findings ({len(diff.lint_new)})", "", *_findings_table(diff.lint_new), ""]
    if diff.lint_fixed:
        lines += [f"### Lint findings fixed ({len(diff.lint_fixed)})", "", *_findings_table(diff.lint_fixed), ""]
    if diff.lint_removed:
        lines += [f"### Lint findings gone with their objects ({len(diff.lint_removed)}: removed or renamed, "
                  "not fixed)", "", *_findings_table(diff.lint_removed), ""]
    region = diff.head.get("region") or diff.base.get("region")
    estimated = diff.head.get("estimatedPrices") or diff.base.get("estimatedPrices")
    spot = diff.head.get("spotPrices") or diff.base.get("spotPrices")
    spot_note = f" Some prices are estimates (spot prices {cell(spot)})." if estimated and spot else ""
    lines += [f"<sub>Planned with the {diff.engine} engine in {region}; monthly = hourly × {HOURS_PER_MONTH} h."
              f"{spot_note} Cost per workload: {cell(RULE)}.</sub>", ""]
    return "\n".join(lines)
