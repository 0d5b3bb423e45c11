"""Inter-pod affinity and anti-affinity, required and preferred (kube-scheduler's InterPodAffinity;
Karpenter's affinity topology groups). Affinity and anti-affinity share one module and one loop over
the groups, so the model's rows keep their order.

* Filter: one part is static (kube-scheduler's `satisfyPodAffinity`): a node must carry the topology key
  of every required affinity term, even for the first pod of a series that matches itself, so existing
  nodes and launch options without it are left out (`filter_node`, `option_filter`). The rest depends on
  where the plan's other pods go: the greedy engine checks it per placement (`scheduling/state.py`), from
  `scheduling/topology.py`.
* Model: required anti-affinity empties a domain of the pods its term matches (at most one self-matching
  pod per domain; on new nodes of one launch option, at most one per node); required affinity follows
  existing matches or opens one domain (all self-matching replicas then share it); the anti-affinity of
  bound pods and the domains already taken are excluded before the variables exist (`exclude`).
  Preferred terms are penalties of their weight per pod that misses them, never keeping a pod out.
* Preferences: a preferred term the plan's final state does not meet, for some pod of a group, is an
  `UnmetPreference` (`unmet_preferences`): affinity is met when the pod's domain holds another pod the
  term selects (or nothing else anywhere does and the pod selects itself: the first pod); anti-affinity
  when it holds none (a node without the key is no domain: met). A term no pod anywhere can meet
  (affinity to a pod that does not exist) is left out.
* Verifier: no pod shares a domain of an anti-affinity term's key with a pod the term matches (terms of
  bound pods included); each required affinity term of a placed pod is met in its node's domain by
  another pod matching all the pod's terms, unless none matches anywhere and the pod matches its own
  terms (the first pod); a node without the term's topology key is no domain; and the pods can be placed one at a
  time, each joining a pod placed before it (`affinity_order.py`: two domains of one self-affine workload, or one
  opened while pods it selects already run elsewhere, are not).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from karpplan.constraints.affinity_order import matcher, unreachable
from karpplan.constraints.base import (
    ConstraintKind,
    CountsModel,
    KeptPreference,
    SlotCountsModel,
    UnmetPreference,
    Violation,
)
from karpplan.constraints.inter_pod_affinity_rows import AffinityRows
from karpplan.constraints.view import NodeView, node_views
from karpplan.model.labels import HOSTNAME

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ortools.sat.python import cp_model

    from karpplan.constraints.view import SolvedPlan
    from karpplan.model.pods import Pod, PodAffinityTerm, PodTemplate
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import GroupInfo, Problem
    from karpplan.scheduling.topology import AffinityRule, AffinityTerm

    _Placed = dict[int, list[tuple[NodeView, Pod]]]  # id(template) -> the plan's pods of it, with their nodes


def required_affinity_keys(template: PodTemplate) -> tuple[str, ...]:
    """The topology keys of a pod's required pod-affinity terms (hostname: every node has one)."""
    return tuple(dict.fromkeys(t.topology_key for t in template.pod_affinity.required if t.topology_key != HOSTNAME))


def _has_key(labels: Mapping[str, str], key: str) -> bool:
    return key in labels


class InterPodAffinityKind(ConstraintKind):
    name = "inter-pod-affinity"
    summary = "required pod affinity joins matching pods' domains; required anti-affinity keeps them apart"
    messages = {
        "affinity": "node(s) didn't match pod affinity rules",
        "no_domain": "unsatisfiable topology constraint for pod affinity, key={key} (no node of this NodePool "
                     "carries the label {key}, so it has no domain to join)",
        "anti_affinity": "node(s) didn't match pod anti-affinity rules",
        "existing_anti_affinity": "node(s) didn't satisfy existing pods anti-affinity rules",
    }

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        """A node without the topology key of a required affinity term is no domain for it (the rest of the
        rule depends on the plan's other pods, see the module docstring)."""
        labels = info.node.labels
        if any(not _has_key(labels, key) for key in required_affinity_keys(template)):
            return [self.reason("affinity")]
        return []

    def option_filter(self, template: PodTemplate) -> Callable[[Mapping[str, str]], str | None] | None:
        """For launch options' labels: the first required affinity term's topology key they lack, worded as
        Karpenter does (None: the pod has no such term)."""
        keys = required_affinity_keys(template)
        if not keys:
            return None

        def missing_key(labels: Mapping[str, str]) -> str | None:
            key = next((k for k in keys if not _has_key(labels, k)), None)
            return None if key is None else self.reason("no_domain", key=key)

        return missing_key

    def exclude(self, model: CountsModel) -> None:
        """Domains the anti-affinity of bound pods, or of the group itself against bound pods, closes."""
        topo = model.problem.topology
        ns_labels = model.problem.namespace_labels
        existing = model.problem.existing
        for g in model.groups:
            pod_template = g.template
            for term, value in topo.existing_anti:
                if not term.matches(pod_template.namespace, pod_template.labels, ns_labels):
                    continue
                for e in g.existing_ok:
                    if existing[e].node.domain(term.key) == value:
                        model.banned_existing.add((g.index, e))
                for o in model.group_options[g.index]:
                    if term.key != HOSTNAME and o.labels.get(term.key) == value:
                        model.banned_option.add((g.index, o.index))
            anti = topo.anti_affinity.get(id(pod_template))
            if anti is not None:
                for i, term in enumerate(anti.terms):
                    taken = {d for d, c in anti.existing[i].items() if c > 0}
                    for e in g.existing_ok:
                        if existing[e].node.domain(term.key) in taken:
                            model.banned_existing.add((g.index, e))
                    if term.key != HOSTNAME:
                        for o in model.group_options[g.index]:
                            if o.labels.get(term.key) in taken:
                                model.banned_option.add((g.index, o.index))

    def add_to_model(self, model: CountsModel) -> None:
        AffinityRows(model).add()

    def add_to_slot_model(self, model: SlotCountsModel) -> None:
        """The same rows, and one domain opened between groups whose pods match one another's required
        affinity (the first pod of all of them opens it; the verifier's rule on the final state)."""
        rows = AffinityRows(model, joint=True)
        rows.add()
        m = model.model
        for (key, clique), (opens, cap) in rows.joint_opens.items():
            m.add(sum(opens) <= cap)
            if key == HOSTNAME:
                continue
            # The verifier's rule: a domain holding pods of the clique holds another matching pod for each,
            # unless the plan's only matching pod is that one.
            existing = rows.joint_existing[(key, clique)]
            per_domain: dict[str, list[cp_model.IntVar]] = defaultdict(list)
            for g in clique:
                for value, own in rows.domains_of(g, key).items():
                    per_domain[value].extend(own)
            solo = m.new_bool_var(f"solo_{key}_{clique[0]}")
            everything = [v for own in per_domain.values() for v in own]
            m.add(sum(everything) + sum(existing.values()) <= 1).only_enforce_if(solo)
            big = sum(model.groups[g].size for g in clique)
            for value, own in per_domain.items():
                held = m.new_bool_var(f"held_{clique[0]}_{value}")
                m.add(sum(own) <= big * held)
                m.add(sum(own) + existing.get(value, 0) >= 2).only_enforce_if([held, solo.Not()])

    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        views = node_views(solution)
        placed: list[tuple[NodeView, Pod, bool]] = []  # (node, pod, pending)
        for view in views:
            placed.extend((view, p, False) for p in view.bound)
            placed.extend((view, p, True) for _, p in view.pending)
        ns_labels = problem.namespace_labels
        by_domain: dict[str, dict[str | None, list[tuple[Pod, bool]]]] = {}
        out: list[Violation] = []
        for view, pod, pending in placed:
            if view.fargate:
                continue
            for term in pod.template.pod_anti_affinity.required:
                domain = view.domain(term.topology_key)
                if domain is None:
                    continue
                if term.topology_key not in by_domain:
                    index: dict[str | None, list[tuple[Pod, bool]]] = defaultdict(list)
                    for v, q, q_pending in placed:
                        index[v.domain(term.topology_key)].append((q, q_pending))
                    by_domain[term.topology_key] = index
                for other, other_pending in by_domain[term.topology_key].get(domain, []):
                    if other is pod or not (pending or other_pending):
                        continue
                    if _matches(term, pod, other, ns_labels):
                        out.append(Violation(self.name, pod.key, view.name,
                                             f"{pod.key}: anti-affinity on {term.topology_key} violated by "
                                             f"{other.key} in {domain}", term.topology_key))
                        break
            if pending:
                out.extend(self._affinity(view, pod, placed, ns_labels))
        flagged = {v.pod for v in out}
        for view, pod in unreachable([t for t in placed if not t[0].fargate], matcher(ns_labels, _matches)):
            if pod.key not in flagged:
                out.append(Violation(self.name, pod.key, view.name,
                                     f"{pod.key}: affinity: no order of placement lets it in (pods its terms select "
                                     f"run elsewhere before a partner could join it here)",
                                     pod.template.pod_affinity.required[0].topology_key))
        return out

    def _affinity(self, view: NodeView, pod: Pod, placed: list[tuple[NodeView, Pod, bool]],
                  ns_labels: Mapping[str, Mapping[str, str]]) -> list[Violation]:
        """kube-scheduler: the pods matching ALL the required terms count; each term needs one of them in
        the node's domain of its key, unless none exists anywhere and the pod matches all its own terms."""
        terms = pod.template.pod_affinity.required
        if not terms:
            return []
        out: list[Violation] = []
        missing = [t.topology_key for t in terms if view.domain(t.topology_key) is None]
        if missing:
            return [Violation(self.name, pod.key, view.name,
                              f"{pod.key}: affinity on {missing[0]}: {view.name} has no such label", missing[0])]
        matched = [v for v, q, _ in placed if q is not pod and all(_matches(t, pod, q, ns_labels) for t in terms)]
        if not matched and all(_matches(t, pod, pod, ns_labels) for t in terms):
            return []  # the first pod of a self-matching group
        for term in terms:
            domain = view.domain(term.topology_key)
            if not any(v.domain(term.topology_key) == domain for v in matched):
                out.append(Violation(self.name, pod.key, view.name,
                                     f"{pod.key}: affinity on {term.topology_key}: no matching pod in {domain}",
                                     term.topology_key))
        return out

    def _preference_outcomes(self, problem: Problem, solution: SolvedPlan
                             ) -> tuple[_Placed, list[tuple[GroupInfo, AffinityRule, list[tuple[NodeView, Pod]]]]]:
        """The plan's pods by template, and each preferred pod (anti-)affinity term of a group with placed
        pods that some plan can meet, with the group's pods that miss it in this plan (empty: honoured; see
        the module docstring)."""
        topo = problem.topology
        ns_labels = problem.namespace_labels
        views = node_views(solution)
        placed: _Placed = defaultdict(list)  # by template: one label set each
        for view in views:
            if not view.fargate:
                for p in [*view.bound, *(q for _, q in view.pending)]:
                    placed[id(p.template)].append((view, p))
        homes: dict[int, list[tuple[NodeView, Pod]]] = defaultdict(list)
        for view in views:
            for group, pod in view.pending:
                homes[group.index].append((view, pod))
        outcomes = []
        for group in problem.groups:
            mine = homes.get(group.index)
            if not mine:
                continue
            for rule in [*topo.preferred_affinity.get(id(group.template), []),
                         *topo.preferred_anti.get(id(group.template), [])]:
                missed = None if _closed(rule, group, problem) else _missed(rule, mine, placed, ns_labels)
                if missed is not None:  # None: no plan can meet it
                    outcomes.append((group, rule, missed))
        return placed, outcomes

    def unmet_preferences(self, problem: Problem, solution: SolvedPlan) -> list[UnmetPreference]:
        """Each preferred pod (anti-)affinity term some pod of the plan misses, named by where it is written,
        its workload, weight, topology key and selector, with how many of the workload's pods miss it and
        one domain where it is missed."""
        return self.preferences(problem, solution)[1]

    def preferences(self, problem: Problem, solution: SolvedPlan) -> tuple[set[KeptPreference], list[UnmetPreference]]:
        found: dict[str, _Misses] = {}  # by preference, in the groups' order
        placed, outcomes = self._preference_outcomes(problem, solution)
        kept = {(group.index, id(rule.terms[0].term)) for group, rule, missed in outcomes if not missed}
        for group, rule, missed in outcomes:
            workload = group.group.pods[0].workload
            preference = f"{rule.terms[0].term.origin}: {workload}: {_describe(rule)}"
            misses = found.setdefault(preference, _Misses(rule))
            misses.pods += group.size
            misses.missed.extend(missed)
        ns_labels = problem.namespace_labels
        return kept, [UnmetPreference(preference, f" for {len(m.missed)} of {m.pods} pod(s)"
                                                  f"{m.where(placed, ns_labels)}", _late_zone_note(m.rule))
                      for preference, m in found.items() if m.missed]


def _matches(term: PodAffinityTerm, owner: Pod, other: Pod, ns_labels: Mapping[str, Mapping[str, str]]) -> bool:
    """Does `owner`'s term select `other` (namespace scope and label selector)?"""
    selector = term.selector_for(owner.labels)
    return (selector is not None and term.namespace_in_scope(owner.namespace, other.namespace, ns_labels)
            and selector.matches(other.labels))


@dataclass
class _Misses:
    """The pods of one workload that miss one preferred term."""

    rule: AffinityRule
    pods: int = 0
    missed: list[tuple[NodeView, Pod]] = field(default_factory=list)

    def where(self, placed: Mapping[int, list[tuple[NodeView, Pod]]], ns_labels: Mapping[str, Mapping[str, str]]) -> str:
        """Where the term is missed: for anti-affinity the domain holding the most pods it selects, for
        affinity that no such pod shares the pods' domain (or that their nodes lack the key)."""
        term = self.rule.terms[0]
        key = term.key
        if not self.rule.anti:
            if all(v.domain(key) is None for v, _ in self.missed):
                return f": their nodes lack the label {key}"
            return f": no pod it selects shares their {key}"
        domains = {v.domain(key) for v, _ in self.missed}
        held = {d: n for d, n in _held(term, placed, ns_labels).items() if d is not None and d in domains}
        worst = max(sorted(held), key=lambda d: held[d])
        return f": {worst} holds {held[worst]} pod(s) it selects"


def _selects(term: AffinityTerm, pod: Pod, ns_labels: Mapping[str, Mapping[str, str]]) -> bool:
    return term.matches(pod.namespace, pod.labels, ns_labels)


def _closed(rule: AffinityRule, group: GroupInfo, problem: Problem) -> bool:
    """Is every domain the group may use (its launch options' and usable existing nodes') already
    holding a bound pod this preferred anti-affinity term selects? Then no plan can honour it."""
    if not rule.anti:
        return False
    key = rule.terms[0].key
    if key == HOSTNAME and group.options:
        return False  # a new node is a domain of its own
    taken = rule.existing[0]
    domains = {o.labels.get(key) for o in group.options}
    domains |= {problem.existing[e].node.domain(key) for e in group.existing_ok}
    return all(d is not None and taken.get(d, 0) > 0 for d in domains)


def _held(term: AffinityTerm, placed: Mapping[int, list[tuple[NodeView, Pod]]],
          ns_labels: Mapping[str, Mapping[str, str]]) -> dict[str | None, int]:
    """Domain of the term's key (None: a node without it) -> placed pods the term selects."""
    held: dict[str | None, int] = defaultdict(int)
    for pods in placed.values():
        if _selects(term, pods[0][1], ns_labels):  # one template, one namespace and label set
            for v, _ in pods:
                held[v.domain(term.key)] += 1
    return held


def _missed(rule: AffinityRule, mine: list[tuple[NodeView, Pod]], placed: Mapping[int, list[tuple[NodeView, Pod]]],
            ns_labels: Mapping[str, Mapping[str, str]]) -> list[tuple[NodeView, Pod]] | None:
    """The group's placed pods (`mine`) that miss this preferred term in the plan, or None when no plan
    can meet it (an affinity term that selects no placed pod and not its owner)."""
    term = rule.terms[0]
    key = term.key
    held = _held(term, placed, ns_labels)
    total = sum(held.values())
    if not rule.anti and not total and not rule.self_match:
        return None
    out: list[tuple[NodeView, Pod]] = []
    me = 1 if _selects(term, mine[0][1], ns_labels) else 0  # the pod itself, if the term selects it
    for view, pod in mine:
        domain = view.domain(key)
        if rule.anti:
            if domain is not None and held[domain] > me:
                out.append((view, pod))
        elif domain is None or held[domain] <= me and (total > me or not rule.self_match):
            out.append((view, pod))
    return out


LATE_ZONE = ("; Karpenter records a pod's anti-affinity in every {key} its new NodeClaim may still launch in, so in "
             "one provisioning batch the replicas after the first relax this preference and the NodeClaims launch "
             "wherever is cheapest: a topologySpreadConstraint on {key} (ScheduleAnyway or DoNotSchedule) spreads "
             "them, as Karpenter narrows a NodeClaim to the domain a spread picks")


def _late_zone_note(rule: AffinityRule) -> str:
    """Why Karpenter leaves a preferred anti-affinity on a domain wider than a node unmet in a batch (its
    pessimistic recording, karpenter-scheduler.md §9.4); "" for other preferences."""
    key = rule.terms[0].key
    return LATE_ZONE.format(key=key) if rule.anti and key != HOSTNAME else ""


def _describe(rule: AffinityRule) -> str:
    """`preferred pod anti-affinity (weight 100, topologyKey kubernetes.io/hostname, selector app In [web])`,
    with the namespaces when the term names some."""
    term = rule.terms[0]
    raw = term.term
    selector = "none" if term.selector is None else str(term.selector)
    scope = ""
    if raw.namespaces:
        scope += f", namespaces {', '.join(sorted(raw.namespaces))}"
    if raw.namespace_selector is not None:
        scope += f", namespaceSelector {raw.namespace_selector}"
    kind = "anti-affinity" if rule.anti else "affinity"
    return f"preferred pod {kind} (weight {rule.weight}, topologyKey {term.key}, selector {selector}{scope})"


INTER_POD_AFFINITY = InterPodAffinityKind()
