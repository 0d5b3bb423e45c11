"""The Plan for people: nodes per zone with utilisation bars, Fargate pods, what could not be placed, and a
summary with the cost and how it compares to Karpenter's own (greedy) plan.

Renderers never decide: every number shown comes from the Plan. What happens here is presentation only:
grouping nodes by zone, counting a node's pods per workload, folding identical unschedulable reasons,
ratios for bars and percentages.

All text is handed to rich as `Text` (never markup), so a pod named `[bold]x` prints as written. Glyphs
beyond ASCII (bars, table borders) are only used when the console's encoding is UTF; colours only when
the console has a colour system (rich drops styles otherwise, and honours NO_COLOR).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from karpplan.costs import Costs
from karpplan.model.quantity import parse_quantity
from karpplan.model.resources import CPU, MEMORY
from karpplan.plan import Plan, PlanNode, PlanPod, UnschedulablePod
from karpplan.render.caveats import nodes_heading
from karpplan.render.costs_table import costs_section
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
from karpplan.render.names import MIN_NAME_WIDTH, node_name_lines, short_name
from karpplan.render.node_rows import ASCII_GROUP_MARK, GROUP_MARK, NodeRow, names_range, node_rows
from karpplan.render.plan_summary import summary_panel
from karpplan.render.wrap import GLUE, first_column_width, wrap_words

BAR_WIDTH = 8
MAX_POD_NAMES_SHOWN = 4  # per group of unschedulable pods sharing the same reasons
PLACED_ON_EXISTING_MARK = "+"
NO_ZONE = "(no zone)"
WORKLOADS_INDENT = "  "  # a node's workloads, under its name
_COUNT_WORDS = re.compile(r" (?=x\d+\b|more\b)")  # the space before a count (`abbreviate_counts`)


# ------------------------------------------------------------------------------------------ formatting
def node_price_text(node: PlanNode) -> Text:
    """The hourly price, `~`-marked when estimated; `-` for an existing node the plan does not pay for."""
    if not node.new and node.hourly_price == 0:
        return Text("-", style="dim")
    text = format_hourly(node.hourly_price)
    if node.price_estimated:
        return Text(ESTIMATED_MARK + text, style="yellow")
    return Text(text)


@dataclass(frozen=True)
class BarGlyphs:
    full: str
    empty: str


UNICODE_BAR = BarGlyphs("\u2588", "\u2591")  # full block, light shade
ASCII_BAR = BarGlyphs("#", ".")


def bar_glyphs(console: Console) -> BarGlyphs:
    """Block characters on UTF consoles; `#`/`.` where the encoding cannot show them."""
    return ASCII_BAR if console.options.ascii_only else UNICODE_BAR


def utilisation_bar(used: int, total: int, glyphs: BarGlyphs, *, width: int = BAR_WIDTH, style: str = "") -> Text:
    """`████░░░░  52%`: `used` of `total`; over 100% the bar is full and the percentage red."""
    if total <= 0:
        return Text("n/a" if used <= 0 else "no allocatable", style="dim")
    ratio = used / total
    filled = min(width, round(ratio * width))
    if used > 0 and filled == 0:
        filled = 1  # something is requested: never draw an empty bar for it
    over = used > total
    bar = Text()
    bar.append(glyphs.full * filled, style="red" if over else style)
    bar.append(glyphs.empty * (width - filled), style="dim")
    bar.append(f" {ratio * 100:3.0f}%", style="bold red" if over else "")
    return bar


# ------------------------------------------------------------------------------------------ workloads
def node_workloads(node: PlanNode, pods_by_key: Mapping[str, PlanPod]) -> str:
    """The node's pods as workloads with counts; on an existing node, what this plan adds is `+`-marked."""
    if node.new:
        return abbreviate_counts(workload_counts(workload_label(k, pods_by_key) for k in node.pods))
    labels = []
    for key in node.pods:
        pod = pods_by_key.get(key)
        mark = "" if pod is None or pod.bound else PLACED_ON_EXISTING_MARK
        labels.append(mark + workload_label(key, pods_by_key))
    return abbreviate_counts(workload_counts(labels))


def _adds_to_existing(node: PlanNode, pods_by_key: Mapping[str, PlanPod]) -> bool:
    return not node.new and any(k in pods_by_key and not pods_by_key[k].bound for k in node.pods)


# ------------------------------------------------------------------------------------------ layout
# SIMPLE_HEAD (a rule under the header, no verticals) in ASCII: rich would otherwise swap a non-ASCII box for
# its fully ruled ASCII box on non-UTF consoles, which needs more width.
SIMPLE_HEAD_ASCII = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)
WIDE_LAYOUT_MIN_WIDTH = 104  # below this the nodes table stacks cpu/memory and type/capacity in one column


@dataclass(frozen=True)
class Layout:
    """How this console can show things: glyphs it can encode, and how wide the node table may be."""

    glyphs: BarGlyphs
    table_box: box.Box
    width: int

    @property
    def wide(self) -> bool:
        return self.width >= WIDE_LAYOUT_MIN_WIDTH

    @classmethod
    def for_console(cls, console: Console) -> Layout:
        ascii_only = console.options.ascii_only
        return cls(
            glyphs=bar_glyphs(console),
            table_box=SIMPLE_HEAD_ASCII if ascii_only else box.SIMPLE_HEAD,
            width=console.width,
        )

    def table(self, title: Text, *, show_lines: bool = False) -> Table:
        """Light borders and collapsed padding: bars and prices fit on one line at 120 columns."""
        return Table(title=title, title_justify="left", box=self.table_box, show_edge=False, pad_edge=False,
                     collapse_padding=True, show_lines=show_lines)


@dataclass
class _Footnotes:
    estimated: bool = False
    placed_on_existing: bool = False
    shortened: bool = False  # a node name was shortened to fit (render/names.py)
    shortened_pods: bool = False  # a Fargate pod's name was shortened to fit
    grouped: str = ""  # the mark of a row of alike new nodes (render/node_rows.py), when the table has one

    def lines(self) -> list[Text]:
        out = []
        if self.estimated:
            out.append(Text(f"{ESTIMATED_MARK} estimated price: the catalog has no published price for this offering",
                            style="dim"))
        if self.placed_on_existing:
            out.append(Text(f"{PLACED_ON_EXISTING_MARK} pods this plan places on an existing node", style="dim"))
        if self.grouped:
            out.append(Text(f"{self.grouped}N  N alike new nodes in one row (same pool, type, zone, capacity type and "
                            "workloads): price, bars and pods are each node's; -o json lists every node",
                            style="dim"))
        if self.shortened:
            out.append(Text("node names shortened to fit (zone, EC2 domain left out); -o json has them whole",
                            style="dim"))
        if self.shortened_pods:
            out.append(Text("pod names shortened to fit; -o json has them whole", style="dim"))
        return out


# ------------------------------------------------------------------------------------------ sections
def _zones(nodes: Iterable[PlanNode]) -> dict[str, list[PlanNode]]:
    """EC2 nodes by zone, zones sorted, existing nodes before new ones, otherwise in plan order."""
    by_zone: dict[str, list[PlanNode]] = {}
    for node in nodes:
        by_zone.setdefault(node.zone or NO_ZONE, []).append(node)
    return {zone: sorted(by_zone[zone], key=lambda n: n.new) for zone in sorted(by_zone)}


def _zone_cells(zone: str, nodes: Sequence[PlanNode], budget: int) -> tuple[Text, Text, Text]:
    """A zone's heading: its name and node count (under the name when both do not fit the column), what its new
    nodes cost, how many pods it runs."""
    new = [n for n in nodes if n.new]
    count = f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}"
    if new and len(new) != len(nodes):
        count += f", {len(new)} new"
    cost = Text(format_hourly(sum(n.hourly_price for n in new)), style="bold") if new else Text("")
    pods = Text(str(sum(len(n.pods) for n in nodes)), style="bold")
    heading = f"{zone} ({count})"
    if len(heading) > budget:
        heading = "\n".join([zone, *wrap_words(f"({count})", budget)])
    return Text(heading, style="bold underline"), cost, pods


def _node_cell(row: NodeRow, pods_by_key: Mapping[str, PlanPod], layout: Layout, notes: _Footnotes,
               budget: int) -> Text:
    """The name (shortened to fit whole; a row of alike nodes names them as a range) with the workloads under
    it: one flexible column lets the others stay on one line."""
    node, whole = row.node, names_range(row.names)
    name = "\n".join(node_name_lines(whole, node.zone, budget, ascii_only=layout.table_box is SIMPLE_HEAD_ASCII))
    notes.shortened |= name.replace("\n", "") != whole
    cell = Text(name)
    workloads = node_workloads(node, pods_by_key)
    if workloads:  # under the name, indented, wrapped between names or at their separators (render/wrap.py)
        glued = _COUNT_WORDS.sub(GLUE, workloads)  # `web x2`, `+3 more` stay whole
        lines = wrap_words(glued, budget - len(WORKLOADS_INDENT), ascii_only=layout.table_box is SIMPLE_HEAD_ASCII)
        cell.append("".join(f"\n{WORKLOADS_INDENT}{line}" for line in lines), style="dim")
    return cell


def _marker(row: NodeRow, layout: Layout, notes: _Footnotes) -> Text:
    node = row.node
    if node.static:  # a static NodePool's node: new, but there whatever is pending
        text = Text("STATIC", style="bold green")
    else:
        text = Text("NEW", style="bold green") if node.new else Text("existing", style="dim")
    if row.count > 1:
        notes.grouped = ASCII_GROUP_MARK if layout.table_box is SIMPLE_HEAD_ASCII else GROUP_MARK
        text.append(f" {notes.grouped}{row.count}", style="bold")
    return text


# Accelerators a node's bars show besides CPU and memory: a GPU node sized by its GPUs reads 25% CPU otherwise.
ACCELERATORS = (("gpu", "nvidia.com/gpu"), ("gpu", "amd.com/gpu"), ("neu", "aws.amazon.com/neuroncore"),
                ("neu", "aws.amazon.com/neuron"))


def _bars(node: PlanNode, glyphs: BarGlyphs) -> tuple[Text, Text]:
    cpu = utilisation_bar(node.requested.get(CPU), node.allocatable.get(CPU), glyphs, style="cyan")
    memory = utilisation_bar(node.requested.get(MEMORY), node.allocatable.get(MEMORY), glyphs, style="magenta")
    for label, name in ACCELERATORS:
        if node.allocatable.get(name) > 0:  # the first the node has, on a line of its own under memory
            memory.append(f"\n{label} ").append_text(
                utilisation_bar(node.requested.get(name), node.allocatable.get(name), glyphs, style="green"))
            break
    return cpu, memory


def _nodes_table(zones: Mapping[str, Sequence[PlanNode]], pods_by_key: Mapping[str, PlanPod], layout: Layout,
                 notes: _Footnotes) -> Table:
    """One table with a section per zone, so the columns line up from zone to zone."""
    count = sum(len(nodes) for nodes in zones.values())
    existing = sum(1 for nodes in zones.values() for n in nodes if not n.new)
    # as the summary counts them; all new (marked NEW, row by row): the count alone
    title = nodes_heading(existing, count - existing, 0) if existing else f"Nodes ({count})"
    table = layout.table(Text(f"{title} by zone", style="bold"))
    table.add_column("Node / workloads", overflow="fold", min_width=16)
    table.add_column("", no_wrap=True)  # NEW / STATIC / existing
    if layout.wide:
        table.add_column("Pool", overflow="fold", max_width=14)
        table.add_column("Type", no_wrap=True)
        table.add_column("Capacity", no_wrap=True)
    else:
        table.add_column("Pool / type", overflow="fold", max_width=16)
    table.add_column("$/h", justify="right", no_wrap=True)
    if layout.wide:
        table.add_column("CPU", no_wrap=True)
        table.add_column("Memory", no_wrap=True)
    else:
        table.add_column("CPU / memory", no_wrap=True)
    table.add_column("Pods", justify="right", no_wrap=True)
    blank = Text("")
    # The other cells first: the name column gets what they leave (`_name_width`).
    planned: list[tuple[str, Sequence[PlanNode], list[tuple[NodeRow, list[Text]]]]] = []
    for zone, nodes in zones.items():
        cells: list[tuple[NodeRow, list[Text]]] = []
        for row in node_rows(nodes, pods_by_key):
            node = row.node
            notes.estimated |= node.price_estimated
            notes.placed_on_existing |= _adds_to_existing(node, pods_by_key)
            cpu, memory = _bars(node, layout.glyphs)
            if layout.wide:
                launch: tuple[Text, ...] = (Text(node.node_pool or "-"), Text(node.instance_type or "-"),
                                            Text(node.capacity_type or "-"))
                usage: tuple[Text, ...] = (cpu, memory)
            else:
                launch = (Text(f"{node.node_pool or '-'}\n{node.instance_type or '-'}\n{node.capacity_type or '-'}"),)
                usage = (Text("cpu ").append_text(cpu).append("\nmem ").append_text(memory),)
            cells.append((row, [blank, _marker(row, layout, notes), *launch, node_price_text(node), *usage,
                                Text(str(len(node.pods)))]))
        planned.append((zone, nodes, cells))
    def heading(name: Text, cost: Text, pods: Text) -> list[Text]:
        if layout.wide:
            return [name, blank, blank, blank, blank, cost, blank, blank, pods]
        return [name, blank, blank, cost, blank, pods]

    headings = [heading(*_zone_cells(zone, nodes, layout.width)) for zone, nodes, _ in planned]
    budget = first_column_width(table, [c for _, _, cells in planned for _, c in cells] + headings, layout.width,
                                minimum=MIN_NAME_WIDTH)
    for index, (zone, nodes, cells) in enumerate(planned):
        table.add_row(*heading(*_zone_cells(zone, nodes, budget)))
        for position, (row, other) in enumerate(cells):
            table.add_row(_node_cell(row, pods_by_key, layout, notes, budget), *other[1:],
                          end_section=position == len(cells) - 1 and index < len(planned) - 1)
    return table


def _fargate_requested(node: PlanNode) -> str:
    info = node.fargate
    assert info is not None
    cpu = info.requested_cpu or node.requested.formatted().get(CPU, "0")
    memory = info.requested_memory or node.requested.formatted().get(MEMORY, "0")
    return f"{cpu} CPU, {memory}"


def readable_bytes(quantity: str) -> str:
    """A memory quantity as a person reads it: `786432Ki` -> `768Mi`, `1395864371` -> `1.3Gi`."""
    amount = parse_quantity(quantity).value()
    if amount >= 2**30:
        return f"{amount / 2**30:.1f}".rstrip("0").rstrip(".") + "Gi"
    if amount >= 2**20:
        return f"{amount / 2**20:.0f}Mi"
    return quantity


def _fargate_waste(node: PlanNode) -> Text:
    info = node.fargate
    assert info is not None
    parts = []
    if info.waste_cpu and info.waste_cpu != "0":
        parts.append(f"+{info.waste_cpu} CPU")
    if info.waste_memory and info.waste_memory != "0":
        parts.append(f"+{readable_bytes(info.waste_memory)}")
    if not parts:
        return Text("none", style="dim")
    return Text(", ".join(parts), style="yellow")


# The Fargate table's columns (header, wraps at spaces); each gets an explicit width (`_fargate_widths`), as rich's
# own shrinking cuts the price column or folds headers mid-word on an 80-column terminal.
_FARGATE_COLUMNS = (("Pod", False), ("Profile", True), ("Zone", False), ("Size", True), ("Requested", True),
                    ("Rounding waste", True), ("$/h", False))


def _fargate_widths(nodes: Sequence[PlanNode], layout: Layout) -> list[int]:
    """Each column as wide as its longest cell (headers count); when that is wider than the console, sizes and
    requests wrap at their spaces, then the pod names lose their middle (never below MIN_NAME_WIDTH)."""
    rows = [(", ".join(n.pods) or n.name, (n.fargate.profile if n.fargate else None) or "-", n.zone or "-",
             n.fargate.capacity_provisioned if n.fargate else "", _fargate_requested(n), str(_fargate_waste(n)),
             node_price_text(n).plain) for n in nodes]
    headers = [h if h != "Rounding waste" or layout.wide else "Waste" for h, _ in _FARGATE_COLUMNS]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    widths[0], widths[1] = min(widths[0], 30), min(widths[1], 16)
    gaps = 2 * (len(widths) - 1)
    for i in (3, 4, 5):  # wrapped: its longest word, at least its header
        if sum(widths) + gaps > layout.width:
            widths[i] = max([len(headers[i]), *(len(w) for r in rows for w in r[i].split())])
    widths[0] = min(widths[0], max(MIN_NAME_WIDTH, layout.width - gaps - sum(widths[1:])))
    # Still too wide (the name's floor): the profile folds, then the name gives a little more; never the price,
    # which rich would otherwise cut to `$0.06…`.
    for i, floor in ((1, 7), (0, 10)):
        excess = sum(widths) + gaps - layout.width
        if excess > 0:
            widths[i] -= min(excess, max(0, widths[i] - floor))
    return widths


def _fargate_section(nodes: Sequence[PlanNode], pods_by_key: Mapping[str, PlanPod], layout: Layout,
                     notes: _Footnotes) -> Group:
    """One row per Fargate pod; each hint is printed whole under the table (too long for a column), once per
    workload whose pods share it (replicas are sized alike), with how many pods it is."""
    table = layout.table(Text(f"Fargate pods ({len(nodes)})", style="bold"))
    widths = _fargate_widths(nodes, layout)
    pod_width = widths[0]
    for (header, wraps), width in zip(_FARGATE_COLUMNS, widths, strict=True):
        if header == "Rounding waste" and not layout.wide:
            header = "Waste"
        justify: Literal["left", "right"] = "right" if header == "$/h" else "left"
        table.add_column(header, width=width, no_wrap=not wraps, overflow="fold" if wraps else "ellipsis",
                         justify=justify)
    hints = Table.grid(padding=(0, 1, 0, 0))
    hints.add_column(no_wrap=True)
    hints.add_column(overflow="fold")
    hinted: dict[tuple[str, str], list[str]] = {}  # (workload, hint) -> its pods
    for node in nodes:
        info = node.fargate
        assert info is not None
        notes.estimated |= node.price_estimated
        pods = ", ".join(node.pods) or node.name
        shown = short_name(pods, pod_width, ascii_only=layout.table_box is SIMPLE_HEAD_ASCII)
        notes.shortened_pods |= shown != pods
        table.add_row(
            Text(shown),
            Text(info.profile or "-"),
            Text(node.zone or "-"),
            Text(info.capacity_provisioned),
            Text(_fargate_requested(node)),
            _fargate_waste(node),
            node_price_text(node),
        )
        if info.hint:
            label = workload_label(node.pods[0], pods_by_key) if node.pods else pods
            hinted.setdefault((label, info.hint), []).append(pods)
    for (label, hint), named in hinted.items():
        hints.add_row(Text(f"{named[0] if len(named) == 1 else f'{label} ({len(named)} pods)'}:", style="bold"),
                      Text(hint))
    if hints.row_count:
        return Group(table, Text("Hints", style="bold"), hints)
    return Group(table)


def _abbreviate_names(names: Sequence[str], limit: int = MAX_POD_NAMES_SHOWN) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[: limit - 1]) + f" and {len(names) - limit + 1} more"


def _reason_list(reasons: Sequence[str], fix: str = "") -> Table:
    """One reason per line, wrapped with a hanging indent under its bullet; then the smallest fix."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for reason in reasons or ("(no reason recorded)",):
        grid.add_row(Text("-"), Text(reason))
    if fix:
        grid.add_row(Text("fix", style="green"), Text(fix, style="green"))
    return grid


def _unschedulable_table(unschedulable: Sequence[UnschedulablePod], layout: Layout) -> Table:
    """Pods of one workload that failed for the same reasons share one row (10 replicas, one explanation)."""
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    fixes: dict[tuple[str, tuple[str, ...]], str] = {}
    for item in unschedulable:
        groups.setdefault((item.workload, item.reasons), []).append(item.pod)
        if item.fixes:
            fixes[(item.workload, item.reasons)] = str(item.fixes[0].get("plain", ""))
    table = layout.table(Text(f"Unschedulable pods ({len(unschedulable)})", style="bold red"), show_lines=True)
    # Pod names whole where they fit (up to 2/5 of the width), else shortened in the middle, never broken.
    longest = max((len(p) + 1 for pods in groups.values() for p in pods), default=12)
    width = max(16, layout.width // 4, min(longest, layout.width * 2 // 5))
    ascii_only = layout.table_box is SIMPLE_HEAD_ASCII
    table.add_column("Pods", overflow="fold", min_width=12, max_width=width)
    table.add_column("Why", overflow="fold")
    for (workload, reasons), pods in groups.items():
        shown = [short_name(p, width - 1, ascii_only=ascii_only) for p in pods]
        who = Text(_abbreviate_names(shown), style="bold")
        if workload:
            who.append(f"\n{workload}", style="dim")
        if len(pods) > 1:
            who.append(f"\n{len(pods)} pods", style="dim")
        table.add_row(who, _reason_list(reasons, fixes.get((workload, reasons), "")))
    return table


def _warnings(warnings: Sequence[str]) -> Group:
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for warning in warnings:
        grid.add_row(Text("!", style="bold yellow"), Text(warning, style="yellow"))
    return Group(Text(f"Warnings ({len(warnings)})", style="bold yellow"), grid)


# ------------------------------------------------------------------------------------------ entry point
def render_table(plan: Plan, console: Console, costs: Costs | None = None) -> None:
    """Print the plan for a person: zones, Fargate, unschedulable pods, warnings, the costliest workloads
    (with `costs`), then the summary."""
    pods_by_key = {p.key: p for p in plan.pods}
    layout = Layout.for_console(console)
    notes = _Footnotes()
    sections: list[RenderableType] = []
    ec2 = [n for n in plan.nodes if n.fargate is None]
    fargate = [n for n in plan.nodes if n.fargate is not None]
    if ec2:
        sections.append(_nodes_table(_zones(ec2), pods_by_key, layout, notes))
    if fargate:
        sections.append(_fargate_section(fargate, pods_by_key, layout, notes))
    if not plan.nodes:
        sections.append(Text("No nodes: nothing was placed and no existing nodes were given.", style="dim"))
    footnotes = notes.lines()
    if footnotes:
        sections.append(Group(*footnotes))
    if plan.unschedulable:
        sections.append(_unschedulable_table(plan.unschedulable, layout))
    if plan.warnings:
        sections.append(_warnings(plan.warnings))
    kept = plan.summary.preferences.kept if plan.summary.preferences is not None else 0
    by_workload = None if costs is None else costs_section(costs, ascii_only=layout.table_box is SIMPLE_HEAD_ASCII,
                                                           kept_preferences=kept)
    if by_workload is not None:
        sections.append(by_workload)
    sections.append(summary_panel(plan))
    for i, section in enumerate(sections):
        if i:
            console.print()
        console.print(section)


__all__ = [
    "ASCII_BAR",
    "UNICODE_BAR",
    "BarGlyphs",
    "Layout",
    "abbreviate_counts",
    "bar_glyphs",
    "format_hourly",
    "format_monthly",
    "format_percent",
    "plural",
    "render_table",
    "utilisation_bar",
    "workload_counts",
]
