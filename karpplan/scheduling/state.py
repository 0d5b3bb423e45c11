"""A plan under construction: nodes (existing and new), the pods added to them, and topology counts.

This is the per-placement rule book shared by the Karpenter simulation and the optimiser's decoder.
New nodes are Karpenter NodeClaims: they keep a *set* of possible launch options (instance types, zones,
capacity types of one pool) that narrows as pods join, and the cheapest survivor is launched at the end.
Recording follows Karpenter (`topology.go Record`): spread and affinity counts move only when a node's
domain is decided, anti-affinity marks every domain the node might still land in.

Internally a new node's options are an ascending array of rows of the problem's `OptionTable`, so
narrowing is a vectorised mask; `Slot.options` gives them as `LaunchOption`s, in the same order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import HostPort, Pod, PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirements
from karpplan.model.resources import EMPTY, Resources
from karpplan.model.selectors import NodeSelectorTerm, PreferredTerm
from karpplan.scheduling.candidates import (
    BoolArray,
    IndexArray,
    LaunchOption,
    OptionTable,
    cache_key,
    option_table,
)
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
from karpplan.scheduling.topology import AffinityRule, AffinityTerm, SpreadRule, domain_values

_NO_ROWS: IndexArray = np.zeros(0, dtype=np.intp)


class Slot:
    """A node of the plan: an existing node, or a new node with its remaining launch options."""

    def __init__(self, index: int, name: str, existing: ExistingNodeInfo | None = None,
                 pool: NodePool | None = None, options: list[LaunchOption] | None = None,
                 requests: Resources = EMPTY, members: list[tuple[GroupInfo, Pod]] | None = None,
                 host_ports: list[HostPort] | None = None) -> None:
        self.index = index
        self.name = name
        self.existing = existing
        self.pool = pool
        self.requests = requests
        self.members: list[tuple[GroupInfo, Pod]] = [] if members is None else members
        self.host_ports: list[HostPort] = [] if host_ports is None else host_ports
        self._list: list[LaunchOption] | None = [] if options is None else options
        self._table: OptionTable | None = None
        self._rows: IndexArray | None = None
        self._caches()

    def _caches(self) -> None:
        # Facts about the current options, dropped when they change.
        self.domains: dict[str, set[str]] = {}  # key -> domain values of the current options (new node)
        self._missing: dict[str, bool] = {}  # key -> some option lacks it
        self._free: dict[str, npt.NDArray[Any]] = {}  # resource -> free room per option
        self._most: dict[str, int] = {}  # resource -> most free room of an option
        self._least: dict[str, int] = {}  # resource -> least free room of an option
        self._domain_codes: dict[int, list[int]] = {}  # id(spread rule) -> codes of its eligible domains
        self._counts: dict[int, bool] = {}  # rule mask id -> some current option is an eligible domain
        self._smallest: LaunchOption | None = None
        # Groups that found no option with room here: final, as a node only fills up and narrows.
        self.full_for: set[int] = set()
        # Per resource, at least the most any option has left (max free minus requests; an upper bound).
        self.headroom: dict[str, int] = {}

    @property
    def options(self) -> list[LaunchOption]:
        if self._list is None:
            assert self._table is not None and self._rows is not None
            self._list = self._table.rows(self._rows)
        return self._list

    @options.setter
    def options(self, options: list[LaunchOption]) -> None:
        self._list = options
        self._rows = None
        self._caches()

    def narrow(self, rows: IndexArray) -> None:
        """Keep only these rows (a subset of the current ones)."""
        full_for, headroom = self.full_for, self.headroom
        self._rows = rows
        self._list = None
        self._caches()
        self.full_for, self.headroom = full_for, headroom

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

    def __repr__(self) -> str:
        return f"Slot({self.index}, {self.name!r}, members={len(self.members)})"


@dataclass
class Attempt:
    """One try at placing a pod: which preferences are enforced as requirements, and which required
    node-affinity term Karpenter uses (`node_term`: term[0] first, the next one after each relaxation;
    None: the terms ORed, as kube-scheduler, which for a pod with one term or none is the same).

    The defaults enforce no preference: `Attempt(None, (), True)` is the fully relaxed pod.
    """

    node_preference: PreferredTerm | None = None
    soft_spread: tuple[SpreadRule, ...] = ()
    tolerate_prefer_no_schedule: bool = False
    # Preferred pod (anti-)affinity terms still enforced, one rule each (`Topology.preferred_*`).
    pod_affinity: tuple[AffinityRule, ...] = ()
    pod_anti_affinity: tuple[AffinityRule, ...] = ()
    node_term: NodeSelectorTerm | None = None

    @property
    def topology_key(self) -> tuple[int, ...]:
        """Identifies the topology rules the attempt adds (for caches keyed per template)."""
        return (*(id(r) for r in self.soft_spread), -1, *(id(r) for r in self.pod_affinity), -1,
                *(id(r) for r in self.pod_anti_affinity))


def _codes_in(codes: npt.NDArray[np.int32], rows: IndexArray) -> list[int]:
    """The distinct label codes (>= 0) among these rows, ascending."""
    if not len(rows):
        return []
    present = np.bincount(codes[rows] + 1)
    return [int(c) - 1 for c in np.flatnonzero(present).tolist() if c > 0]


class PlacementState:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.table = option_table(problem.options)
        topo = problem.topology
        self.slots: list[Slot] = [
            Slot(i, info.node.name, existing=info, host_ports=list(info.host_ports))
            for i, info in enumerate(problem.existing)
        ]
        # Masks over the option table, built on first use.
        self._group_masks: dict[int, BoolArray] = {}
        self._all_true: dict[tuple[int, int], bool] = {}
        self._tier_masks: dict[int, BoolArray] = {}
        self._rule_masks: list[BoolArray] = []
        self._rule_mask_ids: dict[int, int] = {}  # id(rule) -> index into _rule_masks
        self._mask_ids: dict[Hashable, int] = {}
        self._domain_masks: dict[int, BoolArray] = {}
        self._static_domains: dict[int, list[str]] = {}
        self._attempt_domains: dict[tuple[int, frozenset[str] | None], list[str]] = {}
        # Per (template, required term): Karpenter's strict pod requirements; per (spread rule, term): its podDomains.
        self._strict: dict[tuple[int, int], list[Requirements]] = {}
        self._pod_values: dict[tuple[int, int], frozenset[str] | None] = {}
        self._rules: dict[tuple[int, tuple[int, ...]], list[SpreadRule]] = {}
        self._hostname_checks: dict[tuple[int, tuple[int, ...]], tuple[int, list[set[str]]]] = {}
        self._watch: dict[int, list[tuple[int, set[str]]]] = {}  # id(counts) -> (limit, domains above it)
        # Equal terms (many templates repeat one selector) share an id, and their matches per template.
        self._term_ids: dict[int, tuple[AffinityTerm, int]] = {}
        self._interned: dict[Hashable, int] = {}
        self._term_reps: dict[int, AffinityTerm] = {}
        self._term_matches: dict[tuple[int, int], bool] = {}

        # Counts. Rules that count the same pods on the same domains from the same start share one
        # Counter (replica sets of one app repeat a constraint), so recording a pod updates it once.
        all_spread = [r for rules in topo.spread.values() for r in rules]
        spread_ids: list[int] = []
        spread_reps: dict[int, SpreadRule] = {}  # one rule per id: equal ids count the same pods
        interned: dict[Hashable, int] = {}
        shared: dict[Hashable, Counter[str]] = {}
        self.spread_counts: dict[int, Counter[str]] = {}
        for r in all_spread:
            sid = interned.setdefault(_spread_key(r), len(interned))
            spread_ids.append(sid)
            spread_reps.setdefault(sid, r)
            key: Hashable = ("spread", sid, r.key, self._rule_mask_id(r), frozenset(r.existing_domains.items()),
                             frozenset(r.base_counts.items()))
            counts = shared.get(key)
            if counts is None:
                counts = shared[key] = Counter(r.base_counts)
            self.spread_counts[id(r)] = counts
        self.affinity_counts: dict[tuple[int, int], Counter[str]] = {}
        self.anti_counts: dict[tuple[int, int], Counter[str]] = {}
        # Per term ids: the distinct (key, counts) a matching pod is recorded in.
        affinity_record: dict[tuple[int, ...], list[tuple[str, Counter[str]]]] = {}
        anti_record: dict[int, list[tuple[str, Counter[str]]]] = {}
        preferred_affinity = [r for rules in topo.preferred_affinity.values() for r in rules]
        preferred_anti = [r for rules in topo.preferred_anti.values() for r in rules]
        # Karpenter keeps a topology group for every term, preferred or not, and counts every pod it selects.
        for rule in [*topo.affinity.values(), *preferred_affinity]:
            tids = tuple(self._term_id(t) for t in rule.terms)
            record = affinity_record.setdefault(tids, [])
            for i, c in enumerate(rule.existing):
                key = ("affinity", tids, i, frozenset(c.items()))
                counts = shared.get(key)
                if counts is None:
                    counts = shared[key] = Counter(c)
                    record.append((rule.terms[i].key, counts))
                self.affinity_counts[(id(rule), i)] = counts
        for rule in [*topo.anti_affinity.values(), *preferred_anti]:
            for i, c in enumerate(rule.existing):
                tid = self._term_id(rule.terms[i])
                key = ("anti", tid, frozenset(c.items()))
                counts = shared.get(key)
                if counts is None:
                    counts = shared[key] = Counter(c)
                    anti_record.setdefault(tid, []).append((rule.terms[i].key, counts))
                self.anti_counts[(id(rule), i)] = counts
        # Inverse anti-affinity: terms of bound or placed pods, with the domains they hold.
        self.blocking: list[tuple[AffinityTerm, Counter[str]]] = []
        for term, value in topo.existing_anti:
            self.blocking.append((term, Counter({value: 1})))
        self.blocking_index: dict[tuple[int, int], int] = {}
        # The blocking counts summed per distinct term: a pod is blocked from a domain when any term
        # matching it holds a pod there, so equal terms (one per replica set) act as one.
        self._merged: dict[int, Counter[str]] = {}
        self._merged_tids: list[int] = []  # in order of first appearance
        for term, value in topo.existing_anti:
            self._merged_counts(term)[value] += 1
        # Per template: how many merged blocking terms were checked, and the ids of those matching it.
        self._blocking_for: dict[int, tuple[int, list[int]]] = {}

        # What a pod of each template is recorded in.
        self._raises: dict[int, list[SpreadRule]] = {}
        self._raised: dict[int, list[tuple[SpreadRule, list[Counter[str]]]]] = {}
        self._affinity_record: dict[int, list[tuple[str, Counter[str]]]] = {}
        self._anti_record: dict[int, list[tuple[str, Counter[str]]]] = {}
        for gi in problem.groups:
            tpl = gi.template
            raised = {sid for sid, r in spread_reps.items() if r.counts(tpl.namespace, tpl.labels)}
            self._raises[id(tpl)] = [r for r, sid in zip(all_spread, spread_ids, strict=True) if sid in raised]
            self._affinity_record[id(tpl)] = [
                entry for tids, record in affinity_record.items() if all(self._matches(tid, tpl) for tid in tids)
                for entry in record
            ]
            self._anti_record[id(tpl)] = [
                entry for tid, record in anti_record.items() if self._matches(tid, tpl) for entry in record
            ]
        self.claims_created = 0
        # Slots only fill up when every request is non-negative: then a resource failure is final.
        self._monotone = all(v >= 0 for g in problem.groups for v in g.template.requests.values())

    def _term_id(self, term: AffinityTerm) -> int:
        hit = self._term_ids.get(id(term))
        if hit is None:
            tid = self._interned.setdefault(_term_key(term), len(self._interned))
            self._term_reps.setdefault(tid, term)
            hit = self._term_ids[id(term)] = (term, tid)  # the term is kept alive: its id stays unique
        return hit[1]

    def _matches(self, tid: int, tpl: PodTemplate) -> bool:
        """Does a pod of the template match the term with this id (`AffinityTerm.matches`)?"""
        key = (tid, id(tpl))
        hit = self._term_matches.get(key)
        if hit is None:
            term = self._term_reps[tid]
            hit = self._term_matches[key] = term.matches(tpl.namespace, tpl.labels, self.problem.namespace_labels)
        return hit

    # ---------------------------------------------------------------------------------- new nodes
    def new_slot(self, pool: NodePool, options: list[LaunchOption]) -> Slot:
        self.claims_created += 1
        slot = Slot(len(self.slots), f"{pool.name}-claim-{self.claims_created}", pool=pool, options=options)
        slot._table = self.table
        return slot

    def new_slot_rows(self, pool: NodePool, rows: IndexArray) -> Slot:
        """`new_slot` with the options given as table rows (ascending)."""
        self.claims_created += 1
        slot = Slot(len(self.slots), f"{pool.name}-claim-{self.claims_created}", pool=pool)
        slot._table = self.table
        slot.narrow(rows)
        return slot

    def rows(self, slot: Slot) -> IndexArray:
        """A new node's options as table rows."""
        if slot._rows is None:
            slot._rows = self.table.indices(slot.options)
        return slot._rows

    def smallest(self, slot: Slot) -> LaunchOption:
        """The option with the least capacity (cpu, memory, then price; first in order on ties)."""
        if slot._smallest is None:
            rows = self.rows(slot)
            slot._smallest = self.table.options[int(rows[np.argmin(self.table.rank("smallest")[rows])])]
        return slot._smallest

    def cheapest(self, slot: Slot) -> LaunchOption:
        """The option with the lowest price (then type, zone, capacity type; first in order on ties)."""
        rows = self.rows(slot)
        return self.table.options[int(rows[np.argmin(self.table.rank("cheapest")[rows])])]

    def capacity_max(self, slot: Slot, key: str) -> int:
        """The largest limit capacity of `key` among the node's options."""
        rows = self.rows(slot)
        return int(self.table.column("capacity", key)[rows].max()) if len(rows) else 0

    # ---------------------------------------------------------------------------------- masks
    def _group_mask(self, gi: GroupInfo) -> BoolArray:
        mask = self._group_masks.get(gi.index)
        if mask is None:
            if len(gi.option_ids) == self.table.size:
                mask = np.ones(self.table.size, dtype=np.bool_)
            else:
                mask = np.zeros(self.table.size, dtype=np.bool_)
                mask[self.table.rows_of(gi.option_ids)] = True
            self._group_masks[gi.index] = mask
        return mask

    def tier_mask(self, gi: GroupInfo) -> BoolArray:
        """Rows outside the PreferNoSchedule tier."""
        mask = self._tier_masks.get(gi.index)
        if mask is None:
            mask = np.ones(self.table.size, dtype=np.bool_)
            if max(gi.tier.values(), default=0) >= PREFER_NO_SCHEDULE_TIER:
                last = [i for i, t in gi.tier.items() if t >= PREFER_NO_SCHEDULE_TIER]
                mask[self.table.rows_of(last)] = False
            self._tier_masks[gi.index] = mask
        return mask

    def _rule_mask_id(self, rule: SpreadRule) -> int:
        """Rules whose `option_counts` agree on every option share a mask id."""
        hit = self._rule_mask_ids.get(id(rule))
        if hit is None:
            c = rule.constraint
            key = (rule.hostname, "" if rule.hostname else rule.key,
                   cache_key(rule.owner.tolerations) if c.honors_taints else None,
                   cache_key(rule.owner.affinity) if c.honors_affinity else None)
            hit = self._rule_mask_ids[id(rule)] = self._mask_ids.setdefault(key, len(self._mask_ids))
            if hit == len(self._rule_masks):
                table = self.table
                if rule.hostname:
                    mask = np.ones(table.size, dtype=np.bool_)
                else:
                    mask = table.present_mask(rule.key).copy()
                if c.honors_taints:
                    mask &= table.tolerated_mask(rule.owner.tolerations)
                if c.honors_affinity:
                    mask &= table.affinity_mask(rule.owner.affinity)
                self._rule_masks.append(mask)
        return hit

    def _rule_mask(self, rule: SpreadRule) -> BoolArray:
        """`rule.option_counts` per row."""
        return self._rule_masks[self._rule_mask_id(rule)]

    def _domain_mask(self, rule: SpreadRule) -> BoolArray:
        """Rows that are an eligible domain of a (non-hostname) spread rule."""
        mask = self._domain_masks.get(id(rule))
        if mask is None:
            codes, _, code_of = self.table.labels(rule.key)
            wanted = [code_of[v] for v in rule.static_domains() if v in code_of]
            mask = np.isin(codes, np.array(wanted, dtype=np.int32)) & self._rule_mask(rule)
            self._domain_masks[id(rule)] = mask
        return mask

    def _domains(self, rule: SpreadRule, pod_values: frozenset[str] | None) -> list[str]:
        """The rule's eligible non-hostname domains within these podDomains."""
        if pod_values is rule.pod_values:
            domains = self._static_domains.get(id(rule))
            if domains is None:
                domains = self._static_domains[id(rule)] = list(rule.static_domains())
            return domains
        key = (id(rule), pod_values)
        domains = self._attempt_domains.get(key)
        if domains is None:
            domains = self._attempt_domains[key] = list(rule.domains_within(pod_values))
        return domains

    def strict_requirements(self, tpl: PodTemplate, attempt: Attempt | None) -> list[Requirements]:
        """Karpenter's strict pod requirements (`NewStrictPodRequirements`) at this attempt: nodeSelector ∩
        the attempt's required node-affinity term; without one, nodeSelector ∩ each term, ORed (one entry
        for a pod with one term or none)."""
        term = None if attempt is None else attempt.node_term
        key = (id(tpl), id(term))
        hit = self._strict.get(key)
        if hit is None:
            if term is None:
                hit = tpl.affinity.strict_alternatives()
            else:
                hit = [tpl.affinity.node_selector & term.requirements]
            self._strict[key] = hit
        return hit

    def pod_values(self, rule: SpreadRule, attempt: Attempt | None) -> frozenset[str] | None:
        """The spread rule's podDomains at this attempt: the values of its key the attempt's required
        node-affinity term allows (`rule.pod_values`, every term ORed, without one)."""
        term = None if attempt is None else attempt.node_term
        if term is None:
            return rule.pod_values
        key = (id(rule), id(term))
        if key not in self._pod_values:
            self._pod_values[key] = domain_values(self.strict_requirements(rule.owner, attempt), rule.key)
        return self._pod_values[key]

    def _values(self, slot: Slot, key: str, rows: IndexArray | None = None) -> set[str]:
        """`slot.values(key)` for its current options (rows None) or for these rows."""
        if slot.existing is not None or key == HOSTNAME:
            return slot.values(key)
        return self._present(slot, key, rows)[0]

    def _present(self, slot: Slot, key: str, rows: IndexArray | None = None) -> tuple[set[str], bool]:
        """A new node's values of a (non-hostname) key among its options (rows None) or these rows, and
        whether some option lacks the key."""
        own = rows is None or rows is slot._rows
        if own:
            values = slot.domains.get(key)
            if values is not None:
                return values, slot._missing[key]
            rows = self.rows(slot)
        assert rows is not None
        if len(rows):
            codes, names, _ = self.table.labels(key)
            seen = np.bincount(codes[rows] + 1)
            values, missing = {names[int(c)] for c in np.flatnonzero(seen[1:])}, bool(seen[0])
        else:
            values, missing = set(), False
        if own:
            slot.domains[key], slot._missing[key] = values, missing
        return values, missing

    def _with_values(self, rows: IndexArray, key: str, values: Iterable[str], keep: bool) -> IndexArray:
        """The rows whose value of `key` is (keep) or is not (not keep) one of `values`."""
        codes, _, code_of = self.table.labels(key)
        wanted = np.array([code_of[v] for v in values if v in code_of], dtype=np.int32)
        inside = np.isin(codes[rows], wanted)
        return rows[inside if keep else ~inside]

    def _cheapest_with(self, rows: IndexArray, key: str, value: str) -> float:
        codes, _, code_of = self.table.labels(key)
        code = code_of.get(value)
        if code is None:
            return float("inf")
        prices = self.table.prices[rows[codes[rows] == code]]
        return float(prices.min()) if len(prices) else float("inf")

    # ---------------------------------------------------------------------------------- checks
    def spread_min(self, rule: SpreadRule, attempt: Attempt | None = None) -> int:
        """The global minimum over the rule's eligible domains within the pod's podDomains at this
        attempt (without one: every required term ORed)."""
        counts = self.spread_counts[id(rule)]
        if rule.hostname:
            domains = [s.name for s in self.slots if self._slot_counts_for(rule, s)]
        else:
            domains = self._domains(rule, self.pod_values(rule, attempt))
        if len(domains) < rule.min_domains or not domains:
            return 0
        return min(counts.get(d, 0) for d in domains)

    def _slot_counts_for(self, rule: SpreadRule, slot: Slot) -> bool:
        if slot.existing is not None:
            return slot.name in rule.existing_domains
        mask_id = self._rule_mask_id(rule)
        hit = slot._counts.get(mask_id)
        if hit is None:
            hit = slot._counts[mask_id] = bool(self._rule_masks[mask_id][self.rows(slot)].any())
        return hit

    def try_place(self, gi: GroupInfo, pod: Pod, slot: Slot, attempt: Attempt, commit: bool = True) -> bool:
        """Check every rule for `pod` on `slot`; on success narrow the slot and record counts."""
        rows = self.feasible(gi, slot, attempt)
        if rows is None:
            return False
        if commit:
            self.commit_rows(gi, pod, slot, rows)
        return True

    def feasible(self, gi: GroupInfo, slot: Slot, attempt: Attempt, screened: bool = False) -> IndexArray | None:
        """`evaluate` without the reason: the rows left (empty for existing nodes), or None.

        A new node is first screened (unless the caller did: `screened`) by rules whose failure does
        not depend on how its options narrow: `name_blocks` and `affinity_screen`. Only the reason,
        which is not returned, could differ from `evaluate`.
        """
        if slot.existing is None and not screened:
            name = slot.name
            if any(name in names for names in self.name_blocks(gi.template, attempt)):
                return None
            for key, allowed in self.affinity_screen(gi.template, attempt):
                if self.domain_values(slot, key).isdisjoint(allowed):
                    return None
        return self._evaluate(gi, slot, attempt, explain=False)[0]

    def affinity_screen(self, tpl: PodTemplate, attempt: Attempt | None = None) -> list[tuple[str, set[str]]]:
        """(key, domains holding a pod it needs) per required affinity term of the template (and preferred
        one the attempt enforces) that no first pod may open: a new node with none of these domains among
        its options fails `_check_affinity` however it narrows. Without an attempt, a term is left out
        when a first pod may open a domain under any of the pod's required node-affinity terms."""
        required = self.problem.topology.affinity.get(id(tpl))
        preferred = () if attempt is None else attempt.pod_affinity
        screen: list[tuple[str, set[str]]] = []
        if required is None and not preferred:
            return screen
        if attempt is None:
            alternatives = [[alt] for alt in self.strict_requirements(tpl, None)]
        else:
            alternatives = [self.strict_requirements(tpl, attempt)]
        for rule in preferred if required is None else (required, *preferred):
            for i, term in enumerate(rule.terms):
                counts = self.affinity_counts[(id(rule), i)]
                if any(self.opens(rule, i, strict) for strict in alternatives):
                    continue  # the first pod may open a domain
                screen.append((term.key, {v for v, n in counts.items() if n > 0}))
        return screen

    def domain_values(self, slot: Slot, key: str) -> set[str]:
        """The domain values a node may have for a key (cached for a new node's current options)."""
        cached = slot.domains.get(key)
        return cached if cached is not None else self._values(slot, key)

    def name_blocks(self, tpl: PodTemplate, attempt: Attempt) -> list[set[str]]:
        """Names of the new nodes a pod of the template fails on by their name alone, whatever their
        options: its hostname rules' counts over their limit (hard and attempted spread, where a new
        node is its own domain with minimum 0; anti-affinity; blocking terms of placed pods)."""
        key = (id(tpl), attempt.topology_key)
        blocking = self._blocking_tids(tpl)
        cached = self._hostname_checks.get(key)
        if cached is not None and cached[0] == len(blocking):
            return cached[1]
        blocks: list[set[str]] = []
        for rule in self._rules_for(tpl, attempt):
            if rule.hostname:
                blocks.append(self._over(self.spread_counts[id(rule)], rule.max_skew - (1 if rule.self_match else 0)))
        anti = self.problem.topology.anti_affinity.get(id(tpl))
        for anti_rule in attempt.pod_anti_affinity if anti is None else (anti, *attempt.pod_anti_affinity):
            for i, term in enumerate(anti_rule.terms):
                if term.key == HOSTNAME:
                    blocks.append(self._over(self.anti_counts[(id(anti_rule), i)], 0))
        for tid in blocking:
            if self._term_reps[tid].key == HOSTNAME:
                blocks.append(self._over(self._merged[tid], 0))
        distinct = list({id(b): b for b in blocks}.values())
        self._hostname_checks[key] = (len(blocking), distinct)
        return distinct

    def _over(self, counts: Counter[str], limit: int) -> set[str]:
        """The domains whose count is above `limit`, kept up to date as pods are recorded."""
        watchers = self._watch.setdefault(id(counts), [])
        for seen, names in watchers:
            if seen == limit:
                return names
        names = {v for v, n in counts.items() if n > limit}
        watchers.append((limit, names))
        return names

    def _bump(self, counts: Counter[str], value: str) -> None:
        n = counts[value] + 1
        counts[value] = n
        watchers = self._watch.get(id(counts))
        if watchers:
            for limit, names in watchers:
                if n > limit:
                    names.add(value)

    def evaluate(self, gi: GroupInfo, slot: Slot, attempt: Attempt) -> tuple[list[LaunchOption] | None, str]:
        """The slot's launch options left after adding one pod of `gi`, or None and the first failing rule."""
        rows, why = self._evaluate(gi, slot, attempt)
        if rows is None:
            return None, why
        if slot.existing is not None:
            return slot.options, ""
        return self.table.rows(rows), ""

    def _rules_for(self, tpl: PodTemplate, attempt: Attempt) -> list[SpreadRule]:
        key = (id(tpl), tuple(id(r) for r in attempt.soft_spread))
        rules = self._rules.get(key)
        if rules is None:
            rules = [r for r in self.problem.topology.rules_for(tpl) if r.hard] + list(attempt.soft_spread)
            self._rules[key] = rules
        return rules

    def _merged_counts(self, term: AffinityTerm) -> Counter[str]:
        tid = self._term_id(term)
        counts = self._merged.get(tid)
        if counts is None:
            counts = self._merged[tid] = Counter()
            self._merged_tids.append(tid)
        return counts

    def _blocking_tids(self, tpl: PodTemplate) -> list[int]:
        """Ids of the blocking terms (anti-affinity of bound and placed pods) matching the template."""
        checked, matching = self._blocking_for.get(id(tpl), (0, []))
        if checked < len(self._merged_tids):
            matching = list(matching)
            for tid in self._merged_tids[checked:]:
                if self._matches(tid, tpl):
                    matching.append(tid)
            self._blocking_for[id(tpl)] = (len(self._merged_tids), matching)
        return matching

    def _evaluate(self, gi: GroupInfo, slot: Slot, attempt: Attempt,
                  explain: bool = True) -> tuple[IndexArray | None, str]:
        tpl = gi.template
        if slot.existing is not None:
            free = slot.existing.free - slot.requests
            short = tpl.requests.shortfalls(free)
            if short:
                return None, insufficient(short[0])
            if attempt.node_preference is not None and not attempt.node_preference.term.matches(
                    slot.existing.node.labels, slot.name):
                return None, NODE_AFFINITY
            # Karpenter checks existing nodes against the same pod requirements as new ones (`existingnode.go`).
            if attempt.node_term is not None and not attempt.node_term.matches(slot.existing.node.labels, slot.name):
                return None, NODE_AFFINITY
            rows = _NO_ROWS
        else:
            narrowed = self._room(gi, slot, attempt)
            if narrowed is None:
                return None, "exceeds node resources"
            rows = narrowed
        if tpl.host_ports and any(p.conflicts(q) for p in tpl.host_ports for q in slot.host_ports):
            return None, HOST_PORTS
        for rule in self._rules_for(tpl, attempt):
            spread = self._check_spread(rule, slot, rows, attempt)
            if spread is None:
                return None, self.spread_reason(rule, slot, attempt) if explain else SPREAD
            rows = spread
        aff = self.problem.topology.affinity.get(id(tpl))
        strict = self.strict_requirements(tpl, attempt) if aff is not None or attempt.pod_affinity else []
        if aff is not None:
            affine = self._check_affinity(aff, slot, rows, strict)
            if affine is None:
                return None, POD_AFFINITY
            rows = affine
        for preferred in attempt.pod_affinity:
            affine = self._check_affinity(preferred, slot, rows, strict)
            if affine is None:
                return None, POD_AFFINITY
            rows = affine
        anti = self.problem.topology.anti_affinity.get(id(tpl))
        for anti_rule in attempt.pod_anti_affinity if anti is None else (anti, *attempt.pod_anti_affinity):
            for i, anti_term in enumerate(anti_rule.terms):
                kept = self._avoid(slot, rows, anti_term.key, self.anti_counts[(id(anti_rule), i)])
                if kept is None:
                    return None, POD_ANTI_AFFINITY
                rows = kept
        # Term by term (or merged: the same rows survive, the same nodes fail) as Karpenter.
        for tid in self._blocking_tids(tpl):
            kept = self._avoid(slot, rows, self._term_reps[tid].key, self._merged[tid])
            if kept is None:
                return None, EXISTING_ANTI_AFFINITY
            rows = kept
        return rows, ""

    def _room(self, gi: GroupInfo, slot: Slot, attempt: Attempt) -> IndexArray | None:
        """The new node's options the group may use that still have room for one more pod of it."""
        if gi.index in slot.full_for:
            return None
        rows = self.rows(slot)
        requests = gi.template.requests
        used = slot.requests
        headroom = slot.headroom
        for key, value in requests.items():
            if value > 0:
                room = headroom.get(key)
                if room is None:
                    room = headroom[key] = self._extreme(slot, key, True) - used.get(key)
                if value > room and value + used.get(key) > 0:  # as `fits`: no option has room
                    if self._monotone:
                        slot.full_for.add(gi.index)
                    return None
        # `Resources.fits_in` of requests plus the pod's, per option; skipped for resources every
        # option has room for (the least free one does).
        mask: BoolArray | None = None
        for key in _union_keys(used, requests):
            total = used.get(key) + requests.get(key)
            if total <= 0 or total <= self._extreme(slot, key, False):
                continue
            fits = self._free_column(slot, key) >= total
            mask = fits if mask is None else mask & fits
        if not self._everywhere(gi, self._group_masks, self._group_mask):
            usable = self._group_mask(gi)[rows]
            mask = usable if mask is None else mask & usable
        if mask is not None and not mask.any():
            if self._monotone:
                slot.full_for.add(gi.index)
            return None
        if not attempt.tolerate_prefer_no_schedule and not self._everywhere(gi, self._tier_masks, self.tier_mask):
            preferred = self.tier_mask(gi)[rows]
            mask = preferred if mask is None else mask & preferred
        if attempt.node_preference is not None:
            matching = self.table.term_mask(attempt.node_preference.term)[rows]
            mask = matching if mask is None else mask & matching
        if attempt.node_term is not None:  # the group's rows allow every term: keep this attempt's
            matching = self.table.term_mask(attempt.node_term)[rows]
            mask = matching if mask is None else mask & matching
        if mask is None:
            return rows
        if not mask.any():
            return None
        return rows if mask.all() else rows[mask]

    def _mask_everywhere(self, mask_id: int) -> bool:
        key = (-1, mask_id)
        hit = self._all_true.get(key)
        if hit is None:
            hit = self._all_true[key] = bool(self._rule_masks[mask_id].all())
        return hit

    def _everywhere(self, gi: GroupInfo, cache: dict[int, BoolArray], build: Callable[[GroupInfo], BoolArray]) -> bool:
        """Is the group's mask (of `cache`, made by `build`) true on every option?"""
        key = (id(cache), gi.index)
        hit = self._all_true.get(key)
        if hit is None:
            hit = self._all_true[key] = bool(build(gi).all())
        return hit

    def _free_column(self, slot: Slot, key: str) -> npt.NDArray[Any]:
        """The free room of `key` per option of the node (cached while its options stay)."""
        col = slot._free.get(key)
        if col is None:
            col = slot._free[key] = self.table.column("free", key)[self.rows(slot)]
        return col

    def _extreme(self, slot: Slot, key: str, most: bool) -> int:
        """The most (or least) free room of `key` among the node's options (0 without options)."""
        cache = slot._most if most else slot._least
        hit = cache.get(key)
        if hit is None:
            col = self._free_column(slot, key)
            hit = cache[key] = (int(col.max()) if most else int(col.min())) if len(col) else 0
        return hit

    def spread_reason(self, rule: SpreadRule, slot: Slot, attempt: Attempt | None = None) -> str:
        """kube-scheduler's reason on existing nodes; Karpenter's topology error on new ones."""
        if slot.existing is not None:
            if slot.name not in rule.existing_domains:
                return SPREAD_MISSING_LABEL
            return SPREAD
        counts = self.spread_counts[id(rule)]
        pod_values = self.pod_values(rule, attempt)
        domains = [slot.name] if rule.hostname else sorted(self._domains(rule, pod_values))
        pod_domains = (f"{rule.key} In [{' '.join(sorted(pod_values))}]" if pod_values is not None
                       else f"{rule.key} Exists")
        node_values = sorted(slot.values(rule.key))
        node_domains = f"{rule.key} In [{' '.join(node_values)}]" if node_values else f"{rule.key} DoesNotExist"
        text = (f"unsatisfiable topology constraint for topology spread, key={rule.key} "
                f"(counts = {rule.describe_counts(counts, domains)}, podDomains = {pod_domains}, "
                f"nodeDomains = {node_domains}; maxSkew {rule.max_skew}, min {self.spread_min(rule, attempt)}"
                + (f", minDomains {rule.min_domains}" if rule.constraint.min_domains else "") + ")")
        return text + self._fargate_domain_note(rule, counts, attempt)

    def _fargate_domain_note(self, rule: SpreadRule, counts: Counter[str], attempt: Attempt | None) -> str:
        """Say so when existing Fargate nodes are the domains holding the global minimum down."""
        minimum = self.spread_min(rule, attempt)
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

    def _check_spread(self, rule: SpreadRule, slot: Slot, rows: IndexArray, attempt: Attempt) -> IndexArray | None:
        counts = self.spread_counts[id(rule)]
        own = 1 if rule.self_match else 0
        if slot.existing is not None:
            domain = rule.existing_domains.get(slot.name)
            if domain is None:
                return None
            pod_values = self.pod_values(rule, attempt)
            if pod_values is not None and domain not in pod_values:
                return None
            return rows if counts.get(domain, 0) + own - self.spread_min(rule, attempt) <= rule.max_skew else None
        if rule.hostname:
            # Karpenter: a new node is always a fresh domain, so the global minimum is 0.
            if counts.get(slot.name, 0) + own > rule.max_skew:
                return None
            mask_id = self._rule_mask_id(rule)
            if not self._mask_everywhere(mask_id):
                rows = rows[self._rule_masks[mask_id][rows]]
            return rows if len(rows) else None
        minimum = self.spread_min(rule, attempt)
        codes, names, _ = self.table.labels(rule.key)
        if rows is slot._rows and id(rule) in slot._domain_codes:
            domain_codes = slot._domain_codes[id(rule)]
        else:
            domain_codes = _codes_in(codes, rows[self._domain_mask(rule)[rows]])
            if rows is slot._rows:
                slot._domain_codes[id(rule)] = domain_codes
        allowed: dict[str, int] = {}
        for code in domain_codes:
            value = names[code]
            count = counts.get(value, 0)
            if count + own - minimum <= rule.max_skew:
                allowed[value] = count
        if not allowed:
            return None
        # Karpenter collapses the node to the valid domain with the lowest count.
        if len(allowed) == 1:
            best = next(iter(allowed))
        else:
            best = min(allowed.items(), key=lambda kv: (kv[1], self._cheapest_with(rows, rule.key, kv[0]), kv[0]))[0]
        values, missing = self._present(slot, rule.key, rows)
        if not missing and values == {best}:
            return rows  # already collapsed there
        return self._with_values(rows, rule.key, (best,), True)

    @staticmethod
    def _cheapest(options: Sequence[LaunchOption], key: str, value: str) -> float:
        return min((o.price for o in options if o.labels.get(key) == value), default=float("inf"))

    def opens(self, rule: AffinityRule, i: int, strict: Sequence[Requirements]) -> bool:
        """May a pod with these strict requirements (ORed) open a domain for term `i` of the rule?

        Karpenter (`topologygroup.go nextDomainAffinity`): when it matches its own selector and no matching
        pod is in a domain its podDomains allow (its strict requirement on the key; domains outside them
        do not count). kube-scheduler asks for no matching pod anywhere.
        """
        if not rule.self_match:
            return False
        counts = self.affinity_counts[(id(rule), i)]
        key = rule.terms[i].key
        reqs = [alt.get(key) for alt in strict]
        if any(r is None for r in reqs):
            return not any(n > 0 for n in counts.values())  # podDomains: key Exists
        return not any(n > 0 and any(r is not None and r.has(v) for r in reqs) for v, n in counts.items())

    def _check_affinity(self, rule: AffinityRule, slot: Slot, rows: IndexArray,
                        strict: Sequence[Requirements]) -> IndexArray | None:
        for i, term in enumerate(rule.terms):
            counts = self.affinity_counts[(id(rule), i)]
            values = self._values(slot, term.key, rows)
            if not values:
                return None
            allowed = {v for v in values if counts.get(v, 0) > 0}
            if not allowed:
                if self.opens(rule, i, strict):
                    # First pod of a self-affine group opens the domain; later replicas must join it.
                    if slot.existing is None and term.key != HOSTNAME:
                        now = rows
                        best = min(values, key=lambda v: (self._cheapest_with(now, term.key, v), v))
                        allowed = {best}
                    else:
                        allowed = values
                else:
                    return None
            if slot.existing is None and term.key != HOSTNAME:
                present, missing = self._present(slot, term.key, rows)
                if missing or not present <= allowed:
                    rows = self._with_values(rows, term.key, allowed, True)
        return rows

    def _avoid(self, slot: Slot, rows: IndexArray, key: str, blocked: Mapping[str, int]) -> IndexArray | None:
        values = self._values(slot, key, rows)
        if not values:
            return rows  # a node without the key passes an anti-affinity term
        bad = {v for v in values if blocked.get(v, 0) > 0}
        if not bad:
            return rows
        if slot.existing is not None or key == HOSTNAME:
            return None
        kept = self._with_values(rows, key, bad, False)
        return kept if len(kept) else None

    # ---------------------------------------------------------------------------------- recording
    def _commit(self, gi: GroupInfo, pod: Pod, slot: Slot, options: list[LaunchOption]) -> None:
        if slot.new:
            slot.options = options
        self._record(gi, pod, slot)

    def commit_rows(self, gi: GroupInfo, pod: Pod, slot: Slot, rows: IndexArray) -> None:
        """`_commit` with the options left given as rows (a subset of the node's, from `feasible`)."""
        if slot.new and len(rows) != len(self.rows(slot)):  # a subset of the same size is the same
            slot.narrow(rows)
        self._record(gi, pod, slot)

    def _record(self, gi: GroupInfo, pod: Pod, slot: Slot) -> None:
        tpl = gi.template
        slot.requests = slot.requests + tpl.requests
        headroom = slot.headroom
        for resource, amount in tpl.requests.items():
            if resource in headroom:
                headroom[resource] -= amount  # still an upper bound: the options only narrowed
        slot.members.append((gi, pod))
        slot.host_ports.extend(tpl.host_ports)
        if slot.existing is not None:
            done: set[int] = set()
            for spread in self._raises[id(tpl)]:
                counts = self.spread_counts[id(spread)]
                if id(counts) in done or not self._slot_counts_for(spread, slot):
                    continue
                done.add(id(counts))
                domain = spread.existing_domains.get(slot.name)
                if domain is not None:
                    self._bump(counts, domain)
        else:
            for spread, counters in self._raise_groups(tpl):
                if not self._slot_counts_for(spread, slot):
                    continue
                values = self._values(slot, spread.key)
                if len(values) == 1:
                    value = next(iter(values))
                    for counts in counters:
                        self._bump(counts, value)
        for term_key, counts in self._affinity_record[id(tpl)]:
            values = self._values(slot, term_key)
            if len(values) == 1:
                self._bump(counts, next(iter(values)))
        for term_key, counts in self._anti_record[id(tpl)]:
            for v in self._values(slot, term_key):
                self._bump(counts, v)
        anti = self.problem.topology.anti_affinity.get(id(tpl))
        if anti is not None:
            for i, term in enumerate(anti.terms):
                key = (id(anti), i)
                if key not in self.blocking_index:
                    self.blocking_index[key] = len(self.blocking)
                    self.blocking.append((term, Counter()))
                blocked = self.blocking[self.blocking_index[key]][1]
                merged = self._merged_counts(term)
                for v in self._values(slot, term.key):
                    blocked[v] += 1
                    self._bump(merged, v)

    def _raise_groups(self, tpl: PodTemplate) -> list[tuple[SpreadRule, list[Counter[str]]]]:
        """The spread rules a template's pods count for, grouped by what decides that on a new node
        (their eligibility mask and key): one rule of each group, and the counts of all."""
        groups = self._raised.get(id(tpl))
        if groups is None:
            by_key: dict[tuple[int, str], tuple[SpreadRule, list[Counter[str]]]] = {}
            seen: set[int] = set()
            for spread in self._raises[id(tpl)]:
                counts = self.spread_counts[id(spread)]
                if id(counts) in seen:
                    continue  # shared by an earlier rule, which decides the same
                seen.add(id(counts))
                key = (self._rule_mask_id(spread), spread.key)
                by_key.setdefault(key, (spread, []))[1].append(counts)
            groups = self._raised[id(tpl)] = list(by_key.values())
        return groups

    def add_slot(self, slot: Slot) -> None:
        slot.index = len(self.slots)
        self.slots.append(slot)


def _union_keys(a: Resources, b: Resources) -> Iterable[str]:
    return b if all(k in b for k in a) else {*a, *b}


def _spread_key(rule: SpreadRule) -> Hashable:
    """Rules with equal keys count the same pods (`SpreadRule.counts`)."""
    try:
        return (rule.owner.namespace, hash(rule.selector), rule.selector)
    except TypeError:
        return ("id", id(rule))


def _term_key(term: AffinityTerm) -> Hashable:
    """Terms with equal keys match the same pods (`AffinityTerm.matches`)."""
    try:
        return (term.owner_namespace, hash((term.term, term.selector)), term.term, term.selector)
    except TypeError:
        return ("id", id(term))


def template_attempts(tpl: PodTemplate, problem: Problem) -> list[Attempt]:
    """Karpenter's preference relaxation, one step at a time (preferences.go order).

    The first attempt uses the first required node-affinity term (not the terms ORed) and enforces every
    preferred pod (anti-)affinity term, the heaviest preferred node affinity term and every ScheduleAnyway
    spread. Each later attempt relaxes one more: the required term in use while another follows (the
    next one becomes the requirement; the last is kept), then preferred pod affinity terms (heaviest
    first), then preferred pod anti-affinity terms (heaviest first), then the heaviest node-affinity term
    left (the next one becomes the requirement), then ScheduleAnyway spreads (in Karpenter's swap-remove
    order); last, PreferNoSchedule taints are tolerated when some NodePool has one.
    """
    topo = problem.topology
    affinity = tuple(topo.preferred_affinity.get(id(tpl), ()))
    anti = tuple(topo.preferred_anti.get(id(tpl), ()))
    prefs = sorted(tpl.affinity.preferred, key=lambda p: -p.weight)
    soft = tuple(r for r in topo.rules_for(tpl) if not r.hard)
    node_steps = [Attempt(p, soft) for p in prefs]
    # removeTopologySpreadScheduleAnyway: the first ScheduleAnyway constraint of the list is overwritten by
    # the list's last one, and the list shortened.
    spread = list(topo.rules_for(tpl))
    while True:
        node_steps.append(Attempt(None, tuple(r for r in spread if not r.hard)))
        first_soft = next((i for i, r in enumerate(spread) if not r.hard), None)
        if first_soft is None:
            break
        spread[first_soft] = spread[-1]
        spread.pop()
    first = node_steps[0]
    attempts = [replace(first, pod_affinity=affinity[i:], pod_anti_affinity=anti) for i in range(len(affinity))]
    attempts += [replace(first, pod_anti_affinity=anti[i:]) for i in range(len(anti))]
    attempts += node_steps
    if any(t.effect == "PreferNoSchedule" for p in problem.pools for t in p.taints):
        attempts.append(Attempt(None, (), True))
    terms = required_terms(tpl)
    if len(terms) > 1:
        # removeRequiredNodeAffinityTerm comes first: term[0], term[1], ... with every preference, then
        # the other relaxations on the last term.
        attempts = ([replace(attempts[0], node_term=t) for t in terms[:-1]]
                    + [replace(a, node_term=terms[-1]) for a in attempts])
    return attempts


def required_terms(tpl: PodTemplate) -> list[NodeSelectorTerm]:
    """The required node-affinity terms Karpenter walks through, in order (empty and unreadable terms,
    which match no node, are left out as in `NodeAffinity.strict_alternatives`)."""
    required = tpl.affinity.required
    return [] if required is None else [t for t in required if not t.empty and t.valid]
