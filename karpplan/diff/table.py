"""A PlanDiff for people at a terminal: the cost change in one line, the two sides, what changed, pods the
change leaves unschedulable and lint's new findings. Presentation only: every figure is the PlanDiff's.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from karpplan.diff.markdown import (
    JOBS_NOTE,
    change_cell,
    cost_cells,
    headline,
    hourly,
    signed_count,
    signed_hourly,
)
from karpplan.diff.model import PlanDiff, WorkloadChange, by_workload
from karpplan.render.wrap import first_column_width, wrap_words

MAX_ROWS = 30


def _table(console: Console, title: str) -> Table:
    return Table(title=Text(title, style="bold"), title_justify="left", show_edge=False, pad_edge=False,
                 collapse_padding=True, box=box.ASCII2 if console.options.ascii_only else box.SIMPLE_HEAD)


def _pods(w: WorkloadChange) -> str:
    return str(w.pods_head) if w.pods_base == w.pods_head else f"{w.pods_base} -> {w.pods_head}"


def _print_changes(console: Console, title: str, names: tuple[str, str], rows: list[tuple[Text | str, ...]],
                   fields: list[tuple[str, tuple[str, ...]]]) -> None:
    """Workloads or pools: the name, its change, `names[1]` (pods, nodes), BASE's and HEAD's cost, the change;
    then what each changed definition changed (`fields`: name, changed fields)."""
    table = _table(console, title)
    for column in (names[0], "Change", names[1], "BASE $/mo", "HEAD $/mo", "Change $/mo"):
        table.add_column(column, overflow="fold", justify="left" if column in (names[0], "Change") else "right")
    width = first_column_width(table, rows, console.width)  # names wrapped at their separators, never mid-word
    for name, *rest in rows:
        style = name.style if isinstance(name, Text) else ""
        table.add_row(Text("\n".join(wrap_words(str(name), width, ascii_only=console.options.ascii_only)),
                           style=style), *rest)
    console.print()
    console.print(table)
    for name, changed in fields:
        if changed:
            console.print(Text(f"{name}:\n" + "\n".join(f"  {f}" for f in changed), style="dim"), highlight=False,
                          emoji=False)


def render_table(diff: PlanDiff, console: Console) -> None:
    def say(text: Text) -> None:
        console.print(text, highlight=False, emoji=False)

    style = "bold red" if diff.delta_micros > 0 or diff.newly_unschedulable else (
        "bold green" if diff.delta_micros < 0 else "bold")
    say(Text(headline(diff), style=style))
    for note in diff.notes:
        say(Text(note, style="yellow"))
    limit = diff.describe_time_limit()
    if limit:
        say(Text(f"Planned with the {diff.engine} engine, {limit}.", style="dim"))
    sides = _table(console, "BASE and HEAD")
    for column in ("", "BASE", "HEAD", "Change"):
        sides.add_column(column, justify="right" if column else "left")
    sides.add_row("$/month", *cost_cells(diff))
    sides.add_row("$/hour", hourly(diff.base_micros), hourly(diff.head_micros), signed_hourly(diff.delta_micros))
    sides.add_row("new nodes", str(diff.base["newNodes"]), str(diff.head["newNodes"]), signed_count(diff.new_nodes_delta))
    sides.add_row("unschedulable", str(diff.base["unschedulable"]), str(diff.head["unschedulable"]),
                  signed_count(diff.unschedulable_delta))
    console.print()
    console.print(sides)
    changed = diff.changed_workloads
    if changed:
        _print_changes(console, f"Workloads ({len(changed)} changed or costing differently)", ("Workload", "Pods"),
                       [(Text(w.workload), change_cell(w), _pods(w), *cost_cells(w)) for w in changed[:MAX_ROWS]],
                       [(w.workload, w.fields + ((w.note,) if w.note else ())) for w in changed[:MAX_ROWS]])
        if any(w.runs_to_completion for w in changed[:MAX_ROWS]):
            say(Text(JOBS_NOTE, style="dim"))
    pools = diff.changed_pools
    if pools:
        _print_changes(console, f"NodePools ({len(pools)} changed or costing differently)", ("NodePool", "New nodes"),
                       [(Text(p.name), p.change, f"{p.nodes_base} -> {p.nodes_head}", *cost_cells(p))
                        for p in pools[:MAX_ROWS]],
                       [(p.name, p.fields + tuple(filter(None, (p.launch_note(), p.idle_note(), p.note))))
                        for p in pools[:MAX_ROWS]])
    if diff.newly_unschedulable:
        console.print()
        say(Text(f"Newly unschedulable pods ({len(diff.newly_unschedulable)})", style="bold red"))
        for members in by_workload(diff.newly_unschedulable)[:MAX_ROWS]:
            names = ", ".join(p.pod for p in members[:4]) + (f" and {len(members) - 4} more" if len(members) > 4 else "")
            say(Text(f"{names} ({members[0].workload}): " + "; ".join(members[0].reasons)))
    if diff.lint_new:
        console.print()
        say(Text(f"New lint findings ({len(diff.lint_new)})", style="bold yellow"))
        for f in diff.lint_new[:MAX_ROWS]:
            say(Text(f"{f['file']}:{f['line']}: {f['severity']} {f['rule']}: {f['object']}: {f['message']}"))
    for title, found, style in ((f"Lint findings fixed ({len(diff.lint_fixed)})", diff.lint_fixed, "green"),
                                (f"Lint findings gone with their objects ({len(diff.lint_removed)}: removed or "
                                 "renamed, not fixed)", diff.lint_removed, "default")):
        if found:
            console.print()
            say(Text(title, style=style))
            for f in found[:MAX_ROWS]:
                say(Text(f"{f['file']}:{f['line']}: {f['severity']} {f['rule']}: {f['object']}: {f['message']}"))
    if diff.gate.reasons:
        console.print()
        say(Text("fails the check: " + "; ".join(diff.gate.reasons), style="bold red"))
