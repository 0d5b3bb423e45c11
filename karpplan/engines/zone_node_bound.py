"""Whole nodes per zone, every dimension at once: a small integer programme's proven bound (issue 29).

The configuration LP averages pods over the zones and buys fractions of nodes; `combinatorial_bound.py` rounds
each zone's demand up to whole nodes, but one dimension at a time. This bound keeps, per component (groups
joined by shared launch options: their nodes hold nothing else), whole nodes in every zone and every dimension
together, with the pods fluid inside a zone:

* x[z, o] >= 0 integer: nodes of launch option o (zone z, the option's own) bought;
* y[g, z] integer in [least, most] (`combinatorial_bound._zone_range`: the zone spreads' maxSkew and minDomains,
  own zone anti-affinity, the zones of g's options), sum over z of y[g, z] = the pods of g to place;
* per zone, per distinct options list L and dimension d: the free room of L's nodes in z covers what the groups
  whose every option is in L ask there (their pods sit only on those nodes);
* per group and zone: sum_o k[g, o] x[z, o] >= y[g, z], k[g, o] the whole pods of g alone a node of o holds
  (within its room and its hostname caps; 0 off g's options);
* per cap set (`bound.cap_sets`: hostname anti-affinity, hostname spread, `per_node` pods a node) and zone:
  its members' nodes in z number at least (its pods in z) / per_node;
* minimise the price of the nodes.

Every plan placing the pods gives a feasible point (count its nodes per zone and option, its pods per group
and zone), so the optimum bounds the component's cost. SCIP (the OR-Tools wheel's) solves it on a node limit,
single-threaded and so deterministic; its PROVEN dual bound is used, never its incumbent, less a relative
tolerance for SCIP's own feasibility tolerance. Options dominated in their zone (no cheaper, no room more in
any dimension, in no list the other is not) are dropped first: a plan's nodes of one can be swapped for the
other. Pool limits, pod affinity and rules across components are relaxed.

Zones are one topology key: a component whose groups carry a hard self-matching spread (or own required
anti-affinity) over another key, a custom label whose domains come from pools' requirements, gets the same
programme over that key's domains instead of the zones (`combinatorial_bound.domain_keys`, `domain_of`), and
the largest proven bound over its keys is kept.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from karpplan.constraints.spread_counts import minimum_pinned, skew_limit
from karpplan.engines.bound import _CapSet, _required, cap_sets
from karpplan.engines.combinatorial_bound import (
    CombinatorialBound,
    ComponentBound,
    SpansByKey,
    _Spans,
    _zone_range,
    components,
    domain_keys,
    domain_of,
    zone_integer_bound,
)
from karpplan.engines.effort import WorkClock
from karpplan.model.labels import ZONE
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem

NODE_LIMIT = 400  # branch-and-bound nodes per component at most (deterministic; the dual bound is valid at any point)
NODE_ROWS = 40_000  # ... and at most this many nodes x rows (a node's LP grows with the rows)
MAX_ROWS = 800  # larger programmes are not built: node-limited, their bound stayed under the LP's (session 17)
TOLERANCE = 2e-6  # relative: SCIP's feasibility tolerance may buy a fraction of a node too few
# The work clock's model (CPU seconds measured on the bench rows, see the design notes' session 17):
SOLVE_SECONDS = 0.005  # per programme
OPTION_SECONDS = 2e-5  # per launch option read (the dominance pass)
READ_SECONDS = 1e-6  # ... only read for its zone (a programme too large to build)
COLUMN_SECONDS = 1.5e-4  # per column (presolve, root LP and its cuts)
ROW_SECONDS = 5e-5  # per row
NODE_ROW_SECONDS = 1.6e-5  # per branch-and-bound node and row


@dataclass(frozen=True)
class ZoneNodes:
    """One component's programme, built: its size and the zones and options it kept."""

    rows: int
    columns: int
    scanned: int  # launch options read
    nodes: int  # branch-and-bound nodes SCIP took
    bound: float  # $/h, the proven dual bound less its tolerance (0 when none)
    built: bool = True  # False: past `MAX_ROWS`, only read
    # SCIP's incumbent, when asked for (`keep`) and found: nodes bought per option index, and pods per class
    # (its groups) and domain of the key; a plan only once packed and verified (`whole_node_plan.py`).
    bought: tuple[tuple[int, int], ...] = ()
    placed: tuple[tuple[frozenset[int], str, int], ...] = ()


def zone_node_bound(problem: Problem, required: Mapping[int, int] | None = None, clock: WorkClock | None = None,
                    whole: CombinatorialBound | None = None, node_limit: int = NODE_LIMIT,
                    wall_seconds: float = 30.0) -> CombinatorialBound:
    """Each component of `whole` (default: `zone_integer_bound`'s components) with its cost raised to this
    module's bound where that is higher; `clock` is charged the modelled time. `wall_seconds` only guards a
    solve that runs away (the bound it stops at is still valid, but then not the same on every run)."""
    start = time.monotonic()
    if whole is None:
        whole = zone_integer_bound(problem, required, clock)
    demand = whole.demand
    spans = SpansByKey(problem)
    by_index = {g.index: g for g in problem.groups}
    out: list[ComponentBound] = []
    for comp in whole.components:
        members = [by_index[i] for i in sorted(comp.groups)]
        value = 0.0
        for key in domain_keys(problem, members):  # the zones, then the component's other spread keys
            left = wall_seconds - (time.monotonic() - start)
            found = component_bound(problem, members, demand, spans.get(key), node_limit, left) if left > 0 else None
            if found is not None and clock is not None:
                clock.charge(modelled_seconds(found))
            value = max(value, found.bound if found is not None else 0.0)
        out.append(replace(comp, cost=max(comp.cost, value)))
    return CombinatorialBound(sum(c.cost for c in out), tuple(out), whole.demand, time.monotonic() - start)


def unrounded(problem: Problem, required: Mapping[int, int] | None = None) -> CombinatorialBound:
    """The components `zone_integer_bound` would bound (none with pods that may use existing nodes), each at
    cost 0: for plans past `combinatorial_bound.worth_rounding`, whose dynamic programmes take seconds."""
    demand = _required(problem, required)
    groups = [g for g in problem.groups if demand.get(g.index, 0) > 0]
    out = tuple(ComponentBound(frozenset(g.index for g in members), 0.0) for members in components(groups)
                if not any(g.existing_ok or not g.options for g in members))
    return CombinatorialBound(0.0, out, demand, 0.0)


def modelled_seconds(found: ZoneNodes) -> float:
    """The work clock's model of one component's programme: its rows, and its branch-and-bound nodes."""
    if not found.built:
        return SOLVE_SECONDS + READ_SECONDS * found.scanned
    return (SOLVE_SECONDS + OPTION_SECONDS * found.scanned + COLUMN_SECONDS * found.columns
            + ROW_SECONDS * found.rows + NODE_ROW_SECONDS * found.nodes * found.rows)


def kept_options(members: Sequence[GroupInfo], dims: Sequence[str],
                 key: str = ZONE) -> tuple[list[LaunchOption], dict[int, frozenset[int]]]:
    """The component's options less those dominated in their domain of `key` (their zone), and per option the
    lists (ids) holding it."""
    lists: dict[int, frozenset[int]] = defaultdict(frozenset)
    options: dict[int, LaunchOption] = {}
    by_list = {id(g.options): g.options for g in members}
    first = {lid: min((o.index for o in lst), default=-1) for lid, lst in by_list.items()}  # not ids: run to run
    for lid, lst in by_list.items():
        for o in lst:
            options[o.index] = o
            lists[o.index] = lists[o.index] | {lid}
    groups: dict[tuple[str, frozenset[int]], list[LaunchOption]] = defaultdict(list)
    for o in options.values():
        groups[(domain_of(o, key), lists[o.index])].append(o)
    kept: list[LaunchOption] = []
    for _, same in sorted(groups.items(), key=lambda kv: (kv[0][0], sorted(first[lid] for lid in kv[0][1]))):
        rows = sorted(((tuple(o.free.get(d) for d in dims), o.price, o.index, o) for o in same),
                      key=lambda r: (r[1], tuple(-v for v in r[0]), r[2]))
        front: list[tuple[tuple[int, ...], float]] = []
        for room, price, _, o in rows:
            # dominated: some kept option (no dearer, sorted first) has at least this room everywhere
            if any(all(a >= b for a, b in zip(other, room, strict=True)) for other, _ in front):
                continue
            front.append((room, price))
            kept.append(o)
    return kept, dict(lists)


def component_bound(problem: Problem, members: Sequence[GroupInfo], demand: Mapping[int, int], spans: _Spans,
                    node_limit: int = NODE_LIMIT, wall_seconds: float = 30.0, keep: bool = False) -> ZoneNodes | None:
    """The proven bound of the module docstring's programme for one component (0 when it is too large to build:
    more than `MAX_ROWS` rows); None when it is not solved (no solver, an infeasible programme: no plan, so
    nothing to bound here)."""
    from ortools.linear_solver import pywraplp  # lazy: start-up

    members = [g for g in members if demand.get(g.index, 0) > 0]
    dims = sorted({d for g in members for d, v in g.template.requests.items() if v > 0})
    if not members or not dims:
        return None
    by_list = {id(g.options): g.options for g in members}
    own = {lid: frozenset(domain_of(o, spans.key) for o in lst) for lid, lst in by_list.items()}
    zones = sorted(frozenset().union(*own.values()))
    ranges: dict[int, tuple[list[int], list[int]]] = {}
    for g in members:
        r = _zone_range(g, demand[g.index], zones, own[id(g.options)], spans)
        if r is None:
            return None
        ranges[g.index] = r
    caps = [c for c in cap_sets(problem, members) if any(demand.get(i, 0) for i in c.members)]
    classes = _classes(members, demand, ranges, caps, dims)
    rows = len(zones) * (len(by_list) * len(dims) + len(classes) + len(caps)) + len(classes)
    scanned = sum(len(lst) for lst in by_list.values())
    if rows > MAX_ROWS:
        return ZoneNodes(rows, 0, scanned, 0, 0.0, built=False)  # read, not built: no bound
    options, lists = kept_options(members, dims, spans.key)
    list_sets = {lid: frozenset(o.index for o in lst) for lid, lst in by_list.items()}
    inside = {lid: [c for c in classes if list_sets[c.lid] <= s] for lid, s in list_sets.items()}
    solver = pywraplp.Solver.CreateSolver("SCIP")
    if solver is None:
        return None
    solver.SetNumThreads(1)
    nodes = max(min(node_limit, NODE_ROWS // max(rows, 1)), 1)
    solver.SetSolverSpecificParametersAsString(f"limits/nodes = {nodes}\n")
    solver.SetTimeLimit(max(int(min(wall_seconds, 3600.0) * 1000), 1))
    infinity = solver.infinity()
    scale = {d: 1.0 / max(sum(demand[g.index] * g.template.requests.get(d) for g in members), 1) for d in dims}
    x = {o.index: solver.IntVar(0.0, infinity, "") for o in options}
    y = _pods_per_domain(solver, classes, len(zones))
    _skew_rows(solver, problem, classes, zones, spans, y)
    for i, z in enumerate(zones):
        _zone_rows(solver, _Zone(i, [o for o in options if domain_of(o, spans.key) == z], lists, inside, x, y,
                                 scale), dims, classes, caps)
    objective = solver.Objective()
    for o in options:
        objective.SetCoefficient(x[o.index], o.price)
    objective.SetMinimization()
    value = _proven(solver)
    if value is None:
        return None
    found = ZoneNodes(rows, len(options) + len(y), scanned, int(solver.nodes()), value)
    return _with_incumbent(found, x, y, classes, zones) if keep else found


def _with_incumbent(found: ZoneNodes, x: Mapping[int, Any], y: Mapping[tuple[int, int], Any],
                    classes: Sequence[_Class], zones: Sequence[str]) -> ZoneNodes:
    """`found` with SCIP's incumbent: nodes per option index, pods per class and domain (none without one)."""
    bought = tuple((i, round(v.solution_value())) for i, v in x.items() if round(v.solution_value()) > 0)
    placed = tuple((c.groups, zones[i], round(y[(c.key, i)].solution_value())) for c in classes
                   for i in range(len(zones)) if round(y[(c.key, i)].solution_value()) > 0)
    return replace(found, bought=bought, placed=placed)


def _pods_per_domain(solver: Any, classes: Sequence[_Class], domains: int) -> dict[tuple[int, int], Any]:
    """y[class, domain]: whole pods of the class there, within its range, all of its pods placed."""
    y: dict[tuple[int, int], Any] = {}
    for c in classes:
        for i in range(domains):
            y[(c.key, i)] = solver.IntVar(float(c.low[i]), float(c.high[i]), "")
        row = solver.Constraint(float(c.pods), float(c.pods))
        for i in range(domains):
            row.SetCoefficient(y[(c.key, i)], 1.0)
    return y


def _skew_rows(solver: Any, problem: Problem, classes: Sequence[_Class], zones: Sequence[str], spans: _Spans,
               y: Mapping[tuple[int, int], Any]) -> None:
    """Per class of one group whose hard spread over the key counts its own pods only (none running yet): a
    domain holding its pods holds at most the emptiest domain's count plus maxSkew (`skew_limit`), so any two
    domains differ by at most that; a domain of the rule no option of the component reaches holds none, so
    then every domain holds at most maxSkew. (The ranges of `_zone_range` only bound each domain alone.)"""
    by_index = {g.index: g for g in problem.groups}
    for c in classes:
        if len(c.groups) != 1:
            continue
        (gi,) = c.groups
        for rule in problem.topology.rules_for(by_index[gi].template):
            if rule.uid not in spans.rules or spans.matching[rule.uid] != {gi} or any(rule.base_counts.values()):
                continue
            domains = rule.static_domains()
            if minimum_pinned(rule, len(domains)):
                continue  # the ranges hold each domain at maxSkew already
            idx = [i for i, z in enumerate(zones) if z in domains]
            if not domains <= set(zones):
                for i in idx:
                    solver.Add(y[(c.key, i)] <= skew_limit(rule, 0))
                continue
            for i in idx:
                for j in idx:
                    if i != j:
                        solver.Add(y[(c.key, i)] - y[(c.key, j)] <= skew_limit(rule, 0))


@dataclass(frozen=True)
class _Class:
    """Groups alike in requests, options list and cap sets: one count per zone holds them all, between the sums
    of their ranges (a relaxation: every plan's counts per group add up to such a count)."""

    key: int
    groups: frozenset[int]
    lid: int  # id of the options list
    requests: tuple[int, ...]  # per dimension
    pods: int
    low: tuple[int, ...]
    high: tuple[int, ...]
    per_node: int  # the least cap of a cap set holding it (0: none)


def _classes(members: Sequence[GroupInfo], demand: Mapping[int, int],
             ranges: Mapping[int, tuple[list[int], list[int]]], caps: Sequence[_CapSet],
             dims: Sequence[str]) -> list[_Class]:
    alike: dict[tuple[int, tuple[int, ...], frozenset[int]], list[GroupInfo]] = defaultdict(list)
    for g in members:
        inside = frozenset(i for i, c in enumerate(caps) if g.index in c.members)
        alike[(id(g.options), tuple(g.template.requests.get(d) for d in dims), inside)].append(g)
    out: list[_Class] = []
    for (lid, requests, held), same in alike.items():
        zones = len(ranges[same[0].index][0])
        out.append(_Class(len(out), frozenset(g.index for g in same), lid, requests,
                          sum(demand[g.index] for g in same),
                          tuple(sum(ranges[g.index][0][i] for g in same) for i in range(zones)),
                          tuple(sum(ranges[g.index][1][i] for g in same) for i in range(zones)),
                          min((caps[i].per_node for i in held), default=0)))
    return out


@dataclass(frozen=True)
class _Zone:
    """One zone's part of a programme: its options and the variables and tables its rows read."""

    index: int
    here: list[LaunchOption]
    lists: Mapping[int, frozenset[int]]  # option index -> ids of the options lists holding it
    inside: Mapping[int, list[_Class]]  # list id -> the classes whose options all lie in it
    x: Mapping[int, Any]  # option index -> nodes bought
    y: Mapping[tuple[int, int], Any]  # (class key, zone index) -> pods there
    scale: Mapping[str, float]  # per dimension: 1 / the component's demand


def _zone_rows(solver: Any, zone: _Zone, dims: Sequence[str], classes: Sequence[_Class],
               caps: Sequence[_CapSet]) -> None:
    """The zone's rows: room per options list and dimension, whole pods per class, nodes per cap set."""
    infinity = solver.infinity()
    i, lists, x, y = zone.index, zone.lists, zone.x, zone.y
    for lid, inside in zone.inside.items():
        for d in dims:
            row = solver.Constraint(0.0, infinity)
            for o in zone.here:
                if lid in lists[o.index]:
                    row.SetCoefficient(x[o.index], o.free.get(d) * zone.scale[d])
            for c in inside:
                row.SetCoefficient(y[(c.key, i)], -c.requests[dims.index(d)] * zone.scale[d])
    for c in classes:
        row = solver.Constraint(0.0, infinity)
        row.SetCoefficient(y[(c.key, i)], -1.0)
        for o in zone.here:
            if c.lid in lists[o.index]:
                k = min((o.free.get(d) // r for d, r in zip(dims, c.requests, strict=True) if r > 0), default=c.pods)
                if c.per_node:
                    k = min(k, c.per_node)
                if k > 0:
                    row.SetCoefficient(x[o.index], float(k))
    for cap in caps:
        held = [c for c in classes if cap.members & c.groups]
        row = solver.Constraint(0.0, infinity)
        for o in zone.here:
            if any(c.lid in lists[o.index] for c in held):
                row.SetCoefficient(x[o.index], float(cap.per_node))
        for c in held:
            row.SetCoefficient(y[(c.key, i)], -1.0)


def _proven(solver: Any) -> float | None:
    """SCIP's proven dual bound less its tolerance (0 when it proved none); None for an infeasible programme."""
    from ortools.linear_solver import pywraplp  # lazy: start-up

    params = pywraplp.MPSolverParameters()
    params.SetDoubleParam(pywraplp.MPSolverParameters.RELATIVE_MIP_GAP, 1e-7)
    status = solver.Solve(params)
    if status in (pywraplp.Solver.INFEASIBLE, pywraplp.Solver.ABNORMAL, pywraplp.Solver.MODEL_INVALID):
        return None
    bound = solver.Objective().BestBound()
    if status == pywraplp.Solver.UNBOUNDED or not math.isfinite(bound):
        bound = 0.0
    return float(max(bound - TOLERANCE * abs(bound), 0.0))


__all__ = ["ZoneNodes", "component_bound", "kept_options", "modelled_seconds", "unrounded", "zone_node_bound"]
