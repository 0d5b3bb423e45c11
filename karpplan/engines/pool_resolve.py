"""A pool re-solved whole in two steps: how its pods split over its zones, then how each zone packs them.

When the neighbourhood search (`neighbourhood.py`) has nothing left to try, a plan can still be far from the
cheapest in a way no neighbourhood of a few nodes sees: on the bench's many-deployments rows (Deployments of
one to three replicas spread over zones by maxSkew 1, fifty of them to each of twenty small NodePools), every
pool holds two or three nodes in each of three zones, each zone's nodes filled to within a vCPU, and the
waste is in how the pods split over the zones: pool-0's three zones of c6g.2xlarge + c6g.medium (27 vCPU's
price for 25.0 vCPU of pods) hold the same pods as 26 vCPU's worth once a few one- and two-replica
Deployments change zone so that one zone's rest fits a c6g.large. The whole pool as one CP-SAT model finds
that only with seconds of search (10 deterministic seconds there; 1 s finds nothing): it decides at once which
zone each pod goes to and which node of that zone holds it, and most of its effort goes into the symmetric
second half.

So the pool is solved in two steps, each a small CP-SAT model on one worker:

1. **The split.** Per zone (a *side*: one bucket of the pool), how many pods of each kind it holds and how many
   nodes of each option it launches (one option per size, `SIZE_OPTIONS`: the small sizes a zone's rest needs
   are what the neighbourhoods' choice of the most cost-efficient options leaves out), with the zone's pods
   fluid over its nodes and no more pods on a node than fit of the zone's smallest, every zonal rule kept on
   the new counts (`ZoneLedger.add_rows`, as a cross-zone neighbourhood keeps them) and the pool's limits;
   cheapest first, then fewest nodes. A split not cheaper than the pool's nodes now gains nothing. (Measured on
   many-deployments 2,000: an allowance per node for whole pods, half the smallest pod, made the split miss
   every cheaper one on pools whose nodes its pods fill to within 0.1 vCPU; two options per size made it
   slower to find one.)
2. **The packing.** The neighbourhood model (`cpsat/neighbourhood_model.py`: whole pods, every per-node rule) over
   the pool's nodes, each zone offered the split's node count plus a spare slot, with the split's counts of each
   group per zone fixed: the zones no longer interact, and the model is a few independent bucket packings.

The packing's plan replaces the pool's nodes when cheaper (the search checks the zone counts again as it applies
it, `ZoneLedger.commit`). Both steps are deterministic for a seed and a deterministic time budget.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
from ortools.sat.python import cp_model

from karpplan.engines.cpsat.neighbourhood_model import (
    PRICE_SCALE,
    Kind,
    Side,
    SubProblemBuilder,
    add_pool_limit_rows,
)
from karpplan.engines.effort import cp_sat_seconds, model_build_seconds
from karpplan.engines.large_pool import pack_zones, within_limits
from karpplan.engines.repack import BucketShape, Repacker
from karpplan.engines.repack.bucket import BucketKey
from karpplan.engines.result import SolvedNode
from karpplan.engines.zone_moves import ZoneLedger

POOL_NODES = 24  # a pool with at most this many movable nodes, over two zones or more, is packed by CP-SAT
POOL_KINDS = 200  # ... holding pods of at most this many kinds (the packing's model grows with kinds x slots)
# A larger pool, of at most LARGE_POOL_NODES nodes, is split by CP-SAT and packed per zone by the re-packer. 120, not
# 240: aws diverse 1,000's one pool of 200 nodes lost its integer-master start to the pass (28.49 -> 29.04 $/h), while
# many-deployments 20,000's pools are well under it (1.95% either way; work clock, session 16).
LARGE_POOL_NODES = 120  # a larger pool, of at most this many nodes, is split by CP-SAT and packed per zone by the
LARGE_POOL_KINDS = 2000  # ... re-packer (`large_pool.py`), holding pods of at most this many kinds
LARGE_POOL_SHARE = 0.5  # of the search's time, spent first on pools re-solved whole when one is large
SPLIT_SHARE = 0.3  # of a pool's deterministic budget, for the split; the packing gets what the split left
SPARE_SLOTS = 1  # slots per zone beyond the split's nodes, for what whole pods need more
ZONE_REFINE = True  # a split the one packing model misses is packed zone by zone, each re-solved by CP-SAT
SIZE_OPTIONS = 1  # options of each size (vCPUs) the split may launch, the most cost-efficient for the pods' mix


def pool_families(ledger: ZoneLedger, buckets: Mapping[BucketKey, list[SolvedNode]],
                  waste: Callable[[BucketKey, SolvedNode], float]) -> list[list[BucketKey]]:
    """Each pool's buckets that hold nodes, where they are two zones or more of at most `POOL_NODES` nodes,
    most wasteful pool first (ties in the buckets' order)."""
    seen: set[BucketKey] = set()
    out: list[tuple[float, int, list[BucketKey]]] = []
    for key in buckets:
        if key in seen or not buckets[key]:
            continue
        family = ledger.family_of(key)
        seen.update(family)
        if len(family) < 2 or sum(len(buckets[k]) for k in family) > LARGE_POOL_NODES:
            continue
        out.append((-sum(waste(k, n) for k in family for n in buckets[k]), len(out), family))
    return [family for *_, family in sorted(out, key=lambda e: (e[0], e[1]))]


def large_pool_share(ledger: ZoneLedger | None, buckets: Mapping[BucketKey, list[SolvedNode]], left: float) -> float:
    """Modelled seconds of the search's `left` to spend first on re-solving pools whole, when some pool over several
    zones holds pods of more kinds than the packing's CP-SAT model takes (`POOL_KINDS`: its zones are packed by the
    re-packer, `large_pool.py`): such pools' waste is in how their pods split over the zones, which neighbourhoods
    of a few nodes reach slowly (many-deployments 20,000, pools of 500 groups: 300.99 -> 299.77 $/h in a whole
    search), so they are re-solved before the search rather than once it has nothing left to try (which a large
    plan never reaches). 0 else. A pool past `POOL_NODES` alone does not qualify: realistic 1,000's spot pool
    (29 nodes, 153 kinds) spent half the search on a split whose zones the re-packer then packed dearer than the
    pool was (17.3683 -> 17.3971 $/h, work clock; session 17), while the neighbourhoods improve it step by step."""
    if ledger is None:
        return 0.0
    for key, nodes in buckets.items():
        if nodes:
            family = ledger.family_of(key)
            held = [n for k in family for n in buckets.get(k, ())]
            if len(family) > 1 and len(held) <= LARGE_POOL_NODES \
                    and len({g.index for n in held for g, _ in n.pods}) > POOL_KINDS:
                return LARGE_POOL_SHARE * max(left, 0.0)
    return 0.0


class PoolResolve:
    """Re-solves one pool's nodes in two steps (the module's docstring); safe to run on a worker thread."""

    def __init__(self, builder: SubProblemBuilder, repacker: Repacker, ledger: ZoneLedger) -> None:
        self.builder, self.repacker, self.ledger = builder, repacker, ledger

    def solve(self, sides: Sequence[Side], headroom: Mapping[str, Mapping[str, int]], budget: float, seed: int
              ) -> tuple[list[SolvedNode] | None, float, float]:
        """(The pool's nodes re-solved, or None when no cheaper plan was found; CP-SAT's deterministic time; the
        modelled seconds building the models took.) `sides` are the pool's buckets with all their nodes."""
        kinds = self.builder.kinds(sides, self.ledger.stay)
        large = len(kinds) > POOL_KINDS or sum(len(side.nodes) for side in sides) > POOL_NODES
        if len(kinds) > LARGE_POOL_KINDS:
            return None, 0.0, 0.0
        split = self._split(sides, kinds, headroom, (1.0 if large else SPLIT_SHARE) * budget, seed)
        used, building = split.used, split.building
        if split.counts is None:
            return None, used, building
        if large:
            assert split.kind_counts is not None
            packed, seconds = pack_zones(self.repacker, self.ledger, sides, kinds, split.kind_counts, headroom)
            return packed, used, building + seconds
        slotted = [Side(side.key, side.shape, side.nodes, split.nodes[s] + SPARE_SLOTS) for s, side in enumerate(sides)]
        sub = self.builder.prepare(slotted, headroom, self.ledger, split.options)
        m = sub.model
        for s in range(len(slotted)):
            slots = [j for j, t in enumerate(sub.slot_side) if t == s]
            by_group: dict[int, list[int]] = defaultdict(list)
            for k, kind in enumerate(sub.kinds):
                by_group[kind.group.index].append(k)
            for g, ks in by_group.items():
                m.add(sum(sub.x[j, k] for j in slots for k in ks) == split.counts[s].get(g, 0))
        building += model_build_seconds(len(m.proto.variables) + len(m.proto.constraints))
        share = budget - used if not ZONE_REFINE else (budget - used) / 2
        better, packing = sub.solve(max(share, 0.01), seed)
        used += packing
        if better is None and ZONE_REFINE:
            assert split.kind_counts is not None
            refined, more, seconds = self._by_zone(sides, kinds, split.kind_counts, split.nodes, headroom,
                                                   budget - used, seed)
            return refined, used + more, building + seconds
        return better, used, building

    def _by_zone(self, sides: Sequence[Side], kinds: Sequence[Kind], counts: Sequence[Sequence[int]],
                 nodes: Sequence[int], headroom: Mapping[str, Mapping[str, int]], budget: float, seed: int
                 ) -> tuple[list[SolvedNode] | None, float, float]:
        """The split packed zone by zone: the re-packer's packing of each zone's pods, re-solved by CP-SAT alone
        (the split's nodes and a spare slot; the zones no longer interact once the split fixed their pods). (Nodes, or None when not
        cheaper than the pool now; deterministic time; modelled seconds of building and packing.)"""
        packed, seconds = pack_zones(self.repacker, self.ledger, sides, kinds, counts, headroom, cheaper=False)
        if packed is None:
            return None, 0.0, seconds
        out: list[SolvedNode] = []
        used = 0.0
        if any(n.option is None or self.repacker.bucket_of(n.option) not in {side.key for side in sides} for n in packed):
            return None, 0.0, seconds
        for s, side in enumerate(sides):
            mine = [n for n in packed if n.option is not None and self.repacker.bucket_of(n.option) == side.key]
            if not mine:
                continue
            zone = Side(side.key, side.shape, mine, max(len(mine), nodes[s]) + SPARE_SLOTS)
            sub = self.builder.prepare([zone], headroom)
            seconds += model_build_seconds(len(sub.model.proto.variables) + len(sub.model.proto.constraints))
            better, spent = sub.solve(max((budget - used) / 2, 0.01), seed)
            used += spent
            out.extend(better if better is not None else mine)
        old_price = sum(n.price for side in sides for n in side.nodes)
        if sum(n.price for n in out) >= old_price - 1e-9 or not within_limits(sides, out, headroom):
            return None, used, seconds
        return out, used, seconds

    def _split(self, sides: Sequence[Side], kinds: Sequence[Kind], headroom: Mapping[str, Mapping[str, int]],
               budget: float, seed: int) -> _Split:
        """Step 1: pods of each group per side and nodes per side, fluid within a side; no counts when it is
        not cheaper than the sides' nodes now."""
        requests = self.repacker.requests
        dims = range(len(self.repacker.dims))
        old_price = sum(n.price for side in sides for n in side.nodes)
        m = cp_model.CpModel()
        y = [[m.new_int_var(0, len(kind.pods) if kind.masks[s].any() else 0, f"y{s}_{k}")
              for k, kind in enumerate(kinds)] for s in range(len(sides))]
        for k, kind in enumerate(kinds):
            m.add(sum(y[s][k] for s in range(len(sides))) == len(kind.pods))
        total = sum(len(kind.pods) for kind in kinds)
        n: list[dict[int, cp_model.IntVar]] = []
        cost = []
        for s, side in enumerate(sides):
            shape = side.shape
            now = Counter(shape.position[nd.option.index] for nd in side.nodes if nd.option is not None)
            options = sorted(set(self._split_options(shape, kinds, s, old_price)) | set(now))
            demand = np.sum([requests[kind.group.index] * len(kind.pods) for kind in kinds if kind.masks[s].any()],
                            axis=0)
            # No side needs more nodes of an option than hold every pod it may take.
            n.append({o: m.new_int_var(0, min(total, _nodes_for(demand, shape.free[o])), f"n{s}_{o}") for o in options})
            for o, v in n[s].items():
                m.add_hint(v, now[o])  # the pool's nodes now: a split as dear as they are
            for d in dims:
                held = sum(int(requests[kind.group.index][d]) * y[s][k] for k, kind in enumerate(kinds)
                           if requests[kind.group.index][d])
                m.add(held <= sum(int(shape.free[o][d]) * v for o, v in n[s].items()))
            # Whole pods: a node holds no more pods than fit of the side's smallest (per dimension).
            least = [min((int(requests[kind.group.index][d]) for kind in kinds if kind.masks[s].any()), default=0)
                     for d in dims]
            most = {o: min((int(shape.free[o][d]) // least[d] for d in dims if least[d] > 0), default=total)
                    for o in n[s]}
            m.add(sum(y[s]) <= sum(most[o] * v for o, v in n[s].items()))
            if self.ledger.must_keep_a_node(side, shape.options[0]):
                m.add(sum(n[s].values()) >= 1)
            cost += [round(float(shape.price[o]) * PRICE_SCALE) * v for o, v in n[s].items()]
            for k, kind in enumerate(kinds):
                m.add_hint(y[s][k], kind.origin[s])
        add_pool_limit_rows(m, sides, headroom, lambda s: n[s].items())
        self.ledger.add_rows(m, [side.shape.options[0] for side in sides], kinds, y)
        # The cheapest split, and of those the one with the fewest nodes (the packing then has fewer slots to fill).
        launched_all = [v for side_n in n for v in side_n.values()]
        m.minimize(sum(cost) * (total + 1) + sum(launched_all))
        building = model_build_seconds(len(m.proto.variables) + len(m.proto.constraints))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.max_deterministic_time = max(budget, 0.01)
        solver.parameters.random_seed = seed
        solver.parameters.catch_sigint_signal = False  # as the neighbourhoods' sub-solves (threads)
        solver.parameters.linearization_level = 2  # the full LP: much cheaper splits in the same time (session 16)
        status = solver.solve(m)
        used = solver.response_proto.deterministic_time
        # Only a split cheaper than the nodes now is worth packing.
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE) or \
                sum(solver.value(c) for c in cost) >= old_price * PRICE_SCALE - 0.5:
            return _Split(None, [], used, building)
        return _read_split(solver, kinds, y, n, used, building)

    def _split_options(self, shape: BucketShape, kinds: Sequence[Kind], side: int, spend: float) -> list[int]:
        """Options the split may launch on a side: every size the side's pods may use, the `SIZE_OPTIONS` most
        cost-efficient of each (by their room in the fullest dimension of the pods' mix). The neighbourhoods'
        choice (the most cost-efficient options overall) leaves out the small sizes, which are what a zone's
        rest needs."""
        usable = np.zeros(len(shape.options), dtype=np.bool_)
        for kind in kinds:
            usable |= kind.masks[side]
        demand = np.sum([self.repacker.requests[k.group.index] * len(k.pods) for k in kinds if k.masks[side].any()],
                        axis=0)
        positive = demand > 0
        by_size: dict[int, list[tuple[float, int]]] = defaultdict(list)
        for i in np.flatnonzero(usable & (shape.price <= spend + 1e-9)):
            if not positive.any() or np.any(shape.free[i][positive] <= 0):
                continue
            value = float(np.min(shape.free[i][positive] / demand[positive])) / max(float(shape.price[i]), 1e-12)
            by_size[int(shape.options[i].capacity.get("cpu"))].append((-value, int(i)))
        return sorted(i for ranked in by_size.values() for _, i in sorted(ranked)[:SIZE_OPTIONS])


def _nodes_for(demand: npt.NDArray[np.int64], free: npt.NDArray[np.int64]) -> int:
    """How many nodes of this room hold the demand, whole nodes, fluid within them."""
    need = [math.ceil(int(q) / int(f)) for q, f in zip(demand, free, strict=True) if q > 0 and f > 0]
    return max(need, default=0)


class _Split:
    """The split's answer: pods per group per side (None: no cheaper split found), nodes per side, CP-SAT's
    deterministic time and the modelled seconds building its model took."""

    def __init__(self, counts: list[dict[int, int]] | None, nodes: list[int], used: float, building: float,
                 options: list[list[int]] | None = None, kind_counts: list[list[int]] | None = None) -> None:
        self.counts, self.nodes, self.used, self.building = counts, nodes, used, building
        self.options = options or []  # per side: the options the split launches
        self.kind_counts = kind_counts  # per side: pods of each kind


def pool_seconds(used: float, building: float) -> float:
    """Modelled seconds of one pool's two steps on one worker."""
    return building + cp_sat_seconds(used)


__all__ = ["LARGE_POOL_NODES", "POOL_NODES", "PoolResolve", "large_pool_share", "pool_families", "pool_seconds"]


def _read_split(solver: cp_model.CpSolver, kinds: Sequence[Kind], y: Sequence[Sequence[cp_model.IntVar]],
                n: Sequence[Mapping[int, cp_model.IntVar]], used: float, building: float) -> _Split:
    """The solved split: pods of each group per side, nodes per side and the options they launch."""
    counts: list[dict[int, int]] = []
    per_kind = [[int(solver.value(y[s][k])) for k in range(len(kinds))] for s in range(len(n))]
    for s in range(len(n)):
        mine: dict[int, int] = defaultdict(int)
        for k, kind in enumerate(kinds):
            mine[kind.group.index] += per_kind[s][k]
        counts.append(dict(mine))
    nodes = [sum(solver.value(v) for v in n[s].values()) for s in range(len(n))]
    chosen = [[o for o, v in n[s].items() if solver.value(v)] for s in range(len(n))]
    return _Split(counts, nodes, used, building, chosen, per_kind)
