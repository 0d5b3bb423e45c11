"""The PlanDiff: what a manifest change does to the plan, as plain facts renderers show without deciding.

`to_document()` is the versioned JSON/YAML document (apiVersion karpplan.io/v1alpha1, kind PlanDiff) that
CI jobs and tests read. It holds nothing that varies between runs (no timings, no temporary paths) and
every list in a fixed order, so the same inputs give byte-identical documents; amounts are kept in
micro-dollars (`costs/apportion.py`) so that identical sides give a delta of exactly zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from karpplan.costs.apportion import dollars
from karpplan.costs.showback import monthly, runs_to_completion
from karpplan.plan import API_VERSION, EXIT_CUT
from karpplan.time_limit import TimeLimit

Change = Literal["added", "removed", "changed", "unchanged"]
CHANGED: tuple[Change, ...] = ("added", "removed", "changed")


class CostChange:
    """An hourly cost on each side, in micro-dollars: a workload's, a pool's or the plan's (the dataclasses below
    declare the two fields)."""

    base_micros: int
    head_micros: int

    @property
    def delta_micros(self) -> int:
        return self.head_micros - self.base_micros

    def costs_document(self) -> dict[str, Any]:
        """Each side's hourly cost, the change, and that change per month."""
        return {"hourlyCostBase": dollars(self.base_micros), "hourlyCostHead": dollars(self.head_micros),
                "hourlyCostDelta": dollars(self.delta_micros), "monthlyCostDelta": monthly(self.delta_micros)}


def _where(file: str, line: int) -> dict[str, Any]:
    """Where the object is defined; null where no side writes it."""
    return {"file": file or None, "line": line or None}


@dataclass(frozen=True)
class WorkloadChange(CostChange):
    workload: str  # `Kind/namespace/name`
    namespace: str
    change: Change
    pods_base: int
    pods_head: int
    base_micros: int
    head_micros: int
    file: str  # HEAD's definition (BASE's for a removed workload); "" when neither side writes it
    line: int
    fields: tuple[str, ...] = ()  # what a changed definition changed (`fields.changed_fields`)
    placed_base: int = 0  # of its pods, those the side's plan places
    placed_head: int = 0
    note: str = ""  # why a change shows no effect: a heavier NodePool still takes its pods (`weights.py`)

    @property
    def placement(self) -> str:
        """"now placed" when BASE left some of its pods unplaced and HEAD places every one (its cost then grows
        from nothing, though its definition may be unchanged); "N of M unschedulable" when HEAD leaves more of
        its pods unplaced than BASE did (its cost then falls, and that is no saving: the pods are listed under
        newly unschedulable too); "" otherwise."""
        if self.pods_base and self.placed_base < self.pods_base and self.pods_head and \
                self.placed_head == self.pods_head:
            return "now placed"
        left_base, left_head = self.pods_base - self.placed_base, self.pods_head - self.placed_head
        if left_head > left_base:
            return f"{left_head} of {self.pods_head} unschedulable" + (f" (BASE: {left_base})" if left_base else "")
        return ""

    @property
    def runs_to_completion(self) -> bool:
        """A Job's or CronJob's pods: their nodes run while they do, not all month."""
        return runs_to_completion(self.workload)

    def to_document(self) -> dict[str, Any]:
        return {
            "workload": self.workload, "namespace": self.namespace, "change": self.change,
            "podsBase": self.pods_base, "podsHead": self.pods_head,
            "placedBase": self.placed_base, "placedHead": self.placed_head,
            **self.costs_document(), **_where(self.file, self.line), "fields": list(self.fields),
            **({"note": self.note} if self.note else {}),
        }


@dataclass(frozen=True)
class PoolChange(CostChange):
    name: str
    change: Change
    nodes_base: int
    nodes_head: int
    base_micros: int
    head_micros: int
    idle_base_micros: int
    idle_head_micros: int
    file: str
    line: int
    fields: tuple[str, ...] = ()  # what a changed definition changed, its node class's included
    # when its idle cost grows: the changed or added workloads on its new HEAD nodes (`compare._idle_neighbours`)
    idle_with: tuple[str, ...] = ()
    # the new nodes each side launches in it, by instance type (`m5.large`, `m5.large spot`): what a narrowed
    # requirement or a bigger request does to the nodes, where the count alone stays `1 -> 1`
    launches: tuple[Mapping[str, int], Mapping[str, int]] = ({}, {})
    note: str = ""  # why it launches nothing on either side: a heavier NodePool takes its pods (`weights.py`)

    def to_document(self) -> dict[str, Any]:
        return {
            "name": self.name, "change": self.change, "nodesBase": self.nodes_base, "nodesHead": self.nodes_head,
            **self.costs_document(),
            "idleHourlyCostBase": dollars(self.idle_base_micros), "idleHourlyCostHead": dollars(self.idle_head_micros),
            **_where(self.file, self.line), "fields": list(self.fields), "idleWith": list(self.idle_with),
            "newNodeTypesBase": dict(self.launches[0]), "newNodeTypesHead": dict(self.launches[1]),
            **({"note": self.note} if self.note else {}),
        }

    def launch_note(self) -> str | None:
        """`new nodes: 1 c6a.2xlarge -> 1 c6a.4xlarge` when the two sides launch other instance types (None when the
        types are the same, or a side launches none: the New nodes column already says how many more or fewer)."""
        if set(self.launches[0]) == set(self.launches[1]) or not self.launches[0] or not self.launches[1]:
            return None
        def text(counts: Mapping[str, int]) -> str:
            return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "none"
        return f"new nodes: {text(self.launches[0])} -> {text(self.launches[1])}"

    def idle_note(self) -> str | None:
        """`$291.42/month more of its nodes left unrequested on HEAD, where changed workloads run: ...`."""
        if not self.idle_with:
            return None
        grew = monthly(self.idle_head_micros - self.idle_base_micros)
        return (f"${grew:,.2f}/month more of its new nodes left unrequested (idle) on HEAD, where these changed "
                f"workloads run: {', '.join(self.idle_with)}")


@dataclass(frozen=True)
class NewlyUnschedulable:
    pod: str  # namespace/name
    workload: str  # `Kind/namespace/name`
    reasons: tuple[str, ...]
    placed_in_base: bool  # False: BASE did not have the pod (an added workload or replica)
    file: str
    line: int

    def to_document(self) -> dict[str, Any]:
        return {"pod": self.pod, "workload": self.workload, "reasons": list(self.reasons),
                "placedInBase": self.placed_in_base, **_where(self.file, self.line)}


def by_workload(pods: Sequence[NewlyUnschedulable]) -> list[list[NewlyUnschedulable]]:
    """The pods, those of one workload left out for the same reasons together, in first-seen order."""
    groups: dict[tuple[str, tuple[str, ...]], list[NewlyUnschedulable]] = {}
    for pod in pods:
        groups.setdefault((pod.workload, pod.reasons), []).append(pod)
    return list(groups.values())


@dataclass(frozen=True)
class Gate:
    """Why the diff fails a check (exit 1), if it does."""

    fail_on_increase: float | None  # `--fail-on-increase PERCENT`
    increase_percent: float | None  # HEAD's cost over BASE's, in percent (None: BASE costs nothing)
    reasons: tuple[str, ...]
    cost_exceeded: bool = False  # the cost grew by more than `fail_on_increase`
    jobs_delta_micros: int = 0  # of the change, the Job and CronJob workloads' (their nodes run only while they do)
    judged_increase_percent: float | None = None  # with Jobs or CronJobs: the increase of the rest, which the gate judges

    @property
    def exit_code(self) -> int:
        return 1 if self.reasons else 0

    def to_document(self) -> dict[str, Any]:
        return {"exitCode": self.exit_code, "reasons": list(self.reasons),
                "failOnIncreasePercent": self.fail_on_increase, "costExceeded": self.cost_exceeded,
                "increasePercent": None if self.increase_percent is None else round(self.increase_percent, 4),
                "jobsMonthlyCostDelta": monthly(self.jobs_delta_micros),
                "judgedIncreasePercent": None if self.judged_increase_percent is None else
                round(self.judged_increase_percent, 4)}


@dataclass(frozen=True)
class PlanDiff(CostChange):
    engine: str
    base: Mapping[str, Any]  # each side's plan summary, without its timings
    head: Mapping[str, Any]
    base_micros: int
    head_micros: int
    new_nodes_delta: int
    unschedulable_delta: int
    workloads: tuple[WorkloadChange, ...]
    pools: tuple[PoolChange, ...]
    newly_unschedulable: tuple[NewlyUnschedulable, ...]
    lint_new: tuple[Mapping[str, Any], ...]  # lint findings as `lint -o json` writes them
    lint_fixed: tuple[Mapping[str, Any], ...]
    gate: Gate
    # BASE's findings on objects HEAD no longer has (removed or renamed): gone with them, not fixed
    lint_removed: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()  # e.g. a side that is empty because the revision lacks a PATH
    time_limit: float | None = None  # seconds each side was planned in (`--time-limit`); None: not said
    time_limit_auto: bool = False  # `auto` fitted them to the larger side
    cut: bool = False  # the time limit cut a side's plan before every pod was simulated

    @property
    def exit_code(self) -> int:
        """The gate's (0 or 1), or 3 when a side's plan was cut (as `plan` exits), whatever else."""
        return EXIT_CUT if self.cut else self.gate.exit_code

    def describe_time_limit(self) -> str | None:
        """`auto time limit 10s per side`, as the table and the comment say it (None: not said)."""
        if self.time_limit is None:
            return None
        return TimeLimit(None if self.time_limit_auto else self.time_limit).describe(self.time_limit, "per side")

    @property
    def changed_workloads(self) -> tuple[WorkloadChange, ...]:
        return tuple(w for w in self.workloads if w.change in CHANGED or w.delta_micros)

    @property
    def changed_pools(self) -> tuple[PoolChange, ...]:
        return tuple(p for p in self.pools
                     if p.change in CHANGED or p.delta_micros or p.nodes_base != p.nodes_head)

    def to_document(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "PlanDiff",
            "engine": self.engine,
            "base": dict(self.base),
            "head": dict(self.head),
            "delta": {"hourlyCost": dollars(self.delta_micros), "monthlyCost": monthly(self.delta_micros),
                      "newNodes": self.new_nodes_delta, "unschedulable": self.unschedulable_delta},
            "workloads": [w.to_document() for w in self.workloads],
            "pools": [p.to_document() for p in self.pools],
            "newlyUnschedulable": [u.to_document() for u in self.newly_unschedulable],
            "lint": {"new": [dict(f) for f in self.lint_new], "fixed": [dict(f) for f in self.lint_fixed],
                     "removedWithObject": [dict(f) for f in self.lint_removed]},
            "gate": self.gate.to_document(),
            "notes": list(self.notes),
            "timeLimit": self.time_limit,
            "timeLimitAuto": self.time_limit_auto,
        }
