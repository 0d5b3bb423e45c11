"""Workloads whose pods leave existing nodes for new capacity between BASE and HEAD (or come back).

The plan charges new nodes only: pods on existing nodes (pasted Nodes, eksctl node groups) cost nothing there.
A change that moves them onto new capacity (a Fargate profile that now selects their namespace, a taint on the
node group, a nodeSelector) shows as a workload going from $0 to a price while its definition is "unchanged";
the existing nodes keep running all the same. Said in a note beside the numbers, so the reviewer reads the
increase as new spending, not as a cost the workload always had.
"""

from __future__ import annotations

from collections.abc import Iterable

from karpplan.costs.showback import pool_of, workload_key
from karpplan.diff.model import WorkloadChange
from karpplan.diff.side import Side
from karpplan.plan import Plan


def _placements(plan: Plan) -> dict[str, tuple[list[str], list[str]]]:
    """Workload -> (the existing nodes its pods are on, the pools of the new nodes they are on)."""
    nodes = {n.name: n for n in plan.nodes}
    out: dict[str, tuple[list[str], list[str]]] = {}
    for pod in plan.pods:
        node = nodes.get(pod.node or "")
        if node is None or pod.bound:
            continue
        existing, new = out.setdefault(workload_key(pod.workload, pod.namespace), ([], []))
        (new if node.new else existing).append(pool_of(node) if node.new else node.name)
    return out


def _names(items: Iterable[str]) -> str:
    unique = sorted(set(items))
    return ", ".join(unique[:2]) + (f" and {len(unique) - 2} more" if len(unique) > 2 else "")


def moved_notes(base: Side, head: Side, workloads: Iterable[WorkloadChange]) -> tuple[str, ...]:
    """A note for each workload HEAD places on new capacity where BASE placed it on existing nodes, and back."""
    before, after = _placements(base.plan), _placements(head.plan)
    notes: list[str] = []
    for w in workloads:
        b_existing, _ = before.get(w.workload, ([], []))
        h_existing, h_new = after.get(w.workload, ([], []))
        if len(b_existing) > len(h_existing) and h_new and w.delta_micros > 0:
            notes.append(f"{w.workload}: BASE runs {len(b_existing)} of its pods on existing nodes "
                         f"({_names(b_existing)}), which the plan does not charge; HEAD runs {len(h_new)} on new "
                         f"capacity ({_names(h_new)}): new spending, while the existing nodes keep running unless "
                         "they are scaled down")
        elif len(h_existing) > len(b_existing) and w.delta_micros < 0:
            notes.append(f"{w.workload}: HEAD runs {len(h_existing)} of its pods on existing nodes "
                         f"({_names(h_existing)}), which the plan does not charge: the saving is only the new "
                         "capacity BASE would launch for them")
    return tuple(notes)
