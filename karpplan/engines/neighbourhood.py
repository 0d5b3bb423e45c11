"""Large-neighbourhood search: re-solve a few nodes of one bucket exactly, keep what is cheaper.

The re-packer's heuristics leave rounding waste: a node whose pods stop just short of a smaller option,
or a pair of nodes each half a step too large. A handful of nodes of one bucket (same pool, zone,
capacity type and topology labels, so no zone-level count can change) is small enough for CP-SAT to
solve exactly in a fraction of a second: which option each node launches as, and how many pods of
each kind it holds, under every per-node rule (resources, hard hostname spread by final counts,
hostname anti-affinity both ways, and the pool's headroom under its limits). Neighbourhoods are drawn
around the most wasteful nodes, with partners chosen for their waste, for room where the node has
none, and at random; two disjoint ones are solved side by side; when every node has been tried, the
neighbourhoods grow. Before that, a node alone in its bucket (many small NodePools over six zones leave
such buckets everywhere) is re-solved once with an empty slot beside it, so it can split in two. Every
`CROSS_ZONE_EVERY`-th batch (and every batch once no bucket has two nodes left to try) is *cross-bucket*:
nodes of two buckets of one pool that differ only in zone, whose pods may change zone within the zonal
spreads' limits (`zone_moves.py`), which undoes zone assignments that bucket neighbourhoods cannot; or,
first when there is one, of a bucket of another pool or capacity type in the seed's zone, which moves pods
off the pool the Karpenter plan chose (its weights put pods on dear on-demand nodes a spot node holds). The
search runs until its budget on the work clock (`effort.py`) is spent: each
sub-solve uses one worker and a deterministic time budget, and each batch is charged what it is modelled
to take, so a given seed and budget (or number of sub-solves) always give the same plan.
"""

from __future__ import annotations

import heapq
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from karpplan.engines.bucket_duals import bucket_dual_prices
from karpplan.engines.cpsat.neighbourhood_model import Side, SubProblemBuilder, node_capacity
from karpplan.engines.effort import (
    BUCKET_NODE_SECONDS,
    CP_SAT_WALL_PER_DETERMINISTIC,
    SEARCH_STEP_SECONDS,
    WorkClock,
    available_cores,
    cp_sat_seconds,
    model_build_seconds,
)
from karpplan.engines.pool_resolve import PoolResolve, large_pool_share, pool_families, pool_seconds
from karpplan.engines.repack import BucketShape, Repacker
from karpplan.engines.result import Solution, SolvedNode
from karpplan.engines.search_run import CROSS_ZONE_EVERY, CoreShare, SearchRun  # (0: no cross-zone)
from karpplan.engines.waste_queue import WasteQueue
from karpplan.engines.whole_pools import resolve_pools
from karpplan.engines.zone_moves import ZoneLedger
from karpplan.scheduling.problem import Problem

NEIGHBOURHOOD_NODES = 4  # nodes per neighbourhood at first
MAX_NEIGHBOURHOOD_NODES = 12  # grown by half each time every node has been tried
REDUCED_COST_SEEDS = True  # some partners ranked by reduced cost at the bucket's LP dual prices
REDUCED_COST_MIN_NODES = 20  # ... in buckets of at least this many nodes (measured: worse on the 100-pod rows)
# Slots beyond the node of a bucket holding a single node: it may split in two (one just past a smaller size
# becomes that size plus a small one). Many small NodePools over six zones leave such buckets everywhere.
# Larger neighbourhoods get none: measured, a spare slot there slows each sub-solve more than splits gain
# (synthetic diverse 1,000 pods: 231.03 -> 231.34 $/h with one).
SPARE_SLOTS = 1
CROSS_ZONE_SHARE = 2  # nodes per side, in quarters of the neighbourhood size
# Cross-zone neighbourhoods holding pods of more groups than this are skipped: measured on the bench's
# many-deployments 10,000 row (175-500 groups on two pairs of large nodes), no sub-solve found anything in its
# budget; at 1,000 Deployments (at most 50) they prove or improve in a few milliseconds.
MAX_CROSS_ZONE_GROUPS = 120
POOL_NODES = 8  # a pool with at most this many nodes over three zones or more is one cross-bucket neighbourhood
# ... when they hold pods of at most this many groups: measured on many-deployments 2,000 (pools of 4 to 7 nodes
# holding about 50 groups each), such neighbourhoods found less in their budget than trades between two zones
# (31.32 $/h against 29.97); the critical pool of realistic 1,000 (6 nodes, 6 zones, 16 groups) got 3.80 -> 3.46.
POOL_GROUPS = 30
CROSS_SPARE_NODES = 2  # a cross-bucket side of at most this many nodes, its whole bucket, gets a spare slot
CROSS_ZONE_PATIENCE = 4  # cross-zone batches in a row finding nothing double the interval ...
MAX_CROSS_ZONE_EVERY = 32  # ... up to this; one that finds something resets it
SUB_SOLVE_DETERMINISTIC_SECONDS = 0.05  # per sub-solve of NEIGHBOURHOOD_NODES nodes (scaled with size)
MAX_POOL_DETERMINISTIC = 5.0  # CP-SAT deterministic seconds per pool re-solved whole, at most ...
MIN_POOL_DETERMINISTIC = 0.1  # ... and at least (less is not tried)


def side_by_side(solves: Sequence[float], cores: int) -> float:
    """Modelled wall time of a batch's solves run side by side on `cores` cores: the longest, or their
    total shared out when there are more solves than cores (one core: one after the other)."""
    return max(max(solves, default=0.0), sum(solves) / max(cores, 1))


class NeighbourhoodSearch:
    def __init__(self, repacker: Repacker, seed: int = 0, parallel: int = 0) -> None:
        self.repacker = repacker
        self.parallel = parallel or available_cores()
        self.problem = repacker.problem
        self.rules = repacker.rules
        self.rng = random.Random(seed)
        self.split_rng = random.Random(~seed)  # the split pass's own stream: the main loop's stays as it was
        self.zone_rng = random.Random(seed ^ 0x5A5A)  # the cross-zone neighbourhoods' own stream
        self.moves = 0  # neighbourhoods that made the plan cheaper
        self.size = NEIGHBOURHOOD_NODES
        self.builder = SubProblemBuilder(repacker)
        self._slacks: dict[int, npt.NDArray[np.float64]] = {}  # per live node id
        self._duals: dict[int, npt.NDArray[np.float64]] = {}  # per bucket shape id: LP dual price per dimension
        self.tried = 0

    # ------------------------------------------------------------------------------------ driver
    def improve(self, solution: Solution, clock: WorkClock, until: float, max_tries: int | None = None,
                report: Callable[[float, int, int], None] | None = None,
                core_share: CoreShare | None = None) -> Solution:
        """The plan with neighbourhoods re-solved until the work clock reaches `until` (or its wall-clock
        guard passes) or after `max_tries` sub-solves; the same seed and budget give the same plan.
        `report` hears (cost, neighbourhoods tried, moves made) whenever the plan gets cheaper. `core_share`:
        another process holding one of the cores for a while (the LP bounds); batches then take the same steps,
        charged as solved on one core fewer, and the search stops once it proves the plan optimal."""
        run = self._start(solution, clock)
        with ThreadPoolExecutor(max_workers=self.parallel) as wide, ThreadPoolExecutor(max_workers=1) as narrow:

            def pool_now() -> ThreadPoolExecutor:
                # While the other process still runs (by the wall clock), a batch's solves run one after the
                # other, as they are charged, so it keeps its core: how a batch runs depends on the wall clock,
                # never what it does.
                return narrow if core_share is not None and core_share.busy() else wide

            run.cost -= self._split_singles(run.buckets, run.shapes, run.headroom, self._nodes_left(solution), run.queue,
                                            pool_now, clock, until, max_tries, report, run.cost, core_share)
            first = large_pool_share(run.ledger, run.buckets, until - clock.now())  # pools too large to pack by CP-SAT
            if first > 0:
                self._pool_pass(run, pool_now, clock, clock.now() + first, max_tries, report, core_share)
            resolve_pools(self, run, pool_now, clock, until, max_tries, report, core_share, start=True)
            while True:
                budget = SUB_SOLVE_DETERMINISTIC_SECONDS * self.size / NEIGHBOURHOOD_NODES
                # What is left on the work clock, in CP-SAT's deterministic seconds.
                budget = min(budget, (until - clock.now()) / CP_SAT_WALL_PER_DETERMINISTIC)
                if budget < 0.02 or (max_tries is not None and self.tried >= max_tries) or clock.past_wall():
                    break
                if core_share is not None and core_share.stop(clock.now(), run.cost):
                    break
                if not self._batch(run, pool_now(), budget, clock, max_tries, report, core_share):
                    # Nothing left to try: pools of a few nodes over several zones, each re-solved whole.
                    self._pool_pass(run, pool_now, clock, until, max_tries, report, core_share)
                    resolve_pools(self, run, pool_now, clock, until, max_tries, report, core_share, start=False)
                    break
        nodes = run.kept + [n for ns in run.buckets.values() for n in ns]
        return self.repacker.renamed(solution, nodes)

    def _start(self, solution: Solution, clock: WorkClock) -> SearchRun:
        """The plan's movable nodes by bucket, the pools' headroom, the seeds queued by waste, the zone ledger."""
        # Caches are keyed by object ids, which are only unique among live objects: start afresh.
        self._slacks = {}
        self.builder.reset()
        buckets: dict[tuple[object, ...], list[SolvedNode]] = defaultdict(list)
        kept: list[SolvedNode] = []
        for node in solution.nodes:
            if node.option is None or not self._movable(node):
                kept.append(node)
            else:
                buckets[self.repacker.bucket_of(node.option)].append(node)
        shapes = {key: self.repacker.shape(key) for key in buckets}
        headroom = self._headroom(solution)
        # Visit nodes most wasteful first; each visit re-solves it with a few of its bucket's nodes.
        # Disjoint neighbourhoods are solved side by side (CP-SAT releases the GIL) and applied in order.
        queue = WasteQueue()
        self._duals = {}
        for key, nodes in buckets.items():
            self._dual_prices(shapes[key], nodes, clock)
        for key, nodes in buckets.items():
            for n in nodes:
                queue.push(key, n, self._waste(shapes[key], n))
        return SearchRun(solution.cost, kept, buckets, shapes, headroom, queue, self._ledger(solution, buckets, clock))

    def _batch(self, run: SearchRun, pool: ThreadPoolExecutor, budget: float, clock: WorkClock, max_tries: int | None,
               report: Callable[[float, int, int], None] | None, core_share: CoreShare | None) -> bool:
        """One batch: neighbourhoods built one after the other, solved side by side, applied in order. Every
        CROSS_ZONE_EVERY-th batch trades pods between two zones' buckets of one pool, and every batch does once no
        bucket has two nodes left to re-solve. False when nothing is left to try."""
        cross = run.ledger is not None and not run.cross_dry and (run.bucket_dry or run.batches >= run.cross_every - 1)
        run.batches = 0 if cross else run.batches + 1
        run.queue.restore(run.bucket_aside if cross else run.cross_aside)
        batch, building = self._build_batch(run, cross, pool, budget, max_tries)
        if not batch:
            return self._widen(run, cross)
        moves_before = self.moves
        solves = self._apply_batch(run, batch, report)
        self._charge(clock, building, solves, core_share)
        if cross:
            # Where zone trades keep failing (every pod's zone pinned by its spread), try them less often.
            run.cross_misses = 0 if self.moves > moves_before else run.cross_misses + 1
            if run.cross_misses >= CROSS_ZONE_PATIENCE:
                run.cross_every, run.cross_misses = min(run.cross_every * 2, MAX_CROSS_ZONE_EVERY), 0
            elif not run.cross_misses:
                run.cross_every = CROSS_ZONE_EVERY
        return True

    def _build_batch(self, run: SearchRun, cross: bool, pool: ThreadPoolExecutor, budget: float, max_tries: int | None
                     ) -> tuple[list[tuple[list[Side], Future[tuple[list[SolvedNode] | None, float]]]], float]:
        """The batch's neighbourhoods, each submitted as soon as it is built, and the modelled time building
        them took."""
        batch: list[tuple[list[Side], Future[tuple[list[SolvedNode] | None, float]]]] = []
        taken: set[int] = set()
        building = 0.0  # modelled: neighbourhoods are chosen and built one after the other ...
        for _ in range(self.parallel if max_tries is None else min(self.parallel, max_tries - self.tried)):
            if cross:
                assert run.ledger is not None
                sides = self._cross_sides(run.ledger, run.buckets, run.shapes, run.queue, taken, run.cross_tried,
                                          run.cross_aside)
                if sides is None:
                    break
                seed = sides[0].nodes[0]
                if len({g.index for side in sides for n in side.nodes for g, _ in n.pods}) > MAX_CROSS_ZONE_GROUPS:
                    # Too many kinds of pod to prove anything in a sub-solve's budget: back to the queue.
                    run.cross_tried[id(seed)] = seed
                    run.queue.push(sides[0].key, seed, self._waste(sides[0].shape, seed))
                    building += SEARCH_STEP_SECONDS
                    continue
            else:
                seed_node = run.queue.pop(taken, lambda key: len(run.buckets[key]) >= 2,
                                          run.bucket_aside if run.ledger is not None else None)
                if seed_node is None:
                    break
                key, node = seed_node
                picked = [node] + self._partners(run.shapes[key], [n for n in run.buckets[key] if id(n) not in taken],
                                                 node)
                sides = [Side(key, run.shapes[key], picked, len(picked))]
            taken.update(id(n) for side in sides for n in side.nodes)
            # Submitted at once, so the next neighbourhood is built while this one is solved.
            # Sides in one zone (two pools) change no zonal count: no rows, and every pod may change sides.
            zonal = cross and len({side.key[1] for side in sides}) > 1
            sub = self.builder.prepare(sides, self._shares(run.headroom, sides), run.ledger if zonal else None)
            building += (SEARCH_STEP_SECONDS + sum(BUCKET_NODE_SECONDS * len(run.buckets[side.key]) for side in sides)
                         + model_build_seconds(len(sub.model.proto.variables) + len(sub.model.proto.constraints)))
            rng = self.zone_rng if cross else self.rng
            batch.append((sides, pool.submit(sub.solve, budget, rng.randrange(1 << 30))))
        return batch, building

    def _pool_pass(self, run: SearchRun, pool_now: Callable[[], ThreadPoolExecutor], clock: WorkClock, until: float,
                   max_tries: int | None, report: Callable[[float, int, int], None] | None,
                   core_share: CoreShare | None) -> None:
        """Each pool of a few nodes over several zones re-solved whole (`pool_resolve.py`), most wasteful first,
        side by side, the time left shared out among those still to come."""
        if run.ledger is None:
            return
        assert run.ledger.stay is not None  # the zone counts, taken here rather than on a worker
        families = pool_families(run.ledger, run.buckets, lambda key, node: self._waste(run.shapes[key], node))
        resolver = PoolResolve(self.builder, self.repacker, run.ledger)
        while families:
            left = (until - clock.now()) / CP_SAT_WALL_PER_DETERMINISTIC
            budget = min(MAX_POOL_DETERMINISTIC, left * self.parallel / len(families))
            if budget < MIN_POOL_DETERMINISTIC or (max_tries is not None and self.tried >= max_tries) \
                    or clock.past_wall() or (core_share is not None and core_share.stop(clock.now(), run.cost)):
                return
            pool = pool_now()
            batch = []
            for family in families[:self.parallel]:
                sides = [Side(k, run.shapes[k], list(run.buckets[k]), len(run.buckets[k])) for k in family]
                batch.append((sides, pool.submit(resolver.solve, sides, self._shares(run.headroom, sides), budget,
                                                 self.zone_rng.randrange(1 << 30))))
            families = families[len(batch):]
            solves: list[float] = []
            for sides, future in batch:
                better, used, building = future.result()
                solves.append(pool_seconds(used, building))
                self.tried += 1
                if better is None or _adds_limited_nodes(self.problem, sides, better) \
                        or not run.ledger.commit([n for side in sides for n in side.nodes], better):
                    continue
                self.moves += 1
                run.cost -= self._apply_sides(sides, better, run.buckets, run.shapes, run.headroom, run.queue)
                if report is not None:
                    report(run.cost, self.tried, self.moves)
            self._charge(clock, 0.0, solves, core_share)

    def _widen(self, run: SearchRun, cross: bool) -> bool:
        """No neighbourhood left to build: cross-zone ones are done at this size, or every node was tried at
        this size and larger neighbourhoods reach further. False when nothing is left to try."""
        if cross:
            run.cross_dry = True  # no node left to trade between zones at this size
            return True
        if self.size >= MAX_NEIGHBOURHOOD_NODES:
            if run.ledger is None or run.cross_dry:
                return False
            run.bucket_dry = True  # cross-zone neighbourhoods may still find something
            return True
        self.size = min(self.size * 3 // 2, MAX_NEIGHBOURHOOD_NODES)
        run.queue.unpark()
        run.cross_dry = False
        run.cross_tried.clear()
        return True

    def _apply_batch(self, run: SearchRun, batch: list[tuple[list[Side], Future[tuple[list[SolvedNode] | None, float]]]],
                     report: Callable[[float, int, int], None] | None) -> list[float]:
        """The batch's answers applied in order (a cross-zone one only if the zone counts still allow it); the
        modelled seconds of each solve."""
        solves: list[float] = []  # ... and solved side by side
        for sides, future in batch:
            better, used = future.result()
            solves.append(cp_sat_seconds(used))
            self.tried += 1
            first = sides[0]
            picked = [n for side in sides for n in side.nodes]
            if better is not None and len(sides) > 1:
                assert run.ledger is not None
                if not run.ledger.commit(picked, better):
                    better = None  # the counts moved under it (a neighbourhood solved beside it)
            if better is None:
                run.queue.park(first.key, first.nodes[0], self._waste(first.shape, first.nodes[0]))
                continue
            self.moves += 1
            if len(sides) == 1:
                run.cost -= self._apply(first.key, picked, better, run.buckets, run.shapes, run.headroom, run.queue)
            else:
                run.cost -= self._apply_sides(sides, better, run.buckets, run.shapes, run.headroom, run.queue)
            if report is not None:
                report(run.cost, self.tried, self.moves)
        return solves

    def _apply(self, key: tuple[object, ...], picked: list[SolvedNode], better: list[SolvedNode],
               buckets: dict[tuple[object, ...], list[SolvedNode]], shapes: dict[tuple[object, ...], BucketShape],
               headroom: dict[str, dict[str, int]], queue: WasteQueue) -> float:
        """Put a neighbourhood's cheaper nodes in place of the picked ones; returns what it saves."""
        pool_room = headroom.get(str(key[0]))
        if pool_room is not None:
            for name in pool_room:
                pool_room[name] -= (sum(node_capacity(n, name) for n in better) - sum(node_capacity(n, name) for n in picked))
        ids = {id(n) for n in picked}
        buckets[key] = [n for n in buckets[key] if id(n) not in ids] + better
        for n in picked:
            queue.remove(n)
            self._slacks.pop(id(n), None)
        for n in better:
            queue.push(key, n, self._waste(shapes[key], n))
        return sum(n.price for n in picked) - sum(n.price for n in better)

    def _apply_sides(self, sides: Sequence[Side], better: list[SolvedNode],
                     buckets: dict[tuple[object, ...], list[SolvedNode]], shapes: dict[tuple[object, ...], BucketShape],
                     headroom: dict[str, dict[str, int]], queue: WasteQueue) -> float:
        """Put a cross-zone neighbourhood's nodes in place of the picked ones, each in its own bucket."""
        saved = 0.0
        for side in sides:
            mine = [n for n in better if n.option is not None and self.repacker.bucket_of(n.option) == side.key]
            saved += self._apply(side.key, side.nodes, mine, buckets, shapes, headroom, queue)
        return saved

    def _ledger(self, solution: Solution, buckets: dict[tuple[object, ...], list[SolvedNode]],
                clock: WorkClock) -> ZoneLedger | None:
        """The zonal rules' counts for cross-zone neighbourhoods, or None when no two buckets of a pool
        differ only in zone (or cross-zone neighbourhoods are off)."""
        if not CROSS_ZONE_EVERY:
            return None
        ledger = ZoneLedger(self.repacker, solution, buckets, clock)  # its counts are taken when first used
        return ledger if any(ledger.twins.values()) else None

    def _cross_sides(self, ledger: ZoneLedger, buckets: dict[tuple[object, ...], list[SolvedNode]],
                     shapes: dict[tuple[object, ...], BucketShape], queue: WasteQueue, taken: set[int],
                     tried: dict[int, SolvedNode], aside: list[tuple[float, int, tuple[object, ...], SolvedNode]]
                     ) -> list[Side] | None:
        """A cross-zone neighbourhood: the most wasteful node with a bucket in another zone to trade with,
        half the neighbourhood from its bucket (the most wasteful first), half from one such bucket drawn
        at random (the most wasteful node and random ones); None when no node has such a bucket. Nodes
        `taken` by other neighbourhoods of the batch are left out; nodes already `tried` as a cross-zone
        seed at this size are not seeds again (they may be partners)."""
        def open_partners(key: tuple[object, ...]) -> list[tuple[object, ...]]:
            return [o for o in ledger.partners_of(key) if any(id(n) not in taken for n in buckets[o])]

        found = queue.pop(taken | tried.keys(), lambda key: bool(open_partners(key)), aside)
        if found is None:
            return None
        key, node = found
        half = max(self.size * CROSS_ZONE_SHARE // 4, 1)
        mine = [n for n in buckets[key] if n is not node and id(n) not in taken]
        picked = [node] + heapq.nlargest(min(half - 1, len(mine)), mine, key=lambda n: self._waste(shapes[key], n))
        partners = open_partners(key)
        # Buckets of other pools in the seed's zone first: trading with them needs no zonal rows, and nothing
        # else moves a pod off the pool the Karpenter plan chose for it.
        here = [o for o in partners if o[1] == key[1] and self._may_take(node, shapes[o])]
        family = ledger.family_of(key)
        if not here and len(family) > 2 and sum(len(buckets[k]) for k in family) <= POOL_NODES \
                and not any(id(n) in taken for k in family for n in buckets[k]) \
                and len({g.index for k in family for n in buckets[k] for g, _ in n.pods}) <= POOL_GROUPS:
            # A pool with a few nodes over several zones: all of them at once, so pods may move round the
            # zones in one step where no trade between two zones alone makes the plan cheaper.
            return [Side(k, shapes[k], list(buckets[k]), self._slots(k, list(buckets[k]), buckets)) for k in family]
        other = (here or partners)[self.zone_rng.randrange(len(here or partners))]
        theirs = [n for n in buckets[other] if id(n) not in taken]
        first = max(theirs, key=lambda n: self._waste(shapes[other], n))
        rest = [n for n in theirs if n is not first]
        across = [first] + self.zone_rng.sample(rest, min(half - 1, len(rest)))
        return [Side(key, shapes[key], picked, self._slots(key, picked, buckets)),
                Side(other, shapes[other], across, self._slots(other, across, buckets))]

    def _may_take(self, node: SolvedNode, shape: BucketShape) -> bool:
        """Whether some pod of the node may go to a node of the bucket (another pool may refuse them all)."""
        return any(self.repacker.option_mask(g.option_ids)[shape.indices].any() for g, _ in node.pods)

    def _slots(self, key: tuple[object, ...], nodes: list[SolvedNode],
               buckets: dict[tuple[object, ...], list[SolvedNode]]) -> int:
        """Slots of a cross-bucket side: its nodes, and `SPARE_SLOTS` more when they are its whole bucket and
        at most CROSS_SPARE_NODES (pods coming from the other side may need a node more of a smaller size,
        which no bucket neighbourhood of a node alone finds), unless its pool limits its nodes."""
        room = self.problem.headroom.get(str(key[0]))
        if len(nodes) > CROSS_SPARE_NODES or len(buckets[key]) > len(nodes) or (room is not None
                                                                               and room.nodes is not None):
            return len(nodes)
        return len(nodes) + SPARE_SLOTS

    def _split_singles(self, buckets: dict[tuple[object, ...], list[SolvedNode]],
                       shapes: dict[tuple[object, ...], BucketShape], headroom: dict[str, dict[str, int]],
                       nodes_left: dict[str, int], queue: WasteQueue, pool_now: Callable[[], ThreadPoolExecutor],
                       clock: WorkClock,
                       until: float, max_tries: int | None, report: Callable[[float, int, int], None] | None,
                       cost: float, core_share: CoreShare | None) -> float:
        """First, each node alone in its bucket (many small NodePools over six zones leave them everywhere),
        most wasteful first, re-solved once with `SPARE_SLOTS` empty slots beside it: a node just past a
        smaller size splits into that size plus a small one. Solved side by side like the main loop;
        returns what it saved. The main loop never picks such nodes (it needs two in a bucket). A pool
        with a node limit (`nodes_left`: nodes it may still add) lends each split one of its nodes while
        it has one; a node whose pool has none left is not tried."""
        singles = sorted((key for key, nodes in buckets.items() if len(nodes) == 1),
                         key=lambda key: -self._waste(shapes[key], buckets[key][0]))
        saved = 0.0
        waiting = list(singles)
        while waiting:
            budget = min(SUB_SOLVE_DETERMINISTIC_SECONDS, (until - clock.now()) / CP_SAT_WALL_PER_DETERMINISTIC)
            if budget < 0.02 or (max_tries is not None and self.tried >= max_tries) or clock.past_wall():
                break
            if core_share is not None and core_share.stop(clock.now(), cost - saved):
                break
            pool = pool_now()
            batch: list[tuple[tuple[object, ...], list[SolvedNode], Future[tuple[list[SolvedNode] | None, float]]]] = []
            building = 0.0
            width = self.parallel if max_tries is None else min(self.parallel, max_tries - self.tried)
            while waiting and len(batch) < width:
                key = waiting.pop(0)
                pool_name = str(key[0])
                if pool_name in nodes_left:
                    if nodes_left[pool_name] < SPARE_SLOTS:
                        continue
                    nodes_left[pool_name] -= SPARE_SLOTS  # lent to this neighbourhood; what it leaves unused comes back
                side = Side(key, shapes[key], list(buckets[key]), len(buckets[key]) + SPARE_SLOTS)
                sub = self.builder.prepare([side], self._shares(headroom, [side]))
                building += SEARCH_STEP_SECONDS + model_build_seconds(len(sub.model.proto.variables)
                                                                      + len(sub.model.proto.constraints))
                batch.append((key, list(buckets[key]), pool.submit(sub.solve, budget,
                                                                   self.split_rng.randrange(1 << 30))))
            solves: list[float] = []
            for key, picked, future in batch:
                better, used = future.result()
                solves.append(cp_sat_seconds(used))
                self.tried += 1
                added = 0 if better is None else len(better) - len(picked)
                if str(key[0]) in nodes_left:
                    nodes_left[str(key[0])] += SPARE_SLOTS - added
                if better is not None:
                    self.moves += 1
                    saved += self._apply(key, picked, better, buckets, shapes, headroom, queue)
                    if report is not None:
                        report(cost - saved, self.tried, self.moves)
            self._charge(clock, building, solves, core_share)
        return saved

    def _charge(self, clock: WorkClock, building: float, solves: list[float], core_share: CoreShare | None) -> None:
        """Charge a batch: building, then its solves side by side on every core, or on one core fewer for the
        part of the batch during which `core_share` holds one."""
        full = building + side_by_side(solves, self.parallel)
        if core_share is not None and self.parallel > 1:
            fewer = building + side_by_side(solves, self.parallel - 1)
            if fewer > full:
                now = clock.now()
                full += (fewer - full) * core_share.held(now, now + fewer) / fewer
        clock.charge(full)

    def _shares(self, headroom: dict[str, dict[str, int]], sides: Sequence[Side]) -> dict[str, dict[str, int]]:
        """The headroom of the sides' pools that have limits; neighbourhoods of one batch share it evenly."""
        pools = {str(side.key[0]) for side in sides}
        return {pool: {k: v // self.parallel for k, v in room.items()} for pool, room in headroom.items()
                if pool in pools}

    def _nodes_left(self, solution: Solution) -> dict[str, int]:
        """Per pool with a node limit: how many more new nodes the plan may launch in it."""
        out: dict[str, int] = {}
        for pool, headroom in self.problem.headroom.items():
            if headroom.nodes is not None:
                used = sum(1 for n in solution.new_nodes if n.option is not None and n.option.pool.name == pool)
                left = headroom.charged({}, used).nodes_room()
                assert left is not None
                out[pool] = left
        return out

    def _headroom(self, solution: Solution) -> dict[str, dict[str, int]]:
        """Per pool with resource limits: how much more capacity the plan's new nodes may add."""
        out: dict[str, dict[str, int]] = {}
        for pool, headroom in self.problem.headroom.items():
            if headroom.resources is None:
                continue
            used = {name: sum(node_capacity(node, name) for node in solution.new_nodes
                              if node.option is not None and node.option.pool.name == pool)
                    for name in headroom.resources}
            out[pool] = headroom.charged(used, 0).room()
        return out

    def _partners(self, shape: BucketShape, nodes: Sequence[SolvedNode], node: SolvedNode) -> list[SolvedNode]:
        """A third of the other nodes with the most waste (they can pool their slack), a third with the
        most room where the node has least (swaps between them free both), a third drawn at random."""
        others = [n for n in nodes if n is not node]
        wanted = min(self.size - 1, len(others))
        if not wanted:
            return []
        take = max(wanted // 3, 1)
        picked = heapq.nlargest(take, others, key=lambda n: self._waste(shape, n))
        binding = int(np.argmin(self._slack(shape, node)))
        chosen = {id(n) for n in picked}
        complements = heapq.nlargest(min(take, wanted - len(picked)), (n for n in others if id(n) not in chosen),
                                     key=lambda n: float(self._slack(shape, n)[binding]))
        picked += complements
        chosen.update(id(n) for n in complements)
        rest = [n for n in others if id(n) not in chosen]
        if REDUCED_COST_SEEDS and len(nodes) >= REDUCED_COST_MIN_NODES:
            # Half the rest by reduced cost (nodes dearer than their pods' worth), half at random: in a
            # large bucket random partners rarely meet the nodes worth re-packing.
            dear = heapq.nlargest((wanted - len(picked) + 1) // 2, rest, key=lambda n: self._reduced_cost(shape, n))
            picked += dear
            chosen.update(id(n) for n in dear)
            rest = [n for n in rest if id(n) not in chosen]
        picked += self.rng.sample(rest, min(wanted - len(picked), len(rest)))
        return picked

    def _slack(self, shape: BucketShape, node: SolvedNode) -> npt.NDArray[np.float64]:
        """Share of the node's room its pods leave free, per dimension (1 where the option has none)."""
        known = self._slacks.get(id(node))
        if known is not None:
            return known
        assert node.option is not None
        free = shape.free[shape.position[node.option.index]].astype(np.float64)
        used = np.sum([self.repacker.requests[group_info.index] for group_info, _ in node.pods], axis=0) if node.pods \
            else np.zeros(len(free))
        known = self._slacks[id(node)] = np.where(free > 0, (free - used) / np.maximum(free, 1.0), 1.0)
        return known

    def _movable(self, node: SolvedNode) -> bool:
        """Nodes with host ports or hostname pod affinity stay as they are."""
        for group_info, _ in node.pods:
            rules = self.rules.by_group[group_info.index]
            if rules.pinned or rules.host_ports:
                return False
        return True

    def _waste(self, shape: BucketShape, node: SolvedNode) -> float:
        """Dollars of the node's price its pods leave unused on its fullest dimension."""
        assert node.option is not None
        positive = shape.free[shape.position[node.option.index]] > 0
        if not positive.any():
            return 0.0
        return node.option.price * float(np.min(self._slack(shape, node)[positive]))

    def _reduced_cost(self, shape: BucketShape, node: SolvedNode) -> float:
        """Dollars of the node's price beyond what its pods are worth at the bucket's LP dual prices (what
        the fluid packing of the bucket's pods pays per unit of each dimension); its waste when unknown."""
        assert node.option is not None
        duals = self._duals.get(id(shape))
        if duals is None:
            return self._waste(shape, node)
        used = np.sum([self.repacker.requests[g.index] for g, _ in node.pods], axis=0) if node.pods \
            else np.zeros(len(duals))
        return node.option.price - float(np.dot(duals, used))

    def _dual_prices(self, shape: BucketShape, nodes: Sequence[SolvedNode], clock: WorkClock) -> None:
        """The bucket's LP dual prices per dimension (`bucket_duals.py`), kept by shape when solved."""
        if not REDUCED_COST_SEEDS:
            return
        duals = bucket_dual_prices(self.repacker, shape, nodes, clock)
        if duals is not None:
            self._duals[id(shape)] = duals

    # ------------------------------------------------------------------------------------ sub-solve


def _adds_limited_nodes(problem: Problem, sides: Sequence[Side], better: Sequence[SolvedNode]) -> bool:
    """Would a pool re-solved whole launch more nodes than it has, in a pool with a node limit? Its split
    and packing count only resource limits (`run.headroom`), and its spare slots may add nodes."""
    pools = {str(side.key[0]) for side in sides}
    limited = any(problem.headroom[p].nodes is not None for p in pools if p in problem.headroom)
    return limited and len(better) > sum(len(side.nodes) for side in sides)


__all__ = ["CoreShare", "NeighbourhoodSearch"]
