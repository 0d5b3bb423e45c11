"""A plan under construction: nodes (existing and new), the pods added to them, and topology counts.

This is the per-placement rule book shared by the Karpenter simulation and the optimiser's decoder.
New nodes are Karpenter NodeClaims: they keep a *set* of possible launch options (instance types, zones,
capacity types of one pool) that narrows as pods join, and the cheapest survivor is launched at the end.
Recording follows Karpenter (`topology.go Record`): spread and affinity counts move only when a node's
domain is decided, anti-affinity marks every domain the node might still land in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import HostPort, Pod, PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.resources import Resources
from karpplan.model.selectors import PreferredTerm
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.filters import (
    EXISTING_ANTI_AFFINITY,
    HOST_PORTS,
    NODE_AFFINITY,
    POD_AFFINITY,
    POD_ANTI_AFFINITY,
    SPREAD,
    SPREAD_MISSING_LABEL,
    ExistingNodeInfo,
    insufficient,
)
from karpplan.scheduling.problem import PREFER_NO_SCHEDULE_TIER, GroupInfo, Problem
from karpplan.scheduling.topology import AffinityRule, AffinityTerm, SpreadRule


@dataclass
class Slot:
    """A node of the plan: an existing node, or a new node with its remaining launch options."""

    index: int
    name: str
    existing: ExistingNodeInfo | None = None
    pool: NodePool | None = None
    options: list[LaunchOption] = field(default_factory=list)
    requests: Resources = Resources()
    members: list[tuple[GroupInfo, Pod]] = field(default_factory=list)
    host_ports: list[HostPort] = field(default_factory=list)

    @property
    def new(self) -> bool:
        return self.existing is None

    def values(self, key: str, options: Sequence[LaunchOption] | None = None) -> set[str]:
        """The domain values this node may have for a key (one for existing nodes)."""
        if self.existing is not None:
            value = self.existing.node.domain(key)
            return set() if value is None else {value}
        if key == HOSTNAME:
            return {self.name}
        opts = self.options if options is None else options
        return {v for o in opts if (v := o.labels.get(key)) is not None}


@dataclass
class Attempt:
    """One try at placing a pod: which preferences are enforced as requirements."""

    node_preference: PreferredTerm | None = None
    soft_spread: tuple[SpreadRule, ...] = ()
    tolerate_prefer_no_schedule: bool = False


class PlacementState:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        topo = problem.topology
        self.slots: list[Slot] = [
            Slot(i, info.node.name, existing=info, host_ports=list(info.host_ports))
            for i, info in enumerate(problem.existing)
        ]
        self.spread_counts: dict[int, Counter[str]] = {}
        for rules in topo.spread.values():
            for r in rules:
                self.spread_counts[id(r)] = Counter(r.base_counts)
        self.affinity_counts: dict[tuple[int, int], Counter[str]] = {}
        self.anti_counts: dict[tuple[int, int], Counter[str]] = {}
        for rule in topo.affinity.values():
            for i, c in enumerate(rule.existing):
                self.affinity_counts[(id(rule), i)] = Counter(c)
        for rule in topo.anti_affinity.values():
            for i, c in enumerate(rule.existing):
                self.anti_counts[(id(rule), i)] = Counter(c)
        # Inverse anti-affinity: terms of bound or placed pods, with the domains they hold.
        self.blocking: list[tuple[AffinityTerm, Counter[str]]] = []
        for term, value in topo.existing_anti:
            self.blocking.append((term, Counter({value: 1})))
        self.blocking_index: dict[tuple[int, int], int] = {}
        self._raises: dict[int, list[SpreadRule]] = {}
        self._matches_affinity: dict[int, list[AffinityRule]] = {}
        self._matches_anti: dict[int, list[tuple[AffinityRule, int]]] = {}
        templates = [g.template for g in problem.groups]
        all_spread = [r for rules in topo.spread.values() for r in rules]
        ns_labels = problem.namespace_labels
        for tpl in templates:
            self._raises[id(tpl)] = [r for r in all_spread if r.counts(tpl.namespace, tpl.labels)]
            self._matches_affinity[id(tpl)] = [
                rule for rule in topo.affinity.values()
                if all(t.matches(tpl.namespace, tpl.labels, ns_labels) for t in rule.terms)
            ]
            self._matches_anti[id(tpl)] = [
                (rule, i) for rule in topo.anti_affinity.values()
                for i, t in enumerate(rule.terms) if t.matches(tpl.namespace, tpl.labels, ns_labels)
            ]
        self.claims_created = 0

    # ---------------------------------------------------------------------------------- new nodes
    def new_slot(self, pool: NodePool, options: list[LaunchOption]) -> Slot:
        self.claims_created += 1
        return Slot(len(self.slots), f"{pool.name}-claim-{self.claims_created}", pool=pool, options=options)

    # ---------------------------------------------------------------------------------- checks
    def spread_min(self, rule: SpreadRule) -> int:
        counts = self.spread_counts[id(rule)]
        if rule.hostname:
            domains = [s.name for s in self.slots if self._slot_counts_for(rule, s)]
        else:
            domains = list(rule.static_domains())
        if len(domains) < rule.min_domains or not domains:
            return 0
        return min(counts.get(d, 0) for d in domains)

    def _slot_counts_for(self, rule: SpreadRule, slot: Slot) -> bool:
        if slot.existing is not None:
            return slot.name in rule.existing_domains
        return any(rule.option_counts(o) for o in slot.options)

    def try_place(self, gi: GroupInfo, pod: Pod, slot: Slot, attempt: Attempt, commit: bool = True) -> bool:
        """Check every rule for `pod` on `slot`; on success narrow the slot and record counts."""
        options, _ = self.evaluate(gi, slot, attempt)
        if options is None:
            return False
        if commit:
            self._commit(gi, pod, slot, options)
        return True

    def evaluate(self, gi: GroupInfo, slot: Slot, attempt: Attempt) -> tuple[list[LaunchOption] | None, str]:
        """The slot's launch options left after adding one pod of `gi`, or None and the first failing rule."""
        tpl = gi.template
        options = slot.options
        if slot.existing is not None:
            free = slot.existing.free - slot.requests
            short = tpl.requests.shortfalls(free)
            if short:
                return None, insufficient(short[0])
            if attempt.node_preference is not None and not attempt.node_preference.term.matches(
                    slot.existing.node.labels, slot.name):
                return None, NODE_AFFINITY
        else:
            total = slot.requests + tpl.requests
            options = [o for o in options if o.index in gi.option_ids and total.fits_in(o.free)]
            if not attempt.tolerate_prefer_no_schedule:
                options = [o for o in options if gi.tier.get(o.index, 0) < PREFER_NO_SCHEDULE_TIER]
            if attempt.node_preference is not None:
                term = attempt.node_preference.term
                options = [o for o in options if term.matches(o.labels, "")]
            if not options:
                return None, "exceeds node resources"
        if tpl.host_ports and any(p.conflicts(q) for p in tpl.host_ports for q in slot.host_ports):
            return None, HOST_PORTS
        rules = [r for r in self.problem.topology.rules_for(tpl) if r.hard] + list(attempt.soft_spread)
        for rule in rules:
            narrowed = self._check_spread(rule, slot, options)
            if narrowed is None:
                return None, self.spread_reason(rule, slot)
            options = narrowed
        aff = self.problem.topology.affinity.get(id(tpl))
        if aff is not None:
            narrowed = self._check_affinity(aff, slot, options)
            if narrowed is None:
                return None, POD_AFFINITY
            options = narrowed
        anti = self.problem.topology.anti_affinity.get(id(tpl))
        if anti is not None:
            for i, anti_term in enumerate(anti.terms):
                narrowed = self._avoid(slot, options, anti_term.key, self.anti_counts[(id(anti), i)])
                if narrowed is None:
                    return None, POD_ANTI_AFFINITY
                options = narrowed
        for blocking_term, blocked in self.blocking:
            if blocking_term.matches(tpl.namespace, tpl.labels, self.problem.namespace_labels):
                narrowed = self._avoid(slot, options, blocking_term.key, blocked)
                if narrowed is None:
                    return None, EXISTING_ANTI_AFFINITY
                options = narrowed
        return options, ""

    def spread_reason(self, rule: SpreadRule, slot: Slot) -> str:
        """kube-scheduler's reason on existing nodes; Karpenter's topology error on new ones."""
        if slot.existing is not None:
            if slot.name not in rule.existing_domains:
                return SPREAD_MISSING_LABEL
            return SPREAD
        counts = self.spread_counts[id(rule)]
        domains = [slot.name] if rule.hostname else sorted(rule.static_domains())
        pod_domains = (f"{rule.key} In [{' '.join(sorted(rule.pod_values))}]" if rule.pod_values is not None
                       else f"{rule.key} Exists")
        node_values = sorted(slot.values(rule.key))
        node_domains = f"{rule.key} In [{' '.join(node_values)}]" if node_values else f"{rule.key} DoesNotExist"
        text = (f"unsatisfiable topology constraint for topology spread, key={rule.key} "
                f"(counts = {rule.describe_counts(counts, domains)}, podDomains = {pod_domains}, "
                f"nodeDomains = {node_domains}; maxSkew {rule.max_skew}, min {self.spread_min(rule)}"
                + (f", minDomains {rule.min_domains}" if rule.constraint.min_domains else "") + ")")
        return text + self._fargate_domain_note(rule, counts)

    def _fargate_domain_note(self, rule: SpreadRule, counts: Counter[str]) -> str:
        """Say so when existing Fargate nodes are the domains holding the global minimum down."""
        minimum = self.spread_min(rule)
        holders = sorted(
            name for name, domain in rule.existing_domains.items()
            if counts.get(domain, 0) == minimum and any(
                s.existing is not None and s.name == name and s.existing.node.is_fargate for s in self.slots)
        )
        if not holders:
            return ""
        policy = "Honor" if rule.constraint.honors_taints else "Ignore"
        return (f"; existing Fargate node(s) {', '.join(holders[:5])} count as {rule.key} domains "
                f"(nodeTaintsPolicy {policy}) and hold the minimum at {minimum}; "
                "set nodeTaintsPolicy: Honor to leave them out")

    def _check_spread(self, rule: SpreadRule, slot: Slot, options: list[LaunchOption]) -> list[LaunchOption] | None:
        counts = self.spread_counts[id(rule)]
        own = 1 if rule.self_match else 0
        if slot.existing is not None:
            domain = rule.existing_domains.get(slot.name)
            if domain is None:
                return None
            if rule.pod_values is not None and domain not in rule.pod_values:
                return None
            return options if counts.get(domain, 0) + own - self.spread_min(rule) <= rule.max_skew else None
        if rule.hostname:
            # Karpenter: a new node is always a fresh domain, so the global minimum is 0.
            eligible = [o for o in options if rule.option_counts(o)]
            if not eligible:
                return None
            return eligible if counts.get(slot.name, 0) + own <= rule.max_skew else None
        domains = rule.static_domains()
        minimum = self.spread_min(rule)
        allowed: dict[str, int] = {}
        for o in options:
            value = o.labels.get(rule.key)
            if value is None or value not in domains or not rule.option_counts(o):
                continue
            count = counts.get(value, 0)
            if count + own - minimum <= rule.max_skew:
                allowed[value] = count
        if not allowed:
            return None
        # Karpenter collapses the node to the valid domain with the lowest count.
        best = min(allowed.items(), key=lambda kv: (kv[1], self._cheapest(options, rule.key, kv[0]), kv[0]))[0]
        return [o for o in options if o.labels.get(rule.key) == best]

    @staticmethod
    def _cheapest(options: Sequence[LaunchOption], key: str, value: str) -> float:
        return min((o.price for o in options if o.labels.get(key) == value), default=float("inf"))

    def _check_affinity(self, rule: AffinityRule, slot: Slot, options: list[LaunchOption]) -> list[LaunchOption] | None:
        for i, term in enumerate(rule.terms):
            counts = self.affinity_counts[(id(rule), i)]
            values = slot.values(term.key, options)
            if not values:
                return None
            allowed = {v for v in values if counts.get(v, 0) > 0}
            if not allowed:
                if sum(counts.values()) == 0 and rule.self_match:
                    # First pod of a self-affine group opens the domain; later replicas must join it.
                    if slot.existing is None and term.key != HOSTNAME:
                        best = min(values, key=lambda v: (self._cheapest(options, term.key, v), v))
                        allowed = {best}
                    else:
                        allowed = values
                else:
                    return None
            if slot.existing is None and term.key != HOSTNAME:
                options = [o for o in options if o.labels.get(term.key) in allowed]
        return options

    def _avoid(self, slot: Slot, options: list[LaunchOption], key: str, blocked: Counter[str]) -> list[LaunchOption] | None:
        values = slot.values(key, options)
        if not values:
            return options  # a node without the key passes an anti-affinity term
        bad = {v for v in values if blocked.get(v, 0) > 0}
        if not bad:
            return options
        if slot.existing is not None or key == HOSTNAME:
            return None
        kept = [o for o in options if o.labels.get(key) not in bad]
        return kept or None

    # ---------------------------------------------------------------------------------- recording
    def _commit(self, gi: GroupInfo, pod: Pod, slot: Slot, options: list[LaunchOption]) -> None:
        tpl = gi.template
        if slot.new:
            slot.options = options
        slot.requests = slot.requests + tpl.requests
        slot.members.append((gi, pod))
        slot.host_ports.extend(tpl.host_ports)
        for spread in self._raises[id(tpl)]:
            if not self._slot_counts_for(spread, slot):
                continue
            if slot.existing is not None:
                domain = spread.existing_domains.get(slot.name)
                values = set() if domain is None else {domain}
            else:
                values = slot.values(spread.key)
            if len(values) == 1:
                self.spread_counts[id(spread)][next(iter(values))] += 1
        for aff in self._matches_affinity[id(tpl)]:
            for i, term in enumerate(aff.terms):
                values = slot.values(term.key)
                if len(values) == 1:
                    self.affinity_counts[(id(aff), i)][next(iter(values))] += 1
        for anti_rule, i in self._matches_anti[id(tpl)]:
            for v in slot.values(anti_rule.terms[i].key):
                self.anti_counts[(id(anti_rule), i)][v] += 1
        anti = self.problem.topology.anti_affinity.get(id(tpl))
        if anti is not None:
            for i, term in enumerate(anti.terms):
                key = (id(anti), i)
                if key not in self.blocking_index:
                    self.blocking_index[key] = len(self.blocking)
                    self.blocking.append((term, Counter()))
                blocked = self.blocking[self.blocking_index[key]][1]
                for v in slot.values(term.key):
                    blocked[v] += 1

    def add_slot(self, slot: Slot) -> None:
        slot.index = len(self.slots)
        self.slots.append(slot)


def template_attempts(tpl: PodTemplate, problem: Problem) -> list[Attempt]:
    """Karpenter's preference relaxation, one step at a time (preferences.go order)."""
    prefs = sorted(tpl.affinity.preferred, key=lambda p: -p.weight)
    soft = tuple(r for r in problem.topology.rules_for(tpl) if not r.hard)
    attempts = [Attempt(p, soft) for p in prefs]
    for k in range(len(soft), -1, -1):
        attempts.append(Attempt(None, soft[:k]))
    if any(t.effect == "PreferNoSchedule" for p in problem.pools for t in p.taints):
        attempts.append(Attempt(None, (), True))
    return attempts
