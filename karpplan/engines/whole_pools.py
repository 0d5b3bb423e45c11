"""Small pools re-solved whole: all the nodes of a pool, over all its zones, as one neighbourhood with spare slots.

The neighbourhood search (`neighbourhood.py`) re-solves a few nodes at a time, and a neighbourhood may not add a
node unless it is a node alone in its bucket (`_split_singles`) or a small side of a cross-bucket trade. Two shapes
of plan on the bench's `realistic` rows are cheaper only by adding nodes to a pool, or by moving pods round all of
its zones at once (measured on the work clock, seed 0):

* realistic 1,000 pods: the memory pool's two r6a.8xlarge in one zone (1.4515 $/h) hold what an r6a.8xlarge, an
  r6a.4xlarge, an r6a.2xlarge and an r6a.xlarge hold (1.3608): two nodes must become four. Re-solved whole with
  two spare slots CP-SAT proves it in 0.01 deterministic seconds; no bucket neighbourhood of two nodes sees it.
* realistic 100 pods: the spot pool's ten nodes over six zones (1.0336) are set by a web Deployment's hostname
  spread (ten pods, one per node, zones 2,2,2,2,1,1) and the zone spreads of the others; as one neighbourhood with
  a spare slot per zone it reaches 0.9792 (the bound's counted whole nodes) in 0.25-1 deterministic seconds,
  where the pool pass (`pool_resolve.py`, split then packing) and two-zone trades found nothing.

So each pool of at most `WHOLE_POOL_NODES` nodes holding pods of at most `WHOLE_POOL_GROUPS` groups (its buckets
that differ only in zone: `ZoneLedger.family_of`) is re-solved whole twice: once when the search starts, with a
short budget, and again with the time left when the search has nothing left to try. Its sides get spare slots
(`spare_slots`), unless the pool limits its nodes. The pools of the many-deployments rows (fifty to a hundred
groups each) are left to the pool pass. Deterministic for a seed and a budget: pools in the buckets' order,
most wasteful first, seeds from the search's cross-zone stream.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from karpplan.engines.cpsat.neighbourhood_model import Side, SubProblemBuilder
from karpplan.engines.effort import (
    CP_SAT_WALL_PER_DETERMINISTIC,
    SEARCH_STEP_SECONDS,
    WorkClock,
    cp_sat_seconds,
    model_build_seconds,
)
from karpplan.engines.repack import BucketShape
from karpplan.engines.result import SolvedNode
from karpplan.engines.search_run import CoreShare, SearchRun
from karpplan.engines.waste_queue import WasteQueue
from karpplan.scheduling.problem import Problem

BucketKey = tuple[object, ...]


class Search(Protocol):
    """What the pass uses of the neighbourhood search (`neighbourhood.NeighbourhoodSearch`)."""

    problem: Problem
    parallel: int
    tried: int
    moves: int
    builder: SubProblemBuilder
    zone_rng: random.Random

    def _waste(self, shape: BucketShape, node: SolvedNode) -> float: ...

    def _shares(self, headroom: dict[str, dict[str, int]], sides: Sequence[Side]) -> dict[str, dict[str, int]]: ...

    def _apply(self, key: BucketKey, picked: list[SolvedNode], better: list[SolvedNode],
               buckets: dict[BucketKey, list[SolvedNode]], shapes: dict[BucketKey, BucketShape],
               headroom: dict[str, dict[str, int]], queue: WasteQueue) -> float: ...

    def _apply_sides(self, sides: Sequence[Side], better: list[SolvedNode], buckets: dict[BucketKey, list[SolvedNode]],
                     shapes: dict[BucketKey, BucketShape], headroom: dict[str, dict[str, int]],
                     queue: WasteQueue) -> float: ...

    def _charge(self, clock: WorkClock, building: float, solves: list[float], core_share: CoreShare | None) -> None: ...


WHOLE_POOL_NODES = 16  # a pool of at most this many nodes ...
WHOLE_POOL_GROUPS = 40  # ... holding pods of at most this many groups is re-solved whole
START_DETERMINISTIC = 0.25  # CP-SAT deterministic seconds per pool when the search starts
MAX_DETERMINISTIC = 5.0  # ... and at most this per pool when the search has run dry (the time left shared out)
MIN_DETERMINISTIC = 0.05  # less is not tried
SPARE_SLOTS = 1  # per side of a pool over several zones; a pool in one bucket gets two


def spare_slots(search: Search, keys: Sequence[BucketKey]) -> int:
    """Spare slots per side: none when the pool limits its nodes, two for a pool in one bucket (two nodes
    becoming four smaller ones), else one per zone."""
    room = search.problem.headroom.get(str(keys[0][0]))
    if room is not None and room.nodes is not None:
        return 0
    return 2 * SPARE_SLOTS if len(keys) == 1 else SPARE_SLOTS


def small_pools(search: Search, run: SearchRun) -> list[list[BucketKey]]:
    """Each pool's buckets holding nodes (buckets differing only in zone), where it has at most
    `WHOLE_POOL_NODES` nodes and `WHOLE_POOL_GROUPS` groups, most wasteful first (ties in the buckets' order)."""
    seen: set[BucketKey] = set()
    out: list[tuple[float, int, list[BucketKey]]] = []
    for key, nodes in run.buckets.items():
        if key in seen or not nodes:
            continue
        family = run.ledger.family_of(key) if run.ledger is not None else [key]
        seen.update(family)
        held = [n for k in family for n in run.buckets[k]]
        if len(held) > WHOLE_POOL_NODES or len({g.index for n in held for g, _ in n.pods}) > WHOLE_POOL_GROUPS:
            continue
        waste = sum(search._waste(run.shapes[k], n) for k in family for n in run.buckets[k])
        out.append((-waste, len(out), family))
    return [family for *_, family in sorted(out, key=lambda e: (e[0], e[1]))]


def resolve_pools(search: Search, run: SearchRun, pool_now: Callable[[], ThreadPoolExecutor],
                  clock: WorkClock, until: float, max_tries: int | None, report: Callable[[float, int, int], None] | None,
                  core_share: CoreShare | None, start: bool) -> None:
    """Each small pool re-solved whole, side by side, applied in order when cheaper. `start`: the short pass when
    the search starts (`START_DETERMINISTIC` each); else the time left shared out among the pools."""
    families = small_pools(search, run)
    if run.ledger is not None and any(len(f) > 1 for f in families):
        assert run.ledger.stay is not None  # the zone counts, taken here rather than on a worker
    while families:
        left = (until - clock.now()) / CP_SAT_WALL_PER_DETERMINISTIC
        budget = min(START_DETERMINISTIC if start else MAX_DETERMINISTIC,
                     left * search.parallel / len(families) if not start else left)
        if budget < MIN_DETERMINISTIC or (max_tries is not None and search.tried >= max_tries) \
                or clock.past_wall() or (core_share is not None and core_share.stop(clock.now(), run.cost)):
            return
        pool = pool_now()
        batch: list[tuple[list[Side], Future[tuple[list[SolvedNode] | None, float]]]] = []
        building = 0.0
        for family in families[:search.parallel]:
            spare = spare_slots(search, family)
            sides = [Side(k, run.shapes[k], list(run.buckets[k]), len(run.buckets[k]) + spare) for k in family]
            sub = search.builder.prepare(sides, search._shares(run.headroom, sides),
                                         run.ledger if len(sides) > 1 else None)
            building += SEARCH_STEP_SECONDS + model_build_seconds(len(sub.model.proto.variables)
                                                                  + len(sub.model.proto.constraints))
            batch.append((sides, pool.submit(sub.solve, budget, search.zone_rng.randrange(1 << 30))))
        families = families[len(batch):]
        solves: list[float] = []
        for sides, future in batch:
            better, used = future.result()
            solves.append(cp_sat_seconds(used))
            search.tried += 1
            picked = [n for side in sides for n in side.nodes]
            if better is None or (len(better) > len(picked) and _node_limited(search, sides)):
                continue
            if len(sides) > 1:
                assert run.ledger is not None
                if not run.ledger.commit(picked, better):
                    continue
                run.cost -= search._apply_sides(sides, better, run.buckets, run.shapes, run.headroom, run.queue)
            else:
                run.cost -= search._apply(sides[0].key, picked, better, run.buckets, run.shapes, run.headroom,
                                          run.queue)
            search.moves += 1
            if report is not None:
                report(run.cost, search.tried, search.moves)
        search._charge(clock, building, solves, core_share)


def _node_limited(search: Search, sides: Sequence[Side]) -> bool:
    """Whether some side's pool limits its nodes (its spare slots would add nodes past the limit)."""
    return any(spare_slots(search, [side.key]) == 0 for side in sides)


__all__ = ["WHOLE_POOL_GROUPS", "WHOLE_POOL_NODES", "resolve_pools", "small_pools", "spare_slots"]
