"""PodDisruptionBudgets across a diff: what changed, and whether a workload's pods can still be evicted.

A plan launches nodes; it evicts nothing, so a PDB never moves a plan's cost and the figures of a diff do not
show it. Yet a PDB that allows 0 disruptions stops Karpenter's consolidation, drift and expiry of every node
its pods run on ("Pdb prevents pod evictions", `pkg/utils/pdb/pdb.go`; the disruption controller's
`disruptionsAllowed`): a change that makes it so (`minAvailable` raised to the replicas, `maxUnavailable: 0`)
costs what consolidation would have saved. Each side's PDBs are read with the pods that side plans (each
workload's replicas, every pod healthy, as in a settled cluster), the disruption controller's arithmetic
(`consolidate/pdb.py`), and the diff says each change in fields and when a PDB now allows no eviction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from karpplan.diff.fields import changed_fields
from karpplan.inputs.loader import Document
from karpplan.model.disruption_budgets import allowed, written_budget
from karpplan.model.pods import Pod

KIND = "PodDisruptionBudget"


@dataclass(frozen=True)
class PdbState:
    """One PDB of a side: as written, the workloads it selects and what it allows with their pods healthy."""

    key: str  # namespace/name
    file: str
    line: int
    written: Mapping[str, Any] = field(compare=False, repr=False)
    workloads: tuple[str, ...] = ()  # `Kind/namespace/name` of the planned workloads whose pods it selects
    pods: int = 0
    allows: int = 0  # disruptions it allows when every pod it selects runs

    @property
    def blocks(self) -> bool:
        return self.pods > 0 and self.allows <= 0


def _workload(pod: Pod) -> str:
    kind, _, name = pod.workload.partition("/")
    return f"{kind}/{pod.namespace}/{name}"


def pdb_states(documents: Sequence[Document], pods: Sequence[Pod]) -> dict[str, PdbState]:
    """Every PDB of a side (the first of a name wins) with the pods the side plans, all taken as healthy."""
    healthy = [p if p.node_name else replace(p, node_name="-") for p in pods if not p.terminal]
    out: dict[str, PdbState] = {}
    for doc in documents:
        if doc.kind != KIND:
            continue
        budget = written_budget(doc)
        if budget.key in out:
            continue
        selected = [p for p in healthy if budget.selects(p)]
        written = {"spec": doc.body.get("spec")}
        out[budget.key] = PdbState(budget.key, doc.origin.file, doc.origin.line, written,
                                   tuple(dict.fromkeys(_workload(p) for p in selected)), len(selected),
                                   allowed(budget, selected))
    return out


def _who(state: PdbState) -> str:
    shown = ", ".join(state.workloads[:3]) + (f" and {len(state.workloads) - 3} more" if len(state.workloads) > 3 else "")
    return f"the {state.pods} pod(s) it selects ({shown})"


BLOCKED = ("Karpenter cannot evict them, so consolidation, drift and expiry of the nodes they run on are blocked "
           "(\"Pdb prevents pod evictions\"); the cost figures do not show it (a plan launches nodes, it evicts none)")


def _changed(name: str, base: PdbState, head: PdbState) -> str | None:
    fields = changed_fields([base.written], [head.written])
    if not fields and base.allows == head.allows:
        return None
    what = f"PodDisruptionBudget {name} changed ({'; '.join(fields)})"
    if head.blocks and not base.blocks:
        return f"{what}: it now allows 0 disruptions of {_who(head)}, {base.allows} before: {BLOCKED}"
    if base.blocks and not head.blocks:
        return (f"{what}: it now allows {head.allows} disruption(s) of {_who(head)}, 0 before: Karpenter can "
                "consolidate, drift and expire their nodes again")
    if base.allows != head.allows and head.pods:
        return f"{what}: it allows {head.allows} disruption(s) of {_who(head)}, {base.allows} before"
    return what + (f": it still allows 0 disruptions of {_who(head)}: {BLOCKED}" if head.blocks else "")


def pdb_notes(base: Mapping[str, PdbState], head: Mapping[str, PdbState],
              relabel: Callable[[str], str] = str) -> tuple[str, ...]:
    """A note per PDB added, removed or changed (its fields), saying when it now allows no eviction."""
    notes: list[str] = []
    for key in sorted(base.keys() | head.keys()):
        b, h = base.get(key), head.get(key)
        if h is not None and b is None:
            where = f"{relabel(h.file)}:{h.line}: "
            text = f"PodDisruptionBudget {key} added"
            if h.blocks:
                text += f": it allows 0 disruptions of {_who(h)}: {BLOCKED}"
            notes.append(where + text)
        elif b is not None and h is None:
            notes.append(f"PodDisruptionBudget {key} removed" + (
                f": the pods it held ({', '.join(b.workloads[:3])}) can be evicted again" if b.blocks else ""))
        elif b is not None and h is not None:
            changed = _changed(key, b, h)
            if changed is not None:
                notes.append(f"{relabel(h.file)}:{h.line}: {changed}")
    return tuple(notes)
