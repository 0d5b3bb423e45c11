"""The neighbourhood search's queue of seed nodes: most wasteful first, with lazy deletion and parking."""

from __future__ import annotations

import heapq
from collections.abc import Callable

from karpplan.engines.result import SolvedNode

Entry = tuple[float, int, tuple[object, ...], SolvedNode]  # (-waste, order, bucket key, node)


class WasteQueue:
    """Nodes by waste, most first (ties in the order they came), with lazy deletion: a node replaced by
    a move is skipped when it surfaces; a node whose neighbourhood gave nothing is parked until the
    neighbourhoods grow."""

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, tuple[object, ...], SolvedNode]] = []
        self.alive: set[int] = set()
        self.parked: list[tuple[float, int, tuple[object, ...], SolvedNode]] = []
        self.seq = 0

    def push(self, key: tuple[object, ...], node: SolvedNode, waste: float) -> None:
        self.alive.add(id(node))
        if waste > 1e-9:  # a node without waste is never a seed (it may still be a partner)
            heapq.heappush(self.heap, (-waste, self.seq, key, node))
            self.seq += 1

    def remove(self, node: SolvedNode) -> None:
        self.alive.discard(id(node))

    def park(self, key: tuple[object, ...], node: SolvedNode, waste: float) -> None:
        self.parked.append((-waste, self.seq, key, node))
        self.seq += 1

    def restore(self, entries: list[tuple[float, int, tuple[object, ...], SolvedNode]]) -> None:
        """Put back the live nodes another kind of neighbourhood set aside."""
        for entry in entries:
            if id(entry[3]) in self.alive:
                heapq.heappush(self.heap, entry)
        entries.clear()

    def unpark(self) -> None:
        for entry in self.parked:
            if id(entry[3]) in self.alive:
                heapq.heappush(self.heap, entry)
        self.parked = []

    def pop(self, skip: set[int], usable: Callable[[tuple[object, ...]], bool],
            aside: list[tuple[float, int, tuple[object, ...], SolvedNode]] | None = None
            ) -> tuple[tuple[object, ...], SolvedNode] | None:
        """The most wasteful live node not in `skip` whose bucket is `usable`; nodes whose bucket is not
        are dropped, or put `aside` (for `restore`) when another kind of neighbourhood may use them."""
        deferred = []
        found: tuple[tuple[object, ...], SolvedNode] | None = None
        while self.heap:
            entry = heapq.heappop(self.heap)
            node = entry[3]
            if id(node) not in self.alive:
                continue
            if not usable(entry[2]):
                if aside is not None:
                    aside.append(entry)
                continue
            if id(node) in skip:
                deferred.append(entry)
                continue
            found = (entry[2], node)
            break
        for entry in deferred:
            heapq.heappush(self.heap, entry)
        return found


__all__ = ["Entry", "WasteQueue"]
