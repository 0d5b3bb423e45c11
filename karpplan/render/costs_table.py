"""The plan's cost by workload for people: the top workloads, the idle rest, and the rule behind them.

Every number comes from `costs.Costs` (the same figures as `plan -o json`'s `costs`); this module only
chooses how many lines to show.
"""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from karpplan.costs import Costs
from karpplan.costs.apportion import dollars
from karpplan.costs.showback import monthly, runs_to_completion
from karpplan.render.caveats import RUNS_ONLY
from karpplan.render.formatting import format_hourly, format_monthly, format_percent

TOP_WORKLOADS = 5


IDLE_WORTH_A_WORD = 0.5  # an idle share above this is explained when the plan kept preferences


def costs_section(costs: Costs, *, top: int = TOP_WORKLOADS, ascii_only: bool = False,
                  kept_preferences: int = 0) -> RenderableType | None:
    """The `top` costliest workloads and the idle capacity, or None when the plan costs nothing. With
    `kept_preferences` (--preferences honour kept some) a mostly idle plan says where to look."""
    if costs.hourly_micros <= 0:
        return None
    shown = [w for w in costs.workloads if w.hourly_micros > 0][:top]
    paid = sum(1 for w in costs.workloads if w.hourly_micros > 0)
    title = f"Cost by workload (top {len(shown)} of {paid})" if paid > len(shown) else "Cost by workload"
    table = Table(title=Text(title, style="bold"), title_justify="left", show_edge=False, pad_edge=False,
                  collapse_padding=True, box=box.ASCII2 if ascii_only else box.SIMPLE_HEAD)
    table.add_column("Workload", overflow="fold")
    table.add_column("Pods", justify="right")
    table.add_column("$/hour", justify="right")
    table.add_column("$/month", justify="right")
    table.add_column("Share", justify="right")
    for w in shown:
        month = Text(RUNS_ONLY, style="dim") if runs_to_completion(w.workload) else \
            Text(format_monthly(monthly(w.hourly_micros)))
        table.add_row(Text(w.workload), Text(str(w.pods)), Text(format_hourly(w.hourly_cost)), month,
                      Text(format_percent(w.hourly_micros / costs.hourly_micros)))
    idle = costs.idle_micros
    if idle > 0:
        table.add_row(Text("idle (requested by no pod)", style="dim"), Text(""),
                      Text(format_hourly(dollars(idle)), style="dim"), Text(format_monthly(monthly(idle)), style="dim"),
                      Text(format_percent(idle / costs.hourly_micros), style="dim"))
    rule = Text("Split by the largest of each pod's CPU, memory and GPU share of its node; -o json has every "
                "workload, namespace and NodePool.", style="dim")
    batch = sum(w.hourly_micros for w in costs.workloads if runs_to_completion(w.workload))
    if batch > 0:
        rule.append(f" Jobs and CronJobs ({RUNS_ONLY}): {format_hourly(dollars(batch))} of the "
                    f"{format_hourly(dollars(costs.hourly_micros))} is paid only while their pods run, so the "
                    "plan's $/month overstates them unless they run all month.")
    if kept_preferences and idle > IDLE_WORTH_A_WORD * costs.hourly_micros:
        kept = "preference" if kept_preferences == 1 else "preferences"
        why = Text(f"Idle is {format_percent(idle / costs.hourly_micros)} of the cost: the {kept_preferences} {kept} "
                   "kept as Karpenter keeps them (a preferred spread over hosts, for example, puts one pod on "
                   "each node) can leave nodes mostly empty; --preferences drop plans without them and says what "
                   "they cost.", style="dim")
        return Group(table, rule, why)
    return Group(table, rule)
