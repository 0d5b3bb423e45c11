"""The neighbourhood search's sub-problem: a few nodes of one or two buckets as a small exact CP-SAT model.

Each side is one bucket's part of the neighbourhood: its nodes and how many slots it offers (a slot is a
possible node: it takes at most one of the bucket's options). Pods are grouped into kinds (one group, one
mask of allowed options per side, with every preference the pod's old node met), and the model says how
many pods of each kind each slot holds, under every per-node rule (resources, hard hostname spread by final
counts, hostname anti-affinity both ways) and each pool's headroom under its limits. With two sides (buckets
of one pool in different zones, or of two pools in one zone) the zonal rules come from
`zone_moves.ZoneLedger`. The model minimises the
nodes' price; the current nodes are its hint. `neighbourhood.py` chooses the nodes and applies the result.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from karpplan.engines.repack import BoolArray, BucketShape, Repacker
from karpplan.engines.result import SolvedNode
from karpplan.engines.zone_moves import ZoneLedger
from karpplan.model.pods import Pod
from karpplan.scheduling.problem import GroupInfo

PRICE_SCALE = 1_000_000  # micro-dollars per hour: prices are exact to the catalog's decimals
MAX_SLOT_OPTIONS = 24  # options a slot may take, the most cost-efficient for the neighbourhood's mix


@dataclass
class Kind:
    """Pods of one group with one option mask per side inside a neighbourhood."""

    group: GroupInfo
    masks: list[BoolArray]  # per side: the side's options (by position in its shape) the pods may take
    pods: list[Pod]
    origin: list[int]  # per side: how many of the pods come from its nodes


@dataclass
class Side:
    """One bucket's part of a neighbourhood: its nodes and how many slots it offers."""

    key: tuple[object, ...]
    shape: BucketShape
    nodes: list[SolvedNode]
    slots: int


@dataclass
class SubProblem:
    """One neighbourhood's model, solved on a worker thread and decoded into nodes."""

    model: cp_model.CpModel
    sides: list[Side]
    kinds: list[Kind]
    options: list[list[int]]  # per side
    slot_side: list[int]  # per slot
    z: dict[tuple[int, int], cp_model.IntVar]
    x: dict[tuple[int, int], cp_model.IntVar]
    old_price: float

    def solve(self, budget: float, seed: int) -> tuple[list[SolvedNode] | None, float]:
        """(The nodes re-solved, or None when CP-SAT finds nothing cheaper within the budget; the
        deterministic time CP-SAT used.)"""
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.max_deterministic_time = budget
        solver.parameters.random_seed = seed
        # Sub-solves run side by side in threads: CP-SAT's own Ctrl-C handler, installed and removed by each
        # solve, then races with the other's and aborts the process (`std::bad_function_call`) when Ctrl-C
        # comes. Left to Python, Ctrl-C stops the search between sub-solves, and the CLI exits with 130.
        solver.parameters.catch_sigint_signal = False
        status = solver.solve(self.model)
        used = solver.response_proto.deterministic_time
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None, used
        return self._decode(solver), used

    def _decode(self, solver: cp_model.CpSolver) -> list[SolvedNode] | None:
        out: list[SolvedNode] = []
        queues = [list(kind.pods) for kind in self.kinds]
        for j, side in enumerate(self.slot_side):
            shape = self.sides[side].shape
            chosen = [o for o in self.options[side] if solver.value(self.z[j, o])]
            members: list[tuple[GroupInfo, Pod]] = []
            for k, kind in enumerate(self.kinds):
                for _ in range(solver.value(self.x[j, k])):
                    members.append((kind.group, queues[k].pop()))
            if not chosen:
                if members:
                    return None
                continue
            out.append(SolvedNode("", None, shape.options[chosen[0]], members))
        if sum(n.price for n in out) >= self.old_price - 1e-9:
            return None
        return out


class SubProblemBuilder:
    """Builds neighbourhoods' models for one re-packer's problem; caches pod masks per bucket shape."""

    def __init__(self, repacker: Repacker) -> None:
        self.repacker = repacker
        self.rules = repacker.rules
        self._mask_cache: dict[int, dict[tuple[int, tuple[int, ...]], BoolArray]] = {}  # per bucket shape

    def reset(self) -> None:
        """Forget the masks: they are keyed by object ids, which are only unique among live objects."""
        self._mask_cache = {}

    def kinds(self, sides: Sequence[Side], stay: frozenset[int] = frozenset()) -> list[Kind]:
        """The neighbourhood's pods by group and masks (one per side: its options the pod may take, with
        every preference its old node met). Pods of the groups in `stay` keep their side."""
        by_key: dict[tuple[object, ...], Kind] = {}
        caches = [self._mask_cache.setdefault(id(side.shape), {}) for side in sides]
        nowhere = [np.zeros(len(side.shape.options), dtype=np.bool_) for side in sides]  # masks of staying pods
        for s, side in enumerate(sides):
            for node in side.nodes:
                assert node.option is not None
                for group_info, pod in node.pods:
                    masks = [self.repacker.pod_mask(other.shape, group_info, node.option, caches[t])
                             if t == s or group_info.index not in stay else nowhere[t]
                             for t, other in enumerate(sides)]
                    key = (group_info.index, *(m.tobytes() for m in masks),
                           s if group_info.index in stay else -1)
                    kind = by_key.get(key)
                    if kind is None:
                        kind = by_key[key] = Kind(group_info, masks, [], [0] * len(sides))
                    kind.pods.append(pod)
                    kind.origin[s] += 1
        return list(by_key.values())

    def slot_options(self, shape: BucketShape, kinds: Sequence[Kind], side: int, spend: float) -> list[int]:
        """Options a slot of the side may take: some kind may use them, no dearer than the whole
        neighbourhood, and not dominated (another as cheap with at least as much room)."""
        usable = np.zeros(len(shape.options), dtype=np.bool_)
        for k in kinds:
            usable |= k.masks[side]
        candidates = np.flatnonzero(usable & (shape.price <= spend + 1e-9))  # sorted by price
        free = shape.free[candidates]
        # i is dominated by an earlier (no dearer) j with at least as much room in every dimension;
        # among identical options the first is kept.
        covers = np.all(free[None, :, :] >= free[:, None, :], axis=2)  # [i, j]: j has room for i
        earlier = np.tri(len(candidates), k=-1, dtype=np.bool_)
        dominated = np.any(covers & earlier, axis=1)
        kept = [int(i) for i in candidates[~dominated]]
        if len(kept) > MAX_SLOT_OPTIONS:
            # Keep the options that hold the neighbourhood's demand mix most cheaply.
            demand = np.sum([self.repacker.requests[k.group.index] * len(k.pods) for k in kinds
                             if k.origin[side] or k.masks[side].any()], axis=0)
            positive = demand > 0

            def value(i: int) -> float:
                return float(np.min(shape.free[i][positive] / demand[positive])) / max(float(shape.price[i]), 1e-12)

            kept = sorted(sorted(kept, key=value, reverse=True)[:MAX_SLOT_OPTIONS])
        return kept

    def prepare(self, sides: Sequence[Side], headroom: Mapping[str, Mapping[str, int]],
                zones: ZoneLedger | None = None, extra: Sequence[Sequence[int]] = ()) -> SubProblem:
        """The sides' nodes as one small exact model: each side's slots take its bucket's options, pods of
        a kind may go to any side its masks allow; with more than one side (buckets of one pool in
        different zones) `zones` adds the zonal rules, and each side whose whole bucket is in the
        neighbourhood keeps a node (an emptied zone would change the rules' domains). `extra`: per side, options
        (by position in its shape) its slots may take beyond those chosen for the neighbourhood's mix."""
        stay = zones.stay if zones is not None else frozenset()
        kinds = self.kinds(sides, stay)
        old_price = sum(n.price for side in sides for n in side.nodes)
        options: list[list[int]] = []
        for s, side in enumerate(sides):
            current = [side.shape.position[n.option.index] for n in side.nodes if n.option is not None]
            more = set(extra[s]) if s < len(extra) else set()
            options.append(sorted(set(self.slot_options(side.shape, kinds, s, old_price)) | set(current) | more))
        slot_side = [s for s, side in enumerate(sides) for _ in range(side.slots)]
        m = cp_model.CpModel()
        z = {(j, o): m.new_bool_var(f"z{j}_{o}") for j, s in enumerate(slot_side) for o in options[s]}
        x = {(j, k): m.new_int_var(0, len(kind.pods), f"x{j}_{k}") for j in range(len(slot_side))
             for k, kind in enumerate(kinds)}
        price = [{o: round(float(side.shape.price[o]) * PRICE_SCALE) for o in options[s]}
                 for s, side in enumerate(sides)]
        for j, s in enumerate(slot_side):
            self._slot_rows(m, j, sides[s].shape, s, options[s], kinds, z, x)
        for k, kind in enumerate(kinds):
            m.add(sum(x[j, k] for j in range(len(slot_side))) == len(kind.pods))
        # Symmetry: each side's slots ordered by price, dearest first.
        spend = [sum(price[s][o] * z[j, o] for o in options[s]) for j, s in enumerate(slot_side)]
        for j in range(len(slot_side) - 1):
            if slot_side[j] == slot_side[j + 1]:
                m.add(spend[j] >= spend[j + 1])
        add_pool_limit_rows(m, sides, headroom,
                            lambda s: [(o, z[j, o]) for j, t in enumerate(slot_side) if t == s for o in options[s]])
        used = [sum(z[j, o] for o in options[s]) for j, s in enumerate(slot_side)]
        if zones is not None and len(sides) > 1:
            on_side = [[sum(x[j, k] for j, t in enumerate(slot_side) if t == s) for k in range(len(kinds))]
                       for s in range(len(sides))]
            zones.add_rows(m, [side.shape.options[0] for side in sides], kinds, on_side)
            for s, side in enumerate(sides):
                if zones.must_keep_a_node(side, side.shape.options[0]):
                    m.add(sum(used[j] for j, t in enumerate(slot_side) if t == s) >= 1)
        m.minimize(sum(spend) * (len(slot_side) + 1) + sum(used))
        start = 0
        for s, side in enumerate(sides):
            self._hint(m, side, kinds, z, x, options[s], start)
            start += side.slots
        return SubProblem(m, list(sides), kinds, options, slot_side, z, x, old_price)

    def _slot_rows(self, m: cp_model.CpModel, j: int, shape: BucketShape, s: int, opts: Sequence[int],
                   kinds: Sequence[Kind], z: dict[tuple[int, int], cp_model.IntVar],
                   x: dict[tuple[int, int], cp_model.IntVar]) -> None:
        """Slot j of side s: at most one option launched, its pods within the option's room and masks, and
        the per-node rules."""
        m.add_at_most_one(z[j, o] for o in opts)
        for d in range(len(self.repacker.dims)):
            terms = [int(self.repacker.requests[kind.group.index][d]) * x[j, k] for k, kind in enumerate(kinds)
                     if self.repacker.requests[kind.group.index][d]]
            if terms:
                m.add(sum(terms) <= sum(int(shape.free[o][d]) * z[j, o] for o in opts))
        for k, kind in enumerate(kinds):
            allowed = [z[j, o] for o in opts if kind.masks[s][o]]
            if len(allowed) < len(opts):
                m.add(x[j, k] <= len(kind.pods) * sum(allowed))
        self._per_node_rules(m, kinds, {k: x[j, k] for k in range(len(kinds))}, f"s{j}")

    def _per_node_rules(self, m: cp_model.CpModel, kinds: Sequence[Kind], x: dict[int, cp_model.IntVar],
                        name: str) -> None:
        """Hard hostname spread by final counts and hostname anti-affinity, on one node."""
        book = self.rules
        by_rule_owners: dict[int, list[int]] = defaultdict(list)
        by_rule_matched: dict[int, list[int]] = defaultdict(list)
        by_term_owners: dict[int, list[int]] = defaultdict(list)
        by_term_matched: dict[int, list[int]] = defaultdict(list)
        for k, kind in enumerate(kinds):
            rules = book.by_group[kind.group.index]
            for rid in rules.spread_owned:
                by_rule_owners[rid].append(k)
            for rid in rules.spread_matches:
                by_rule_matched[rid].append(k)
            for tid in rules.anti_owned:
                by_term_owners[tid].append(k)
            for tid in rules.anti_matches:
                by_term_matched[tid].append(k)
        for rid, owners in by_rule_owners.items():
            matched = by_rule_matched.get(rid, [])
            if not matched:
                continue
            has_owner = m.new_bool_var(f"{name}_r{rid}")
            m.add(sum(x[k] for k in owners) == 0).only_enforce_if(has_owner.negated())
            m.add(sum(x[k] for k in matched) <= book.node_cap[rid]).only_enforce_if(has_owner)
        for tid, owners in by_term_owners.items():
            matched = by_term_matched.get(tid, [])
            if not matched:
                continue
            has_owner = m.new_bool_var(f"{name}_t{tid}")
            m.add(sum(x[k] for k in owners) == 0).only_enforce_if(has_owner.negated())
            # An owner that matches its own term tolerates no other matching pod; one that does not
            # tolerates no matching pod at all (other owners are fine).
            self_matched = any(k in matched for k in owners)
            m.add(sum(x[k] for k in matched) <= (1 if self_matched else 0)).only_enforce_if(has_owner)

    def _hint(self, m: cp_model.CpModel, side: Side, kinds: Sequence[Kind], z: dict[tuple[int, int], cp_model.IntVar],
              x: dict[tuple[int, int], cp_model.IntVar], options: Sequence[int], start: int) -> None:
        """The side's current nodes, dearest first, in its slots from `start`, as the solver's starting point."""
        order = sorted(side.nodes, key=lambda n: -n.price)
        where = {id(p): k for k, kind in enumerate(kinds) for p in kind.pods}
        for i in range(side.slots):
            j = start + i
            node = order[i] if i < len(order) else None  # the spare slots start empty
            chosen = side.shape.position[node.option.index] if node is not None and node.option is not None else -1
            counts = Counter(where[id(pod)] for _, pod in node.pods) if node is not None else Counter[int]()
            for o in options:
                m.add_hint(z[j, o], o == chosen)
            for k in range(len(kinds)):
                m.add_hint(x[j, k], counts[k])


def add_pool_limit_rows(m: cp_model.CpModel, sides: Sequence[Side], headroom: Mapping[str, Mapping[str, int]],
                        launched: Callable[[int], Iterable[tuple[int, cp_model.IntVar]]]) -> None:
    """NodePool limits count capacity: the sides of each limited pool may launch at most what its nodes on them
    hold now plus the pool's headroom. `launched(s)`: side s's (option index, count of nodes launched) terms."""
    for pool, rooms in headroom.items():
        mine = [s for s, side in enumerate(sides) if str(side.key[0]) == pool]
        for name, room in rooms.items():
            before = sum(node_capacity(n, name) for s in mine for n in sides[s].nodes)
            m.add(sum(int(sides[s].shape.options[o].capacity.get(name)) * v
                      for s in mine for o, v in launched(s)) <= before + room)


def node_capacity(node: SolvedNode, name: str) -> int:
    return int(node.option.capacity.get(name)) if node.option is not None else 0


__all__ = ["Kind", "Side", "SubProblem", "SubProblemBuilder", "add_pool_limit_rows", "node_capacity"]
