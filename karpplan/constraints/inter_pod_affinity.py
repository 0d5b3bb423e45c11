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
  terms (the first pod); a node without the term's topology key is no domain.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from karpplan.constraints.base import (
    ConstraintKind,
    CountsModel,
    KeptPreference,
    SlotCountsModel,
    UnmetPreference,
    Violation,
)
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


class _AffinityRows:
    """The (anti-)affinity rows of one model, with the caches its terms share."""

    def __init__(self, model: CountsModel, joint: bool = False) -> None:
        self.owner = model
        self.m = model.model
        self.anti_cliques: set[tuple[int, ...]] = set()
        self.soft_cache: dict[tuple[int, str], dict[str, list[cp_model.IntVar]]] = {}
        # Exact slot model: groups that match one another's required affinity open one domain between them.
        self.joint = joint
        self.joint_opens: dict[tuple[str, tuple[int, ...]], tuple[list[cp_model.IntVar], int]] = {}
        self.joint_existing: dict[tuple[str, tuple[int, ...]], Mapping[str, int]] = {}
        self.joint_first: dict[tuple[int, str], dict[str, cp_model.IntVar]] = {}  # (group, key) -> openers per domain

    def add(self) -> None:
        model = self.owner
        topo = model.problem.topology
        ns_labels = model.problem.namespace_labels
        for g in model.groups:
            pod_template = g.template
            anti = topo.anti_affinity.get(id(pod_template))
            if anti is not None:
                for term in anti.terms:
                    matched = [h for h in model.groups
                               if term.matches(h.template.namespace, h.template.labels, ns_labels)]
                    self.anti_term(g, term.key, matched)
            aff = topo.affinity.get(id(pod_template))
            if aff is not None:
                partners = [h for h in model.groups if h is not g and all(
                    t.matches(h.template.namespace, h.template.labels, ns_labels) for t in aff.terms)]
                for i, term in enumerate(aff.terms):
                    self.affinity_term(g, term.key, aff.existing[i], aff.self_match, partners)
            for rule in topo.preferred_affinity.get(id(pod_template), []):
                term = rule.terms[0]
                partners = [h for h in model.groups if h is not g
                            and term.matches(h.template.namespace, h.template.labels, ns_labels)]
                self.preferred_affinity_term(g, rule, partners)
            for rule in topo.preferred_anti.get(id(pod_template), []):
                term = rule.terms[0]
                matched = [h for h in model.groups if term.matches(h.template.namespace, h.template.labels, ns_labels)]
                self.preferred_anti_term(g, rule, matched)

    def domains_of(self, group: int, key: str) -> dict[str, list[cp_model.IntVar]]:
        """Variables of `group` per domain value of `key` (new nodes only for non-hostname keys)."""
        model = self.owner
        if key != HOSTNAME:
            return model.domain_map(group, key, None)
        out: dict[str, list[cp_model.IntVar]] = defaultdict(list)
        for e, v in model.x_of[group]:
            value = model.problem.existing[e].node.domain(key)
            if value is not None:
                out[value].append(v)
        return out

    def anti_term(self, g: GroupInfo, key: str, matched: list[GroupInfo]) -> None:
        m, model = self.m, self.owner
        mine = self.domains_of(g.index, key)
        selfish = any(h is g for h in matched)
        others = [h for h in matched if h is not g]
        for value, own in mine.items():
            if selfish:
                m.add(sum(own) <= 1)
            if others:
                theirs = [v for h in others for v in self.domains_of(h.index, key).get(value, [])]
                if theirs:
                    receives = m.new_bool_var(f"arecv_g{g.index}_{value}")
                    m.add(sum(own) <= g.size * receives)
                    m.add(sum(theirs) == 0).only_enforce_if(receives)
        if key == HOSTNAME and not selfish and others and self.joint:
            # Slot model: each slot is one node, so a node holding this group holds none of the matched pods
            # (the aggregated model leaves this per-node rule to its decoder).
            for k, v in model.y_of[g.index]:
                theirs = [model.y[(h.index, k)] for h in others if (h.index, k) in model.y]
                if theirs:
                    receives = m.new_bool_var(f"hxrecv_g{g.index}_k{k}")
                    m.add(v <= g.size * receives)
                    m.add(sum(theirs) == 0).only_enforce_if(receives)
        if key == HOSTNAME and selfish:
            clique = tuple(sorted(h.index for h in matched))
            if all(self.owns_matching_hostname_anti(h, matched) for h in matched):
                # Every matched pod carries the term: at most one of them per node, no indicator needed.
                if clique not in self.anti_cliques:
                    self.anti_cliques.add(clique)
                    model.cap_per_node(matched, 1)
                return
            for k, v in model.y_of[g.index]:
                matching = [model.y[(h.index, k)] for h in matched if (h.index, k) in model.y]
                receives = m.new_bool_var(f"harecv_g{g.index}_k{k}")
                m.add(v <= g.size * receives)
                m.add(sum(matching) <= model.n[k]).only_enforce_if(receives)

    def owns_matching_hostname_anti(self, h: GroupInfo, matched: list[GroupInfo]) -> bool:
        """Does `h` carry a hostname anti-affinity term that matches every group of `matched`?"""
        anti = self.owner.problem.topology.anti_affinity.get(id(h.template))
        if anti is None:
            return False
        ns_labels = self.owner.problem.namespace_labels
        return any(t.key == HOSTNAME and all(t.matches(x.template.namespace, x.template.labels, ns_labels)
                                             for x in matched) for t in anti.terms)

    def affinity_term(self, g: GroupInfo, key: str, existing: Mapping[str, int], self_match: bool,
                      partners: list[GroupInfo]) -> None:
        m, model = self.m, self.owner
        mine = self.domains_of(g.index, key)
        anywhere = any(c > 0 for c in existing.values())
        opened: dict[str, cp_model.IntVar] = {}
        for value, own in mine.items():
            if existing.get(value, 0) > 0:
                continue
            receives = m.new_bool_var(f"frecv_g{g.index}_{value}")
            m.add(sum(own) <= g.size * receives)
            partner_vars = [v for h in partners for v in self.domains_of(h.index, key).get(value, [])]
            opener = m.new_bool_var(f"open_g{g.index}_{value}")
            if partner_vars:
                with_partner = m.new_bool_var(f"partner_g{g.index}_{value}")
                m.add(sum(partner_vars) >= 1).only_enforce_if(with_partner)
                m.add_bool_or([with_partner, opener]).only_enforce_if(receives)
            else:
                m.add_implication(receives, opener)
            opened[value] = opener
        if opened:
            m.add(sum(opened.values()) <= (1 if self_match and not anywhere else 0))
            first = self.joint_first.get((g.index, key))
            if self.joint and self_match and first is not None:  # another term on the key: one opening for all
                for value in opened.keys() & first.keys():
                    m.add(opened[value] == first[value])
            elif self.joint and self_match:
                self.joint_first[(g.index, key)] = opened
                clique = (key, tuple(sorted({g.index, *(h.index for h in partners)})))
                shared, cap = self.joint_opens.setdefault(clique, ([], 1))
                shared.extend(opened.values())
                self.joint_opens[clique] = (shared, 0 if anywhere else cap)
                self.joint_existing[clique] = existing
        if key == HOSTNAME and self_match and not anywhere:
            # All replicas share one new node: at most one option holds them.
            holders = []
            for k, v in model.y_of[g.index]:
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
    def soft_domains(self, group: int, key: str) -> dict[str, list[cp_model.IntVar]]:
        """Variables of `group` per domain of `key`. For hostname: existing nodes by name and, as an
        approximation, each launch option's new nodes as one domain (the model does not tell them apart)."""
        cached = self.soft_cache.get((group, key))
        if cached is None:
            if key != HOSTNAME:
                cached = self.owner.domain_map(group, key, None)
            else:
                cached = {value: list(own) for value, own in self.domains_of(group, key).items()}
                for k, v in self.owner.y_of[group]:
                    cached[f"<new nodes of option {k}>"] = [v]  # no hostname has '<'
            self.soft_cache[(group, key)] = cached
        return cached

    def preferred_affinity_term(self, g: GroupInfo, rule: AffinityRule, partners: list[GroupInfo]) -> None:
        m, model = self.m, self.owner
        key, weight, existing = rule.terms[0].key, rule.weight, rule.existing[0]
        may_open = rule.self_match and not any(c > 0 for c in existing.values())
        theirs = [self.soft_domains(h.index, key) for h in partners]
        model.max_soft += weight * g.size
        opens: list[cp_model.IntVar] = []
        for value, own in self.soft_domains(g.index, key).items():
            if existing.get(value, 0) > 0:
                continue  # met
            partner_vars = [v for domains in theirs for v in domains.get(value, [])]
            if not partner_vars and not may_open:
                model.soft_terms.extend((v, weight) for v in own)  # never met here
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
            model.soft_terms.append((unmet, weight))
        if len(opens) > 1:
            m.add(sum(opens) <= 1)

    def preferred_anti_term(self, g: GroupInfo, rule: AffinityRule, matched: list[GroupInfo]) -> None:
        m, model = self.m, self.owner
        key, weight, existing = rule.terms[0].key, rule.weight, rule.existing[0]
        selfish = any(h is g for h in matched)
        others = [h for h in matched if h is not g]
        theirs = [self.domains_of(h.index, key) for h in others]
        others_size = sum(h.size for h in others)
        model.max_soft += weight * g.size
        for value, own in self.domains_of(g.index, key).items():
            if existing.get(value, 0) > 0:
                model.soft_terms.extend((v, weight) for v in own)  # a bound pod it avoids is there
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
            model.soft_terms.append((unmet, weight))
        if key != HOSTNAME or not matched:
            return
        # New nodes of one option, which the model does not tell apart (approximations): a term matching
        # its own group is met by one matched pod per node, and the matched pods beyond the option's node
        # count miss it; a term matching only other groups is met while some node of the option holds
        # none of their pods.
        big = g.size + others_size
        if selfish:
            model.max_soft += weight * big
        for k, v in model.y_of[g.index]:
            other_vars = [model.y[(h.index, k)] for h in others if (h.index, k) in model.y]
            if selfish:
                excess = m.new_int_var(0, big, f"aexcess_g{g.index}_k{k}")
                if other_vars:
                    receives = m.new_bool_var(f"aexrecv_g{g.index}_k{k}")
                    m.add(v <= g.size * receives)
                    m.add(v + sum(other_vars) <= model.n[k] + excess).only_enforce_if(receives)
                else:
                    m.add(v <= model.n[k] + excess)
                model.soft_terms.append((excess, weight))
            elif other_vars:
                clash = m.new_bool_var(f"aclash_g{g.index}_k{k}")
                m.add(sum(other_vars) + 1 <= model.n[k] + (others_size + 1) * clash)
                unmet = m.new_int_var(0, g.size, f"aunmet_g{g.index}_k{k}")
                m.add(v + g.size * clash <= unmet + g.size)
                model.soft_terms.append((unmet, weight))


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
        _AffinityRows(model).add()

    def add_to_slot_model(self, model: SlotCountsModel) -> None:
        """The same rows, and one domain opened between groups whose pods match one another's required
        affinity (the first pod of all of them opens it; the verifier's rule on the final state)."""
        rows = _AffinityRows(model, joint=True)
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
                                                  f"{m.where(placed, ns_labels)}")
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
