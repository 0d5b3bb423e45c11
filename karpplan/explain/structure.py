"""Typed reason items: what one failure line says, parsed into structure.

A `Reason` is one clause of a scheduler's message (a taint not tolerated, a requirement conflict, ...);
`PoolReasons` groups the clauses Karpenter tied to one NodePool or Provisioner; an `Item` is one
recognised record (a log line, an event) with its pod, source, dialect and reasons. Items with the
same pod and the same message are collapsed (`count`, `last_line`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

# reasons[].kind values of cli-contract.md
TAINT = "taint"
REQUIREMENT_CONFLICT = "requirement-conflict"
UNKNOWN_LABEL = "unknown-label"
NO_INSTANCE_TYPE = "no-instance-type"
LIMITS = "limits"
EXCLUDED_TYPES = "excluded-types"
TOPOLOGY = "topology"
VOLUME = "volume"
MIN_VALUES = "min-values"
UNSUPPORTED = "unsupported"
NODE_FILTER = "node-filter"
KINDS = (TAINT, REQUIREMENT_CONFLICT, UNKNOWN_LABEL, NO_INSTANCE_TYPE, LIMITS, EXCLUDED_TYPES, TOPOLOGY,
         VOLUME, MIN_VALUES, UNSUPPORTED, NODE_FILTER)

# events about removing nodes rather than placing pods (dialects/disruption.py; Interrupted: dialects/interruption.py):
# no pod, no reasons; the item is its message, from its cause on
DISRUPTION_EVENTS = ("Unconsolidatable", "DisruptionBlocked", "Disrupting", "Interrupted")

KARPENTER = "karpenter"
KUBE_SCHEDULER = "kube-scheduler"
CLUSTER_AUTOSCALER = "cluster-autoscaler"
# EKS Fargate's scheduler: a kube-scheduler of its own (`spec.schedulerName: fargate-scheduler`); the document's
# `source` is one of the three above (cli-contract.md), its own name goes in `scheduler`
FARGATE_SCHEDULER = "fargate-scheduler"


@dataclass(frozen=True)
class ParsedRequirement:
    """One `key Op [v1 v2]` of Karpenter's Requirements.String (bounds and minValues kept in `extra`)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    extra: str = ""

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            doc["values"] = list(self.values)
        if self.extra:
            doc["extra"] = self.extra
        return doc

    def __str__(self) -> str:
        text = f"{self.key} {self.operator}"
        if self.values:
            text += " [" + " ".join(self.values) + "]"
        return text + (f" {self.extra}" if self.extra else "")


@dataclass(frozen=True)
class Reason:
    """One parsed clause. Only the fields its kind uses are set."""

    kind: str
    text: str
    key: str | None = None
    value: str | None = None
    effect: str | None = None
    suggestion: str | None = None  # unknown-label: Karpenter's typo hint
    pod_side: str | None = None  # requirement-conflict: what the pod asks for
    pool_side: str | None = None  # requirement-conflict: what the pool offers
    resources: Mapping[str, str] | None = None  # no-instance-type: what was asked for
    requirements: tuple[ParsedRequirement, ...] = ()
    cause: str | None = None  # no-instance-type: Karpenter's failure reason
    constraint: str | None = None  # topology: topology spread | pod affinity | pod anti-affinity
    counts: Mapping[str, int] | None = None  # topology: pods per domain; node-filter: nodes per reason
    others: int | None = None  # topology: "and N other(s)"
    pod_domains: str | None = None
    node_domains: str | None = None
    node_pool: str | None = None  # limits (and bare v1.5+ reasons naming their pool)
    excluded: int | None = None  # excluded-types: N of M
    total: int | None = None  # excluded-types: M; node-filter: nodes considered
    truncated: bool = False
    plain: str = ""

    def signature(self) -> tuple[object, ...]:
        """What makes two reasons the same reason for one pod: per-node counts and topology counts change from
        one retry to the next and are not part of it (the item keeps the first wording and counts repeats)."""
        if self.kind == NODE_FILTER:
            return self.kind, self.cause, tuple(self.counts or ())
        if self.kind == TOPOLOGY:
            return self.kind, self.constraint, self.key, self.node_domains
        return self.kind, self.text

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": self.kind}
        for name, value in (("key", self.key), ("value", self.value), ("effect", self.effect),
                            ("suggestion", self.suggestion), ("constraint", self.constraint),
                            ("podRequirement", self.pod_side), ("poolRequirement", self.pool_side),
                            ("cause", self.cause), ("nodePool", self.node_pool), ("excluded", self.excluded),
                            ("total", self.total), ("others", self.others), ("podDomains", self.pod_domains),
                            ("nodeDomains", self.node_domains)):
            if value is not None:
                doc[name] = value
        if self.resources is not None:
            doc["resources"] = dict(self.resources)
        if self.requirements:
            doc["requirements"] = [r.to_document() for r in self.requirements]
        if self.counts is not None:
            doc["counts"] = dict(self.counts)
        if self.truncated:
            doc["truncated"] = True
        doc["text"] = self.text
        doc["plain"] = self.plain
        return doc


@dataclass(frozen=True)
class PoolReasons:
    name: str
    kind: str  # nodepool | provisioner
    reasons: tuple[Reason, ...]
    daemonset_overhead: Mapping[str, str] | None = None

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.daemonset_overhead is not None:
            doc["daemonsetOverhead"] = dict(self.daemonset_overhead)
        doc["reasons"] = [r.to_document() for r in self.reasons]
        return doc


def signed_hourly(delta: float) -> str:
    """A cost change as people read it: `+$0.0960/h`, `-$0.0120/h`."""
    return f"{'+' if delta >= 0 else '-'}${abs(delta):.4f}/h"


@dataclass(frozen=True)
class Fix:
    """A change that makes the pod schedule, re-planned: where to make it and what it costs."""

    action: str
    file: str
    line: int
    hourly_cost_delta: float
    object: str = ""
    field: str = ""
    intent: int = 0  # 0 keeps what the user asked for; higher gives more of it up
    plain: str = ""

    def to_document(self) -> dict[str, Any]:
        return {"action": self.action, "object": self.object, "field": self.field, "file": self.file,
                "line": self.line, "hourlyCostDelta": round(self.hourly_cost_delta, 6), "plain": self.plain}


@dataclass(frozen=True)
class DescribedPod:
    """The fields of a `kubectl describe pod` an answer uses (each value as printed; describe_pod.py reads them)."""

    requests: tuple[str, ...] = ()  # "cpu 100m (container metrics-server)"
    node_selectors: tuple[str, ...] = ()
    tolerations: tuple[str, ...] = ()
    spread: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    seen: tuple[str, ...] = ()  # the fields the paste shows (a field cut from it says nothing)

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        for name, values in (("requests", self.requests), ("nodeSelectors", self.node_selectors),
                             ("tolerations", self.tolerations), ("topologySpreadConstraints", self.spread),
                             ("labels", self.labels)):
            if values:
                doc[name] = list(values)
        return doc


@dataclass(frozen=True)
class Parsed:
    """What one record says, before collapsing and wording."""

    source: str
    event: str  # FailedScheduling | Nominated | NotTriggerScaleUp | Log
    message: str
    dialect: str | None = None
    pod: str | None = None
    time: str | None = None
    pools: tuple[PoolReasons, ...] = ()
    reasons: tuple[Reason, ...] = ()
    unparsed: tuple[str, ...] = ()
    nominated: str | None = None
    scheduler: str | None = None  # kube-scheduler source: the scheduler's own name when not default-scheduler
    age: str | None = None  # a describe Events row's Age as printed, e.g. "18s (x6 over 10m)" (not in signature)
    nodes: tuple[str, ...] = ()  # disruption messages: the node(s) the record is about (not in signature)
    described: DescribedPod | None = None  # a `kubectl describe pod`'s own fields around its event (not in signature)

    def signature(self) -> tuple[object, ...]:
        return (self.source, self.event, self.pod, self.dialect,
                tuple((p.name, tuple(r.signature() for r in p.reasons)) for p in self.pools),
                tuple(r.signature() for r in self.reasons), self.nominated,
                self.message if self.event in DISRUPTION_EVENTS else None)


MAX_ITEM_NODES = 50  # an item's node names kept (one cause on a whole cluster's nodes is still one item)


class Simulated(Protocol):
    """What `--manifests` attaches to a disruption item per node (explain/simulation.py's NodeSimulation)."""

    def to_document(self) -> dict[str, Any]: ...

    @property
    def node(self) -> str: ...

    def lines(self, again: bool = False) -> list[str]: ...


@dataclass
class Item:
    """A collapsed record: the first line it was seen on, how often, the last time."""

    parsed: Parsed
    line: int
    count: int = 1
    last_line: int = 0
    last_time: str | None = None
    plain: str = ""
    workload: str | None = None
    reproduced: bool | None = None
    conflict: list[str] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    fix_notes: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)  # what the catalog and the manifests add to the wording
    nodes: list[str] = field(default_factory=list)  # disruption items: the distinct nodes their records name
    simulations: list[Simulated] = field(default_factory=list)  # --manifests: the consolidation simulation's verdicts

    def note_nodes(self, nodes: tuple[str, ...]) -> None:
        """Remember the nodes a record of this item names (the first MAX_ITEM_NODES distinct ones)."""
        for node in nodes:
            if node not in self.nodes and len(self.nodes) < MAX_ITEM_NODES:
                self.nodes.append(node)

    def to_document(self) -> dict[str, Any]:
        p = self.parsed
        fargate = p.source == FARGATE_SCHEDULER
        doc: dict[str, Any] = {"line": self.line, "source": KUBE_SCHEDULER if fargate else p.source, "event": p.event}
        if fargate or (p.scheduler and p.source == KUBE_SCHEDULER):
            doc["scheduler"] = FARGATE_SCHEDULER if fargate else p.scheduler
        if p.dialect is not None:
            # The contract's dialects are closed (cli-contract.md): v0.5's `matched 0/N provisioners` lines, read
            # apart inside, are its earliest, v0.6.
            doc["dialect"] = "v0.6" if p.dialect == "v0.5-v0.15" else p.dialect
        doc["time"] = p.time
        doc["pod"] = p.pod
        if self.workload is not None:
            doc["workload"] = self.workload
        doc["count"] = self.count
        if self.count > 1:
            doc["lastLine"] = self.last_line
            doc["lastTime"] = self.last_time
        doc["nodePools"] = [pool.to_document() for pool in p.pools]
        doc["reasons"] = [r.to_document() for r in p.reasons]
        if p.nominated is not None:
            doc["nominated"] = p.nominated
        if p.described is not None:
            doc["described"] = p.described.to_document()
        if p.unparsed:
            doc["unparsed"] = list(p.unparsed)
        doc["plain"] = self.plain
        if self.reproduced is not None:
            doc["reproduced"] = self.reproduced
        if self.conflict:
            doc["conflict"] = list(self.conflict)
        doc["fixes"] = [f.to_document() for f in self.fixes]
        if self.fix_notes:
            doc["fixNotes"] = list(self.fix_notes)
        if self.nodes:
            doc["nodes"] = list(self.nodes)
        if self.simulations:
            doc["simulations"] = [s.to_document() for s in self.simulations]
        return doc

    def all_reasons_tuple(self) -> tuple[Reason, ...]:
        return tuple(self.all_reasons())

    def all_reasons(self) -> list[Reason]:
        out = list(self.parsed.reasons)
        for pool in self.parsed.pools:
            out.extend(pool.reasons)
        return out
