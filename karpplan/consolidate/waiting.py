"""What the simulation's time (`clock.py`) decides: which nodes are still inside their NodePool's
`consolidateAfter`, and which pods' `karpenter.sh/do-not-disrupt` durations have run out.

Karpenter marks a NodeClaim `Consolidatable` once `consolidateAfter` has passed since its last pod event
(`status.lastPodEventTime`: a pod bound to it, or one of its pods gone), or since it was initialized when no
pod event was seen (nodeclaim/disruption/consolidation.go, `IsUnderConsolidateAfter`); until then neither
Emptiness nor consolidation touches it. At a known time the snapshot tells:
- a pasted NodeClaim's `lastPodEventTime`, else its `Initialized` condition's `lastTransitionTime`;
- without a NodeClaim, the newest moment a pod bound to the node was scheduled (its `PodScheduled`
  condition, else its `startTime` or creation) and the Node's own creation: a later pod event (a pod that left)
  cannot be seen, so a node this finds waiting is surely waiting, and one it finds past may not be.
Without a time the NodeClaim's `Consolidatable` condition alone decides (`snapshot.py`).

`karpenter.sh/do-not-disrupt: "5m"` (a Go duration, kubernetes-sigs/karpenter#2874, `IsDoNotDisruptActive`)
protects its pod's node from the pod's `status.startTime` until the duration has passed; a pod without a start
time stays protected (Karpenter fails safe). Without a time every duration is assumed not to have passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from karpplan.consolidate.budgets import Disruption
from karpplan.consolidate.clock import format_time, parse_time
from karpplan.consolidate.cron import go_duration
from karpplan.consolidate.legacy import DO_NOT_DISRUPT
from karpplan.inputs.loader import Document
from karpplan.model.pods import Pod


def _time(value: object) -> datetime | None:
    return parse_time(str(value)) if value else None


def _pod_event(doc: Document) -> datetime | None:
    """When the pod was bound to its node, as near as the pod shows it."""
    status = doc.body.get("status")
    status = status if isinstance(status, dict) else {}
    conditions = status.get("conditions")
    if isinstance(conditions, list):
        for c in conditions:
            if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("status") == "True":
                when = _time(c.get("lastTransitionTime"))
                if when is not None:
                    return when
    return _time(status.get("startTime")) or _time(doc.metadata.get("creationTimestamp"))


def last_events(documents: Sequence[Document]) -> dict[str, tuple[datetime, str]]:
    """Node name -> the newest event `consolidateAfter` counts from that the snapshot shows, and what it was."""
    out: dict[str, tuple[datetime, str]] = {}

    def note(node: str, when: datetime | None, what: str) -> None:
        if when is not None and (node not in out or when > out[node][0]):
            out[node] = (when, what)

    claimed: dict[str, tuple[datetime, str]] = {}
    by_provider = {str(d.body["spec"]["providerID"]): d.name for d in documents if d.kind == "Node"
                   and isinstance(d.body.get("spec"), dict) and d.body["spec"].get("providerID")}
    for d in documents:
        if d.kind == "Node":
            note(d.name, _time(d.metadata.get("creationTimestamp")), "the node's creation")
        elif d.kind == "Pod":
            spec = d.body.get("spec")
            node = spec.get("nodeName") if isinstance(spec, dict) else None
            if node:
                note(str(node), _pod_event(d), f"pod {d.namespace}/{d.name} scheduled")
        elif d.kind == "NodeClaim" and d.group == "karpenter.sh":
            status = d.body.get("status")
            if not isinstance(status, dict):
                continue
            node = status.get("nodeName") or by_provider.get(str(status.get("providerID")))
            event = _time(status.get("lastPodEventTime"))
            initialized = next((c for c in status.get("conditions") or [] if isinstance(c, dict)
                                and c.get("type") == "Initialized" and c.get("status") == "True"), None)
            if node and event is not None:
                claimed[str(node)] = (event, f"NodeClaim {d.name}'s lastPodEventTime")
            elif node and initialized is not None and _time(initialized.get("lastTransitionTime")) is not None:
                claimed[str(node)] = (_time(initialized.get("lastTransitionTime")) or datetime.min,
                                      f"NodeClaim {d.name}'s initialization")
    out.update(claimed)  # the NodeClaim's own record wins over what the pods suggest
    return out


def waiting(documents: Sequence[Document], pools: Mapping[str, str | None], disruption: Mapping[str, Disruption],
            now: datetime | None) -> dict[str, str]:
    """Node name -> why it is not consolidatable yet at `now` (`pools`: node -> its NodePool); empty without a
    time."""
    if now is None:
        return {}
    out: dict[str, str] = {}
    for node, (when, what) in last_events(documents).items():
        pool = pools.get(node)
        settings = disruption.get(pool) if pool is not None else None
        after = go_duration(settings.consolidate_after) if settings is not None and settings.consolidate_after else None
        if after is None or after <= timedelta(0) or now - when >= after:
            continue
        out[node] = (f"Not Consolidatable yet: consolidateAfter {settings.consolidate_after if settings else ''} has "
                     f"not passed since {what} at {format_time(when)}; Karpenter may consolidate it from "
                     f"{format_time(when + after)}")
    return out


def _start_times(documents: Sequence[Document]) -> dict[str, datetime]:
    out: dict[str, datetime] = {}
    for d in documents:
        status = d.body.get("status") if d.kind == "Pod" else None
        when = _time(status.get("startTime")) if isinstance(status, dict) else None
        if when is not None:
            out[f"{d.namespace}/{d.name}"] = when
    return out


def expire_do_not_disrupt(pods_on: Mapping[str, list[Pod]], documents: Sequence[Document],
                          now: datetime | None) -> tuple[dict[str, list[Pod]], list[str]]:
    """The bound pods with every `do-not-disrupt` duration that has run out at `now` taken off (it no longer
    protects the node), and a note for each (`origin: ...`)."""
    if now is None:
        return dict(pods_on), []
    starts: dict[str, datetime] | None = None
    notes: list[str] = []
    out: dict[str, list[Pod]] = {}
    for name, pods in pods_on.items():
        kept: list[Pod] = []
        for pod in pods:
            value = pod.template.annotations.get(DO_NOT_DISRUPT)
            span = go_duration(value) if value is not None and value != "true" else None
            if span is not None and span > timedelta(0):
                starts = _start_times(documents) if starts is None else starts
                started = starts.get(pod.key)
                if started is not None and now - started >= span:
                    notes.append(f"{pod.origin}: pod {pod.key}: {DO_NOT_DISRUPT}: {value!r} ran out at "
                                 f"{format_time(started + span)} (started {format_time(started)}): it no longer "
                                 f"protects node {name}")
                    annotations = {k: v for k, v in pod.template.annotations.items() if k != DO_NOT_DISRUPT}
                    pod = replace(pod, template=replace(pod.template, annotations=annotations))
            kept.append(pod)
        out[name] = kept
    return out, notes
