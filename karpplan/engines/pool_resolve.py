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
   nodes of each option it launches, with the zone's pods fluid over its nodes (less an allowance per node for
   whole pods, `PACKING_ALLOWANCE`), every zonal rule kept on the new counts (`ZoneLedger.add_rows`, as a
   cross-zone neighbourhood keeps them) and the pool's limits. Its optimum, fluid within each zone, is no dearer
   than the best plan with those zones; when it is not cheaper than the pool's nodes now, nothing is gained.
2. **The packing.** The neighbourhood model (`cpsat/neighbourhood_model.py`: whole pods, every per-node rule) over
   the pool's nodes, each zone offered the split's node count plus a spare slot, with the split's counts of each
   group per zone fixed: the zones no longer interact, and the model is a few independent bucket packings.

The packing's plan replaces the pool's nodes when cheaper (the search checks the zone counts again as it applies
it, `ZoneLedger.commit`). Both steps are deterministic for a seed and a deterministic time budget.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from ortools.sat.python import cp_model

from karpplan.engines.cpsat.neighbourhood_model import PRICE_SCALE, Kind, Side, SubProblemBuilder
from karpplan.engines.effort import cp_sat_seconds, model_build_seconds
from karpplan.engines.repack import Repacker
from karpplan.engines.repack.bucket import BucketKey
from karpplan.engines.result import SolvedNode
from karpplan.engines.zone_moves import ZoneLedger

POOL_NODES = 24  # a pool with at most this many movable nodes, over two zones or more, is re-solved whole
POOL_KINDS = 200  # ... holding pods of at most this many kinds (the packing's model grows with kinds x slots)
SPLIT_SHARE = 0.3  # of a pool's deterministic budget, for the split; the packing gets what the split left
PACKING_ALLOWANCE = 0.5  # per node of the split: this share of the zone's largest pod request is not counted
SPARE_SLOTS = 1  # slots per zone beyond the split's nodes, for what whole pods need more


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
        if len(family) < 2 or sum(len(buckets[k]) for k in family) > POOL_NODES:
            continue
        out.append((-sum(waste(k, n) for k in family for n in buckets[k]), len(out), family))
    return [family for *_, family in sorted(out, key=lambda e: (e[0], e[1]))]


class PoolResolve:
    """Re-solves one pool's nodes in two steps (the module's docstring); safe to run on a worker thread."""

    def __init__(self, builder: SubProblemBuilder, repacker: Repacker, ledger: ZoneLedger) -> None:
        self.builder, self.repacker, self.ledger = builder, repacker, ledger

    def solve(self, sides: Sequence[Side], headroom: Mapping[str, Mapping[str, int]], budget: float, seed: int
              ) -> tuple[list[SolvedNode] | None, float, float]:
        """(The pool's nodes re-solved, or None when no cheaper plan was found; CP-SAT's deterministic time; the
        modelled seconds building the models took.) `sides` are the pool's buckets with all their nodes."""
        kinds = self.builder.kinds(sides, self.ledger.stay)
        if len(kinds) > POOL_KINDS:
            return None, 0.0, 0.0
        split = self._split(sides, kinds, headroom, SPLIT_SHARE * budget, seed)
        used, building = split.used, split.building
        if split.counts is None:
            return None, used, building
        slotted = [Side(side.key, side.shape, side.nodes, split.nodes[s] + SPARE_SLOTS) for s, side in enumerate(sides)]
        sub = self.builder.prepare(slotted, headroom, self.ledger)
        m = sub.model
        for s in range(len(slotted)):
            slots = [j for j, t in enumerate(sub.slot_side) if t == s]
            by_group: dict[int, list[int]] = defaultdict(list)
            for k, kind in enumerate(sub.kinds):
                by_group[kind.group.index].append(k)
            for g, ks in by_group.items():
                m.add(sum(sub.x[j, k] for j in slots for k in ks) == split.counts[s].get(g, 0))
        building += model_build_seconds(len(m.proto.variables) + len(m.proto.constraints))
        better, packing = sub.solve(max(budget - used, 0.01), seed)
        return better, used + packing, building

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
            options = self.builder.slot_options(shape, kinds, s, old_price)
            n.append({o: m.new_int_var(0, total, f"n{s}_{o}") for o in options})
            launched = sum(n[s].values())
            for d in dims:
                biggest = max((int(requests[kind.group.index][d]) for kind in kinds if kind.masks[s].any()), default=0)
                allowance = int(PACKING_ALLOWANCE * biggest)
                held = sum(int(requests[kind.group.index][d]) * y[s][k] for k, kind in enumerate(kinds)
                           if requests[kind.group.index][d])
                m.add(held + allowance * launched <= sum(int(shape.free[o][d]) * v for o, v in n[s].items()))
            if self.ledger.must_keep_a_node(side, shape.options[0]):
                m.add(launched >= 1)
            cost += [round(float(shape.price[o]) * PRICE_SCALE) * v for o, v in n[s].items()]
            for k, kind in enumerate(kinds):
                m.add_hint(y[s][k], kind.origin[s])
        for pool, rooms in headroom.items():
            in_pool = [s for s, side in enumerate(sides) if str(side.key[0]) == pool]
            for name, room in rooms.items():
                before = sum(int(nd.option.capacity.get(name)) for s in in_pool for nd in sides[s].nodes
                             if nd.option is not None)
                m.add(sum(int(sides[s].shape.options[o].capacity.get(name)) * v for s in in_pool
                          for o, v in n[s].items()) <= before + room)
        self.ledger.add_rows(m, [side.shape.options[0] for side in sides], kinds, y)
        # Only a split cheaper than the nodes now is worth packing.
        m.add(sum(cost) <= round(old_price * PRICE_SCALE) - 1)
        m.minimize(sum(cost))
        building = model_build_seconds(len(m.proto.variables) + len(m.proto.constraints))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.max_deterministic_time = max(budget, 0.01)
        solver.parameters.random_seed = seed
        solver.parameters.catch_sigint_signal = False  # as the neighbourhoods' sub-solves (threads)
        status = solver.solve(m)
        used = solver.response_proto.deterministic_time
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return _Split(None, [], used, building)
        counts: list[dict[int, int]] = []
        for s in range(len(sides)):
            mine: dict[int, int] = defaultdict(int)
            for k, kind in enumerate(kinds):
                mine[kind.group.index] += solver.value(y[s][k])
            counts.append(dict(mine))
        nodes = [sum(solver.value(v) for v in n[s].values()) for s in range(len(sides))]
        return _Split(counts, nodes, used, building)


class _Split:
    """The split's answer: pods per group per side (None: no cheaper split found), nodes per side, CP-SAT's
    deterministic time and the modelled seconds building its model took."""

    def __init__(self, counts: list[dict[int, int]] | None, nodes: list[int], used: float, building: float) -> None:
        self.counts, self.nodes, self.used, self.building = counts, nodes, used, building


def pool_seconds(used: float, building: float) -> float:
    """Modelled seconds of one pool's two steps on one worker."""
    return building + cp_sat_seconds(used)


__all__ = ["POOL_NODES", "PoolResolve", "pool_families", "pool_seconds"]
