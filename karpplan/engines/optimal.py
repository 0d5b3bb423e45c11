"""The optimal engine: an OR-Tools CP-SAT model over integer pod counts, then a decoder to real nodes.

Formulation (one class, named parts, in the spirit of the CP-SAT primer):

* `y[g,k]` pods of group g on new nodes of launch option k, `n[k]` nodes of option k, `x[g,e]` pods of g on
  existing node e, `u[g]` pods of g left out. Replicas of a template are one integer, never one boolean
  per pod, so the model's size depends on groups x options, not on pods.
* Existing nodes are single bins, so their capacity rows are exact. New nodes of one option are
  aggregated: `sum_g r[g] y[g,k] <= A[k] n[k]` (the fluid packing, whose LP bound is the physical limit on
  cost) tightened by `y[g,k] <= floor(A[k]/r[g]) n[k]` (whole pods per node) and a redundant total-capacity
  row. The decoder packs each option's pods into its `n[k]` nodes and opens one more if granularity needs it.
* Topology is the batch form of the per-placement rules (kube-scheduler.md §10): a domain that receives a
  self-matching pod ends with `count <= min + maxSkew`; hostname rules on new nodes cap matching pods per
  node; anti-affinity empties domains; required affinity follows existing matches or opens one domain.
* Dominated launch options (same pool, zone, capacity type and topology labels, usable by no fewer groups,
  no less room and no higher price) are pruned: this keeps the bound valid.
* Objective: pods left out (heavy), lighter-pool penalties, hourly cost, soft-constraint penalties, nodes.
* The Karpenter simulation's plan is the hint; the search is seeded and time-limited, and its status line
  shows best cost, bound and gap.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ortools.sat.python import cp_model

from karpplan.engines.effort import (
    WHOLE_MODEL_DETERMINISTIC_PER_SECOND,
    WorkClock,
    available_cores,
)
from karpplan.engines.result import Solution, SolvedNode, node_name
from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import Pod
from karpplan.model.resources import Resources
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.nodeclaim import Slot
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.state import PlacementState
from karpplan.scheduling.topology import AffinityRule, SpreadRule

PRICE_SCALE = 10**7  # objective units per dollar-hour
MAX_MODEL_VARIABLES = 40_000  # placement variables beyond which the whole-plan model is not built
LinearExpr = cp_model.LinearExpr


def _floor_fit(requests: Resources, room: Resources, cap: int) -> int:
    """How many pods with these requests fit into `room` (at most `cap`)."""
    best = cap
    for name, amount in requests.items():
        if amount > 0:
            best = min(best, room.get(name) // amount)
    return max(best, 0)


@dataclass
class ModelValues:
    """A CP-SAT solution's counts: pods per (group, existing node) `x`, per (group, option) `y`, nodes per
    option `n`, pods left out per group `u`."""

    x: dict[tuple[int, int], int]
    y: dict[tuple[int, int], int]
    n: dict[int, int]
    u: dict[int, int]


class OptimalModel:
    def __init__(self, problem: Problem, hint: Solution | None) -> None:
        self.problem = problem
        self.hint = hint
        self.model = cp_model.CpModel()
        self.groups = problem.groups
        self.dims = sorted({name for g in self.groups for name in g.template.requests})
        self.options: list[LaunchOption] = []
        self.group_options: dict[int, list[LaunchOption]] = {}
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}
        self.y: dict[tuple[int, int], cp_model.IntVar] = {}
        self.n: dict[int, cp_model.IntVar] = {}
        self.u: dict[int, cp_model.IntVar] = {}
        self.soft_terms: list[tuple[cp_model.LinearExprT, int]] = []
        self.max_soft = 0
        self.banned_existing: set[tuple[int, int]] = set()
        self.banned_option: set[tuple[int, int]] = set()
        self.pruned = False
        self._anti_cliques: set[tuple[int, ...]] = set()
        self._zonal_cache: dict[tuple[object, ...], tuple[dict[str, LinearExpr | int], cp_model.IntVar, int]] = {}
        self._soft_cache: dict[tuple[int, str], dict[str, list[cp_model.IntVar]]] = {}

    # ------------------------------------------------------------------------------------ options
    def prune_options(self) -> None:
        """Drop launch options another option dominates for every group that could use them."""
        self.pruned = True
        users: dict[int, set[int]] = defaultdict(set)
        for g in self.groups:
            for o in g.options:
                users[o.index].add(g.index)
        keys = self._topology_keys()
        classes: dict[tuple[object, ...], list[LaunchOption]] = defaultdict(list)
        for o in self.problem.options:
            if o.index not in users:
                continue
            tiers = tuple(sorted((g, self.groups[g].tier.get(o.index, 0)) for g in users[o.index]))
            label_key = tuple(o.labels.get(k) for k in keys)
            classes[(o.pool.name, o.zone, o.capacity_type, label_key, tiers)].append(o)
        kept: list[LaunchOption] = []
        for members in classes.values():
            limited = self.problem.limits[members[0].pool.name][0]
            limited_keys = list(limited) if limited is not None else []
            members.sort(key=lambda o: (o.price, o.instance_type.name))
            front: list[LaunchOption] = []
            for o in members:
                free = o.free
                dominated = any(
                    all(f.free.get(d) >= free.get(d) for d in self.dims)
                    and all(f.capacity.get(k) <= o.capacity.get(k) for k in limited_keys)
                    for f in front
                )
                if not dominated:
                    front.append(o)
            kept.extend(front)
        kept_ids = {o.index for o in kept}
        self.options = [o for o in self.problem.options if o.index in kept_ids]
        for g in self.groups:
            self.group_options[g.index] = [o for o in g.options if o.index in kept_ids]

    def _topology_keys(self) -> list[str]:
        """Keys whose values tell launch options apart for some rule or preference."""
        topo = self.problem.topology
        keys = set(topo.domain_keys())
        for g in self.groups:
            for pref in g.template.affinity.preferred:
                keys |= set(pref.term.requirements)
            for rule in [*topo.preferred_affinity.get(id(g.template), []), *topo.preferred_anti.get(id(g.template), [])]:
                if rule.terms[0].key != HOSTNAME:
                    keys.add(rule.terms[0].key)
        return sorted(keys)

    # ------------------------------------------------------------------------------------ variables
    def add_variables(self) -> None:
        m = self.model
        self._static_exclusions()
        upper: dict[int, int] = defaultdict(int)
        for g in self.groups:
            for o in self.group_options[g.index]:
                if (g.index, o.index) in self.banned_option:
                    continue
                per_node = _floor_fit(g.template.requests, o.free, g.size)
                if per_node == 0:
                    continue
                self.y[(g.index, o.index)] = m.new_int_var(0, g.size, f"y_g{g.index}_k{o.index}")
                upper[o.index] += g.size
            for e in g.existing_ok:
                if (g.index, e) in self.banned_existing:
                    continue
                cap = _floor_fit(g.template.requests, self.problem.existing[e].free, g.size)
                if cap == 0:
                    continue
                self.x[(g.index, e)] = m.new_int_var(0, cap, f"x_g{g.index}_e{e}")
            self.u[g.index] = m.new_int_var(0, g.size, f"u_g{g.index}")
        for o in self.options:
            if upper.get(o.index):
                self.n[o.index] = m.new_int_var(0, upper[o.index], f"n_k{o.index}")
        self._index_variables()

    def _index_variables(self) -> None:
        """Per-group views of the variables, so no constraint family scans them all (linear build time)."""
        self.y_of: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
        self.x_of: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
        for (g, k), v in self.y.items():
            self.y_of[g].append((k, v))
        for (g, e), v in self.x.items():
            self.x_of[g].append((e, v))
        self._domain_cache: dict[tuple[int, str, int], dict[str, list[cp_model.IntVar]]] = {}

    def _static_exclusions(self) -> None:
        """Placements ruled out before solving: inverse anti-affinity of bound pods, unmatched spread domains."""
        topo = self.problem.topology
        ns_labels = self.problem.namespace_labels
        for g in self.groups:
            tpl = g.template
            for term, value in topo.existing_anti:
                if not term.matches(tpl.namespace, tpl.labels, ns_labels):
                    continue
                for e in g.existing_ok:
                    if self.problem.existing[e].node.domain(term.key) == value:
                        self.banned_existing.add((g.index, e))
                for o in self.group_options[g.index]:
                    if term.key != HOSTNAME and o.labels.get(term.key) == value:
                        self.banned_option.add((g.index, o.index))
            anti = topo.anti_affinity.get(id(tpl))
            if anti is not None:
                for i, term in enumerate(anti.terms):
                    taken = {d for d, c in anti.existing[i].items() if c > 0}
                    for e in g.existing_ok:
                        if self.problem.existing[e].node.domain(term.key) in taken:
                            self.banned_existing.add((g.index, e))
                    if term.key != HOSTNAME:
                        for o in self.group_options[g.index]:
                            if o.labels.get(term.key) in taken:
                                self.banned_option.add((g.index, o.index))
            for rule in topo.rules_for(tpl):
                if not rule.hard:
                    continue
                allowed = self._spread_allowed_domains(rule)
                for e in g.existing_ok:
                    d = rule.existing_domains.get(self.problem.existing[e].node.name)
                    if d is None or (allowed is not None and d not in allowed):
                        self.banned_existing.add((g.index, e))
                for o in self.group_options[g.index]:
                    if not rule.option_counts(o) or not rule.hostname and (allowed is None or o.labels.get(rule.key) not in allowed):
                        self.banned_option.add((g.index, o.index))

    def _spread_allowed_domains(self, rule: SpreadRule) -> set[str] | None:
        """Domains a pod of the rule's owner may enter at all (None = every existing domain, for hostname)."""
        if rule.hostname:
            if rule.self_match:
                return None
            counts = rule.base_counts
            host_domains = list(rule.existing_domains.values())
            minimum = (min((counts.get(d, 0) for d in host_domains), default=0)
                       if len(host_domains) >= rule.min_domains else 0)
            return {d for d in host_domains if counts.get(d, 0) - minimum <= rule.max_skew} | {"<new>"}
        domains = rule.static_domains()
        if rule.self_match:
            return set(domains)
        counts = rule.base_counts
        minimum = min((counts.get(d, 0) for d in domains), default=0) if len(domains) >= rule.min_domains else 0
        return {d for d in domains if counts.get(d, 0) - minimum <= rule.max_skew}

    # ------------------------------------------------------------------------------------ constraints
    def add_demand(self) -> None:
        """Every pending pod is placed somewhere or counted as left out."""
        for g in self.groups:
            parts = [v for _, v in self.y_of[g.index]] + [v for _, v in self.x_of[g.index]]
            self.model.add(sum(parts) + self.u[g.index] == g.size)

    def add_existing_capacity(self) -> None:
        """Existing nodes are single bins: these rows are exact."""
        by_node: dict[int, list[tuple[GroupInfo, cp_model.IntVar]]] = defaultdict(list)
        for (g, e), v in self.x.items():
            by_node[e].append((self.groups[g], v))
        for e, items in by_node.items():
            free = self.problem.existing[e].free
            for d in self.dims:
                terms = [(v, gi.template.requests.get(d)) for gi, v in items if gi.template.requests.get(d)]
                if terms:
                    self.model.add(sum(c * v for v, c in terms) <= max(free.get(d), 0))

    def add_new_capacity(self) -> None:
        """Fluid capacity per launch option, whole pods per node, and the redundant total row."""
        by_option: dict[int, list[tuple[GroupInfo, cp_model.IntVar]]] = defaultdict(list)
        for (g, k), v in self.y.items():
            by_option[k].append((self.groups[g], v))
        options = {o.index: o for o in self.options}
        for k, items in by_option.items():
            o = options[k]
            nk = self.n[k]
            free = o.free
            for d in self.dims:
                terms = [(v, gi.template.requests.get(d)) for gi, v in items if gi.template.requests.get(d)]
                if terms:
                    self.model.add(sum(c * v for v, c in terms) <= free.get(d) * nk)
            for gi, v in items:
                self.model.add(v <= _floor_fit(gi.template.requests, free, gi.size) * nk)
        for d in self.dims:
            demand = [(gi.template.requests.get(d), gi.size - self.u[gi.index]) for gi in self.groups
                      if gi.template.requests.get(d)]
            if not demand:
                continue
            fixed = sum(max(self.problem.existing[e].free.get(d), 0) for e in {e for (_, e) in self.x})
            supply = LinearExpr.weighted_sum([self.n[k] for k in by_option], [options[k].free.get(d) for k in by_option])
            self.model.add(sum(c * expr for c, expr in demand) <= supply + fixed)

    def add_limits(self) -> None:
        """NodePool limits against capacity; `limits.nodes` exactly."""
        by_pool: dict[str, list[LaunchOption]] = defaultdict(list)
        for o in self.options:
            if o.index in self.n:
                by_pool[o.pool.name].append(o)
        for pool, opts in by_pool.items():
            remaining, nodes_left = self.problem.limits[pool]
            if nodes_left is not None:
                self.model.add(sum(self.n[o.index] for o in opts) <= max(nodes_left, 0))
            if remaining is not None:
                for key, left in remaining.items():
                    self.model.add(sum(o.capacity.get(key) * self.n[o.index] for o in opts) <= max(left, 0))

    def _placed_in(self, group: int, key: str, value: str, rule: SpreadRule | None = None) -> list[cp_model.IntVar]:
        """Variables placing pods of `group` in domain `value` of `key` (counted by `rule` when given)."""
        return self._domain_map(group, key, rule).get(value, [])

    def _domain_map(self, group: int, key: str, rule: SpreadRule | None) -> dict[str, list[cp_model.IntVar]]:
        cache_key = (group, key, id(rule) if rule is not None else 0)
        cached = self._domain_cache.get(cache_key)
        if cached is not None:
            return cached
        out: dict[str, list[cp_model.IntVar]] = defaultdict(list)
        for e, v in self.x_of[group]:
            node = self.problem.existing[e].node
            value = rule.existing_domains.get(node.name) if rule is not None else node.domain(key)
            if value is not None:
                out[value].append(v)
        for k, v in self.y_of[group]:
            o = self._option(k)
            value = o.labels.get(key)
            if value is not None and (rule is None or rule.option_counts(o)):
                out[value].append(v)
        self._domain_cache[cache_key] = out
        return out

    def _option(self, index: int) -> LaunchOption:
        return self.problem.options[index]

    def add_spread(self) -> None:
        topo = self.problem.topology
        raises: dict[int, list[GroupInfo]] = {}
        by_signature: dict[tuple[object, ...], list[GroupInfo]] = defaultdict(list)
        for g in self.groups:
            for rule in topo.rules_for(g.template):
                raises[id(rule)] = [h for h in self.groups if rule.counts(h.template.namespace, h.template.labels)]
                by_signature[rule.signature()].append(g)
        self._shared_caps: set[tuple[object, ...]] = set()
        for g in self.groups:
            for rule in topo.rules_for(g.template):
                owners = by_signature[rule.signature()]
                if rule.hostname:
                    self._hostname_spread(g, rule, raises[id(rule)], owners)
                elif rule.self_match:
                    self._zonal_spread(g, rule, raises[id(rule)])

    def _zonal_spread(self, g: GroupInfo, rule: SpreadRule, raisers: list[GroupInfo]) -> None:
        m = self.model
        domains = sorted(rule.static_domains())
        if not domains:
            return
        # Groups with the same constraint share the domain counts and their minimum.
        signature = rule.signature()
        shared = self._zonal_cache.get(signature)
        if shared is None:
            counts: dict[str, LinearExpr | int] = {}
            for d in domains:
                counts[d] = rule.base_counts.get(d, 0) + sum(
                    v for h in raisers for v in self._placed_in(h.index, rule.key, d, rule))
            big = sum(h.size for h in raisers) + max(rule.base_counts.values(), default=0) + 1
            minimum = m.new_int_var(0, big, f"min_g{g.index}_{rule.key}")
            if len(domains) < rule.min_domains:
                m.add(minimum == 0)
            else:
                for d in domains:
                    m.add(minimum <= counts[d])
            shared = (counts, minimum, big)
            self._zonal_cache[signature] = shared
        counts, minimum, big = shared
        for d in domains:
            own = self._placed_in(g.index, rule.key, d, rule)
            if not own:
                continue
            receives = m.new_bool_var(f"recv_g{g.index}_{d}")
            m.add(sum(own) <= g.size * receives)
            if rule.hard:
                m.add(counts[d] <= minimum + rule.max_skew).only_enforce_if(receives)
            else:
                slack = m.new_int_var(0, big, f"slack_g{g.index}_{d}")
                m.add(counts[d] <= minimum + rule.max_skew + slack).only_enforce_if(receives)
                self.soft_terms.append((slack, 10))
                self.max_soft += 10 * big

    def _hostname_spread(self, g: GroupInfo, rule: SpreadRule, raisers: list[GroupInfo],
                         owners: list[GroupInfo]) -> None:
        m = self.model
        big = sum(h.size for h in raisers) + max(rule.base_counts.values(), default=0) + 1
        # New nodes: Karpenter's global minimum is 0, so a node holding g's pods has at most maxSkew matches.
        owner_ids = {h.index for h in owners}
        if rule.hard and all(h.index in owner_ids for h in raisers):
            # Every pod the rule counts carries it: any node holding one obeys it, no indicator needed.
            signature = rule.signature()
            if signature not in self._shared_caps:
                self._shared_caps.add(signature)
                self._cap_per_node(raisers, rule.max_skew)
        else:
            for k, v in self.y_of[g.index]:
                matching = [self.y[(h.index, k)] for h in raisers if (h.index, k) in self.y]
                receives = m.new_bool_var(f"hrecv_g{g.index}_k{k}")
                m.add(v <= g.size * receives)
                if rule.hard:
                    m.add(sum(matching) <= rule.max_skew * self.n[k]).only_enforce_if(receives)
                else:
                    slack = m.new_int_var(0, big, f"hslack_g{g.index}_k{k}")
                    m.add(sum(matching) <= rule.max_skew * self.n[k] + slack).only_enforce_if(receives)
                    self.soft_terms.append((slack, 10))
                    self.max_soft += 10 * big
        if not rule.self_match or not rule.hard:
            return
        # Existing nodes: kube-scheduler's rule with the minimum over eligible nodes (and 0 once a new one exists).
        eligible = [e for e, info in enumerate(self.problem.existing) if info.node.name in rule.existing_domains]
        eligible_set = set(eligible)
        own_nodes = [e for e, _ in self.x_of[g.index] if e in eligible_set]
        if not own_nodes:
            return
        count = {}
        for e in eligible:
            name = self.problem.existing[e].node.name
            count[e] = rule.base_counts.get(name, 0) + sum(self.x[(h.index, e)] for h in raisers if (h.index, e) in self.x)
        minimum = m.new_int_var(0, big, f"hmin_g{g.index}")
        if len(eligible) < rule.min_domains:
            m.add(minimum == 0)
        for e in eligible:
            m.add(minimum <= count[e])
        new_nodes = [self.n[k] for k, _ in self.y_of[g.index] if rule.option_counts(self._option(k))]
        if new_nodes:
            any_new = m.new_bool_var(f"anynew_g{g.index}")
            m.add(sum(new_nodes) == 0).only_enforce_if(any_new.Not())
            m.add(minimum == 0).only_enforce_if(any_new)
        for e in own_nodes:
            receives = m.new_bool_var(f"erecv_g{g.index}_e{e}")
            m.add(self.x[(g.index, e)] <= g.size * receives)
            m.add(count[e] <= minimum + rule.max_skew).only_enforce_if(receives)

    def _cap_per_node(self, members: list[GroupInfo], cap: int) -> None:
        """At most `cap` pods of these groups on each new node of every option."""
        per_option: dict[int, list[cp_model.IntVar]] = defaultdict(list)
        for h in members:
            for k, v in self.y_of[h.index]:
                per_option[k].append(v)
        for k, items in per_option.items():
            self.model.add(sum(items) <= cap * self.n[k])

    def add_affinity(self) -> None:
        topo = self.problem.topology
        ns_labels = self.problem.namespace_labels
        for g in self.groups:
            tpl = g.template
            anti = topo.anti_affinity.get(id(tpl))
            if anti is not None:
                for term in anti.terms:
                    matched = [h for h in self.groups
                               if term.matches(h.template.namespace, h.template.labels, ns_labels)]
                    self._anti_term(g, term.key, matched)
            aff = topo.affinity.get(id(tpl))
            if aff is not None:
                partners = [h for h in self.groups if h is not g and all(
                    t.matches(h.template.namespace, h.template.labels, ns_labels) for t in aff.terms)]
                for i, term in enumerate(aff.terms):
                    self._affinity_term(g, term.key, aff.existing[i], aff.self_match, partners)
            for rule in topo.preferred_affinity.get(id(tpl), []):
                term = rule.terms[0]
                partners = [h for h in self.groups if h is not g
                            and term.matches(h.template.namespace, h.template.labels, ns_labels)]
                self._preferred_affinity_term(g, rule, partners)
            for rule in topo.preferred_anti.get(id(tpl), []):
                term = rule.terms[0]
                matched = [h for h in self.groups if term.matches(h.template.namespace, h.template.labels, ns_labels)]
                self._preferred_anti_term(g, rule, matched)

    def _domains_of(self, group: int, key: str) -> dict[str, list[cp_model.IntVar]]:
        """Variables of `group` per domain value of `key` (new nodes only for non-hostname keys)."""
        if key != HOSTNAME:
            return self._domain_map(group, key, None)
        out: dict[str, list[cp_model.IntVar]] = defaultdict(list)
        for e, v in self.x_of[group]:
            value = self.problem.existing[e].node.domain(key)
            if value is not None:
                out[value].append(v)
        return out

    def _anti_term(self, g: GroupInfo, key: str, matched: list[GroupInfo]) -> None:
        m = self.model
        mine = self._domains_of(g.index, key)
        selfish = any(h is g for h in matched)
        others = [h for h in matched if h is not g]
        for value, own in mine.items():
            if selfish:
                m.add(sum(own) <= 1)
            if others:
                theirs = [v for h in others for v in self._domains_of(h.index, key).get(value, [])]
                if theirs:
                    receives = m.new_bool_var(f"arecv_g{g.index}_{value}")
                    m.add(sum(own) <= g.size * receives)
                    m.add(sum(theirs) == 0).only_enforce_if(receives)
        if key == HOSTNAME and selfish:
            clique = tuple(sorted(h.index for h in matched))
            if all(self._owns_matching_hostname_anti(h, matched) for h in matched):
                # Every matched pod carries the term: at most one of them per node, no indicator needed.
                if clique not in self._anti_cliques:
                    self._anti_cliques.add(clique)
                    self._cap_per_node(matched, 1)
                return
            for k, v in self.y_of[g.index]:
                matching = [self.y[(h.index, k)] for h in matched if (h.index, k) in self.y]
                receives = m.new_bool_var(f"harecv_g{g.index}_k{k}")
                m.add(v <= g.size * receives)
                m.add(sum(matching) <= self.n[k]).only_enforce_if(receives)

    def _owns_matching_hostname_anti(self, h: GroupInfo, matched: list[GroupInfo]) -> bool:
        """Does `h` carry a hostname anti-affinity term that matches every group of `matched`?"""
        anti = self.problem.topology.anti_affinity.get(id(h.template))
        if anti is None:
            return False
        ns_labels = self.problem.namespace_labels
        return any(t.key == HOSTNAME and all(t.matches(x.template.namespace, x.template.labels, ns_labels)
                                             for x in matched) for t in anti.terms)

    def _affinity_term(self, g: GroupInfo, key: str, existing: dict[str, int], self_match: bool,
                       partners: list[GroupInfo]) -> None:
        m = self.model
        mine = self._domains_of(g.index, key)
        anywhere = any(c > 0 for c in existing.values())
        opens: list[cp_model.IntVar] = []
        for value, own in mine.items():
            if existing.get(value, 0) > 0:
                continue
            receives = m.new_bool_var(f"frecv_g{g.index}_{value}")
            m.add(sum(own) <= g.size * receives)
            partner_vars = [v for h in partners for v in self._domains_of(h.index, key).get(value, [])]
            opener = m.new_bool_var(f"open_g{g.index}_{value}")
            if partner_vars:
                with_partner = m.new_bool_var(f"partner_g{g.index}_{value}")
                m.add(sum(partner_vars) >= 1).only_enforce_if(with_partner)
                m.add_bool_or([with_partner, opener]).only_enforce_if(receives)
            else:
                m.add_implication(receives, opener)
            opens.append(opener)
        if opens:
            m.add(sum(opens) <= (1 if self_match and not anywhere else 0))
        if key == HOSTNAME and self_match and not anywhere:
            # All replicas share one new node: at most one option holds them.
            holders = []
            for k, v in self.y_of[g.index]:
                b = m.new_bool_var(f"hold_g{g.index}_k{k}")
                m.add(v <= g.size * b)
                holders.append(b)
            if holders:
                m.add(sum(holders) <= 1)

    # Preferred pod (anti-)affinity: soft, a penalty of the term's weight per pod that misses it, next to
    # the preferred node affinity penalty; no pod is ever kept out by them. A pod meets a preferred affinity
    # term when its domain holds a bound pod the term matches or a pod of another matching group, or, when
    # the term matches its own group and nothing anywhere matches yet, when it is in the one domain the
    # group opens (Karpenter's first-pod rule, as for required terms). It meets a preferred anti-affinity
    # term when its domain holds no other pod the term matches.
    def _soft_domains(self, group: int, key: str) -> dict[str, list[cp_model.IntVar]]:
        """Variables of `group` per domain of `key`. For hostname: existing nodes by name and, as an
        approximation, each launch option's new nodes as one domain (the model does not tell them apart)."""
        cached = self._soft_cache.get((group, key))
        if cached is None:
            if key != HOSTNAME:
                cached = self._domain_map(group, key, None)
            else:
                cached = {value: list(own) for value, own in self._domains_of(group, key).items()}
                for k, v in self.y_of[group]:
                    cached[f"<new nodes of option {k}>"] = [v]  # no hostname has '<'
            self._soft_cache[(group, key)] = cached
        return cached

    def _preferred_affinity_term(self, g: GroupInfo, rule: AffinityRule, partners: list[GroupInfo]) -> None:
        m = self.model
        key, weight, existing = rule.terms[0].key, rule.weight, rule.existing[0]
        may_open = rule.self_match and not any(c > 0 for c in existing.values())
        theirs = [self._soft_domains(h.index, key) for h in partners]
        self.max_soft += weight * g.size
        opens: list[cp_model.IntVar] = []
        for value, own in self._soft_domains(g.index, key).items():
            if existing.get(value, 0) > 0:
                continue  # met
            partner_vars = [v for domains in theirs for v in domains.get(value, [])]
            if not partner_vars and not may_open:
                self.soft_terms.extend((v, weight) for v in own)  # never met here
                continue
            met = m.new_bool_var(f"pmet_g{g.index}_{value}")
            unmet = m.new_int_var(0, g.size, f"punmet_g{g.index}_{value}")
            m.add(sum(own) <= unmet + g.size * met)
            if may_open:
                opener = m.new_bool_var(f"popen_g{g.index}_{value}") if partner_vars else met
                opens.append(opener)
                if partner_vars:
                    m.add(sum(partner_vars) >= 1).only_enforce_if([met, opener.Not()])
            else:
                m.add(sum(partner_vars) >= 1).only_enforce_if(met)
            self.soft_terms.append((unmet, weight))
        if len(opens) > 1:
            m.add(sum(opens) <= 1)

    def _preferred_anti_term(self, g: GroupInfo, rule: AffinityRule, matched: list[GroupInfo]) -> None:
        m = self.model
        key, weight, existing = rule.terms[0].key, rule.weight, rule.existing[0]
        selfish = any(h is g for h in matched)
        others = [h for h in matched if h is not g]
        theirs = [self._domains_of(h.index, key) for h in others]
        others_size = sum(h.size for h in others)
        self.max_soft += weight * g.size
        for value, own in self._domains_of(g.index, key).items():
            if existing.get(value, 0) > 0:
                self.soft_terms.extend((v, weight) for v in own)  # a bound pod it avoids is there
                continue
            other_vars = [v for domains in theirs for v in domains.get(value, [])]
            if not other_vars and not selfish:
                continue  # always met
            clash = m.new_bool_var(f"aclash_g{g.index}_{value}")
            if other_vars:
                m.add(sum(other_vars) <= others_size * clash)
            if selfish:
                m.add(sum(own) <= 1 + g.size * clash)
            unmet = m.new_int_var(0, g.size, f"aunmet_g{g.index}_{value}")
            m.add(sum(own) + g.size * clash <= unmet + g.size)
            self.soft_terms.append((unmet, weight))
        if key != HOSTNAME or not matched:
            return
        # New nodes of one option, which the model does not tell apart (approximations): a term matching
        # its own group is met by one matched pod per node, and the matched pods beyond the option's node
        # count miss it; a term matching only other groups is met while some node of the option holds
        # none of their pods.
        big = g.size + others_size
        if selfish:
            self.max_soft += weight * big
        for k, v in self.y_of[g.index]:
            other_vars = [self.y[(h.index, k)] for h in others if (h.index, k) in self.y]
            if selfish:
                excess = m.new_int_var(0, big, f"aexcess_g{g.index}_k{k}")
                if other_vars:
                    receives = m.new_bool_var(f"aexrecv_g{g.index}_k{k}")
                    m.add(v <= g.size * receives)
                    m.add(v + sum(other_vars) <= self.n[k] + excess).only_enforce_if(receives)
                else:
                    m.add(v <= self.n[k] + excess)
                self.soft_terms.append((excess, weight))
            elif other_vars:
                clash = m.new_bool_var(f"aclash_g{g.index}_k{k}")
                m.add(sum(other_vars) + 1 <= self.n[k] + (others_size + 1) * clash)
                unmet = m.new_int_var(0, g.size, f"aunmet_g{g.index}_k{k}")
                m.add(v + g.size * clash <= unmet + g.size)
                self.soft_terms.append((unmet, weight))

    # ------------------------------------------------------------------------------------ objective
    def add_objective(self) -> None:
        max_price = max((self._option(k).price for k in self.n), default=1.0)
        price_unit = int(round(max_price * PRICE_SCALE)) + 1
        max_tier = max((t for g in self.groups for t in g.tier.values()), default=0)
        self.tier_penalty = 2 * price_unit
        self.unplaced_penalty = 2 * price_unit * (max_tier + 2)
        terms: list[tuple[cp_model.LinearExprT, int]] = []
        for k, v in self.n.items():
            terms.append((v, int(round(self._option(k).price * PRICE_SCALE)) + 1))  # +1: fewer nodes on ties
        for v in self.u.values():
            terms.append((v, self.unplaced_penalty))
        for (g, k), v in self.y.items():
            tier = self.groups[g].tier.get(k, 0)
            weight = self._preference_penalty(self.groups[g], self._option(k).labels, "")
            cost = tier * self.tier_penalty + weight
            if cost:
                terms.append((v, cost))
        for (g, e), v in self.x.items():
            node = self.problem.existing[e].node
            weight = self._preference_penalty(self.groups[g], node.labels, node.name)
            if weight:
                terms.append((v, weight))
        terms.extend(self.soft_terms)
        self.model.minimize(sum(c * v for v, c in terms))

    def _preference_penalty(self, g: GroupInfo, labels: dict[str, str] | object, name: str) -> int:
        """Preferred node affinity: each unmet term's weight, per pod."""
        total = 0
        for pref in g.template.affinity.preferred:
            if not pref.term.matches(labels, name):  # type: ignore[arg-type]
                total += pref.weight
        if total:
            self.max_soft += total * g.size
        return total

    def add_hint(self) -> None:
        if self.hint is None:
            return
        xs: dict[tuple[int, int], int] = defaultdict(int)
        ys: dict[tuple[int, int], int] = defaultdict(int)
        ns: dict[int, int] = defaultdict(int)
        existing_index = {info.node.name: e for e, info in enumerate(self.problem.existing)}
        for node in self.hint.nodes:
            if node.existing is not None:
                e = existing_index[node.name]
                for gi, _ in node.pods:
                    xs[(gi.index, e)] += 1
            elif node.option is not None:
                ns[node.option.index] += 1
                for gi, _ in node.pods:
                    ys[(gi.index, node.option.index)] += 1
        if any(key not in self.x for key in xs) or any(key not in self.y for key in ys):
            return  # the greedy plan uses a pruned option: let the solver start fresh
        unplaced: dict[int, int] = defaultdict(int)
        for gi, _ in self.hint.unplaced:
            unplaced[gi.index] += 1
        for key, v in self.x.items():
            self.model.add_hint(v, xs.get(key, 0))
        for key, v in self.y.items():
            self.model.add_hint(v, ys.get(key, 0))
        for k, v in self.n.items():
            self.model.add_hint(v, ns.get(k, 0))
        for g, v in self.u.items():
            self.model.add_hint(v, unplaced.get(g, 0))

    def size_estimate(self) -> int:
        """Integer variables the model would have (placements on new and existing nodes)."""
        return sum(len(self.group_options.get(g.index, g.options)) + len(g.existing_ok) for g in self.groups)

    def build(self) -> None:
        if not self.pruned:
            self.prune_options()
        self.add_variables()
        self.add_demand()
        self.add_existing_capacity()
        self.add_new_capacity()
        self.add_limits()
        self.add_spread()
        self.add_affinity()
        self.add_objective()
        self.add_hint()

    # ------------------------------------------------------------------------------------ solving
    def solve(self, time_limit: float, seed: int, workers: int,
              progress: Callable[[str], None] | None, clock: WorkClock | None = None) -> tuple[str, ModelValues | None, float]:
        """CP-SAT on the whole model for `time_limit` modelled seconds (a deterministic-time budget; the
        clock's wall guard, if any, also stops it and is then recorded as a cut)."""
        clock = clock or WorkClock()
        solver = cp_model.CpSolver()
        solver.parameters.max_deterministic_time = max(time_limit, 0.05) * WHOLE_MODEL_DETERMINISTIC_PER_SECOND
        guard = clock.wall_left()
        if guard != float("inf"):
            solver.parameters.max_time_in_seconds = max(guard, 0.05)
        solver.parameters.random_seed = seed
        solver.parameters.num_workers = workers or available_cores()
        # Interleaved search keeps multi-worker runs reproducible for a given seed.
        solver.parameters.interleave_search = True
        if len(self.y) + len(self.x) > 2000:
            # Probing dominates presolve on large aggregated models and can eat the whole time limit.
            solver.parameters.cp_model_probing_level = 0
        callback = _Progress(self, progress) if progress is not None else None
        status = solver.solve(self.model, callback) if callback is not None else solver.solve(self.model)
        clock.charge(solver.response_proto.deterministic_time / WHOLE_MODEL_DETERMINISTIC_PER_SECOND)
        clock.record_stop(status == cp_model.OPTIMAL, solver.wall_time, solver.parameters.max_time_in_seconds)
        name = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
                cp_model.INFEASIBLE: "infeasible-model", cp_model.MODEL_INVALID: "invalid-model"}.get(status, "unknown")
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return name, None, 0.0
        values = ModelValues(
            {k: solver.value(v) for k, v in self.x.items()},
            {k: solver.value(v) for k, v in self.y.items()},
            {k: solver.value(v) for k, v in self.n.items()},
            {k: solver.value(v) for k, v in self.u.items()},
        )
        return name, values, solver.best_objective_bound

    def cost_bound(self, objective_bound: float, values: ModelValues) -> float:
        """A lower bound on the hourly cost of any plan that places as many pods as this one."""
        penalties = self.unplaced_penalty * sum(values.u.values())
        penalties += sum(v * self.groups[g].tier.get(k, 0) * self.tier_penalty for (g, k), v in values.y.items())
        nodes = sum(values.n.values())
        raw = objective_bound - penalties - self.max_soft - nodes
        return max(raw, 0.0) / PRICE_SCALE


class _Progress(cp_model.CpSolverSolutionCallback):
    def __init__(self, owner: OptimalModel, sink: Callable[[str], None]) -> None:
        super().__init__()
        self.sink = sink
        self.start = time.monotonic()

    def on_solution_callback(self) -> None:
        best, bound = self.objective_value, self.best_objective_bound
        gap = 0.0 if best <= 0 else max(0.0, (best - bound) / best)
        self.sink(f"best {best / PRICE_SCALE:.4f} bound {bound / PRICE_SCALE:.4f} gap {gap:.1%} "
                  f"{time.monotonic() - self.start:.1f}s")


# ---------------------------------------------------------------------------------------- decoding
class Decoder:
    """Turns counts into nodes: existing placements as given, each option's pods packed into its nodes."""

    def __init__(self, problem: Problem, model: OptimalModel, values: ModelValues) -> None:
        self.problem = problem
        self.model = model
        self.values = values
        self.state = PlacementState(problem)
        self.extra_nodes = 0

    def decode(self) -> tuple[list[SolvedNode], list[tuple[GroupInfo, Pod]]]:
        groups = self.problem.groups
        queues: dict[int, list[Pod]] = {g.index: list(g.group.pods) for g in groups}
        for (g, e), count in sorted(self.values.x.items()):
            slot = self.state.slots[e]
            for _ in range(count):
                self._force(groups[g], queues[g].pop(0), slot)
        new_slots: list[Slot] = []
        by_option: dict[int, list[tuple[GroupInfo, int]]] = defaultdict(list)
        for (g, k), count in self.values.y.items():
            if count:
                by_option[k].append((groups[g], count))
        unplaced: list[tuple[GroupInfo, Pod]] = []
        for k, items in sorted(by_option.items()):
            option = self.problem.options[k]
            slots = [self.state.new_slot(option.pool, [option]) for _ in range(self.values.n.get(k, 0))]
            for s in slots:
                self.state.add_slot(s)
            # Most constrained groups first, larger pods first: first-fit decreasing with per-node rules.
            items.sort(key=lambda it: (-len(self._local_rules(it[0])), -it[0].template.requests.get("cpu"),
                                       -it[0].template.requests.get("memory")))
            for gi, count in items:
                for _ in range(count):
                    pod = queues[gi.index].pop(0)
                    target = self._best_slot(gi, slots)
                    if target is None:
                        extra = self.state.new_slot(option.pool, [option])
                        if self._fits(gi, extra):
                            self.state.add_slot(extra)
                            slots.append(extra)
                            self.extra_nodes += 1
                            target = extra
                    if target is None:
                        unplaced.append((gi, pod))
                        continue
                    self._force(gi, pod, target)
            new_slots.extend(slots)
        for group in groups:
            unplaced.extend((group, p) for p in queues[group.index])
        nodes: list[SolvedNode] = []
        for slot in self.state.slots[: len(self.problem.existing)]:
            nodes.append(SolvedNode(slot.name, slot.existing, None, list(slot.members)))
        ordinal = 0
        for slot in new_slots:
            if not slot.members:
                continue
            ordinal += 1
            nodes.append(SolvedNode(node_name(slot.options[0], ordinal), None, slot.options[0], list(slot.members)))
        return nodes, unplaced

    def _local_rules(self, gi: GroupInfo) -> list[object]:
        topo = self.problem.topology
        rules: list[object] = [r for r in topo.rules_for(gi.template) if r.hostname and r.hard]
        anti = topo.anti_affinity.get(id(gi.template))
        if anti is not None:
            rules.extend(t for t in anti.terms if t.key == HOSTNAME)
        return rules

    def _fits(self, gi: GroupInfo, slot: Slot) -> bool:
        option = slot.options[0]
        if not (slot.requests + gi.template.requests).fits_in(option.free):
            return False
        if gi.template.host_ports and any(p.conflicts(q) for p in gi.template.host_ports for q in slot.host_ports):
            return False
        ns_labels = self.problem.namespace_labels
        tpl = gi.template
        for rule in self.problem.topology.rules_for(tpl):
            if rule.hostname and rule.hard:
                here = sum(1 for h, _ in slot.members if rule.counts(h.template.namespace, h.template.labels))
                if here + (1 if rule.self_match else 0) > rule.max_skew:
                    return False
        anti = self.problem.topology.anti_affinity.get(id(tpl))
        if anti is not None:
            for t in anti.terms:
                if t.key == HOSTNAME and any(t.matches(h.template.namespace, h.template.labels, ns_labels)
                                             for h, _ in slot.members):
                    return False
        for h, _ in slot.members:
            other = self.problem.topology.anti_affinity.get(id(h.template))
            if other is not None and any(t.key == HOSTNAME and t.matches(tpl.namespace, tpl.labels, ns_labels)
                                         for t in other.terms):
                return False
        aff = self.problem.topology.affinity.get(id(tpl))
        if aff is not None and any(t.key == HOSTNAME for t in aff.terms):
            holders = [s for s in self.state.slots if any(h is gi for h, _ in s.members)]
            if holders and slot not in holders:
                return False
        return True

    def _best_slot(self, gi: GroupInfo, slots: Iterable[Slot]) -> Slot | None:
        fitting = [s for s in slots if self._fits(gi, s)]
        if not fitting:
            return None
        if self._local_rules(gi):
            # Spread hostname-constrained pods: the node with the fewest of this group's pods.
            return min(fitting, key=lambda s: (sum(1 for h, _ in s.members if h is gi), s.index))
        return fitting[0]

    def _force(self, gi: GroupInfo, pod: Pod, slot: Slot) -> None:
        self.state._commit(gi, pod, slot, slot.options)


__all__ = ["Decoder", "OptimalModel", "ModelValues"]
