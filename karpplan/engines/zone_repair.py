"""Zone-count repair: pods moved between domains until every hard zone spread holds on the plan's final counts.

The optimal engine starts from Karpenter's plan, and Karpenter checks a topology spread rule only when it
places a pod that carries the rule: pods placed later that the rule's selector also counts (pods without
the rule, or with a hostname spread only) can leave a zone past maxSkew once every pod is counted. The
re-packer and the neighbourhood search keep every pod's zone, so they cannot fix it; this does.

* Counts are the verifier's (`constraints/topology_spread.py`, `constraints/view.py`): per hard,
  self-matching spread rule on a key other than hostname, its eligible nodes' domains, the pods its
  selector matches on them (bound pods too), the global minimum and the domains holding the rule's own
  pods. Rules with equal signatures share all of that and are one rule here.
* A move takes one pending pod out of a domain and puts it into another: onto a new node of the plan
  there with room that the pod's group may use (its best pool tier and preferred node affinity), else
  onto a new node of the cheapest such option, never one that would open a domain for any rule (an empty
  domain lowers that rule's minimum) nor one past its pool's limits. Pods in pod affinity (hostname or
  zonal), zonal anti-affinity or a bound pod's zonal anti-affinity never move (a zonal affinity group moves as a
  whole or not at all: here not at all). The pods preferred are those carrying no zone rule, then those
  carrying only preferred ones; pods on new nodes before pods on existing ones.
* A move is made when it lowers the sum, over the rules, of how far each domain holding the rule's own
  pods is past its limit (the verifier's violations, weighed); the worst rule first, from its fullest
  domain into its emptiest ones.
* The touched buckets (and the whole of a touched pool with limits) are then re-packed by the re-packer,
  so the nodes stay cheap, and the plan is counted afresh. Rounds repeat until no domain is past its
  limit or no move helps; the plan with the least excess (the cheapest on a tie) is kept, and a plan
  still breaking a zone spread says so in its notes. The moves keep every other rule by construction
  (the group's own launch options, room, hostname rules through the re-packer's rulebook, pool limits);
  up to `SAFETY_VERIFY_PODS` pods the whole verifier also compares the result with the plan it started
  from (on large plans it takes far longer than the repair: ~28 s at 10,000 diverse pods).

Deterministic: every choice is ordered by counts, names and indices. Its work is charged to the work
clock at modelled rates, so the plan does not depend on the machine's speed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from karpplan.constraints.pool_headroom import UNLIMITED
from karpplan.constraints.spread_counts import global_minimum, max_skew_of, skew_limit
from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD
from karpplan.constraints.view import PlanTally
from karpplan.engines.effort import WorkClock
from karpplan.engines.repack import Repacker
from karpplan.engines.repack.bins import Bin
from karpplan.engines.repack.bucket import BucketKey, IntArray
from karpplan.engines.result import Solution, SolvedNode
from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import Pod
from karpplan.model.selectors import SelectorIndex
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import SpreadRule
from karpplan.verify import Violation, verify

MAX_ROUNDS = 4  # move, re-pack and count again at most this many times
# Up to this many pending pods the whole verifier also judges the repaired plan against the one it started
# from (a guard: the moves keep every other rule by construction; on large plans the verifier is slow).
SAFETY_VERIFY_PODS = 300
# Modelled seconds (the reference machine's), charged to the work clock.
REPAIR_CHECK_POD_SECONDS = 5e-5  # per pending pod: counting the zone spreads of the plan
REPAIR_CALL_SECONDS = 0.01  # per round
REPAIR_POD_SECONDS = 4e-4  # per pending pod per round: the moves, re-packing the touched buckets, counting again
REPAIR_TRY_SECONDS = 2e-5  # per move considered


def zonal_violations(violations: list[Violation]) -> list[Violation]:
    """The topology spread violations on keys other than hostname (those a pod's zone decides)."""
    return [v for v in violations if v.kind == TOPOLOGY_SPREAD.name and v.key != HOSTNAME]


@dataclass
class RuleCounts:
    """One hard zone spread rule (all rules of its signature), its counts on the plan being repaired."""

    rule: SpreadRule  # a representative
    owners: set[int]  # groups carrying it
    domain_of: dict[int, str] = field(default_factory=dict)  # node index -> domain, eligible nodes only
    counts: Counter[str] = field(default_factory=Counter)  # every eligible domain's matching pods
    homes: Counter[str] = field(default_factory=Counter)  # the owners' pods per domain
    eligible_options: dict[int, bool] = field(default_factory=dict)

    def minimum(self) -> int:
        """The global minimum over the eligible domains (`spread_counts.global_minimum`)."""
        return global_minimum(self.rule, list(self.counts.values()))

    def limit(self) -> int:
        return skew_limit(self.rule, self.minimum())

    def excess(self) -> int:
        """How far the domains holding the rule's own pods are past the limit, in all."""
        if not self.counts:
            return 0
        limit = self.limit()
        return sum(max(0, self.counts[d] - limit) for d, h in self.homes.items() if h > 0)

    def option_domain(self, option: LaunchOption) -> str | None:
        """The domain a new node of this option is for the rule (None: not eligible)."""
        ok = self.eligible_options.get(option.index)
        if ok is None:
            ok = self.eligible_options[option.index] = self.rule.option_counts(option)
        return option.labels.get(self.rule.key) if ok else None

    def shift(self, counted: bool, owned: bool, source: str | None, target: str | None) -> None:
        """One pod leaves `source` for `target` (None: a node the rule does not count)."""
        if source is not None:
            self.add(counted, owned, source, -1)
        if target is not None:
            self.add(counted, owned, target, 1)

    def add(self, counted: bool, owned: bool, domain: str, pods: int) -> None:
        """`pods` more (or fewer) pods in the domain, counted by the rule and/or its own."""
        if counted:
            self.counts[domain] += pods
        if owned:
            self.homes[domain] += pods


class ZoneRepair:
    """Repairs plans of one problem (see the module's docstring)."""

    def __init__(self, problem: Problem, repacker: Repacker, clock: WorkClock | None = None) -> None:
        self.problem = problem
        self.repacker = repacker
        self.clock = clock
        topo = problem.topology
        by_signature: dict[tuple[object, ...], tuple[SpreadRule, set[int]]] = {}
        for g in problem.groups:
            for r in topo.rules_for(g.template):
                if r.hard and not r.hostname and r.self_match:
                    by_signature.setdefault(r.signature(), (r, set()))[1].add(g.index)
        # (a representative, the groups carrying it) of each rule signature
        self.rules = list(by_signature.values())
        self.movable = self._movable_groups()
        # Hard hostname spreads over existing nodes: their minimum there is 0 once the plan has a new node
        # they count, so a repair opens no new node where the plan had none of theirs.
        self.host_rules = list({id(r): r for g in problem.groups for r in topo.rules_for(g.template)
                                if r.hard and r.hostname and r.self_match and r.existing_domains}.values())
        # Per group: (rule index, counts the group's pods, carries the rule) of every rule it touches.
        self.touches: dict[int, list[tuple[int, bool, bool]]] = {}
        index: SelectorIndex[int] = SelectorIndex()  # the rules that may count a template, by their selectors
        carried: dict[int, set[int]] = defaultdict(set)  # group -> the rules it carries
        for i, (rule, owners) in enumerate(self.rules):
            index.add(i, rule.owner.namespace, rule.selector)
            for g_index in owners:
                carried[g_index].add(i)
        for g in problem.groups:
            pt = g.template
            counted = {i for i in index.candidates(pt.namespace, pt.labels)
                       if self.rules[i][0].counts(pt.namespace, pt.labels)}
            self.touches[g.index] = [(i, i in counted, g.index in self.rules[i][1])
                                     for i in sorted(counted | carried[g.index])]
        zonal_own = {g.index: [r for r in topo.rules_for(g.template) if not r.hostname] for g in problem.groups}
        # 0: no zone rule; 1: preferred ones only; 2: a required one.
        self.rank = {g: (2 if any(r.hard for r in rs) else 1 if rs else 0) for g, rs in zonal_own.items()}
        self._targets: dict[tuple[int, str, str], list[LaunchOption]] = {}
        self._free: dict[int, IntArray] = {}

    def _movable_groups(self) -> set[int]:
        """Groups whose pods may change zone: in no pod affinity, in no zonal anti-affinity."""
        topo = self.problem.topology
        ns_labels = self.problem.namespace_labels
        zonal_terms = [t for rule in topo.anti_affinity.values() for t in rule.terms if t.key != HOSTNAME]
        zonal_terms += [t for t, _ in topo.existing_anti if t.key != HOSTNAME]
        affinity_terms = [t for rule in topo.affinity.values() for t in rule.terms]
        out: set[int] = set()
        for g in self.problem.groups:
            pt = g.template
            if self.repacker.rules.by_group[g.index].pinned or id(pt) in topo.affinity:
                continue
            anti = topo.anti_affinity.get(id(pt))
            if anti is not None and any(t.key != HOSTNAME for t in anti.terms):
                continue
            if any(t.matches(pt.namespace, pt.labels, ns_labels) for t in zonal_terms + affinity_terms):
                continue
            out.add(g.index)
        return out

    def rule_counts(self, plan: Solution) -> list[RuleCounts]:
        """Each rule's counts on the plan (nodes by their position in `plan.nodes`), as the verifier counts."""
        tally = PlanTally(plan)
        out = [RuleCounts(rule, owners) for rule, owners in self.rules]
        on_nodes: dict[int, Counter[int]] = defaultdict(Counter)  # group index -> node position -> its pods
        for k, n in enumerate(plan.nodes):
            for g, _ in n.pods:
                on_nodes[g.index][k] += 1
        for r in out:
            pt, c = r.rule.owner, r.rule.constraint
            selector = c.selector_for(pt.labels)
            assert selector is not None
            r.domain_of = dict(TOPOLOGY_SPREAD.eligible(pt, c, tally))
            matching = tally.matching_counts(pt.namespace, selector)
            r.counts = Counter({d: 0 for d in r.domain_of.values()})
            for k, d in r.domain_of.items():
                r.counts[d] += matching[k]
            for g_index in r.owners:
                for k, pods in on_nodes.get(g_index, {}).items():
                    home = r.domain_of.get(k)
                    if home is not None:
                        r.homes[home] += pods
        return out

    def _charge(self, seconds: float) -> None:
        if self.clock is not None:
            self.clock.charge(seconds)

    # ------------------------------------------------------------------------------------ entry point
    def repair(self, plan: Solution) -> tuple[Solution, int]:
        """The best plan found (the least excess over the zone spreads' limits, then the cheapest; `plan`
        itself when nothing helps) and how many pods it moved. A plan still past a zone spread's limit
        says so in its notes."""
        if not self.rules:
            return plan, 0
        self._charge(REPAIR_CHECK_POD_SECONDS * self.problem.pending_count)
        state = _Round(self, plan)
        if not any(state.excess):
            return plan, 0
        best, best_excess, best_moved, moved_total = plan, sum(state.excess), 0, 0
        for n in range(MAX_ROUNDS):
            # The first round runs however late it is (a plan the cluster would reject is no answer); the
            # others stop at the wall-clock guard.
            if n and self.clock is not None and self.clock.past_wall():
                break
            self._charge(REPAIR_CALL_SECONDS + REPAIR_POD_SECONDS * self.problem.pending_count)
            moved, nodes, touched = state.run()  # (its counts are then those of the moved pods)
            if not moved:
                break
            moved_total += moved
            current = self._repacked(plan, nodes, touched)
            state = _Round(self, current)
            if (sum(state.excess), round(current.cost, 9)) < (best_excess, round(best.cost, 9)):
                best, best_excess, best_moved = current, sum(state.excess), moved_total
            if not any(state.excess):
                break
        if best is not plan and self.problem.pending_count <= SAFETY_VERIFY_PODS and \
                len(verify(self.problem, best)) >= len(verify(self.problem, plan)):
            best, best_excess, best_moved = plan, -1, 0  # a guard the moves should never need
        left = _Round(self, best).over() if best_excess else []
        if left:
            best = Solution(best.engine, best.nodes, best.unplaced, best.status, best.lower_bound, best.solve_seconds,
                            [*best.notes, f"zone repair: {len(left)} domain(s) remain past a zone spread's maxSkew "
                                          f"once every matching pod is counted (no move of a pod between zones "
                                          f"helped further; {best_moved} pod(s) moved): {left[0]}"],
                            best.exceeds_node_limits)
        return best, best_moved

    def _repacked(self, plan: Solution, nodes: list[SolvedNode], touched: set[int]) -> Solution:
        """The plan with the touched buckets (whole pools where limits apply) re-packed."""
        limited = {pool for pool, headroom in self.problem.headroom.items() if headroom.limited}
        buckets: set[BucketKey] = set()
        pools: set[str] = set()
        for k in touched:
            option = nodes[k].option
            if option is not None:
                buckets.add(self.repacker.bucket_of(option))
                if option.pool.name in limited:
                    pools.add(option.pool.name)
        nodes = [n for n in nodes if n.pods or n.existing is not None]
        keep: list[SolvedNode] = []
        redo: list[SolvedNode] = []
        for n in nodes:
            option = n.option
            hit = option is not None and (self.repacker.bucket_of(option) in buckets or option.pool.name in pools)
            (redo if hit else keep).append(n)
        part = self.repacker.repack(Solution(plan.engine, redo, [], plan.status))
        return self.repacker.renamed(plan, keep + part.nodes)

    # ------------------------------------------------------------------------------------ targets
    def targets(self, group: GroupInfo, key: str, value: str) -> list[LaunchOption]:
        """The options of the group with `value` for `key` at its best pool tier and preferred node
        affinity, cheapest first."""
        cache_key = (group.index, key, value)
        found = self._targets.get(cache_key)
        if found is None:
            preferred = group.template.affinity.preferred

            def rank(o: LaunchOption) -> tuple[int, int]:
                return group.tier.get(o.index, 0), -sum(p.weight for p in preferred if p.term.matches(o.labels, ""))

            options = [o for o in group.options if o.labels.get(key) == value]
            best = min((rank(o) for o in options), default=None)
            found = sorted((o for o in options if rank(o) == best),
                           key=lambda o: (o.price, o.instance_type.name, o.index))
            self._targets[cache_key] = found
        return found

    def free(self, option: LaunchOption) -> IntArray:
        room = self._free.get(option.index)
        if room is None:
            room = self._free[option.index] = np.array([option.free.get(d) for d in self.repacker.dims],
                                                       dtype=np.int64)
        return room


class _Round:
    """One round of moves on a copy of the plan's nodes."""

    def __init__(self, owner: ZoneRepair, plan: Solution) -> None:
        self.o = owner
        self.nodes = [SolvedNode(n.name, n.existing, n.option, list(n.pods)) for n in plan.nodes]
        self.rules = owner.rule_counts(plan)
        self.excess = [r.excess() for r in self.rules]
        self.bins: dict[int, Bin] = {}
        self.by_value: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.pool_nodes: Counter[str] = Counter()
        self.pool_capacity: dict[str, Counter[str]] = defaultdict(Counter)
        for k, n in enumerate(self.nodes):
            if n.option is not None:
                self._index(k, n.option)
        self.host_open = {i for i, r in enumerate(owner.host_rules)
                          if any(n.option is not None and r.option_counts(n.option) for n in self.nodes)}
        self.moved: set[int] = set()  # id() of the pods moved this round
        self.touched: set[int] = set()
        self.cursors: dict[tuple[int, str], int] = {}
        self.candidates: dict[tuple[int, str], list[tuple[GroupInfo, Pod, int]]] = {}

    def over(self) -> list[str]:
        """Each domain holding a rule's own pods past its limit, as the verifier words it."""
        out = []
        for r in self.rules:
            minimum, limit = r.minimum(), r.limit()
            for d in sorted(d for d, h in r.homes.items() if h > 0 and r.counts[d] > limit):
                out.append(f"{r.rule.owner.namespace} spread on {r.rule.key} maxSkew {max_skew_of(r.rule)}: domain "
                           f"{d} holds {r.counts[d]} > {limit} (min {minimum})")
        return out

    def _index(self, k: int, option: LaunchOption) -> None:
        for key, value in option.labels.items():
            self.by_value[(key, value)].append(k)
        self.pool_nodes[option.pool.name] += 1
        for name, amount in option.capacity.items():
            self.pool_capacity[option.pool.name][name] += amount

    def run(self) -> tuple[int, list[SolvedNode], set[int]]:
        """Moves until no rule is past its limit or no move helps: (pods moved, the nodes, touched ones)."""
        while any(self.excess):
            order = sorted((i for i, e in enumerate(self.excess) if e > 0), key=lambda i: (-self.excess[i], i))
            if not any(self._step(i) for i in order):
                break
        return len(self.moved), self.nodes, self.touched

    # ------------------------------------------------------------------------------------ one move
    def _step(self, i: int) -> bool:
        """One move that lowers the total excess, taking a pod the rule counts out of its fullest domains."""
        r = self.rules[i]
        limit = r.limit()
        sources = sorted((d for d, h in r.homes.items() if h > 0 and r.counts[d] > limit),
                         key=lambda d: (-r.counts[d], d))
        for source in sources:
            for group, pod, k in self._candidates(i, source):
                for target in sorted(r.counts, key=lambda d: (r.counts[d], d)):
                    if r.counts[target] + 1 >= r.counts[source]:
                        break
                    self.o._charge(REPAIR_TRY_SECONDS)
                    if self._try(group, pod, k, r.rule.key, target):
                        return True
        return False

    def _candidates(self, i: int, source: str) -> Iterator[tuple[GroupInfo, Pod, int]]:
        """The pods rule i counts in the domain that may move, in order of preference, from where the last
        call stopped (a pod tried once is not tried again this round for this rule and domain)."""
        key = (i, source)
        pods = self.candidates.get(key)
        r = self.rules[i]
        if pods is None:
            found = []
            for k, d in r.domain_of.items():
                if d != source:
                    continue
                node = self.nodes[k]
                for group, pod in node.pods:
                    pt = group.template
                    # Off an existing node, a pod a hostname spread counts could lower that spread's minimum.
                    if group.index in self.o.movable and r.rule.counts(pt.namespace, pt.labels) and \
                            (node.existing is None or not self.o.repacker.rules.by_group[group.index].spread_matches):
                        found.append((self.o.rank[group.index], node.existing is not None, group.index, pod.key,
                                      (group, pod, k)))
            found.sort(key=lambda f: f[:4])
            pods = self.candidates[key] = [f[4] for f in found]
        while (n := self.cursors.get(key, 0)) < len(pods):
            self.cursors[key] = n + 1
            if id(pods[n][1]) not in self.moved:
                yield pods[n]

    def _try(self, group: GroupInfo, pod: Pod, k: int, key: str, value: str) -> bool:
        """Move the pod from node k to a node with `value` for `key` if that lowers the total excess."""
        options = self.o.targets(group, key, value)
        if not options:
            return False
        request = self.o.repacker.requests[group.index]
        rules = self.o.repacker.rules.by_group[group.index]
        allowed = {o.index for o in options}
        helps: dict[tuple[str | None, ...], bool] = {}
        for t in self.by_value.get((key, value), ()):
            node = self.nodes[t]
            if t == k or node.option is None or node.option.index not in allowed:
                continue
            doms = [r.domain_of.get(t) for r in self.rules]
            ok = helps.get(tuple(doms))
            if ok is None:
                ok = helps[tuple(doms)] = self._delta(group, k, doms) < 0
            if not ok:
                continue
            b = self._bin(t)
            if np.all(b.used + request <= self.o.free(node.option)) and self.o.repacker.rules.accepts(b, rules):
                self._apply(group, pod, k, t, doms)
                return True
        for option in options:
            doms = [r.option_domain(option) for r in self.rules]
            if any(d is not None and d not in r.counts for d, r in zip(doms, self.rules, strict=True)):
                continue  # it would open a domain (with no pods of the others' rules)
            if not self._within_limits(option) or not np.all(request <= self.o.free(option)):
                continue
            if any(i not in self.host_open and r.option_counts(option) for i, r in enumerate(self.o.host_rules)):
                continue
            ok = helps.get(tuple(doms))
            if ok is None:
                ok = helps[tuple(doms)] = self._delta(group, k, doms) < 0
            if not ok:
                continue
            t = len(self.nodes)
            self.nodes.append(SolvedNode(f"zone-repair-{t}", None, option, []))
            self._index(t, option)
            for r, d in zip(self.rules, doms, strict=True):
                if d is not None:
                    r.domain_of[t] = d
            self._apply(group, pod, k, t, doms)
            return True
        return False

    def _within_limits(self, option: LaunchOption) -> bool:
        pool = option.pool.name
        headroom = self.o.problem.headroom.get(pool, UNLIMITED)
        return headroom.charged(self.pool_capacity[pool], self.pool_nodes[pool]).admits(option.capacity)

    def _bin(self, t: int) -> Bin:
        b = self.bins.get(t)
        if b is None:
            repacker = self.o.repacker
            b = self.bins[t] = Bin(np.zeros(len(repacker.dims), dtype=np.int64), np.ones(0, dtype=np.bool_))
            for group, _ in self.nodes[t].pods:
                b.used = b.used + repacker.requests[group.index]
                repacker.rules.record(b, repacker.rules.by_group[group.index])
        return b

    def _delta(self, group: GroupInfo, k: int, doms: list[str | None]) -> int:
        """The change in total excess if a pod of the group left node k for a node of these domains."""
        delta = 0
        for i, counted, owned in self.o.touches[group.index]:
            r = self.rules[i]
            source, target = r.domain_of.get(k), doms[i]
            if source == target:
                continue
            r.shift(counted, owned, source, target)
            delta += r.excess() - self.excess[i]
            r.shift(counted, owned, target, source)
        return delta

    def _apply(self, group: GroupInfo, pod: Pod, k: int, t: int, doms: list[str | None]) -> None:
        for i, counted, owned in self.o.touches[group.index]:
            r = self.rules[i]
            r.shift(counted, owned, r.domain_of.get(k), doms[i])
            self.excess[i] = r.excess()
        source = self.nodes[k]
        source.pods = [m for m in source.pods if m[1] is not pod]
        self.nodes[t].pods.append((group, pod))
        self.bins.pop(k, None)
        self.bins.pop(t, None)
        self.moved.add(id(pod))
        self.touched.update((k, t))
