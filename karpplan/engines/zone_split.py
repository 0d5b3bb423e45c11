"""The integer master's whole nodes split over the zones together with the pods, before any pod is placed.

The integer master (`integer_master.py`) covers the configuration LP's rows with whole nodes, zones ignored. Dealt to
the zones one node at a time (`LpRounding.dealt`'s row heuristic), the pods the zone rules tie (a zone-affinity
cluster's in its home zone, a zone spread's within maxSkew) then lack slots of their row in their zone, the fill
leaves pods over onto new nodes and the zone repair moves others (docs/design-notes/optimiser.md, "Session 18").
Here one small CP-SAT model chooses

* how many nodes of each of the master's patterns go to each zone (every node goes somewhere),
* each zone-affinity cluster's home zone (one every member may use),
* how many pods of each other kind ((zone spreads counting it, class)) each zone holds, every spread's zone counts
  within an even split (the floor or the ceiling of its pods over the zones, so any maxSkew holds),

so that every zone holds slots of every covering row and cap row of the master for the pods it is given. The
objective is the slots missing (0: the split is exact). `LpRounding.dealt` then fills each zone with its pods.

Deterministic: one worker, a fixed seed, a deterministic-time limit; its time is charged to the work clock.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

from karpplan.engines.effort import WorkClock, cp_sat_seconds, model_build_seconds
from karpplan.engines.patterns.mix import PatternMix
from karpplan.scheduling.problem import GroupInfo

SPLIT_DETERMINISTIC_SECONDS = 0.6  # CP-SAT's limit (aws diverse 1,000: an exact split in 0.42)
SPLIT_SEED = 0

# A pattern to deal: (room per dimension of the mix, price, (class, pods) on one node, how many nodes)
DealtColumn = tuple[tuple[float, ...], float, tuple[tuple[int, int], ...], int]
Terms = list[tuple[int, cp_model.IntVar]]
Kind = tuple[tuple[int, ...], int]  # (spreads counting it, class)


@dataclass
class ZoneSplit:
    """Per column, its nodes per zone; each clustered group's home zone; per zone, the slots of each covering row
    it gave pods that carry no per-node cap (out of the clusters): the capped pods, placed first, leave those."""

    nodes: list[Counter[str]]
    home: dict[int, str]
    reserved: dict[str, Counter[int]]
    missing: int  # slots the split could not find (0: every zone holds slots for the pods it is given)


def zone_split(mix: PatternMix, zones: Sequence[str], columns: Sequence[DealtColumn],
               offered: Sequence[Sequence[str]], groups: Sequence[GroupInfo], placed: Mapping[int, int],
               clusters: Sequence[Sequence[GroupInfo]], counted_by: Mapping[int, Sequence[int]],
               clock: WorkClock | None = None) -> ZoneSplit | None:
    """The split (module docstring) of `columns` (offered: the zones each column's shape launches in) and of the
    pods of `groups` (placed: group index -> pods to place); None when CP-SAT found none in its limit, or a
    cluster has no zone every member may use."""
    m = cp_model.CpModel()
    n = {(j, z): m.new_int_var(0, columns[j][3], "") for j in range(len(columns)) for z in offered[j]}
    for j in range(len(columns)):
        m.add(sum(n[j, z] for z in offered[j]) == columns[j][3])
    slots: dict[tuple[int, str], Terms] = defaultdict(list)
    for (j, z), v in n.items():
        for c, k in columns[j][2]:
            for r in mix.rows_of[c]:
                slots[r, z].append((k, v))
    need: dict[tuple[int, str], Terms] = defaultdict(list)  # (row, zone) -> pods given the zone
    counted: dict[tuple[int, str], Terms] = defaultdict(list)  # (spread, zone) -> pods it counts there
    home = _homes(m, mix, zones, clusters, placed, counted_by, need, counted)
    if home is None:
        return None
    x = _kinds(m, mix, zones, groups, placed, clusters, counted_by, need, counted)
    totals: Counter[int] = Counter()
    for g in groups:
        for rule in counted_by.get(g.index, ()):
            totals[rule] += placed.get(g.index, 0)
    for rule, total in sorted(totals.items()):
        for z in zones:
            pods = sum(a * v for a, v in counted[rule, z])
            m.add(pods >= total // len(zones))
            m.add(pods <= -(-total // len(zones)))
    short = []
    for (r, z), terms in sorted(need.items()):
        s = m.new_int_var(0, sum(a for a, _ in terms), "")
        short.append(s)
        m.add(sum(a * v for a, v in slots.get((r, z), [])) + s >= sum(a * v for a, v in terms))
    m.minimize(sum(short))
    solver = _solver(m, clock)
    status = solver.solve(m)
    if clock is not None:
        clock.charge(cp_sat_seconds(solver.deterministic_time))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    nodes = [Counter({z: solver.value(n[j, z]) for z in offered[j] if solver.value(n[j, z])})
             for j in range(len(columns))]
    homes = {g.index: next(z for z, v in home[k].items() if solver.value(v))
             for k, members in enumerate(clusters) for g in members}
    reserved: dict[str, Counter[int]] = {z: Counter() for z in zones}
    for key in sorted(x):
        if len(mix.rows_of[key[1]]) == 1:
            for z in zones:
                reserved[z][mix.rows_of[key[1]][0]] += solver.value(x[key][z])
    return ZoneSplit(nodes, homes, reserved, sum(solver.value(v) for v in short))


def _kinds(m: cp_model.CpModel, mix: PatternMix, zones: Sequence[str], groups: Sequence[GroupInfo],
           placed: Mapping[int, int], clusters: Sequence[Sequence[GroupInfo]], counted_by: Mapping[int, Sequence[int]],
           need: dict[tuple[int, str], Terms], counted: dict[tuple[int, str], Terms]
           ) -> dict[Kind, dict[str, cp_model.IntVar]]:
    """Per kind of the pods out of the clusters ((spreads counting it, class)), its pods per zone (in the zones its
    class may use), in `need` and `counted`."""
    in_cluster = {g.index for members in clusters for g in members}
    kinds: dict[Kind, int] = Counter()
    for g in groups:
        if g.index not in in_cluster and placed.get(g.index, 0):
            kinds[tuple(counted_by.get(g.index, ())), mix.class_of_group[g.index]] += placed[g.index]
    usable = {mix.class_of_group[g.index]: {o.zone for o in g.options} for g in groups}  # a class's: its groups'
    x: dict[Kind, dict[str, cp_model.IntVar]] = {}
    for key, total in sorted(kinds.items()):
        x[key] = {z: m.new_int_var(0, total if z in usable[key[1]] else 0, "") for z in zones}
        m.add(sum(x[key].values()) == total)
        for z in zones:
            for r in mix.rows_of[key[1]]:
                need[r, z].append((1, x[key][z]))
            for rule in key[0]:
                counted[rule, z].append((1, x[key][z]))
    return x


def _homes(m: cp_model.CpModel, mix: PatternMix, zones: Sequence[str], clusters: Sequence[Sequence[GroupInfo]],
           placed: Mapping[int, int], counted_by: Mapping[int, Sequence[int]],
           need: dict[tuple[int, str], Terms], counted: dict[tuple[int, str], Terms]
           ) -> list[dict[str, cp_model.IntVar]] | None:
    """A home-zone choice per cluster (one of the zones every member may use), its pods in `need` and `counted`."""
    home: list[dict[str, cp_model.IntVar]] = []
    for members in clusters:
        usable = [z for z in zones if all(any(o.zone == z for o in g.options) for g in members)]
        if not usable:
            return None
        h = {z: m.new_bool_var("") for z in usable}
        m.add_exactly_one(h.values())
        home.append(h)
        for g in members:
            pods = placed.get(g.index, 0)
            for z, v in h.items():
                for r in mix.rows_of[mix.class_of_group[g.index]]:
                    need[r, z].append((pods, v))
                for rule in counted_by.get(g.index, ()):
                    counted[rule, z].append((pods, v))
    return home


def _solver(m: cp_model.CpModel, clock: WorkClock | None) -> cp_model.CpSolver:
    """One worker, a fixed seed, the deterministic limit (and the wall guard's); the model's building charged."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = SPLIT_SEED
    solver.parameters.max_deterministic_time = SPLIT_DETERMINISTIC_SECONDS
    if clock is not None:
        clock.charge(model_build_seconds(len(m.proto.variables) + len(m.proto.constraints)))
        if clock.wall_left() != float("inf"):
            solver.parameters.max_time_in_seconds = max(clock.wall_left(), 0.01)
    return solver


__all__ = ["SPLIT_DETERMINISTIC_SECONDS", "ZoneSplit", "zone_split"]
