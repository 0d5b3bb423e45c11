"""Domain counts of the plan under construction (Karpenter's `topology.go` and `topologygroup.go`): per
spread rule and per (anti-)affinity term, how many selected pods each domain holds, and the blocking
terms (required anti-affinity of bound and placed pods) with the domains they hold.

`scheduling/topology.py` builds the rules once from the problem; this module keeps their counts as pods
are placed. Recording follows Karpenter (`topology.go Record`): spread and affinity counts move only when
a node's domain is decided, anti-affinity marks every domain the node might still land in.
Rules that count the same pods on the same domains from the same start share one `DomainCounts`
(replica sets of one app repeat a constraint), so recording a pod updates it once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from itertools import count

from karpplan.constraints.spread_counts import domain_minimum, node_cap, skew_limit
from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import PodTemplate
from karpplan.model.requirements import Requirements
from karpplan.model.selectors import SelectorIndex
from karpplan.scheduling.nodeclaim import PlannedNode
from karpplan.scheduling.option_masks import OptionMasks
from karpplan.scheduling.preferences import Attempt, StrictRequirements
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import AffinityRule, AffinityTerm, SpreadRule


class DomainCounts(Counter[str]):
    """Pods per domain of one topology group, with a stable `uid` and the domains above each limit it
    was asked about (`over`), kept up to date by `bump`."""

    def __init__(self, uid: int, start: Mapping[str, int] | None = None) -> None:
        super().__init__(start)
        self.uid = uid
        self.watchers: list[tuple[int, set[str]]] = []  # (limit, domains above it)

    def over(self, limit: int) -> set[str]:
        """The domains whose count is above `limit`, kept up to date as pods are recorded."""
        for seen, names in self.watchers:
            if seen == limit:
                return names
        names = {v for v, n in self.items() if n > limit}
        self.watchers.append((limit, names))
        return names

    def bump(self, value: str) -> None:
        n = self[value] + 1
        self[value] = n
        for limit, names in self.watchers:
            if n > limit:
                names.add(value)


class TopologyCounts:
    def __init__(self, problem: Problem, masks: OptionMasks, requirements: StrictRequirements,
                 slots: list[PlannedNode]) -> None:
        self.problem = problem
        self.masks = masks
        self.requirements = requirements
        self.slots = slots  # the plan's nodes (shared with the state, which adds to it)
        self._uids = count()
        self._static_domains: dict[int, list[str]] = {}
        self._attempt_domains: dict[tuple[int, frozenset[str] | None], list[str]] = {}
        self._rules: dict[tuple[int, tuple[int, ...]], list[SpreadRule]] = {}
        self._hostname_checks: dict[tuple[int, tuple[int, ...]], tuple[int, list[set[str]]]] = {}
        # Equal terms (many templates repeat one selector) share an id, and their matches per template.
        self._term_ids: dict[int, int] = {}  # term uid -> interned id
        self._interned: dict[Hashable, int] = {}
        self._term_reps: dict[int, AffinityTerm] = {}
        self._term_matches: dict[tuple[int, int], bool] = {}
        shared: dict[Hashable, DomainCounts] = {}  # counts of equal rules and terms, by what makes them equal
        spread = self._spread_counts(shared)
        affinity_record, anti_record = self._term_counts(shared)
        self._blocking_counts()
        self._records(spread, affinity_record, anti_record)

    def _spread_counts(self, shared: dict[Hashable, DomainCounts]
                       ) -> tuple[list[SpreadRule], list[int], dict[int, SpreadRule]]:
        """One `DomainCounts` per distinct spread rule (same pods, domains and start): every rule, its id
        (equal ids count the same pods), one rule per id."""
        all_spread = [r for rules in self.problem.topology.spread.values() for r in rules]
        spread_ids: list[int] = []
        spread_reps: dict[int, SpreadRule] = {}  # one rule per id: equal ids count the same pods
        interned: dict[Hashable, int] = {}
        self.spread: dict[int, DomainCounts] = {}  # rule uid -> counts
        for r in all_spread:
            sid = interned.setdefault(_spread_key(r), len(interned))
            spread_ids.append(sid)
            spread_reps.setdefault(sid, r)
        rules_per_sid = Counter(spread_ids)
        for r, sid in zip(all_spread, spread_ids, strict=True):
            mask_id = self.masks.rule_mask_id(r)  # numbered in rule order, as always
            if rules_per_sid[sid] == 1:  # no other rule can share its counts: skip the key (domains of every node)
                self.spread[r.uid] = DomainCounts(next(self._uids), r.base_counts)
                continue
            key: Hashable = ("spread", sid, r.key, mask_id, frozenset(r.existing_domains.items()),
                             frozenset(r.base_counts.items()))
            counts = shared.get(key)
            if counts is None:
                counts = shared[key] = DomainCounts(next(self._uids), r.base_counts)
            self.spread[r.uid] = counts
        return all_spread, spread_ids, spread_reps

    def _term_counts(self, shared: dict[Hashable, DomainCounts]
                     ) -> tuple[dict[tuple[int, ...], list[tuple[str, DomainCounts]]],
                                dict[int, list[tuple[str, DomainCounts]]]]:
        """Counts per (anti-)affinity term, preferred or not (Karpenter keeps a topology group for every term
        and counts every pod it selects); per term ids, the distinct (key, counts) a matching pod is
        recorded in."""
        topo = self.problem.topology
        self.affinity: dict[tuple[int, int], DomainCounts] = {}  # (rule uid, term index) -> counts
        self.anti: dict[tuple[int, int], DomainCounts] = {}
        affinity_record: dict[tuple[int, ...], list[tuple[str, DomainCounts]]] = {}
        anti_record: dict[int, list[tuple[str, DomainCounts]]] = {}
        preferred_affinity = [r for rules in topo.preferred_affinity.values() for r in rules]
        preferred_anti = [r for rules in topo.preferred_anti.values() for r in rules]
        for rule in [*topo.affinity.values(), *preferred_affinity]:
            tids = tuple(self._term_id(t) for t in rule.terms)
            record = affinity_record.setdefault(tids, [])
            for i, c in enumerate(rule.existing):
                key: Hashable = ("affinity", tids, i, frozenset(c.items()))
                counts = shared.get(key)
                if counts is None:
                    counts = shared[key] = DomainCounts(next(self._uids), c)
                    record.append((rule.terms[i].key, counts))
                self.affinity[(rule.uid, i)] = counts
        for rule in [*topo.anti_affinity.values(), *preferred_anti]:
            for i, c in enumerate(rule.existing):
                tid = self._term_id(rule.terms[i])
                key = ("anti", tid, frozenset(c.items()))
                counts = shared.get(key)
                if counts is None:
                    counts = shared[key] = DomainCounts(next(self._uids), c)
                    anti_record.setdefault(tid, []).append((rule.terms[i].key, counts))
                self.anti[(rule.uid, i)] = counts
        return affinity_record, anti_record

    def _blocking_counts(self) -> None:
        """Inverse anti-affinity: terms of bound or placed pods, with the domains they hold."""
        topo = self.problem.topology
        self.blocking: list[tuple[AffinityTerm, Counter[str]]] = []
        for term, value in topo.existing_anti:
            self.blocking.append((term, Counter({value: 1})))
        self.blocking_index: dict[tuple[int, int], int] = {}  # (rule uid, term index) -> into blocking
        # The blocking counts summed per distinct term: a pod is blocked from a domain when any term
        # matching it holds a pod there, so equal terms (one per replica set) act as one.
        self.merged: dict[int, DomainCounts] = {}
        self._merged_tids: list[int] = []  # in order of first appearance
        for term, value in topo.existing_anti:
            self._merged_counts(term)[value] += 1
        # Per template: how many merged blocking terms were checked, and the ids of those matching it.
        self._blocking_for: dict[int, tuple[int, list[int]]] = {}

    def _records(self, spread: tuple[list[SpreadRule], list[int], dict[int, SpreadRule]],
                 affinity_record: dict[tuple[int, ...], list[tuple[str, DomainCounts]]],
                 anti_record: dict[int, list[tuple[str, DomainCounts]]]) -> None:
        """What a pod of each group is recorded in: the spread rules it raises, the affinity and anti-affinity
        counts of the terms it matches. Selectors are indexed by the labels they require, so a template is
        tested only against the rules and terms that may select it (10,000 Deployments spreading over their
        own labels are 10,000 selectors)."""
        all_spread, spread_ids, spread_reps = spread
        self._raises: dict[int, list[SpreadRule]] = {}
        self._raised: dict[int, list[tuple[SpreadRule, list[DomainCounts]]]] = {}
        self._affinity_record: dict[int, list[tuple[str, DomainCounts]]] = {}
        self._anti_record: dict[int, list[tuple[str, DomainCounts]]] = {}
        spread_index: SelectorIndex[int] = SelectorIndex()
        for sid, r in spread_reps.items():
            spread_index.add(sid, r.owner.namespace, r.selector)
        rules_of_sid: dict[int, list[tuple[int, SpreadRule]]] = {}
        for position, (r, sid) in enumerate(zip(all_spread, spread_ids, strict=True)):
            rules_of_sid.setdefault(sid, []).append((position, r))
        term_index: SelectorIndex[int] = SelectorIndex()
        for tid, term in self._term_reps.items():
            # A term with a namespace selector or list may select pods of other namespaces: filed for all.
            scoped = term.owner_namespace if own_namespace_only(term) else None
            term_index.add(tid, scoped, term.selector)
        records_of_tid: dict[int, list[tuple[int, ...]]] = {}
        for tids in affinity_record:
            for tid in set(tids):
                records_of_tid.setdefault(tid, []).append(tids)
        record_order = {tids: i for i, tids in enumerate(affinity_record)}
        anti_order = {tid: i for i, tid in enumerate(anti_record)}
        for group_info in self.problem.groups:
            pod_template = group_info.template
            namespace, labels = pod_template.namespace, pod_template.labels
            raised = sorted(sid for sid in spread_index.candidates(namespace, labels)
                            if spread_reps[sid].counts(namespace, labels))
            self._raises[group_info.index] = [r for _, r in sorted(pr for sid in raised for pr in rules_of_sid[sid])]
            matched = {tid for tid in term_index.candidates(namespace, labels) if self._matches(tid, pod_template)}
            records = {tids for tid in matched for tids in records_of_tid.get(tid, ()) if matched.issuperset(tids)}
            if () in affinity_record:
                records.add(())
            self._affinity_record[group_info.index] = [
                entry for tids in sorted(records, key=record_order.__getitem__) for entry in affinity_record[tids]
            ]
            self._anti_record[group_info.index] = [
                entry for tid in sorted(matched & anti_record.keys(), key=anti_order.__getitem__)
                for entry in anti_record[tid]
            ]

    def _term_id(self, term: AffinityTerm) -> int:
        hit = self._term_ids.get(term.uid)
        if hit is None:
            hit = self._term_ids[term.uid] = self._interned.setdefault(_term_key(term), len(self._interned))
            self._term_reps.setdefault(hit, term)
        return hit

    def _matches(self, tid: int, pod_template: PodTemplate) -> bool:
        """Does a pod of the template match the term with this id (`AffinityTerm.matches`)?"""
        key = (tid, id(pod_template))
        hit = self._term_matches.get(key)
        if hit is None:
            term = self._term_reps[tid]
            hit = self._term_matches[key] = term.matches(pod_template.namespace, pod_template.labels, self.problem.namespace_labels)
        return hit

    def _merged_counts(self, term: AffinityTerm) -> DomainCounts:
        tid = self._term_id(term)
        counts = self.merged.get(tid)
        if counts is None:
            counts = self.merged[tid] = DomainCounts(next(self._uids))
            self._merged_tids.append(tid)
        return counts

    def blocking_tids(self, pod_template: PodTemplate) -> list[int]:
        """Ids of the blocking terms (anti-affinity of bound and placed pods) matching the template."""
        checked, matching = self._blocking_for.get(id(pod_template), (0, []))
        if checked < len(self._merged_tids):
            matching = list(matching)
            for tid in self._merged_tids[checked:]:
                if self._matches(tid, pod_template):
                    matching.append(tid)
            self._blocking_for[id(pod_template)] = (len(self._merged_tids), matching)
        return matching

    def blocking_key(self, tid: int) -> str:
        """The topology key of the blocking term with this id."""
        return self._term_reps[tid].key

    def rules_for(self, pod_template: PodTemplate, attempt: Attempt) -> list[SpreadRule]:
        """The spread rules a pod of the template must keep at this attempt: hard ones, then attempted soft ones."""
        key = (id(pod_template), tuple(r.uid for r in attempt.soft_spread))
        rules = self._rules.get(key)
        if rules is None:
            rules = [r for r in self.problem.topology.rules_for(pod_template) if r.hard] + list(attempt.soft_spread)
            self._rules[key] = rules
        return rules

    def domains(self, rule: SpreadRule, pod_values: frozenset[str] | None) -> list[str]:
        """The rule's eligible non-hostname domains within these podDomains."""
        if pod_values is rule.pod_values:
            domains = self._static_domains.get(rule.uid)
            if domains is None:
                domains = self._static_domains[rule.uid] = list(rule.static_domains())
            return domains
        key = (rule.uid, pod_values)
        domains = self._attempt_domains.get(key)
        if domains is None:
            domains = self._attempt_domains[key] = list(rule.domains_within(pod_values))
        return domains

    def slot_counts_for(self, rule: SpreadRule, slot: PlannedNode) -> bool:
        """Is the node an eligible domain of the rule (a new node: may it still be one)?"""
        if slot.existing is not None:
            return slot.name in rule.existing_domains
        mask_id = self.masks.rule_mask_id(rule)
        hit = slot.counts.get(mask_id)
        if hit is None:
            hit = slot.counts[mask_id] = bool(self.masks.rule_masks[mask_id][slot.rows()].any())
        return hit

    def spread_min(self, rule: SpreadRule, attempt: Attempt | None = None) -> int:
        """The global minimum over the rule's eligible domains within the pod's podDomains at this
        attempt (without one: every required term ORed)."""
        if rule.hostname:
            # Karpenter (`topologygroup.go nextDomainTopologySpread`): "Karpenter can always create a new domain", so a
            # hostname spread's global minimum is 0 and a node holds at most maxSkew matching pods (aws#4666); its
            # consolidation simulation asks the same scheduler, so it never stacks replicas either
            return 0
        counts = self.spread[rule.uid]
        domains = self.domains(rule, self.requirements.pod_values(rule, attempt))
        return domain_minimum(rule, counts, domains)

    def opens(self, rule: AffinityRule, i: int, strict: Sequence[Requirements]) -> bool:
        """May a pod with these strict requirements (ORed) open a domain for term `i` of the rule?

        Karpenter (`topologygroup.go nextDomainAffinity`): when it matches its own selector and no matching
        pod is in a domain its podDomains allow (its strict requirement on the key; domains outside them
        do not count). kube-scheduler asks for no matching pod anywhere.
        """
        if not rule.self_match:
            return False
        counts = self.affinity[(rule.uid, i)]
        key = rule.terms[i].key
        reqs = [alt.get(key) for alt in strict]
        if any(r is None for r in reqs):
            return not any(n > 0 for n in counts.values())  # podDomains: key Exists
        return not any(n > 0 and any(r is not None and r.has(v) for r in reqs) for v, n in counts.items())

    def affinity_screen(self, pod_template: PodTemplate, attempt: Attempt | None = None) -> list[tuple[str, set[str]]]:
        """(key, domains holding a pod it needs) per required affinity term of the template (and preferred
        one the attempt enforces) that no first pod may open: a new node with none of these domains among
        its options fails `_check_affinity` however it narrows. Without an attempt, a term is left out
        when a first pod may open a domain under any of the pod's required node-affinity terms."""
        required = self.problem.topology.affinity.get(id(pod_template))
        preferred = () if attempt is None else attempt.pod_affinity
        screen: list[tuple[str, set[str]]] = []
        if required is None and not preferred:
            return screen
        if attempt is None:
            alternatives = [[alt] for alt in self.requirements.of(pod_template, None)]
        else:
            alternatives = [self.requirements.of(pod_template, attempt)]
        for rule in preferred if required is None else (required, *preferred):
            for i, term in enumerate(rule.terms):
                counts = self.affinity[(rule.uid, i)]
                if any(self.opens(rule, i, strict) for strict in alternatives):
                    continue  # the first pod may open a domain
                screen.append((term.key, {v for v, n in counts.items() if n > 0}))
        return screen

    def spread_screen(self, pod_template: PodTemplate, attempt: Attempt) -> list[tuple[str, set[str]]]:
        """(key, domains a pod may take) per zonal (non-hostname) spread rule it keeps at this attempt, where
        some domain may not take it: a new node with none of these domains among its options fails
        `_check_spread` however it narrows (its eligible domains are among its options' values)."""
        screen: list[tuple[str, set[str]]] = []
        for rule in self.rules_for(pod_template, attempt):
            if rule.hostname:
                continue
            counts = self.spread[rule.uid]
            limit = skew_limit(rule, self.spread_min(rule, attempt)) - (1 if rule.self_match else 0)
            if not any(n > limit for n in counts.values()):
                continue  # every domain may take it
            _, names, _ = self.masks.table.labels(rule.key)
            screen.append((rule.key, {v for v in names if counts.get(v, 0) <= limit}))
        return screen

    def name_blocks(self, pod_template: PodTemplate, attempt: Attempt) -> list[set[str]]:
        """Names of the new nodes a pod of the template fails on by their name alone, whatever their
        options: its hostname rules' counts over their limit (hard and attempted spread, where a new
        node is its own domain with minimum 0; anti-affinity; blocking terms of placed pods)."""
        key = (id(pod_template), attempt.topology_key)
        blocking = self.blocking_tids(pod_template)
        cached = self._hostname_checks.get(key)
        if cached is not None and cached[0] == len(blocking):
            return cached[1]
        blocks: dict[tuple[int, int], set[str]] = {}  # (counts uid, limit) -> the domains over it
        for rule in self.rules_for(pod_template, attempt):
            if rule.hostname:
                counts, limit = self.spread[rule.uid], node_cap(rule) - (1 if rule.self_match else 0)
                blocks.setdefault((counts.uid, limit), counts.over(limit))
        anti = self.problem.topology.anti_affinity.get(id(pod_template))
        for anti_rule in attempt.pod_anti_affinity if anti is None else (anti, *attempt.pod_anti_affinity):
            for i, term in enumerate(anti_rule.terms):
                if term.key == HOSTNAME:
                    counts = self.anti[(anti_rule.uid, i)]
                    blocks.setdefault((counts.uid, 0), counts.over(0))
        for tid in blocking:
            if self._term_reps[tid].key == HOSTNAME:
                counts = self.merged[tid]
                blocks.setdefault((counts.uid, 0), counts.over(0))
        distinct = list(blocks.values())
        self._hostname_checks[key] = (len(blocking), distinct)
        return distinct

    def record(self, group_info: GroupInfo, slot: PlannedNode) -> None:
        """Count one more pod of the group on the node (its domains as far as they are decided)."""
        pod_template = group_info.template
        if slot.existing is not None:
            done: set[int] = set()
            for spread in self._raises[group_info.index]:
                counts = self.spread[spread.uid]
                if counts.uid in done or not self.slot_counts_for(spread, slot):
                    continue
                done.add(counts.uid)
                domain = spread.existing_domains.get(slot.name)
                if domain is not None:
                    counts.bump(domain)
        else:
            for spread, counters in self._raise_groups(group_info):
                if not self.slot_counts_for(spread, slot):
                    continue
                values = slot.values_in(spread.key)
                if len(values) == 1:
                    value = next(iter(values))
                    for counts in counters:
                        counts.bump(value)
        for term_key, counts in self._affinity_record[group_info.index]:
            values = slot.values_in(term_key)
            if len(values) == 1:
                counts.bump(next(iter(values)))
        for term_key, counts in self._anti_record[group_info.index]:
            for v in slot.values_in(term_key):
                counts.bump(v)
        anti = self.problem.topology.anti_affinity.get(id(pod_template))
        if anti is not None:
            for i, term in enumerate(anti.terms):
                key = (anti.uid, i)
                if key not in self.blocking_index:
                    self.blocking_index[key] = len(self.blocking)
                    self.blocking.append((term, Counter()))
                blocked = self.blocking[self.blocking_index[key]][1]
                merged = self._merged_counts(term)
                for v in slot.values_in(term.key):
                    blocked[v] += 1
                    merged.bump(v)

    def _raise_groups(self, group_info: GroupInfo) -> list[tuple[SpreadRule, list[DomainCounts]]]:
        """The spread rules a group's pods count for, grouped by what decides that on a new node
        (their eligibility mask and key): one rule of each group, and the counts of all."""
        groups = self._raised.get(group_info.index)
        if groups is None:
            by_key: dict[tuple[int, str], tuple[SpreadRule, list[DomainCounts]]] = {}
            seen: set[int] = set()
            for spread in self._raises[group_info.index]:
                counts = self.spread[spread.uid]
                if counts.uid in seen:
                    continue  # shared by an earlier rule, which decides the same
                seen.add(counts.uid)
                key = (self.masks.rule_mask_id(spread), spread.key)
                by_key.setdefault(key, (spread, []))[1].append(counts)
            groups = self._raised[group_info.index] = list(by_key.values())
        return groups


def _spread_key(rule: SpreadRule) -> Hashable:
    """Rules with equal keys count the same pods (`SpreadRule.counts`)."""
    try:
        return (rule.owner.namespace, hash(rule.selector), rule.selector)
    except TypeError:
        return ("uid", rule.uid)


def own_namespace_only(term: AffinityTerm) -> bool:
    """Does the term select pods of its owner's namespace only (no namespaces, no namespace selector)?"""
    return not term.term.namespaces and term.term.namespace_selector is None


def _term_key(term: AffinityTerm) -> Hashable:
    """Terms with equal keys match the same pods (`AffinityTerm.matches`)."""
    try:
        return (term.owner_namespace, hash((term.term, term.selector)), term.term, term.selector)
    except TypeError:
        return ("uid", term.uid)
