"""The neighbourhood search's state between batches (`neighbourhood.NeighbourhoodSearch.improve`): the plan's
nodes by bucket, the seeds queued by waste, the zone ledger, and which kind of neighbourhood comes next."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from karpplan.engines.repack import BucketShape
from karpplan.engines.result import SolvedNode
from karpplan.engines.waste_queue import Entry, WasteQueue
from karpplan.engines.zone_moves import ZoneLedger


class CoreShare(Protocol):
    """Another process holding one of the search's cores for a while (`background_bound.BackgroundBound`),
    on the search's work clock."""

    def held(self, start: float, end: float) -> float:
        """Modelled seconds of [start, end] during which it holds the core."""
        ...

    def stop(self, now: float, cost: float) -> bool:
        """Whether the search should stop at `now` (the plan, at `cost`, is proven optimal)."""
        ...

    def busy(self) -> bool:
        """Whether it still runs, by the wall clock (only how batches run may depend on this)."""
        ...


CROSS_ZONE_EVERY = 4  # every this many batches of neighbourhoods, one trades pods between two zones' buckets


@dataclass
class SearchRun:
    """The search's state between batches."""

    cost: float
    kept: list[SolvedNode]  # nodes no neighbourhood touches
    buckets: dict[tuple[object, ...], list[SolvedNode]]
    shapes: dict[tuple[object, ...], BucketShape]
    headroom: dict[str, dict[str, int]]
    queue: WasteQueue
    ledger: ZoneLedger | None
    batches: int = 0  # bucket batches since the last cross-zone one
    cross_every: int = CROSS_ZONE_EVERY  # cross-zone batches that found nothing space out
    cross_misses: int = 0
    bucket_dry: bool = False  # every node tried at the largest size: only cross-zone neighbourhoods are left
    cross_dry: bool = False  # every node with a bucket to trade with tried at this size
    # Nodes whose cross-zone neighbourhood had too many groups, at this size, by id (the nodes are kept so that
    # no node made later can reuse the id while it is here).
    cross_tried: dict[int, SolvedNode] = field(default_factory=dict)
    # Nodes one kind of neighbourhood cannot seed, kept for the other kind.
    bucket_aside: list[Entry] = field(default_factory=list)
    cross_aside: list[Entry] = field(default_factory=list)


__all__ = ["CROSS_ZONE_EVERY", "CoreShare", "SearchRun"]
