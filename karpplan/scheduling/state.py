"""A plan under construction: nodes (existing and new), the pods added to them, and topology counts.

This is the per-placement rule book shared by the Karpenter simulation and the optimiser's decoder, a
facade over the parts Karpenter's scheduler splits the same way: the nodes (`nodeclaim.py`: a new node
keeps a *set* of launch options that narrows as pods join), the domain counts (`topology_counts.py`), the
preference relaxation (`preferences.py`) and the masks of launch options (`option_masks.py`). Here:
evaluating one pod on one node (every rule in Karpenter's order, with the reason of the first failing
one), and committing it (narrowing the node, recording the counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from karpplan.constraints.port_conflicts import ports_clash
from karpplan.constraints.spread_counts import admits, node_cap
from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD
from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import Pod, PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirements
from karpplan.scheduling.candidates import BoolArray, IndexArray, LaunchOption, option_table
from karpplan.scheduling.filters import (
    EXISTING_ANTI_AFFINITY,
    HOST_PORTS,
    NODE_AFFINITY,
    POD_AFFINITY,
    POD_ANTI_AFFINITY,
    SPREAD,
    SPREAD_MISSING_LABEL,
    insufficient,
)
from karpplan.scheduling.nodeclaim import PlannedNode
from karpplan.scheduling.option_masks import OptionMasks, cheapest_with, codes_in, with_values
from karpplan.scheduling.preferences import Attempt, StrictRequirements
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import AffinityRule, SpreadRule
from karpplan.scheduling.topology_counts import TopologyCounts

__all__ = ["PlacementState"]

_NO_ROWS: IndexArray = np.zeros(0, dtype=np.intp)


class PlacementState:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.table = option_table(problem.options)
        self.slots: list[PlannedNode] = [
            PlannedNode(i, info.node.name, existing=info, host_ports=list(info.host_ports), table=self.table)
            for i, info in enumerate(problem.existing)
        ]
        self.masks = OptionMasks(self.table)
        self.requirements = StrictRequirements()
        self.counts = TopologyCounts(problem, self.masks, self.requirements, self.slots)
        self.claims_created = 0
        # Slots only fill up when every request is non-negative: then a resource failure is final.
        self._monotone = all(v >= 0 for g in problem.groups for v in g.template.requests.values())

    @property
    def monotone(self) -> bool:
        """Do nodes only fill up (no request is negative)? Then a resource failure is final."""
        return self._monotone

    # ---------------------------------------------------------------------------------- new nodes
    def new_slot(self, pool: NodePool, options: list[LaunchOption]) -> PlannedNode:
        self.claims_created += 1
        slot = PlannedNode(len(self.slots), f"{pool.name}-claim-{self.claims_created}", pool=pool, options=options,
                    table=self.table)
        return slot

    def new_slot_rows(self, pool: NodePool, rows: IndexArray) -> PlannedNode:
        """`new_slot` with the options given as table rows (ascending)."""
        self.claims_created += 1
        slot = PlannedNode(len(self.slots), f"{pool.name}-claim-{self.claims_created}", pool=pool, table=self.table)
        slot.narrow(rows)
        return slot

    def add_slot(self, slot: PlannedNode) -> None:
        slot.index = len(self.slots)
        self.slots.append(slot)

    def smallest(self, slot: PlannedNode) -> LaunchOption:
        """The option with the least capacity (cpu, memory, then price; first in order on ties)."""
        return slot.smallest()

    def cheapest(self, slot: PlannedNode) -> LaunchOption:
        """The option with the lowest price (then type, zone, capacity type; first in order on ties)."""
        return slot.cheapest()

    def capacity_max(self, slot: PlannedNode, key: str) -> int:
        """The largest limit capacity of `key` among the node's options."""
        return slot.capacity_max(key)

    def tier_mask(self, group_info: GroupInfo) -> BoolArray:
        """Rows outside the PreferNoSchedule tier."""
        return self.masks.tier_mask(group_info)

    def domain_values(self, slot: PlannedNode, key: str) -> set[str]:
        """The domain values a node may have for a key (cached for a new node's current options)."""
        return slot.domain_values(key)

    # ---------------------------------------------------------------------------------- checks
    def affinity_screen(self, pod_template: PodTemplate, attempt: Attempt | None = None) -> list[tuple[str, set[str]]]:
        """See `TopologyCounts.affinity_screen`."""
        return self.counts.affinity_screen(pod_template, attempt)

    def spread_screen(self, pod_template: PodTemplate, attempt: Attempt) -> list[tuple[str, set[str]]]:
        """See `TopologyCounts.spread_screen`."""
        return self.counts.spread_screen(pod_template, attempt)

    def name_blocks(self, pod_template: PodTemplate, attempt: Attempt) -> list[set[str]]:
        """See `TopologyCounts.name_blocks`."""
        return self.counts.name_blocks(pod_template, attempt)

    def try_place(self, group_info: GroupInfo, pod: Pod, slot: PlannedNode, attempt: Attempt, commit: bool = True) -> bool:
        """Check every rule for `pod` on `slot`; on success narrow the slot and record counts."""
        rows = self.feasible(group_info, slot, attempt)
        if rows is None:
            return False
        if commit:
            self.commit_rows(group_info, pod, slot, rows)
        return True

    def feasible(self, group_info: GroupInfo, slot: PlannedNode, attempt: Attempt, screened: bool = False) -> IndexArray | None:
        """`evaluate` without the reason: the rows left (empty for existing nodes), or None.

        A new node is first screened (unless the caller did: `screened`) by rules whose failure does
        not depend on how its options narrow: `name_blocks` and `affinity_screen`. Only the reason,
        which is not returned, could differ from `evaluate`.
        """
        if slot.existing is None and not screened:
            name = slot.name
            if any(name in names for names in self.counts.name_blocks(group_info.template, attempt)):
                return None
            for key, allowed in self.counts.affinity_screen(group_info.template, attempt):
                if slot.domain_values(key).isdisjoint(allowed):
                    return None
        return self._evaluate(group_info, slot, attempt, explain=False)[0]

    def evaluate(self, group_info: GroupInfo, slot: PlannedNode, attempt: Attempt) -> tuple[list[LaunchOption] | None, str]:
        """The slot's launch options left after adding one pod of `group_info`, or None and the first failing rule."""
        rows, why = self._evaluate(group_info, slot, attempt)
        if rows is None:
            return None, why
        if slot.existing is not None:
            return slot.options, ""
        return self.table.rows(rows), ""

    def _evaluate(self, group_info: GroupInfo, slot: PlannedNode, attempt: Attempt,
                  explain: bool = True) -> tuple[IndexArray | None, str]:
        pod_template = group_info.template
        if slot.existing is not None:
            free = slot.existing.free - slot.requests if slot.requests else slot.existing.free
            short = pod_template.requests.shortfalls(free)
            if short:
                if self._monotone:  # the node only fills up: final for the group, whatever the attempt
                    slot.full_for.add(group_info.index)
                return None, insufficient(short[0])
            if attempt.node_preference is not None and not attempt.node_preference.term.matches(
                    slot.existing.node.labels, slot.name):
                return None, NODE_AFFINITY
            # Karpenter checks existing nodes against the same pod requirements as new ones (`existingnode.go`).
            if attempt.node_term is not None and not attempt.node_term.matches(slot.existing.node.labels, slot.name):
                return None, NODE_AFFINITY
            rows = _NO_ROWS
        else:
            narrowed = slot.room(group_info, attempt, self.masks, self._monotone)
            if narrowed is None:
                return None, "exceeds node resources"
            rows = narrowed
        if ports_clash(pod_template.host_ports, slot.host_ports):
            return None, HOST_PORTS
        for rule in self.counts.rules_for(pod_template, attempt):
            spread = self._check_spread(rule, slot, rows, attempt)
            if spread is None:
                return None, self.spread_reason(rule, slot, attempt) if explain else SPREAD
            rows = spread
        aff = self.problem.topology.affinity.get(id(pod_template))
        strict = self.requirements.of(pod_template, attempt) if aff is not None or attempt.pod_affinity else []
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
        anti = self.problem.topology.anti_affinity.get(id(pod_template))
        for anti_rule in attempt.pod_anti_affinity if anti is None else (anti, *attempt.pod_anti_affinity):
            for i, anti_term in enumerate(anti_rule.terms):
                kept = self._avoid(slot, rows, anti_term.key, self.counts.anti[(anti_rule.uid, i)])
                if kept is None:
                    return None, POD_ANTI_AFFINITY
                rows = kept
        # Term by term (or merged: the same rows survive, the same nodes fail) as Karpenter.
        for tid in self.counts.blocking_tids(pod_template):
            kept = self._avoid(slot, rows, self.counts.blocking_key(tid), self.counts.merged[tid])
            if kept is None:
                return None, EXISTING_ANTI_AFFINITY
            rows = kept
        return rows, ""

    def spread_reason(self, rule: SpreadRule, slot: PlannedNode, attempt: Attempt | None = None) -> str:
        """kube-scheduler's reason on existing nodes; Karpenter's topology error on new ones."""
        if slot.existing is not None:
            if slot.name not in rule.existing_domains:
                return SPREAD_MISSING_LABEL
            return SPREAD
        counts = self.counts.spread[rule.uid]
        pod_values = self.requirements.pod_values(rule, attempt)
        domains = [slot.name] if rule.hostname else sorted(self.counts.domains(rule, pod_values))
        pod_domains = (f"{rule.key} In [{' '.join(sorted(pod_values))}]" if pod_values is not None
                       else f"{rule.key} Exists")
        node_values = sorted(slot.values(rule.key))
        node_domains = f"{rule.key} In [{' '.join(node_values)}]" if node_values else f"{rule.key} DoesNotExist"
        text = TOPOLOGY_SPREAD.unsatisfiable(rule, rule.describe_counts(counts, domains), pod_domains, node_domains,
                                             self.counts.spread_min(rule, attempt))
        return text + self._fargate_domain_note(rule, counts, attempt)

    def _fargate_domain_note(self, rule: SpreadRule, counts: Counter[str], attempt: Attempt | None) -> str:
        """Say so when existing Fargate nodes are the domains holding the global minimum down."""
        minimum = self.counts.spread_min(rule, attempt)
        holders = sorted(
            name for name, domain in rule.existing_domains.items()
            if counts.get(domain, 0) == minimum and any(
                s.existing is not None and s.name == name and s.existing.node.is_fargate for s in self.slots)
        )
        if not holders:
            return ""
        policy = "Honor" if rule.constraint.honors_taints else "Ignore"
        return TOPOLOGY_SPREAD.reason("fargate_minimum", nodes=", ".join(holders[:5]), key=rule.key, policy=policy,
                                      minimum=minimum)

    def _check_spread(self, rule: SpreadRule, slot: PlannedNode, rows: IndexArray, attempt: Attempt) -> IndexArray | None:
        counts = self.counts.spread[rule.uid]
        own = 1 if rule.self_match else 0
        if slot.existing is not None:
            domain = rule.existing_domains.get(slot.name)
            if domain is None:
                return None
            pod_values = self.requirements.pod_values(rule, attempt)
            if pod_values is not None and domain not in pod_values:
                return None
            return rows if admits(rule, counts.get(domain, 0) + own, self.counts.spread_min(rule, attempt)) else None
        if rule.hostname:
            # Karpenter: a new node is always a fresh domain, so the global minimum is 0.
            if counts.get(slot.name, 0) + own > node_cap(rule):
                return None
            mask_id = self.masks.rule_mask_id(rule)
            if not self.masks.mask_everywhere(mask_id):
                rows = rows[self.masks.rule_masks[mask_id][rows]]
            return rows if len(rows) else None
        minimum = self.counts.spread_min(rule, attempt)
        codes, names, _ = self.table.labels(rule.key)
        if slot.is_current(rows) and rule.uid in slot.domain_codes:
            domain_codes = slot.domain_codes[rule.uid]
        else:
            domain_codes = codes_in(codes, rows[self.masks.domain_mask(rule)[rows]])
            if slot.is_current(rows):
                slot.domain_codes[rule.uid] = domain_codes
        allowed: dict[str, int] = {}
        for code in domain_codes:
            value = names[code]
            count = counts.get(value, 0)
            if admits(rule, count + own, minimum):
                allowed[value] = count
        if not allowed:
            return None
        # Karpenter collapses the node to the valid domain with the lowest count.
        if len(allowed) == 1:
            best = next(iter(allowed))
        else:
            best = min(allowed.items(), key=lambda kv: (kv[1], cheapest_with(self.table, rows, rule.key, kv[0]), kv[0]))[0]
        values, missing = slot.present(rule.key, rows)
        if not missing and values == {best}:
            return rows  # already collapsed there
        return with_values(self.table, rows, rule.key, (best,), True)

    def _check_affinity(self, rule: AffinityRule, slot: PlannedNode, rows: IndexArray,
                        strict: Sequence[Requirements]) -> IndexArray | None:
        for i, term in enumerate(rule.terms):
            counts = self.counts.affinity[(rule.uid, i)]
            values = slot.values_in(term.key, rows)
            if not values:
                return None
            allowed = {v for v in values if counts.get(v, 0) > 0}
            if not allowed:
                if self.counts.opens(rule, i, strict):
                    # First pod of a self-affine group opens the domain; later replicas must join it.
                    if slot.existing is None and term.key != HOSTNAME:
                        now = rows
                        best = min(values, key=lambda v: (cheapest_with(self.table, now, term.key, v), v))
                        allowed = {best}
                    else:
                        allowed = values
                else:
                    return None
            if slot.existing is None and term.key != HOSTNAME:
                present, missing = slot.present(term.key, rows)
                if missing or not present <= allowed:
                    rows = with_values(self.table, rows, term.key, allowed, True)
        return rows

    def _avoid(self, slot: PlannedNode, rows: IndexArray, key: str, blocked: Mapping[str, int]) -> IndexArray | None:
        values = slot.values_in(key, rows)
        if not values:
            return rows  # a node without the key passes an anti-affinity term
        bad = {v for v in values if blocked.get(v, 0) > 0}
        if not bad:
            return rows
        if slot.existing is not None or key == HOSTNAME:
            return None
        kept = with_values(self.table, rows, key, bad, False)
        return kept if len(kept) else None

    # ---------------------------------------------------------------------------------- recording

    # ---------------------------------------------------------------------------------- recording
    def _commit(self, group_info: GroupInfo, pod: Pod, slot: PlannedNode, options: list[LaunchOption]) -> None:
        if slot.new:
            slot.options = options
        self._record(group_info, pod, slot)

    def commit_rows(self, group_info: GroupInfo, pod: Pod, slot: PlannedNode, rows: IndexArray) -> None:
        """`_commit` with the options left given as rows (a subset of the node's, from `feasible`)."""
        if slot.new and len(rows) != len(slot.rows()):  # a subset of the same size is the same
            slot.narrow(rows)
        self._record(group_info, pod, slot)

    def _record(self, group_info: GroupInfo, pod: Pod, slot: PlannedNode) -> None:
        pod_template = group_info.template
        slot.requests = slot.requests + pod_template.requests
        headroom = slot.headroom
        for resource, amount in pod_template.requests.items():
            if resource in headroom:
                headroom[resource] -= amount  # still an upper bound: the options only narrowed
        slot.members.append((group_info, pod))
        slot.host_ports.extend(pod_template.host_ports)
        self.counts.record(group_info, slot)
