"""The uncapped pods of a split dealing (`zone_split`) placed zone by zone, every zone spread kept by construction.

Once the capped pods (hostname anti-affinity and spread owners, `LpRounding._capped`) are on the nodes, the pods
left that a zone spread counts (on aws diverse: generic and zone-spread pods carry the spreads' label) are given
zones by one small CP-SAT model, then placed by a max-flow per covering row:

1. **Zones.** Per kind (the spreads counting it, its covering row) the pods each zone takes, so that every spread
   ends within an even split over the zones (the floor or the ceiling of its pods: any maxSkew holds) counting the
   pods already placed and the zone-affinity clusters' pods in their home zones, and no zone is given more pods of
   a row than it has slots of that row left (on the nodes that accept the kind: a node holding a hostname-spread
   owner refuses more pods its spread counts). Shortfalls cost; a spread past its split costs ten times more.
2. **Placement.** Per row: pods of each group, through its zone quota (a cluster's: its home zone), to the zone's
   nodes with a slot of the row that accept the group; a min-cost max-flow, so no greedy order strands a pod.

Pods the flow leaves go through the fill and the left-over step as before, within their quotas
(`LpRounding._zone_ok`). Measured on aws diverse 1,000 pods in docs/design-notes/optimiser.md, "Session 18".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any, Protocol

from ortools.graph.python import min_cost_flow
from ortools.sat.python import cp_model

from karpplan.engines.effort import WorkClock, cp_sat_seconds, model_build_seconds
from karpplan.engines.patterns.mix import PatternMix
from karpplan.engines.repack.rules import Rulebook
from karpplan.model.pods import Pod
from karpplan.scheduling.problem import GroupInfo


class Rounding(Protocol):
    """What the fill reads and calls of `LpRounding` (its nodes are `_Node`s: option, slots, bin)."""

    zones: list[str]
    home: dict[int, str] | None
    quota: dict[int, Counter[str]]
    counts: dict[int, Counter[str]]
    counted_by: dict[int, list[int]]
    clock: WorkClock | None
    rules: Rulebook
    mix: PatternMix

    def _row(self, g: GroupInfo) -> int: ...

    def _fits(self, g: GroupInfo, n: Any) -> bool: ...

    def _place(self, g: GroupInfo, pods: dict[int, list[Pod]], n: Any, row: int | None) -> None: ...


QUOTA_DETERMINISTIC_SECONDS = 1.0  # CP-SAT's limit (aws diverse 1,000: 0.07)
QUOTA_SEED = 0
SPREAD_WEIGHT = 10  # a pod past a spread's even split, against one short of a slot
FLOW_ARC_SECONDS = 2e-6  # modelled seconds per flow arc built (the acceptance check behind it)

Kind = tuple[tuple[int, ...], int]  # (spreads counting it, covering row)


def fill_by_zones(rounding: Rounding, groups: Sequence[GroupInfo], pods: dict[int, list[Pod]],
                  nodes: Sequence[Any]) -> None:
    """Step 1 sets `rounding.quota` for the uncapped pods the spreads count; step 2 places what it can."""
    quota = zone_quotas(rounding, groups, pods, nodes)
    if quota is None:
        return
    rounding.quota = quota
    _flow_fill(rounding, groups, pods, nodes)


def _uncapped(rounding: Rounding, g: GroupInfo) -> bool:
    return len(rounding.mix.rows_of[rounding.mix.class_of_group[g.index]]) == 1


def zone_quotas(rounding: Rounding, groups: Sequence[GroupInfo], pods: dict[int, list[Pod]],
                nodes: Sequence[Any]) -> dict[int, Counter[str]] | None:
    """Per uncapped group the spreads count (out of the clusters), its pods per zone (step 1); None when CP-SAT
    found nothing in its limit."""
    tied = _Tied.of(rounding, groups, pods)
    m = cp_model.CpModel()
    zones = rounding.zones
    x: dict[Kind, dict[str, cp_model.IntVar]] = {}
    short: list[cp_model.IntVar] = []
    by_row: dict[tuple[int, str], list[cp_model.IntVar]] = defaultdict(list)
    by_rule: dict[tuple[int, str], list[cp_model.IntVar]] = defaultdict(list)
    for key in sorted(tied.kinds):
        total = sum(len(pods[g.index]) for g in tied.kinds[key])
        x[key] = {z: m.new_int_var(0, total, "") for z in zones}
        m.add(sum(x[key].values()) == total)
        for z, room in _accepting_slots(rounding, nodes, tied.kinds[key][0], key[1]).items():
            s = m.new_int_var(0, total, "")
            short.append(s)
            m.add(x[key][z] <= room + s)
        for z in zones:
            by_row[key[1], z].append(x[key][z])
            for rule in key[0]:
                by_rule[rule, z].append(x[key][z])
    slots: Counter[tuple[int, str]] = Counter()
    for n in nodes:
        for r, k in n.slots.items():
            slots[r, n.option.zone] += k
    for (r, z), terms in sorted(by_row.items()):
        s = m.new_int_var(0, sum(len(p) for p in pods.values()), "")
        short.append(s)
        m.add(sum(terms) + tied.fixed[r, z] <= slots[r, z] + s)
    past: list[cp_model.IntVar] = []
    for rule in sorted({rule for key in tied.kinds for rule in key[0]}):
        total = tied.totals[rule]
        for z in zones:
            under, over = m.new_int_var(0, total, ""), m.new_int_var(0, total, "")
            past += [under, over]
            m.add(tied.counts[rule][z] + sum(by_rule[rule, z]) + under >= total // len(zones))
            m.add(tied.counts[rule][z] + sum(by_rule[rule, z]) - over <= -(-total // len(zones)))
    m.minimize(sum(short) + SPREAD_WEIGHT * sum(past))
    solver = _solved(m, rounding.clock, len(tied.kinds) * len(nodes))
    if solver is None:
        return None
    quota: dict[int, Counter[str]] = {}
    for key in sorted(tied.kinds):
        share = Counter({z: solver.value(x[key][z]) for z in zones})
        for g in tied.kinds[key]:  # the kind's zone counts dealt to its groups in order
            want, mine = len(pods[g.index]), Counter[str]()
            for z in zones:
                take = min(want, share[z])
                mine[z], share[z], want = take, share[z] - take, want - take
            quota[g.index] = mine
    return quota


@dataclass
class _Tied:
    """The pods the zone spreads tie, as the capped pods left them."""

    counts: dict[int, Counter[str]]  # spread -> zone -> pods placed there, or homed there and left to place
    totals: Counter[int]  # spread -> every pod it counts, placed or not
    fixed: Counter[tuple[int, str]]  # (row, zone) -> cluster pods left to place there
    kinds: dict[Kind, list[GroupInfo]]  # uncapped groups out of the clusters the spreads count, by kind

    @staticmethod
    def of(rounding: Rounding, groups: Sequence[GroupInfo], pods: dict[int, list[Pod]]) -> _Tied:
        home = rounding.home or {}
        tied = _Tied(defaultdict(Counter), Counter(), Counter(), defaultdict(list))
        for rule, c in rounding.counts.items():
            tied.counts[rule].update(c)
            tied.totals[rule] += sum(c.values())
        for g in groups:
            left, rules = len(pods[g.index]), rounding.counted_by.get(g.index, ())
            for rule in rules:
                tied.totals[rule] += left
            if left and g.index in home:
                tied.fixed[rounding._row(g), home[g.index]] += left
                for rule in rules:
                    tied.counts[rule][home[g.index]] += left
            elif left and rules and _uncapped(rounding, g):
                tied.kinds[tuple(rules), rounding._row(g)].append(g)
        return tied


def _accepting_slots(rounding: Rounding, nodes: Sequence[Any], probe: GroupInfo, row: int) -> Counter[str]:
    """Per zone, the slots of `row` on the nodes that take a pod of `probe`'s kind (its groups share their rules:
    a node holding a hostname spread's owner refuses more pods that spread counts)."""
    out = Counter[str]({z: 0 for z in rounding.zones})
    for n in nodes:
        if n.slots[row] > 0 and rounding._fits(probe, n):
            out[n.option.zone] += n.slots[row]
    return out


def _solved(m: cp_model.CpModel, clock: WorkClock | None, checks: int) -> cp_model.CpSolver | None:
    """One worker, a fixed seed, the deterministic limit (and the wall guard's); the building (`checks` node
    acceptance checks) and the solve charged. None when CP-SAT found nothing."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = QUOTA_SEED
    solver.parameters.max_deterministic_time = QUOTA_DETERMINISTIC_SECONDS
    if clock is not None:
        clock.charge(model_build_seconds(len(m.proto.variables) + len(m.proto.constraints))
                     + FLOW_ARC_SECONDS * checks)
        if clock.wall_left() != float("inf"):
            solver.parameters.max_time_in_seconds = max(clock.wall_left(), 0.01)
    status = solver.solve(m)
    if clock is not None:
        clock.charge(cp_sat_seconds(solver.deterministic_time))
    return solver if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None


def _flow_fill(rounding: Rounding, groups: Sequence[GroupInfo], pods: dict[int, list[Pod]],
               nodes: Sequence[Any]) -> None:
    """Step 2: per covering row, a max-flow from each group's pods through its zones' quotas (a cluster's: its
    home zone; a group without either: any zone) to the nodes with a slot of the row that accept it."""
    home, quota = rounding.home or {}, rounding.quota
    by_row: dict[int, list[GroupInfo]] = defaultdict(list)
    for g in groups:
        if pods[g.index] and _uncapped(rounding, g):
            by_row[rounding._row(g)].append(g)
    built = 0
    for r in sorted(by_row):
        members, holding = by_row[r], [i for i, n in enumerate(nodes) if n.slots[r] > 0]
        flow = min_cost_flow.SimpleMinCostFlow()
        source, sink, total = 0, 1, 0
        ids = count(2)
        node_of = {i: next(ids) for i in holding}
        via: dict[tuple[int, str], int] = {}  # (group, zone) -> its flow node
        for g in members:
            left = len(pods[g.index])
            total += left
            group_node = next(ids)
            flow.add_arc_with_capacity_and_unit_cost(source, group_node, left, 0)
            for z in rounding.zones:
                room = (left if home[g.index] == z else 0) if g.index in home else \
                    quota[g.index][z] if g.index in quota else left
                if room > 0:
                    via[g.index, z] = next(ids)
                    flow.add_arc_with_capacity_and_unit_cost(group_node, via[g.index, z], room, 0)
        arcs: list[tuple[int, GroupInfo, int]] = []
        for i in holding:
            n = nodes[i]
            flow.add_arc_with_capacity_and_unit_cost(node_of[i], sink, n.slots[r], 0)
            for g in members:
                key = (g.index, n.option.zone)
                if key in via and n.option.index in g.option_ids and \
                        rounding.rules.accepts(n.bin, rounding.rules.by_group[g.index]):
                    arcs.append((flow.add_arc_with_capacity_and_unit_cost(via[key], node_of[i], n.slots[r], 0), g, i))
            built += len(members)
        flow.add_arc_with_capacity_and_unit_cost(source, sink, total, 1)  # what no slot takes stays for later
        flow.set_node_supply(source, total)
        flow.set_node_supply(sink, -total)
        if flow.solve() != flow.OPTIMAL:
            continue
        for arc, g, i in arcs:
            for _ in range(flow.flow(arc)):
                if pods[g.index] and rounding._fits(g, nodes[i]):
                    rounding._place(g, pods, nodes[i], r)
    if rounding.clock is not None:
        rounding.clock.charge(FLOW_ARC_SECONDS * built)
