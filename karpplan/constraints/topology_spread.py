"""Pod topology spread constraints (kube-scheduler's PodTopologySpread; Karpenter's topology groups).

* Filter: an existing node lacking the topology key of one of the pod's hard constraints (hostname
  excepted). The counting rules depend on the rest of the plan: the greedy engine checks them per
  placement (`scheduling/state.py`), from the rules of `scheduling/topology.py`.
* Model: the batch form of the per-placement rule: a domain that receives a self-matching pod ends with
  `count <= min + maxSkew` (the minimum over the eligible domains, 0 when fewer than minDomains); hostname
  rules on new nodes cap matching pods per node at maxSkew (Karpenter's global minimum for a new node is
  0); existing nodes follow kube-scheduler's rule. Before the variables exist, placements into domains
  the rule can never admit are excluded (`exclude`). Soft constraints are penalised slack.
* Verifier: for every hard constraint whose selector matches its own pod, per domain receiving one of
  the pods, the matching pods (same namespace, bound ones included) number at most `maxSkew` on a new
  node for hostname, else at most the global minimum over eligible domains (nodes with the key, honouring
  nodeAffinityPolicy and nodeTaintsPolicy; 0 with fewer than minDomains domains) plus maxSkew.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from karpplan.constraints.base import ConstraintKind, CountsModel, KeptPreference, UnmetPreference, Violation
from karpplan.constraints.spread_counts import (
    constraint_skew,
    global_minimum,
    minimum_pinned,
    next_domains,
    node_cap,
    policies_count,
    skew_limit,
)
from karpplan.constraints.view import PlanTally
from karpplan.model.labels import HOSTNAME
from karpplan.model.selectors import LabelIndex

if TYPE_CHECKING:
    from ortools.sat.python import cp_model
    from ortools.sat.python.cp_model import LinearExpr

    from karpplan.constraints.view import SolvedPlan
    from karpplan.model.pods import PodTemplate, TopologySpreadConstraint
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import GroupInfo, Problem
    from karpplan.scheduling.topology import SpreadRule



def spread_allowed_domains(rule: SpreadRule) -> set[str] | None:
    """Domains a pod of the rule's owner may enter at all (None = every existing domain, for hostname)."""
    if rule.hostname:
        if rule.self_match:
            return None
        return next_domains(rule, rule.base_counts, list(rule.existing_domains.values()), 0) | {"<new>"}
    domains = rule.static_domains()
    if rule.self_match:
        return set(domains)
    return next_domains(rule, rule.base_counts, domains, 0)


class _SpreadRows:
    """The spread rows of one model, with what groups sharing a constraint share."""

    def __init__(self, model: CountsModel) -> None:
        self.owner = model
        self.m = model.model
        self.zonal_cache: dict[tuple[object, ...], tuple[dict[str, LinearExpr | int], cp_model.IntVar, int]] = {}
        self.shared_caps: set[tuple[object, ...]] = set()

    def add(self) -> None:
        model = self.owner
        topo = model.problem.topology
        raises: dict[int, list[GroupInfo]] = {}
        by_signature: dict[tuple[object, ...], list[GroupInfo]] = defaultdict(list)
        # Groups by their labels, so a rule tests only the groups its selector may match (thousands of
        # Deployments spreading over their own labels: not every group against every rule).
        by_labels: LabelIndex[GroupInfo] = LabelIndex()
        for h in model.groups:
            by_labels.add(h, h.template.namespace, h.template.labels)
        for g in model.groups:
            for rule in topo.rules_for(g.template):
                raises[id(rule)] = [h for h in by_labels.candidates(rule.owner.namespace, rule.selector)
                                    if rule.counts(h.template.namespace, h.template.labels)]
                by_signature[rule.signature()].append(g)
        for g in model.groups:
            for rule in topo.rules_for(g.template):
                owners = by_signature[rule.signature()]
                if rule.hostname:
                    self.hostname(g, rule, raises[id(rule)], owners)
                elif rule.self_match:
                    self.zonal(g, rule, raises[id(rule)])

    def zonal(self, g: GroupInfo, rule: SpreadRule, raisers: list[GroupInfo]) -> None:
        m, model = self.m, self.owner
        domains = sorted(rule.static_domains())
        if not domains:
            return
        # Groups with the same constraint share the domain counts and their minimum.
        signature = rule.signature()
        shared = self.zonal_cache.get(signature)
        if shared is None:
            counts: dict[str, LinearExpr | int] = {}
            for d in domains:
                counts[d] = rule.base_counts.get(d, 0) + sum(
                    v for h in raisers for v in model.placed_in(h.index, rule.key, d, rule))
            big = sum(h.size for h in raisers) + max(rule.base_counts.values(), default=0) + 1
            minimum = m.new_int_var(0, big, f"min_g{g.index}_{rule.key}")
            if minimum_pinned(rule, len(domains)):
                m.add(minimum == 0)
            else:
                for d in domains:
                    m.add(minimum <= counts[d])
            shared = (counts, minimum, big)
            self.zonal_cache[signature] = shared
        counts, minimum, big = shared
        for d in domains:
            own = model.placed_in(g.index, rule.key, d, rule)
            if not own:
                continue
            receives = m.new_bool_var(f"recv_g{g.index}_{d}")
            m.add(sum(own) <= g.size * receives)
            if rule.hard:
                m.add(counts[d] <= skew_limit(rule, minimum)).only_enforce_if(receives)
            else:
                slack = m.new_int_var(0, big, f"slack_g{g.index}_{d}")
                m.add(counts[d] <= skew_limit(rule, minimum) + slack).only_enforce_if(receives)
                model.soft_terms.append((slack, 10))
                model.max_soft += 10 * big

    def hostname(self, g: GroupInfo, rule: SpreadRule, raisers: list[GroupInfo], owners: list[GroupInfo]) -> None:
        m, model = self.m, self.owner
        big = sum(h.size for h in raisers) + max(rule.base_counts.values(), default=0) + 1
        # New nodes: Karpenter's global minimum is 0, so a node holding g's pods has at most maxSkew matches.
        owner_ids = {h.index for h in owners}
        if rule.hard and all(h.index in owner_ids for h in raisers):
            # Every pod the rule counts carries it: any node holding one obeys it, no indicator needed.
            signature = rule.signature()
            if signature not in self.shared_caps:
                self.shared_caps.add(signature)
                model.cap_per_node(raisers, node_cap(rule))
        else:
            for k, v in model.y_of[g.index]:
                matching = [model.y[(h.index, k)] for h in raisers if (h.index, k) in model.y]
                receives = m.new_bool_var(f"hrecv_g{g.index}_k{k}")
                m.add(v <= g.size * receives)
                if rule.hard:
                    m.add(sum(matching) <= node_cap(rule) * model.n[k]).only_enforce_if(receives)
                else:
                    slack = m.new_int_var(0, big, f"hslack_g{g.index}_k{k}")
                    m.add(sum(matching) <= node_cap(rule) * model.n[k] + slack).only_enforce_if(receives)
                    model.soft_terms.append((slack, 10))
                    model.max_soft += 10 * big
        if not rule.self_match or not rule.hard:
            return
        # Existing nodes: kube-scheduler's rule with the minimum over eligible nodes (and 0 once a new one exists).
        existing = model.problem.existing
        eligible = [e for e, info in enumerate(existing) if info.node.name in rule.existing_domains]
        eligible_set = set(eligible)
        own_nodes = [e for e, _ in model.x_of[g.index] if e in eligible_set]
        if not own_nodes:
            return
        count = {}
        for e in eligible:
            name = existing[e].node.name
            count[e] = rule.base_counts.get(name, 0) + sum(model.x[(h.index, e)] for h in raisers if (h.index, e) in model.x)
        minimum = m.new_int_var(0, big, f"hmin_g{g.index}")
        if minimum_pinned(rule, len(eligible)):
            m.add(minimum == 0)
        for e in eligible:
            m.add(minimum <= count[e])
        # Any new node of the plan that is an eligible domain (inclusion policies), whichever group it was
        # opened for, is a hostname domain holding none of g's pods: with nodeTaintsPolicy Ignore (the
        # default) a node whose taint g does not tolerate counts too (kube-scheduler.md §2.2).
        new_nodes = [n for k, n in model.n.items() if rule.option_counts(model.option(k))]
        if new_nodes:
            any_new = m.new_bool_var(f"anynew_g{g.index}")
            m.add(sum(new_nodes) == 0).only_enforce_if(any_new.Not())
            m.add(minimum == 0).only_enforce_if(any_new)
        for e in own_nodes:
            receives = m.new_bool_var(f"erecv_g{g.index}_e{e}")
            m.add(model.x[(g.index, e)] <= g.size * receives)
            m.add(count[e] <= skew_limit(rule, minimum)).only_enforce_if(receives)


class TopologySpreadKind(ConstraintKind):
    name = "topology-spread"
    summary = "matching pods spread over topology domains within maxSkew of the least loaded domain"
    messages = {
        "mismatch": "node(s) didn't match pod topology spread constraints",
        "missing_label": "node(s) didn't match pod topology spread constraints (missing required label)",
        # Karpenter's topology error for a new NodeClaim, with the figures that decided it.
        "unsatisfiable": "unsatisfiable topology constraint for topology spread, key={key} (counts = {counts}, "
                         "podDomains = {pod_domains}, nodeDomains = {node_domains}; maxSkew {max_skew}, min "
                         "{minimum}{min_domains})",
        "fargate_minimum": "; existing Fargate node(s) {nodes} count as {key} domains (nodeTaintsPolicy {policy}) "
                           "and hold the minimum at {minimum}; set nodeTaintsPolicy: Honor to leave them out",
    }

    def unsatisfiable(self, rule: SpreadRule, counts: str, pod_domains: str, node_domains: str, minimum: int) -> str:
        """Karpenter's topology error for a new NodeClaim, with the rule's maxSkew and minDomains."""
        min_domains = f", minDomains {rule.min_domains}" if rule.constraint.min_domains else ""
        return self.reason("unsatisfiable", key=rule.key, counts=counts, pod_domains=pod_domains,
                           node_domains=node_domains, max_skew=rule.max_skew, minimum=minimum, min_domains=min_domains)

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        for c in template.hard_spread:
            if c.topology_key not in info.node.labels and c.topology_key != HOSTNAME:
                return [self.reason("missing_label")]
        return []

    def exclude(self, model: CountsModel) -> None:
        """Placements into domains a hard rule never admits (unmatched or already too full)."""
        topo = model.problem.topology
        for g in model.groups:
            for rule in topo.rules_for(g.template):
                if not rule.hard:
                    continue
                allowed = spread_allowed_domains(rule)
                for e in g.existing_ok:
                    d = rule.existing_domains.get(model.problem.existing[e].node.name)
                    if d is None or (allowed is not None and d not in allowed):
                        model.banned_existing.add((g.index, e))
                for o in model.group_options[g.index]:
                    if not rule.option_counts(o) or not rule.hostname and (allowed is None or o.labels.get(rule.key) not in allowed):
                        model.banned_option.add((g.index, o.index))

    def add_to_model(self, model: CountsModel) -> None:
        _SpreadRows(model).add()

    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        return self._hard_skews(problem, solution, launch_domains=False)

    def launch_violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        """`violations` over Karpenter's domains: every zone a pod could launch into counts, empty or not.
        The engines plan new nodes so (Karpenter would not launch a plan that leaves a launchable zone
        empty past maxSkew), while the verifier judges the final state as kube-scheduler does, where a
        zone without nodes is no domain; tests that search plans exhaustively judge them by both."""
        return self._hard_skews(problem, solution, launch_domains=True)

    def _hard_skews(self, problem: Problem, solution: SolvedPlan, launch_domains: bool) -> list[Violation]:
        tally = PlanTally(solution)
        out: list[Violation] = []
        for group in problem.groups:
            rules = [r for r in problem.topology.rules_for(group.template) if r.constraint.hard]
            homes = tally.homes(group) if rules else set()
            for rule in rules if homes else ():
                more = rule.static_domains() if launch_domains and not rule.hostname else ()
                out.extend(self._check(group.template, rule.constraint, homes, tally, more))
                out.extend(self._unlabelled(group.template, rule.constraint, homes, tally))
        return out

    def _unlabelled(self, pod_template: PodTemplate, c: TopologySpreadConstraint, homes: set[str],
                    tally: PlanTally) -> list[Violation]:
        """A pod of a hard spread on a node without the spread's key: kube-scheduler's filter refuses that node
        ("missing required label"), as `filter_node` says for existing nodes; Fargate's nodes aside."""
        if c.topology_key == HOSTNAME:
            return []
        out = []
        for name in sorted(homes):
            view = tally.by_name.get(name)
            if view is not None and not view.fargate and view.domain(c.topology_key) is None:
                out.append(Violation(self.name, "", name, f"{pod_template.namespace} spread on {c.topology_key}: "
                                     f"{self.reason('missing_label')}", c.topology_key))
        return out

    def _check(self, pod_template: PodTemplate, c: TopologySpreadConstraint, homes: set[str],
               tally: PlanTally, more_domains: Iterable[str] = ()) -> list[Violation]:
        found = self._skews(pod_template, c, homes, tally, more_domains)
        return [Violation(self.name, "", d, f"{pod_template.namespace} spread on {c.topology_key} maxSkew "
                                            f"{c.max_skew}: domain {d} holds {count} > {limit} (min {minimum})",
                          c.topology_key)
                for d, count, limit, minimum in found]

    @staticmethod
    def eligible(pod_template: PodTemplate, c: TopologySpreadConstraint, tally: PlanTally) -> dict[int, str]:
        """{index of the node in the tally: its domain} of the nodes the constraint counts for this pod
        (nodes with the key, honouring nodeAffinityPolicy and nodeTaintsPolicy; Fargate never). Kept on
        the tally per (key, node affinity, tolerations) it depends on: thousands of Deployments share a few."""
        try:
            memo_key: tuple[object, ...] | None = (
                c.topology_key, pod_template.affinity if c.honors_affinity else None,
                pod_template.tolerations if c.honors_taints else None)
            hash(memo_key)
        except TypeError:
            memo_key = None
        if memo_key is not None and memo_key in tally.eligible_memo:
            return tally.eligible_memo[memo_key]
        eligible: dict[int, str] = {}
        for i, view in enumerate(tally.views):
            domain = view.domain(c.topology_key)
            if view.fargate or domain is None:
                continue
            if not policies_count(c, pod_template, view.labels, view.taints, view.name):
                continue
            eligible[i] = domain
        if memo_key is not None:
            tally.eligible_memo[memo_key] = eligible
        return eligible

    @classmethod
    def _skews(cls, pod_template: PodTemplate, c: TopologySpreadConstraint, homes: set[str], tally: PlanTally,
               more_domains: Iterable[str]) -> list[tuple[str, int, int, int]]:
        """(domain, count, limit, global minimum) for each domain of the pod's nodes over its limit. The
        domains are the eligible nodes' (kube-scheduler), plus `more_domains` (Karpenter's launchable
        ones, empty until the plan uses them)."""
        selector = c.selector_for(pod_template.labels)
        if selector is None or not selector.matches(pod_template.labels):
            return []
        key = c.topology_key
        eligible = cls.eligible(pod_template, c, tally)
        counts: Counter[str] = Counter({d: 0 for d in [*eligible.values(), *more_domains]})
        matching = tally.matching_counts(pod_template.namespace, selector)
        for i, domain in eligible.items():
            counts[domain] += matching[i]
        if not counts:
            return []
        skew = constraint_skew(c)
        minimum = global_minimum(skew, list(counts.values()))
        home_domains = {eligible[i] for i in (tally.position.get(name) for name in homes) if i is not None and i in eligible}
        out: list[tuple[str, int, int, int]] = []
        for d in sorted(home_domains):
            new_host = key == HOSTNAME and d in tally.by_name and tally.by_name[d].new
            limit = node_cap(skew) if new_host else skew_limit(skew, minimum)
            if counts[d] > limit:
                out.append((d, counts[d], limit, minimum))
        return out

    def _soft_outcomes(self, problem: Problem, solution: SolvedPlan
                       ) -> Iterator[tuple[GroupInfo, TopologySpreadConstraint, list[tuple[str, int, int, int]]]]:
        """Each ScheduleAnyway spread of a group with placed pods, with the domains where the plan breaks
        it (empty: honoured). Karpenter treats them as required until it cannot meet them, so its domains
        count here: every zone the pod could launch into, empty or not."""
        soft = [(group, [r for r in problem.topology.rules_for(group.template) if not r.constraint.hard])
                for group in problem.groups]
        if not any(rules for _, rules in soft):
            return
        from karpplan.scheduling.preferences import provided_keys  # lazy: scheduling imports this registry

        tally = PlanTally(solution)
        known = provided_keys(problem)
        for group, rules in soft:
            homes = tally.homes(group) if rules else set()
            if not homes:
                continue
            for rule in rules:
                c = rule.constraint
                if c.topology_key not in known:
                    # No node carries the key: Karpenter finds no domain and relaxes the spread before anything
                    # counts (`preferences.unhonourable_spreads` says so), so it is neither kept nor unmet; kept,
                    # `--preferences honour` would require it and no node could take its pods.
                    continue
                more = () if rule.hostname else rule.static_domains()
                yield group, c, self._skews(group.template, c, homes, tally, more)

    def unmet_preferences(self, problem: Problem, solution: SolvedPlan) -> list[UnmetPreference]:
        """ScheduleAnyway spreads the plan does not honour (`_soft_outcomes`)."""
        return self.preferences(problem, solution)[1]

    def preferences(self, problem: Problem, solution: SolvedPlan) -> tuple[set[KeptPreference], list[UnmetPreference]]:
        kept: set[KeptPreference] = set()
        out: list[UnmetPreference] = []
        for group, c, skews in self._soft_outcomes(problem, solution):
            if not skews:
                kept.add((group.index, id(c)))
            else:
                domain, count, limit, minimum = max(skews, key=lambda s: s[1] - s[2])
                # A new node is a hostname domain of its own, holding 0 (Karpenter's rule): the bound is maxSkew.
                if c.topology_key == HOSTNAME and limit == node_cap(constraint_skew(c)):
                    outcome = f": node {domain} holds {count} matching pods, where a new node would hold 0"
                else:
                    outcome = f": {domain} holds {count} matching pods, the emptiest domain {minimum}"
                out.append(UnmetPreference(
                    f"{c.origin}: {group.group.pods[0].workload}: preferred spread (ScheduleAnyway, maxSkew "
                    f"{c.max_skew} on {c.topology_key})", outcome))
        return kept, out


TOPOLOGY_SPREAD = TopologySpreadKind()
