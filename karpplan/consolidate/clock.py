"""The time the simulation runs at: what budget schedules and `consolidateAfter` are compared with.

`--now` (an RFC 3339 time) wins. Else the snapshot's own time: the newest `lastHeartbeatTime` of its Nodes'
conditions (kubelet renews them every few minutes, so `kubectl get nodes -o yaml` carries the moment it was
taken to within minutes). A snapshot without heartbeats (hand-written manifests) has no time: schedules are
then assumed active and `consolidateAfter` assumed passed, and the report says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from karpplan.inputs.loader import Document

NOW_OPTION = "--now"


@dataclass(frozen=True)
class Clock:
    now: datetime | None  # aware, UTC; None: unknown
    source: str  # where it came from, for the report ("" when unknown)


def parse_time(text: str) -> datetime | None:
    """An RFC 3339 / ISO 8601 time (`2024-09-17T06:30:00Z`); a time without an offset is UTC. None if not one."""
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def heartbeats(documents: Sequence[Document]) -> list[datetime]:
    """Every Node condition's `lastHeartbeatTime` in the snapshot."""
    out: list[datetime] = []
    for d in documents:
        status = d.body.get("status") if d.kind == "Node" else None
        conditions = status.get("conditions") if isinstance(status, dict) else None
        if not isinstance(conditions, list):
            continue
        for c in conditions:
            if isinstance(c, dict) and c.get("lastHeartbeatTime"):
                when = parse_time(str(c["lastHeartbeatTime"]))
                if when is not None:
                    out.append(when)
    return out


def snapshot_clock(documents: Sequence[Document], now: datetime | None = None) -> Clock:
    """`now` when given, else the snapshot's newest Node heartbeat, else unknown."""
    if now is not None:
        return Clock(now.astimezone(UTC), f"{NOW_OPTION} {format_time(now)}")
    beats = heartbeats(documents)
    if beats:
        newest = max(beats)
        return Clock(newest, f"the snapshot's newest Node heartbeat, {format_time(newest)}")
    return Clock(None, "")


def format_time(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
