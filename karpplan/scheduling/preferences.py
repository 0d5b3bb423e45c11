"""Preferences and their relaxation (Karpenter's `preferences.go`): one `Attempt` per relaxation step of
a pod, the ladder of steps (`template_attempts`), the strict pod requirements and podDomains each
step implies (`StrictRequirements`), and the ScheduleAnyway spreads no node can honour, relaxed at once
(`unhonourable_spreads`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from karpplan.model.fargate import fargate_node_labels
from karpplan.model.labels import ALIASES, HOSTNAME, REGION, ZONE
from karpplan.model.pods import PodTemplate
from karpplan.model.requirements import Requirements
from karpplan.model.selectors import NodeSelectorTerm, PreferredTerm
from karpplan.scheduling.problem import Problem
from karpplan.scheduling.topology import AffinityRule, SpreadRule, domain_values


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
        return (*(r.uid for r in self.soft_spread), -1, *(r.uid for r in self.pod_affinity), -1,
                *(r.uid for r in self.pod_anti_affinity))


def template_attempts(pod_template: PodTemplate, problem: Problem) -> list[Attempt]:
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
    affinity = tuple(topo.preferred_affinity.get(id(pod_template), ()))
    anti = tuple(topo.preferred_anti.get(id(pod_template), ()))
    prefs = sorted(pod_template.affinity.preferred, key=lambda p: -p.weight)
    soft = tuple(r for r in topo.rules_for(pod_template) if not r.hard)
    node_steps = [Attempt(p, soft) for p in prefs]
    # removeTopologySpreadScheduleAnyway: the first ScheduleAnyway constraint of the list is overwritten by
    # the list's last one, and the list shortened.
    spread = list(topo.rules_for(pod_template))
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
    terms = required_terms(pod_template)
    if len(terms) > 1:
        # removeRequiredNodeAffinityTerm comes first: term[0], term[1], ... with every preference, then
        # the other relaxations on the last term.
        attempts = ([replace(attempts[0], node_term=t) for t in terms[:-1]]
                    + [replace(a, node_term=terms[-1]) for a in attempts])
    return attempts


def required_terms(pod_template: PodTemplate) -> list[NodeSelectorTerm]:
    """The required node-affinity terms Karpenter walks through, in order (empty and unreadable terms,
    which match no node, are left out as in `NodeAffinity.strict_alternatives`)."""
    required = pod_template.affinity.required
    return [] if required is None else [t for t in required if not t.empty and t.valid]


class StrictRequirements:
    """Per template and attempt, Karpenter's strict pod requirements; per spread rule and attempt, its
    podDomains (cached: both depend only on the attempt's required node-affinity term)."""

    def __init__(self) -> None:
        # Keyed by the template's and the term's identity: both live as long as the problem.
        self._strict: dict[tuple[int, int], list[Requirements]] = {}
        self._pod_values: dict[tuple[int, int], frozenset[str] | None] = {}

    def of(self, pod_template: PodTemplate, attempt: Attempt | None) -> list[Requirements]:
        """Karpenter's strict pod requirements (`NewStrictPodRequirements`) at this attempt: nodeSelector ∩
        the attempt's required node-affinity term; without one, nodeSelector ∩ each term, ORed (one entry
        for a pod with one term or none)."""
        term = None if attempt is None else attempt.node_term
        key = (id(pod_template), id(term))
        hit = self._strict.get(key)
        if hit is None:
            if term is None:
                hit = pod_template.affinity.strict_alternatives()
            else:
                hit = [pod_template.affinity.node_selector & term.requirements]
            self._strict[key] = hit
        return hit

    def pod_values(self, rule: SpreadRule, attempt: Attempt | None) -> frozenset[str] | None:
        """The spread rule's podDomains at this attempt: the values of its key the attempt's required
        node-affinity term allows (`rule.pod_values`, every term ORed, without one)."""
        term = None if attempt is None else attempt.node_term
        if term is None:
            return rule.pod_values
        key = (rule.uid, id(term))
        if key not in self._pod_values:
            self._pod_values[key] = domain_values(self.of(rule.owner, attempt), rule.key)
        return self._pod_values[key]


def provided_keys(problem: Problem) -> frozenset[str]:
    """The label keys some node may carry: the NodePools' launch options, requirements and labels, the existing
    nodes' (eksctl node groups' too) and Fargate's, when a profile is given."""
    keys: set[str] = {HOSTNAME}
    for option in problem.options:
        keys.update(option.labels)
    for pool in problem.pools:
        keys.update(pool.requirements)
        keys.update(pool.labels)
    for node in problem.inventory.nodes:
        keys.update(node.labels)
    if problem.inventory.fargate_profiles:
        keys.update(fargate_node_labels("zone", "region", "node", "profile"))
    return frozenset(keys)


def unhonourable_spreads(problem: Problem) -> list[str]:
    """A plan warning per ScheduleAnyway spread whose topologyKey no node provides: Karpenter finds no domain
    for it and relaxes it before anything else counts, so the pods are placed as if it were not written (all
    may share one zone). Lint's spread-key-unknown says the same of a DoNotSchedule one (its pods stay pending);
    a deprecated alias (`failure-domain.beta.kubernetes.io/zone`) is one: Karpenter normalises it in
    requirements, not in spread keys (kubernetes-sigs/karpenter#3307)."""
    known: frozenset[str] | None = None
    pods: dict[tuple[str, str, str], int] = {}
    for group in problem.groups:
        for c in group.template.spread:
            if c.hard or not c.topology_key:
                continue
            known = provided_keys(problem) if known is None else known
            if c.topology_key not in known:
                where = (str(c.origin), group.group.pods[0].workload, c.topology_key)
                pods[where] = pods.get(where, 0) + group.size
    out = []
    for (origin, workload, key), count in pods.items():
        alias = ALIASES.get(key)
        noun = {ZONE: "zone", REGION: "region"}.get(alias, "domain") if alias is not None else "domain"
        if alias is not None:
            why = f"topologyKey {key!r} is a deprecated alias of {alias}: Karpenter finds no domain for it"
            fix = f"use {alias}"
        else:
            close = difflib.get_close_matches(key, sorted(known or ()), n=1, cutoff=0.6)
            why = (f"topologyKey {key!r} is a label no NodePool, Fargate profile or existing node provides"
                   + (f" (did you mean {close[0]}?)" if close else ""))
            fix = f"use {close[0]}" if close else "use a label key nodes carry, e.g. topology.kubernetes.io/zone"
        out.append(f"{origin}: {workload}: preferred spread (ScheduleAnyway on {key}) is not honoured: {why}, so "
                   f"it is relaxed and the {count} pod(s) are placed as if it were not written (all may share one "
                   f"{noun}); {fix}")
    return out
