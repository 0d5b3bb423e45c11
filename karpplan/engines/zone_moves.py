"""Zone moves for the neighbourhood search: the zonal rules' counts, kept as pods change zone.

The neighbourhood search re-solves a few nodes of one bucket, which keeps every pod's zone, so it cannot undo
a plan's zone assignment: the re-packer and the zone repair leave pods of one rule spread as Karpenter (or the
repair) put them, and a zone with a node a third full stays that way. A *cross-zone* neighbourhood takes nodes
of two buckets that differ only in zone (same pool, capacity type and rule eligibility) and lets their pods
move between the two, under the zonal rules this ledger writes:

* Rules are the zone repair's (`zone_repair.py`): per hard, self-matching spread on a key other than
  hostname, the pods its selector counts and the rule's own pods per eligible domain, as the verifier counts
  them. A domain holding the rule's own pods may hold at most the global minimum plus maxSkew (the minimum
  is 0 while fewer domains than minDomains exist). With every other domain fixed, that is linear in the
  counts of the two sides, given whether each side holds an owner.
* A rule already past its limit somewhere, or eligible on only one side, keeps both counts as they are
  (pods may still swap zones one for one).
* Pods that the zone repair would not move (pod affinity, zonal anti-affinity, host ports), pods a
  preferred or non-self-matching zonal spread owns or counts, and pods a preferred zonal pod (anti-)affinity
  term owns or matches keep their side.
* A side whose whole bucket is in the neighbourhood may be emptied: a modelled rule's domain it takes away
  held 0 of its pods in the rows, so they were no laxer than the rule. It keeps a node only when a zonal
  spread the rows leave out counts it as a domain.

Neighbourhoods are solved side by side, so each result is checked again against the counts as the ones
applied before it left them, and dropped if it would put a domain past its limit (`commit`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from ortools.sat.python import cp_model

from karpplan.constraints.spread_counts import minimum_pinned, skew_limit
from karpplan.engines.effort import WorkClock
from karpplan.engines.repack import Repacker
from karpplan.engines.repack.bucket import BucketKey
from karpplan.engines.result import Solution, SolvedNode
from karpplan.engines.zone_repair import REPAIR_CHECK_POD_SECONDS, RuleCounts, ZoneRepair
from karpplan.model.labels import HOSTNAME
from karpplan.model.selectors import SelectorIndex
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo
from karpplan.scheduling.topology import AffinityTerm, SpreadRule
from karpplan.scheduling.topology_counts import own_namespace_only

# Buckets of other pools (or capacity types) in the same zone are trading partners too: without them no
# neighbourhood could move a pod off a pool the Karpenter plan chose (its weights put pods there that a
# cheaper pool holds for less).
CROSS_POOL = True

if TYPE_CHECKING:
    from ortools.sat.python.cp_model import LinearExprT


class _KindLike(Protocol):
    """What the ledger reads of a neighbourhood's pod kind."""

    group: GroupInfo
    origin: list[int]  # per side: how many of its pods come from that side's nodes


class _SideLike(Protocol):
    key: tuple[object, ...]
    nodes: list[SolvedNode]


class ZoneLedger:
    """The zonal rules' counts on the plan the search holds (see the module's docstring)."""

    def __init__(self, repacker: Repacker, solution: Solution, buckets: Mapping[BucketKey, list[SolvedNode]],
                 clock: WorkClock | None = None) -> None:
        self.repacker = repacker
        self.buckets = buckets  # the search's own, kept current by it
        # Buckets of one pool, capacity type and rule eligibility in other zones.
        by_rest: dict[tuple[object, ...], list[BucketKey]] = defaultdict(list)
        for key in buckets:
            by_rest[_without_zone(key)].append(key)
        # ... and buckets of other pools or capacity types in the same zone with the same domains and rule
        # eligibility: pods trading between them change no zonal count (the rows below hold them anyway).
        by_place: dict[tuple[object, ...], list[BucketKey]] = defaultdict(list)
        if CROSS_POOL:
            for key in buckets:
                by_place[_place(key)].append(key)
        self.zone_twins = {key: [k for k in by_rest[_without_zone(key)] if k[1] != key[1]] for key in buckets}
        self.twins = {key: self.zone_twins[key] + [k for k in by_place.get(_place(key), ()) if k != key]
                      for key in buckets}
        self._domains: dict[tuple[int, int], str | None] = {}
        # The counts are taken when the first cross-zone neighbourhood is built (on the plan the search
        # started from: neighbourhoods of one bucket keep every zone's counts), and charged then.
        self._start, self._clock = solution, clock
        self._repair: ZoneRepair | None = None
        self._rules: list[RuleCounts] = []
        self._stay: frozenset[int] = frozenset()
        self.unmodelled: list[SpreadRule] = []  # zonal spreads the rows leave out (their pods stay)

    def _count(self) -> ZoneRepair:
        if self._repair is None:
            problem = self.repacker.problem
            if self._clock is not None:
                self._clock.charge(REPAIR_CHECK_POD_SECONDS * problem.pending_count)
            self._repair = ZoneRepair(problem, self.repacker)
            self._rules = self._repair.rule_counts(self._start)
            self._stay = frozenset(self._staying())
        return self._repair

    @property
    def repair(self) -> ZoneRepair:
        return self._count()

    @property
    def rules(self) -> list[RuleCounts]:
        self._count()
        return self._rules

    @property
    def stay(self) -> frozenset[int]:
        """Groups whose pods keep their side (see `_staying`)."""
        self._count()
        return self._stay

    def _staying(self) -> set[int]:
        """Groups whose pods keep their zone: those the zone repair would not move, those a zonal spread it
        does not model (preferred, or not counting its own pods) owns or counts, and those a preferred pod
        (anti-)affinity term on a key other than hostname owns or matches."""
        problem = self.repair.problem
        out = {g.index for g in problem.groups if g.index not in self.repair.movable}
        covered = {r.signature() for r, _ in self.repair.rules}
        index: SelectorIndex[int] = SelectorIndex()
        others = self.unmodelled
        for g in problem.groups:
            for r in problem.topology.rules_for(g.template):
                if not r.hostname and r.signature() not in covered:
                    out.add(g.index)
                    index.add(len(others), r.owner.namespace, r.selector)
                    others.append(r)
        if others:
            for g in problem.groups:
                pt = g.template
                if any(others[i].counts(pt.namespace, pt.labels) for i in index.candidates(pt.namespace, pt.labels)):
                    out.add(g.index)
        # Preferred pod (anti-)affinity on a zone: a move could break a preference the plan meets.
        topo = problem.topology
        preferred = [(owner, t) for rules in (topo.preferred_affinity, topo.preferred_anti)
                     for owner, rs in rules.items() for r in rs for t in r.terms if t.key != HOSTNAME]
        if preferred:
            owners = {owner for owner, _ in preferred}
            terms: SelectorIndex[AffinityTerm] = SelectorIndex()  # the terms that may match a template
            for _, t in preferred:
                terms.add(t, t.owner_namespace if own_namespace_only(t) else None, t.selector)
            for g in problem.groups:
                pt = g.template
                if id(pt) in owners or any(t.matches(pt.namespace, pt.labels, problem.namespace_labels)
                                           for t in terms.candidates(pt.namespace, pt.labels)):
                    out.add(g.index)
        return out

    # ------------------------------------------------------------------------------------ choosing
    def partners_of(self, key: BucketKey) -> list[BucketKey]:
        """Buckets whose nodes may trade pods with this one's: of its pool in other zones, and of other pools
        or capacity types in its zone."""
        return [k for k in self.twins.get(key, ()) if self.buckets.get(k)]

    def family_of(self, key: BucketKey) -> list[BucketKey]:
        """The bucket and its pool's buckets in other zones that hold nodes."""
        return [key] + [k for k in self.zone_twins.get(key, ()) if self.buckets.get(k)]

    def must_keep_a_node(self, side: _SideLike, option: LaunchOption) -> bool:
        """Whether the side's bucket is wholly in the neighbourhood and a domain of a zonal spread the
        ledger does not model (emptied, it could take the domain away and change that rule's minimum).
        The modelled rules need no such row: an emptied domain holds 0 of their pods in the rows, a
        minimum no higher than the one without the domain, so the rows only get stricter."""
        if len(self.buckets.get(side.key, ())) > len(side.nodes):
            return False
        self._count()
        return any(r.option_counts(option) for r in self.unmodelled)

    def _domain(self, i: int, option: LaunchOption) -> str | None:
        key = (i, option.index)
        if key not in self._domains:
            self._domains[key] = self.rules[i].option_domain(option)
        return self._domains[key]

    # ------------------------------------------------------------------------------------ the model
    def add_rows(self, m: cp_model.CpModel, side_options: Sequence[LaunchOption], kinds: Sequence[_KindLike],
                 on_side: Sequence[Sequence[LinearExprT]]) -> None:
        """Rows keeping every zonal rule within its limit when the kinds' pods split over the sides as
        `on_side[side][kind]` says (the pods of all sides' nodes, from `kind.origin`). Sides sharing a domain
        of a rule are one domain of it; every other domain keeps its count."""
        counted: dict[int, list[int]] = defaultdict(list)
        owned: dict[int, list[int]] = defaultdict(list)
        for k, kind in enumerate(kinds):
            for i, counts, owns in self.repair.touches[kind.group.index]:
                if counts:
                    counted[i].append(k)
                if owns:
                    owned[i].append(k)
        sides = range(len(side_options))
        for i in sorted(set(counted) | set(owned)):
            r = self.rules[i]
            domain = [self._domain(i, o) for o in side_options]
            if len(set(domain)) == 1:
                continue
            moved_c = [sum(on_side[s][k] for k in counted[i]) for s in sides]
            base_c = [sum(kinds[k].origin[s] for k in counted[i]) for s in sides]
            moved_o = [sum(on_side[s][k] for k in owned[i]) for s in sides]
            base_o = [sum(kinds[k].origin[s] for k in owned[i]) for s in sides]
            if any(d is None or d not in r.counts for d in domain) or r.excess() > 0:
                for s in sides:
                    if counted[i]:
                        m.add(moved_c[s] == base_c[s])
                    if owned[i]:
                        m.add(moved_o[s] == base_o[s])
                continue
            mine = list(dict.fromkeys(d for d in domain if d is not None))  # in the sides' order
            # The last domain's counts by what the others gain (the neighbourhood's pods stay in it).
            count = {d: r.counts[d] + sum(moved_c[s] - base_c[s] for s in sides if domain[s] == d) for d in mine[:-1]}
            count[mine[-1]] = r.counts[mine[-1]] - sum(moved_c[s] - base_c[s] for s in sides if domain[s] != mine[-1])
            homes = {d: r.homes[d] + sum(moved_o[s] - base_o[s] for s in sides if domain[s] == d) for d in mine[:-1]}
            homes[mine[-1]] = r.homes[mine[-1]] - sum(moved_o[s] - base_o[s] for s in sides if domain[s] != mine[-1])
            others = [d for d in r.counts if d not in count]
            zero_minimum = minimum_pinned(r.rule, len(r.counts))
            if not zero_minimum:
                # Another domain holding owners may be at most any of these ones' count plus maxSkew.
                fullest = max((r.counts[d] for d in others if r.homes[d] > 0), default=None)
                if fullest is not None:
                    for d in mine:
                        m.add(fullest <= skew_limit(r.rule, count[d]))
            least = min((r.counts[d] for d in others), default=None)
            for n, d in enumerate(mine):
                holds = m.new_bool_var(f"zone{i}_{n}")  # the domain holds some of the rule's own pods
                m.add(homes[d] == 0).only_enforce_if(holds.negated())
                if zero_minimum:
                    m.add(count[d] <= skew_limit(r.rule, 0)).only_enforce_if(holds)
                    continue
                for e in mine:
                    if e != d:
                        m.add(count[d] <= skew_limit(r.rule, count[e])).only_enforce_if(holds)
                if least is not None:
                    m.add(count[d] <= skew_limit(r.rule, least)).only_enforce_if(holds)

    # ------------------------------------------------------------------------------------ after a move
    def commit(self, before: Sequence[SolvedNode], after: Sequence[SolvedNode]) -> bool:
        """Record the pods' new zones if no zonal rule ends past its limit (or further past it); else change
        nothing and return False."""
        moves: Counter[tuple[int, str | None]] = Counter()  # (group, zone) -> pods gained there (or lost)
        sides: dict[str | None, LaunchOption] = {}  # an option of each zone: a side's nodes share its domains
        for sign, nodes in ((-1, before), (1, after)):
            for node in nodes:
                assert node.option is not None
                sides.setdefault(node.option.zone, node.option)
                for group, _ in node.pods:
                    moves[group.index, node.option.zone] += sign
        shifts: list[tuple[RuleCounts, bool, bool, str, int]] = []
        for (g_index, zone), n in moves.items():
            if not n:
                continue
            option = sides[zone]
            for i, counts, owns in self.repair.touches[g_index]:
                d = self._domain(i, option)
                if d is not None:
                    shifts.append((self.rules[i], counts, owns, d, n))
        touched = {id(r): r for r, *_ in shifts}
        excess = {k: r.excess() for k, r in touched.items()}
        for r, counts, owns, d, n in shifts:
            r.add(counts, owns, d, n)
        if any(r.excess() > excess[k] for k, r in touched.items()):
            for r, counts, owns, d, n in shifts:
                r.add(counts, owns, d, -n)
            return False
        return True


def _place(key: BucketKey) -> tuple[object, ...]:
    """A bucket key without its pool and capacity type (zone, domain labels, rule eligibility)."""
    return (key[1], key[3], key[4])


def _without_zone(key: BucketKey) -> tuple[object, ...]:
    """A bucket key without its zone (pool, capacity type, rule eligibility)."""
    return (key[0], key[2], key[4])


__all__ = ["ZoneLedger"]
