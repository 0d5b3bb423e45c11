"""Identical new nodes folded into one row of the plan's table (`×N`), so a plan of thirty alike nodes reads
in a few lines; `-o json` and `-o yaml` still list every node.

New nodes are alike when a reader could not tell their rows apart: the same NodePool, instance type, zone,
capacity type, price (and whether it is estimated), static or not, allocatable and requests (so the same
bars), and the same workloads with the same counts. Existing nodes keep a row each: they have their own
names and pods already bound.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from karpplan.plan import PlanNode, PlanPod
from karpplan.render.formatting import workload_counts, workload_label

GROUP_MARK = "\u00d7"  # ×
ASCII_GROUP_MARK = "x"


@dataclass(frozen=True)
class NodeRow:
    """One row of the nodes table: a node, or `count` alike new nodes (`node` is the first of them)."""

    node: PlanNode
    names: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.names)


def _likeness(node: PlanNode, pods_by_key: Mapping[str, PlanPod]) -> Hashable:
    workloads = tuple(workload_counts(workload_label(k, pods_by_key) for k in node.pods))
    return (node.node_pool, node.instance_type, node.zone, node.capacity_type, node.hourly_price,
            node.price_estimated, node.static, node.allocatable, node.requested, workloads)


def node_rows(nodes: Sequence[PlanNode], pods_by_key: Mapping[str, PlanPod]) -> list[NodeRow]:
    """The nodes as rows, in their order; alike new nodes share the row of the first of them."""
    rows: list[NodeRow] = []
    groups: dict[Hashable, list[str]] = {}
    firsts: dict[Hashable, PlanNode] = {}
    order: list[Hashable | PlanNode] = []
    for node in nodes:
        if not node.new:
            order.append(node)
            continue
        key = _likeness(node, pods_by_key)
        if key not in groups:
            groups[key], firsts[key] = [], node
            order.append(key)
        groups[key].append(node.name)
    for item in order:
        if isinstance(item, PlanNode):
            rows.append(NodeRow(item, (item.name,)))
        else:
            rows.append(NodeRow(firsts[item], tuple(groups[item])))
    return rows


def names_range(names: Sequence[str]) -> str:
    """The names of a row's nodes in one: `default-m5-large-us-east-1a-1..30` when they differ only in their
    tails, else the first name with `..` (the rest are in -o json)."""
    first, last = names[0], names[-1]
    if len(names) == 1:
        return first
    common = os.path.commonprefix(list(names))
    while common and common[-1].isdigit():  # -10..19, not -10..9
        common = common[:-1]
    tails = [name[len(common):] for name in names]
    if len(common) >= len(first) // 2 and all(t.isdigit() for t in tails):
        return common + _ordinal_runs(sorted(int(t) for t in tails))
    if len(common) >= len(first) // 2 and last[len(common):]:
        return f"{first}..{last[len(common):]}"
    return f"{first}.."


def _ordinal_runs(ordinals: Sequence[int], shown: int = 3) -> str:
    """`1..3,5..7`: the ordinals as runs, so a row of 6 nodes never reads `1..7` (at most `shown` runs, then ,…)."""
    runs: list[list[int]] = []
    for n in ordinals:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = [f"{a}" if a == b else f"{a}..{b}" for a, b in runs[:shown]]
    return ",".join(text) + (",…" if len(runs) > shown else "")
