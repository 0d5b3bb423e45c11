"""A plan rounded from the configuration LP's optimum, for large plans where the greedy start is far above it.

On the bench's aws diverse 10,000 pods, the configuration LP is 272.70 $/h and converges in about 17
modelled seconds; the re-packed Karpenter plan the search starts from costs 286.87, and 44 s of
neighbourhood search bring it to 281.40 (278.72 after 209 s). Rounding every column of the LP's optimum up
costs 277.25, zones ignored. This module turns that rounding into a valid plan (283.63 as built; the row's
search then ends at 277.31 in its 60 s, docs/design-notes/optimiser.md):

1. **Nodes.** Each column of the master's last optimum (a *pattern*: one node of one shape holding whole pods
   of each class) is rounded up, so every row of the master stays covered. The nodes, dearest first, are
   dealt to the zones, each to the one furthest below its share of the pods (an even share, plus the pods
   of the zonal pod-affinity clusters homed there), each launching an option of the pattern's shape (room
   and price) in its zone.
2. **Pods the per-node caps count first** (owners of hostname anti-affinity and spread). The master covers
   *rows*, not classes: classes of the same requests and options share a row and every cap set has a row of
   its own, so a pattern may hold a capped pod of a size the cap set does not need. Per cap set, a min-cost
   flow sends its pods, by size, to nodes with a slot of that size and none of the cap yet (the node's own
   slot of that cap first); what the flow cannot place takes any node with the room whose rules allow it.
3. **The other pods** fill the slots left, size by size, each slot taking the group that the zone spreads
   counting it have fewest of in the node's zone (pods in a zonal pod affinity go to their cluster's home
   zone only).
4. **Left over** pods go to a node of the zone (home zone, or the one their spreads have fewest in) with the
   room, or to a new node of the group's cheapest option there.
5. Every node launches the cheapest option of its bucket that holds it, and the zone repair moves pods
   until every zone spread holds (a check only, when the dealing kept them).

One more entry point builds plans from the integer master's whole nodes (`integer_master.py`) through steps 2-5:
`dealt` deals whole nodes of patterns (zones ignored) to the zones, each to the zone whose pods still need most
of its slots row by row (zone-affinity clusters count in their home zone, every other group evenly); the capped
pods of step 2 then take the slots each zone holds beyond what its clusters' pods need first, and step 3 fills
every node with the clusters' pods, then with the pods the zone spreads count, then with the others. First, though,
`dealt` asks `zone_split` for the nodes per zone together with the pods (clusters' home zones, spreads' even splits,
slots of every row in every zone): when that split is exact, the capped pods take each zone's slots up to what it
spares for the others (`_zone_layer`), and `zone_fill` gives the spreads' uncapped pods their zones and places them
by a flow; the zone repair then finds nothing to move (aws diverse 1,000: dealt 28.98 -> 28.44).

Every pod joins a node through the re-packer's `BinFiller` (requests, hostname rules both ways, host ports)
and only onto options its group may use; existing nodes stay as they were, their pods counted in the
spreads. It applies where the LP's relaxations are all it leaves out (`rounding_applies`): no existing node
the pending pods may use (the LP's existing columns are not rounded), one pool tier (weights would be
broken), zonal rules on the zone key only (hard spreads over their own pods, zone affinity to no bound pod,
no zonal anti-affinity), no hostname pod affinity, no zone spread whose domains depend on the instance type,
and no preference the re-packer and the search keep (preferred node affinity, soft zone spreads, preferred
zonal pod (anti-)affinity). A rounded plan that still breaks a zone spread or a pool limit is dropped, and so
is the rounding when the wall-clock guard passes during it.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
from ortools.graph.python import min_cost_flow

from karpplan.constraints.pool_limits import POOL_LIMITS
from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns.mix import PatternMix
from karpplan.engines.repack import Repacker
from karpplan.engines.repack.bins import Bin
from karpplan.engines.repack.bucket import BucketKey, BucketShape, IntArray
from karpplan.engines.result import Solution, SolvedNode
from karpplan.engines.zone_fill import fill_by_zones
from karpplan.engines.zone_repair import REPAIR_CHECK_POD_SECONDS, ZoneRepair
from karpplan.engines.zone_split import zone_split
from karpplan.model.labels import HOSTNAME, ZONE
from karpplan.model.pods import Pod
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem

ROUNDING_MIN_PODS = 5_000  # pending pods from which the optimiser rounds the LP (measured: no gain at 1,000)
ROUND_POD_SECONDS = 4e-4  # modelled seconds per pending pod: dealing, the flows, the fill (re-pack charged apart)
VALUE_TOL = 1e-7  # a column value this far above an integer rounds down
# A pattern to deal: (room per dimension of the mix, price, (class, pods) on one node, how many nodes)
DealtColumn = tuple[tuple[float, ...], float, tuple[tuple[int, int], ...], int]


@dataclass
class _Node:
    option: LaunchOption
    bin: Bin
    room: IntArray  # the option's room in the re-packer's dimensions
    slots: Counter[int]  # master row -> pods of it the pattern holds, not yet filled
    cap_slots: dict[int, Counter[int]] = field(default_factory=dict)  # cap row -> row -> capped pods there


def rounding_applies(problem: Problem, repacker: Repacker) -> bool:
    """Whether the LP's relaxations leave out nothing the rounding cannot put back (module docstring)."""
    topo = problem.topology
    if any(g.existing_ok for g in problem.groups):
        return False
    # Groups of the same pools share one tier map: each is read once.
    if any(any(tiers.values()) for tiers in {id(g.tier): g.tier for g in problem.groups}.values()):
        return False
    if any(repacker.rules.by_group[g.index].pinned for g in problem.groups) or repacker.instance_sensitive:
        return False
    # Zonal rules: only those the dealing and the zone repair keep (hard zone spreads over the pods of their
    # own selector, required zone affinity to no bound pod), and no preference the re-packer and the search
    # would keep and the rounding would not see (preferred node affinity, soft zone spreads, preferred zonal
    # pod (anti-)affinity).
    for g in problem.groups:
        if g.template.affinity.preferred:
            return False
        for rule in topo.rules_for(g.template):
            if not rule.hostname and (rule.key != ZONE or not rule.hard or not rule.self_match):
                return False
    if any(t.key != HOSTNAME for rule in topo.anti_affinity.values() for t in rule.terms):
        return False
    if any(t.key != HOSTNAME for t, _ in topo.existing_anti):
        return False
    for rules in (*topo.preferred_affinity.values(), *topo.preferred_anti.values()):
        if any(t.key != HOSTNAME for rule in rules for t in rule.terms):
            return False
    return all(t.key == ZONE for rule in topo.affinity.values() for t in rule.terms) and \
        not any(sum(c.values()) for rule in topo.affinity.values() for c in rule.existing)


class LpRounding:
    """Rounds the configuration LP's optimum into a plan of one problem (see the module docstring)."""

    def __init__(self, problem: Problem, repacker: Repacker, mix: PatternMix, clock: WorkClock | None = None) -> None:
        self.problem = problem
        self.repacker = repacker
        self.mix = mix
        self.clock = clock
        self.rules = repacker.rules
        self.filler = repacker.filler
        self.requests = repacker.requests
        self.zones = sorted({o.zone for o in problem.options})
        self.repair = ZoneRepair(problem, repacker, clock)
        # Per group: the zone spread rules counting its pods (as the zone repair counts them).
        self.counted_by = {g: [i for i, counted, _ in touches if counted] for g, touches in self.repair.touches.items()}
        self.counts: dict[int, Counter[str]] = defaultdict(Counter)  # rule -> zone -> pods placed so far
        self.clusters = affinity_clusters(problem)
        self.home = self._home_zones()  # None: a cluster no zone serves whole
        self.homed_first = False  # fill slots with pods of zone-affinity clusters before the others
        self._shapes: dict[BucketKey, BucketShape] = {}  # the buckets' options, built when first needed
        self._spare: dict[str, Counter[int]] | None = None  # dealt by rows: zone -> row -> slots homed pods leave
        self.quota: dict[int, Counter[str]] = {}  # group -> zone -> pods it may still place there (`zone_fill`)
        self.split: dict[str, Counter[int]] | None = None  # split over the zones (`zone_split`): slots it reserved

    # ------------------------------------------------------------------------------------ entry point
    def round(self, plan: Solution) -> Solution | None:
        """A plan placing the pods `plan` places, from the LP's optimum; None if none valid was found."""
        columns = [(col.room, col.price, col.counts, math.ceil(col.value - VALUE_TOL)) for col in self.mix.columns]
        return self._built(plan, lambda pods: self._deal(pods, columns))

    def dealt(self, plan: Solution, columns: Sequence[DealtColumn], split: bool = True) -> Solution | None:
        """A plan placing the pods `plan` places on whole nodes of these patterns (room, price, (class, pods),
        nodes; the integer master's), split over the zones with the pods (`zone_split`; then the uncapped pods
        the zone spreads count are given zones and placed by `zone_fill`), or (`split` False, or no exact split
        found) each dealt to the zone whose pods still need most of its slots (steps 1-5)."""
        self.homed_first = True
        return self._built(plan, lambda pods: (self._split(pods, columns) if split else None)
                           or self._deal(pods, columns, by_rows=True))

    def _built(self, plan: Solution, dealing: Callable[[dict[int, list[Pod]]], list[_Node] | None]
               ) -> Solution | None:
        mix = self.mix
        if self.home is None:
            return None
        left_out = {id(pod) for _, pod in plan.unplaced}
        pods: dict[int, list[Pod]] = {}
        groups: list[GroupInfo] = []
        for g in self.problem.groups:
            mine = [p for p in g.group.pods if id(p) not in left_out]
            if not mine:
                continue
            if g.index not in mix.class_of_group:
                return None  # a class the LP did not price (free, or on existing nodes only)
            pods[g.index] = mine[::-1]  # popped from the end: replica order
            groups.append(g)
        placed = sum(len(p) for p in pods.values())
        if self.clock is not None:
            self.clock.charge((ROUND_POD_SECONDS + REPAIR_CHECK_POD_SECONDS) * placed)
        # Existing nodes stay as they are (no pending pod may use them), and their pods count in the spreads.
        kept = [n for n in plan.nodes if n.option is None]
        for i, rule in enumerate(self.repair.rule_counts(Solution(plan.engine, kept, [], "feasible"))):
            self.counts[i].update(rule.counts)
        nodes = dealing(pods)
        if nodes is None:
            return None
        self._capped(groups, pods, nodes)
        if self._late():
            return None
        if self.split is not None:
            fill_by_zones(self, groups, pods, nodes)
        self._uncapped(groups, pods, nodes)
        if self._late():
            return None
        extra = self._left_over(groups, pods, nodes)
        if extra is None or self._late():
            return None
        built = [self._right_sized(n) for n in nodes + extra if n.bin.members]
        rounded = self.repacker.renamed(plan, kept + built)
        repaired, _ = self.repair.repair(rounded)
        # The LP relaxes NodePool limits: a plan past one is dropped (the verifier's own count of them).
        if any(r.excess() for r in self.repair.rule_counts(repaired)) or POOL_LIMITS.violations(self.problem, repaired):
            return None
        return repaired

    # ------------------------------------------------------------------------------------ steps
    def _deal(self, pods: dict[int, list[Pod]], columns: Sequence[DealtColumn], by_rows: bool = False
              ) -> list[_Node] | None:
        """A node per rounded column, dearest first, each to the zone with its shape whose pods so far are
        furthest below its share (an even share of all pods, plus the zonal affinity clusters homed there)."""
        mix = self.mix
        by_shape = self._by_shape()
        homed: Counter[str] = Counter()
        for g_index, mine in pods.items():
            if self.home is not None and g_index in self.home:
                homed[self.home[g_index]] += len(mine)
        even = (sum(len(mine) for mine in pods.values()) - sum(homed.values())) / len(self.zones)
        share = {z: max(even + homed[z], 1.0) for z in self.zones}
        dealt: Counter[str] = Counter()
        unmet = self._row_targets(pods) if by_rows else None
        order = sorted(range(len(columns)), key=lambda j: (-columns[j][1], j))
        nodes: list[_Node] = []
        for j in order:
            room, price, counts, many = columns[j]
            size = sum(k for _, k in counts)
            held: Counter[int] = Counter()
            for c, k in counts:
                for r in mix.rows_of[c]:
                    held[r] += k
            for _ in range(many):
                offered = [(z, by_shape[(room, price, z)]) for z in self.zones if (room, price, z) in by_shape]
                if not offered:
                    return None
                if unmet is None:
                    zone, option = min(offered, key=lambda zo: ((dealt[zo[0]] + size) / share[zo[0]], zo[0]))
                else:
                    # The zone whose pods still need most of this node's slots, row by row.
                    zone, option = min(offered, key=lambda zo: (
                        -sum(min(float(k), max(unmet[zo[0]][r], 0.0)) for r, k in held.items()),
                        (dealt[zo[0]] + size) / share[zo[0]], zo[0]))
                    for r, k in held.items():
                        unmet[zone][r] -= k
                dealt[zone] += size
                nodes.append(self._slotted(option, counts))
        return nodes

    def _by_shape(self) -> dict[tuple[tuple[float, ...], float, str], LaunchOption]:
        """The cheapest option of each (room in the mix's dimensions, price, zone)."""
        by_shape: dict[tuple[tuple[float, ...], float, str], LaunchOption] = {}
        for o in self.problem.options:
            by_shape.setdefault((tuple(float(max(o.free.get(d), 0)) for d in self.mix.dims), float(o.price), o.zone), o)
        return by_shape

    def _split(self, pods: dict[int, list[Pod]], columns: Sequence[DealtColumn]) -> list[_Node] | None:
        """The nodes dealt as `zone_split` splits them with the pods (the clusters' home zones its own); None when
        it found no split, or only one leaving slots short."""
        by_shape = self._by_shape()
        offered = [[z for z in self.zones if (room, price, z) in by_shape] for room, price, _, _ in columns]
        groups = [g for g in self.problem.groups if g.index in pods]
        # A cluster's groups with no pod placed have no class in the LP (a plan leaving them out): nothing to deal.
        clusters = [kept for members in self.clusters if (kept := [g for g in members if g.index in pods])]
        split = zone_split(self.mix, self.zones, columns, offered, groups, {g: len(p) for g, p in pods.items()},
                           clusters, self.counted_by, self.clock)
        if split is None or split.missing:
            return None
        self.home, self.split = split.home, split.reserved
        return [self._slotted(by_shape[room, price, z], counts)
                for j, (room, price, counts, _) in sorted(enumerate(columns), key=lambda jc: (-jc[1][1], jc[0]))
                for z in self.zones for _ in range(split.nodes[j][z])]

    def _row_targets(self, pods: dict[int, list[Pod]]) -> dict[str, defaultdict[int, float]]:
        """Per zone, the pods of each covering row it should hold: a zone-affinity cluster's in its home zone,
        every other group's shared evenly."""
        out: dict[str, defaultdict[int, float]] = {z: defaultdict(float) for z in self.zones}
        for g_index, mine in pods.items():
            rows = self.mix.rows_of[self.mix.class_of_group[g_index]]
            home = self.home.get(g_index) if self.home is not None else None
            for z in [home] if home is not None else self.zones:
                for r in rows:
                    out[z][r] += len(mine) if home is not None else len(mine) / len(self.zones)
        return out

    def _slotted(self, option: LaunchOption, counts: Sequence[tuple[int, int]]) -> _Node:
        """An empty node of `option` with the slots of a pattern holding `counts` (class, pods)."""
        node = self._node(option)
        for c, k in counts:
            rows = self.mix.rows_of[c]
            node.slots[rows[0]] += k
            for cap in rows[1:]:
                node.cap_slots.setdefault(cap, Counter())[rows[0]] += k
        return node

    def _capped(self, groups: Sequence[GroupInfo], pods: dict[int, list[Pod]], nodes: list[_Node]) -> None:
        """Pods of each cap set (anti-affinity cliques first) by a min-cost flow from sizes to nodes, one per
        node; what it leaves onto any node with the room that takes it."""
        mix = self.mix
        by_cap: dict[int, list[GroupInfo]] = defaultdict(list)
        for g in groups:
            caps = mix.rows_of[mix.class_of_group[g.index]][1:]
            if caps:
                by_cap[caps[0]].append(g)
        order = sorted(by_cap, key=lambda cap: (-max(len(self.rules.by_group[g.index].anti_owned)
                                                    for g in by_cap[cap]), cap))
        if self.homed_first:
            self._spare = self._zone_spare(groups, pods, nodes)
        for cap in order:
            self._flow(cap, by_cap[cap], pods, nodes)
        spare = self._spare
        for cap in order:
            # Nodes that kept a slot for this cap first, then those with most room.
            ranked = sorted(nodes, key=lambda n: (0 if sum(n.cap_slots.get(cap, Counter()).values()) else 1,
                                                  -int((n.room - n.bin.used).min())))
            for g in by_cap[cap]:
                row = self._row(g)
                for n in ranked:
                    if not pods[g.index]:
                        break
                    if self._fits(g, n):
                        z = n.option.zone
                        # A slot the zone's homed pods do not need, when dealt by rows.
                        self._place(g, pods, n, row if n.slots[row] > 0 and (spare is None or spare[z][row] > 0)
                                    else max(n.slots, key=lambda r: (spare[z][r] if spare is not None else 0,
                                                                     n.slots[r])))
        self._spare = None

    def _zone_spare(self, groups: Sequence[GroupInfo], pods: dict[int, list[Pod]], nodes: Sequence[_Node]
                    ) -> dict[str, Counter[int]]:
        """Per zone and covering row, the slots its nodes hold beyond the pods homed there need (capped pods take
        these first)."""
        spare: dict[str, Counter[int]] = {z: Counter() for z in self.zones}
        for n in nodes:
            spare[n.option.zone].update(n.slots)
        for g in groups:
            home = self.home.get(g.index) if self.home is not None else None
            if home is not None:
                spare[home][self._row(g)] -= len(pods[g.index])
        for z, rows in (self.split or {}).items():
            spare[z].subtract(rows)
        return spare

    def _flow(self, cap: int, members: list[GroupInfo], pods: dict[int, list[Pod]], nodes: list[_Node]) -> None:
        by_row: dict[int, list[GroupInfo]] = defaultdict(list)
        for g in members:
            if pods[g.index]:
                by_row[self._row(g)].append(g)
        if not by_row:
            return
        rows = sorted(by_row)
        flow = min_cost_flow.SimpleMinCostFlow()
        source, sink = 0, 1
        row_node = {r: 2 + i for i, r in enumerate(rows)}
        first = 2 + len(rows)
        total = 0
        for r in rows:
            supply = sum(len(pods[g.index]) for g in by_row[r])
            total += supply
            flow.add_arc_with_capacity_and_unit_cost(source, row_node[r], supply, 0)
        probe = by_row[rows[0]][0]
        arcs: list[tuple[int, int, int]] = []
        via = self._zone_layer(flow, rows, row_node, first + len(nodes), total)
        for i, n in enumerate(nodes):
            if not self.rules.accepts(n.bin, self.rules.by_group[probe.index]):
                continue  # already holds a pod of this cap (or one its owners refuse)
            flow.add_arc_with_capacity_and_unit_cost(first + i, sink, 1, 0)
            own = n.cap_slots.get(cap, Counter())
            for r in rows:
                if n.slots[r] > 0 and any(self._zone_ok(g, n) for g in by_row[r]):
                    cost = 0 if own[r] > 0 else 1 if own else 2
                    if via is None and self._spare is not None and self._spare[n.option.zone][r] <= 0:
                        cost += 3  # a slot the zone's homed pods need
                    tail = row_node[r] if via is None else via[r, n.option.zone]
                    arcs.append((flow.add_arc_with_capacity_and_unit_cost(tail, first + i, 1, cost), r, i))
        flow.set_node_supply(source, total)
        flow.set_node_supply(sink, -total)
        if flow.solve_max_flow_with_min_cost() != flow.OPTIMAL:
            return
        for arc, r, i in arcs:
            if flow.flow(arc) <= 0:
                continue
            n = nodes[i]
            for g in by_row[r]:
                if pods[g.index] and self._fits(g, n):
                    kept = n.cap_slots.get(cap)
                    if kept is not None and kept[r] > 0:
                        kept[r] -= 1
                    self._place(g, pods, n, r)
                    break

    def _zone_layer(self, flow: min_cost_flow.SimpleMinCostFlow, rows: Sequence[int], row_node: dict[int, int],
                    first: int, total: int) -> dict[tuple[int, str], int] | None:
        """Split dealing (`zone_split`): a (row, zone) node per row and zone between the row and the zone's nodes,
        reached free up to the slots the zone spares (`_zone_spare`), at a cost of 3 a pod past them."""
        if self.split is None or self._spare is None:
            return None
        via: dict[tuple[int, str], int] = {}
        for r in rows:
            for z in self.zones:
                via[r, z] = first + len(via)
                flow.add_arc_with_capacity_and_unit_cost(row_node[r], via[r, z], max(self._spare[z][r], 0), 0)
                flow.add_arc_with_capacity_and_unit_cost(row_node[r], via[r, z], total, 3)
        return via

    def _uncapped(self, groups: Sequence[GroupInfo], pods: dict[int, list[Pod]], nodes: list[_Node]) -> None:
        """The other pods into the slots left, each slot taking the group its zone spreads need most there."""
        mix = self.mix
        by_row: dict[int, list[GroupInfo]] = defaultdict(list)
        for g in groups:
            if len(mix.rows_of[mix.class_of_group[g.index]]) == 1:
                by_row[self._row(g)].append(g)
        # Dealt by rows: the pods one zone must hold (their cluster's home) into every node's slots first, then
        # those the zone spreads count, the pods free of zones last (they fit whatever zone has slots left).
        passes: list[Callable[[GroupInfo], bool]] = [lambda g: True] if not self.homed_first else [
            lambda g: bool(self.home and g.index in self.home),
            lambda g: bool(self.counted_by.get(g.index)), lambda g: True]
        for admits in passes:
            for n in nodes:
                if self._late():
                    return
                for r in sorted(n.slots):
                    while n.slots[r] > 0:
                        fitting = [g for g in by_row.get(r, ()) if pods[g.index] and admits(g) and self._fits(g, n)]
                        if not fitting:
                            break
                        g = min(fitting, key=lambda g: (self._crowding(g, n.option.zone), -len(pods[g.index]), g.index))
                        self._place(g, pods, n, r)

    def _left_over(self, groups: Sequence[GroupInfo], pods: dict[int, list[Pod]], nodes: list[_Node]
                   ) -> list[_Node] | None:
        """Every pod still unplaced onto a node of its best zone with the room, else a new node there."""
        extra: list[_Node] = []
        dims = self.repacker.dims
        for g in groups:
            if not pods[g.index]:
                continue
            if self._late():
                return None
            req = self.requests[g.index]
            holding = [o for o in g.options if all(o.free.get(d) >= v for d, v in zip(dims, req, strict=True))]
            while pods[g.index]:
                zones = [self.home[g.index]] if self.home and g.index in self.home else \
                    sorted((z for z in self.zones if g.index not in self.quota or self.quota[g.index][z] > 0),
                           key=lambda z: (self._crowding(g, z), z))
                target = None
                for zone in zones:
                    target = next((n for n in chain(nodes, extra) if n.option.zone == zone and self._fits(g, n)), None)
                    if target is not None:
                        break
                if target is None:
                    fitting = [o for o in holding if o.zone in zones]
                    if not fitting:
                        return None
                    option = min(fitting, key=lambda o: (zones.index(o.zone), o.price, o.index))
                    target = self._node(option)
                    extra.append(target)
                self._place(g, pods, target, None)
        return extra

    # ------------------------------------------------------------------------------------ helpers
    def _late(self) -> bool:
        """Past the wall-clock guard (the machine is slower than the model): the rounding gives up, and says so
        on the clock."""
        if self.clock is not None and self.clock.past_wall():
            self.clock.cut = True
            return True
        return False

    def _node(self, option: LaunchOption) -> _Node:
        """An empty node of `option`."""
        room = np.array([option.free.get(d) for d in self.repacker.dims], dtype=np.int64)
        return _Node(option, self.filler.new_bin(np.ones(1, dtype=np.bool_)), room, Counter())

    def _row(self, g: GroupInfo) -> int:
        return self.mix.rows_of[self.mix.class_of_group[g.index]][0]

    def _zone_ok(self, g: GroupInfo, n: _Node) -> bool:
        home = self.home.get(g.index) if self.home is not None else None
        quota = self.quota.get(g.index)
        return ((home is None or home == n.option.zone) and (quota is None or quota[n.option.zone] > 0)
                and n.option.index in g.option_ids)

    def _fits(self, g: GroupInfo, n: _Node) -> bool:
        return (self._zone_ok(g, n) and bool((n.bin.used + self.requests[g.index] <= n.room).all())
                and self.rules.accepts(n.bin, self.rules.by_group[g.index]))

    def _crowding(self, g: GroupInfo, zone: str) -> int:
        """How far `zone` is ahead of the emptiest zone in the zone spreads counting `g` (the least: where its
        pods are most needed)."""
        total = 0
        for i in self.counted_by.get(g.index, ()):
            counts = self.counts[i]
            total += counts[zone] - min(counts[z] for z in self.zones)
        return total

    def _right_sized(self, n: _Node) -> SolvedNode:
        """The node as the cheapest option of its bucket that holds its pods and that they all may use."""
        key = self.repacker.bucket_of(n.option)
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shapes[key] = self.repacker.shape(key)
        allowed = np.ones(len(shape.options), dtype=np.bool_)
        for ids in {id(g.option_ids): g.option_ids for g, _ in n.bin.members}.values():
            allowed &= self.repacker.option_mask(ids)[shape.indices]
        choice = shape.cheapest(n.bin.used, allowed)
        option = n.option if choice < 0 or shape.options[choice].price >= n.option.price else shape.options[choice]
        return SolvedNode("", None, option, list(n.bin.members))

    def _place(self, g: GroupInfo, pods: dict[int, list[Pod]], n: _Node, row: int | None) -> None:
        self.filler.add(n.bin, g, pods[g.index].pop(), np.ones(1, dtype=np.bool_))
        if row is not None and n.slots[row] > 0:
            n.slots[row] -= 1
            if self._spare is not None and not (self.home and g.index in self.home):
                self._spare[n.option.zone][row] -= 1
        if g.index in self.quota:
            self.quota[g.index][n.option.zone] -= 1
        for i in self.counted_by.get(g.index, ()):
            self.counts[i][n.option.zone] += 1

    def _home_zones(self) -> dict[int, str] | None:
        """Each zonal affinity cluster's zone (`affinity_clusters`), dealt to the zones holding fewest such
        pods (one every group of it may use)."""
        load: Counter[str] = Counter({z: 0 for z in self.zones})
        home: dict[int, str] = {}
        for members in sorted(self.clusters, key=lambda ms: (-sum(g.size for g in ms), ms[0].index)):
            usable = [z for z in self.zones if all(any(o.zone == z for o in g.options) for g in members)]
            if not usable:
                return None
            zone = min(usable, key=lambda z: (load[z], z))
            load[zone] += sum(g.size for g in members)
            for g in members:
                home[g.index] = zone
        return home


def affinity_clusters(problem: Problem) -> list[list[GroupInfo]]:
    """Groups in a zonal pod affinity (the owner and the groups its terms select), joined into clusters that
    must share a zone; in the order of their first group."""
    parent = {g.index: g.index for g in problem.groups}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_template = {id(g.template): g for g in problem.groups}
    clustered: set[int] = set()
    for key, rule in problem.topology.affinity.items():
        owner = by_template.get(key)
        if owner is None:
            continue
        clustered.add(owner.index)
        for g in problem.groups:
            pt = g.template
            if all(t.matches(pt.namespace, pt.labels, problem.namespace_labels) for t in rule.terms):
                clustered.add(g.index)
                parent[find(g.index)] = find(owner.index)
    clusters: dict[int, list[GroupInfo]] = defaultdict(list)
    for g in problem.groups:
        if g.index in clustered:
            clusters[find(g.index)].append(g)
    return list(clusters.values())


__all__ = ["ROUNDING_MIN_PODS", "LpRounding", "affinity_clusters", "rounding_applies"]
