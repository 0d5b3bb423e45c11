"""Topology: spread constraints and inter-pod (anti-)affinity as rules over domains.

For each pending template we build its rules once: which nodes count as domains (kube-scheduler's
inclusion policies for existing nodes, Karpenter's NodePool domain universe for what can launch), the
counts bound pods already contribute, and which pending templates raise those counts. Engines then
evaluate the rules per placement (greedy) or as linear constraints (CP-SAT).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count

from karpplan.constraints.spread_counts import policies_count
from karpplan.model.labels import HOSTNAME
from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import Pod, PodAffinityTerm, PodTemplate, TopologySpreadConstraint
from karpplan.model.requirements import Requirements
from karpplan.model.selectors import LabelSelector, required_pairs
from karpplan.model.taints import SCHEDULING_EFFECTS, Taint, Toleration, untolerated
from karpplan.scheduling.by_owner import ByOwner
from karpplan.scheduling.candidates import LaunchOption


def pod_domain_values(template: PodTemplate, key: str) -> frozenset[str] | None:
    """Values of `key` the pod's strict requirements allow (None: unrestricted or open-ended)."""
    return domain_values(template.affinity.strict_alternatives(), key)


def domain_values(alternatives: Sequence[Requirements], key: str) -> frozenset[str] | None:
    """Values of `key` any of these (ORed) requirements allows (None: unrestricted or open-ended)."""
    allowed: set[str] = set()
    for alt in alternatives:
        req = alt.get(key)
        if req is None:
            return None
        finite = req.finite_values()
        if finite is None:
            return None
        allowed |= finite
    return frozenset(allowed)


@dataclass
class SpreadRule:
    """One topology spread constraint of one pending template."""

    owner: PodTemplate
    constraint: TopologySpreadConstraint
    selector: LabelSelector | None
    self_match: bool
    existing_domains: dict[str, str]  # eligible existing node -> domain value
    launch_domains: frozenset[str]  # domains new nodes can create (not used for hostname)
    base_counts: Counter[str]
    pod_values: frozenset[str] | None
    # A stable identifier, unique among the rules and terms of one `Topology` (`build_topology` numbers
    # them in the order it builds them); caches and counts are keyed by it.
    uid: int = field(kw_only=True, compare=False, repr=False)

    @property
    def key(self) -> str:
        return self.constraint.topology_key

    @property
    def max_skew(self) -> int:
        return self.constraint.max_skew

    @property
    def hostname(self) -> bool:
        return self.key == HOSTNAME

    @property
    def hard(self) -> bool:
        return self.constraint.hard

    @property
    def min_domains(self) -> int:
        return self.constraint.effective_min_domains

    def counts(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Does a pod with these labels in this namespace raise this rule's counts?"""
        return namespace == self.owner.namespace and self.selector is not None and self.selector.matches(labels)

    def option_counts(self, option: LaunchOption) -> bool:
        """Is a new node of this option an eligible domain (inclusion policies)?"""
        if not policies_count(self.constraint, self.owner, option.labels, option.taints):
            return False
        return self.key in option.labels or self.hostname

    def signature(self) -> tuple[object, ...]:
        """Rules with equal signatures count the same pods in the same domains against the same limit."""
        c = self.constraint
        return (self.owner.namespace, repr(self.selector), self.key, c.max_skew, c.hard, c.min_domains,
                c.node_affinity_policy, c.node_taints_policy, self.pod_values, repr(self.owner.affinity),
                repr(self.owner.tolerations), tuple(sorted(x.topology_key for x in self.owner.hard_spread)))

    def static_domains(self) -> frozenset[str]:
        """The eligible non-hostname domains: launchable ones plus those of eligible existing nodes."""
        return self.domains_within(self.pod_values)

    def domains_within(self, pod_values: frozenset[str] | None) -> frozenset[str]:
        """`static_domains` for other pod values (those of one required node-affinity term: Karpenter's
        podDomains at a relaxation step)."""
        values = set(self.launch_domains) | set(self.existing_domains.values())
        if pod_values is not None:
            values &= pod_values
        return frozenset(values)

    def describe_counts(self, counts: Mapping[str, int], domains: Sequence[str]) -> str:
        """Karpenter's `counts = a: 1, b: 0` with the domains sorted (25 at most)."""
        ordered = sorted(domains)
        if not ordered:
            return "no domain"
        shown = ", ".join(f"{d}: {counts.get(d, 0)}" for d in ordered[:25])
        if len(ordered) > 25:
            shown += f" and {len(ordered) - 25} other(s)"
        return shown


@dataclass
class AffinityTerm:
    term: PodAffinityTerm
    selector: LabelSelector | None
    owner_namespace: str
    uid: int = field(kw_only=True, compare=False, repr=False)  # as `SpreadRule.uid`

    @property
    def key(self) -> str:
        return self.term.topology_key

    def matches(self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, Mapping[str, str]]) -> bool:
        return (
            self.selector is not None
            and self.term.namespace_in_scope(self.owner_namespace, namespace, ns_labels)
            and self.selector.matches(labels)
        )


@dataclass
class AffinityRule:
    """Required pod affinity (all terms by one pod) or anti-affinity (any term) of one template, or one
    preferred term of it (`weight` > 0): Karpenter makes each preferred term a topology group of its own,
    enforced like a required term until relaxation removes it."""

    owner: PodTemplate
    terms: list[AffinityTerm]
    anti: bool
    self_match: bool  # the owner matches all its own terms (affinity) / some term (anti)
    existing: list[Counter[str]] = field(default_factory=list)  # per term: domain -> matching bound pods
    weight: int = 0  # a preferred term's weight; 0 for required terms
    uid: int = field(kw_only=True, compare=False, repr=False)  # as `SpreadRule.uid`


@dataclass
class Topology:
    # Each map is keyed by id(template); `build_topology` makes them `ByOwner`s, which survive pickling.
    spread: dict[int, list[SpreadRule]]  # id(template) -> rules (hard and soft)
    affinity: dict[int, AffinityRule]
    anti_affinity: dict[int, AffinityRule]
    # Required anti-affinity of bound pods: (term, domain value of the bound pod's node)
    existing_anti: list[tuple[AffinityTerm, str]]
    namespace_labels: Mapping[str, Mapping[str, str]]
    # id(template) -> one rule per preferred pod (anti-)affinity term, heaviest first (a stable sort, the
    # order in which Karpenter relaxes them). Preferred anti-affinity blocks nothing inversely.
    preferred_affinity: dict[int, list[AffinityRule]] = field(default_factory=dict)
    preferred_anti: dict[int, list[AffinityRule]] = field(default_factory=dict)

    def rules_for(self, template: PodTemplate) -> list[SpreadRule]:
        return self.spread.get(id(template), [])

    def domain_keys(self) -> list[str]:
        """Every non-hostname topology key a spread rule or a (bound or pending) pod's affinity term uses."""
        keys = {r.key for rules in self.spread.values() for r in rules}
        for rule in list(self.affinity.values()) + list(self.anti_affinity.values()):
            keys |= {t.key for t in rule.terms}
        keys |= {t.key for t, _ in self.existing_anti}
        keys.discard(HOSTNAME)
        return sorted(keys)


LaunchCache = dict[tuple[str, tuple[Toleration, ...] | None], frozenset[str]]  # see `_launch_domains`


def _eligible_domain(template: PodTemplate, constraint: TopologySpreadConstraint, node: ExistingNode) -> str | None:
    """The node's domain for the constraint, None when it is not an eligible domain."""
    keys = {c.topology_key for c in template.hard_spread} | {constraint.topology_key}
    # kube-scheduler: the node must carry every topology key of the pod's hard constraints.
    if any(k not in node.labels and k != HOSTNAME for k in keys):
        return None
    if not policies_count(constraint, template, node.labels, node.taints, node.name):
        return None
    return node.domain(constraint.topology_key)


class EligibleCache:
    """Each (template, spread constraint)'s verdict per node name, kept across the problems of one caller
    whose nodes keep their labels and taints under one name (the consolidation simulation's). The templates
    are kept with their verdicts, so their ids are never reused while remembered."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], tuple[PodTemplate, dict[str, str | None]]] = {}
        self._launch: tuple[Sequence[LaunchOption], LaunchCache] | None = None

    def launch_cache(self, options: Sequence[LaunchOption]) -> LaunchCache:
        """`_launch_domains`' cache, kept while the problems are built over the very same options."""
        if self._launch is None or self._launch[0] is not options:
            self._launch = (options, {})
        return self._launch[1]

    def eligible(self, template: PodTemplate, constraint: TopologySpreadConstraint,
                 nodes: Sequence[ExistingNode]) -> dict[str, str]:
        entry = self._known.get((id(template), id(constraint)))
        if entry is None:
            entry = self._known[(id(template), id(constraint))] = (template, {})
        known = entry[1]
        out: dict[str, str] = {}
        for node in nodes:
            if node.name in known:
                value = known[node.name]
            else:
                value = known[node.name] = _eligible_domain(template, constraint, node)
            if value is not None:
                out[node.name] = value
        return out


def _eligible_existing(template: PodTemplate, constraint: TopologySpreadConstraint,
                       nodes: Sequence[ExistingNode], cache: EligibleCache | None = None) -> dict[str, str]:
    if cache is not None:
        return cache.eligible(template, constraint, nodes)
    out: dict[str, str] = {}
    for node in nodes:
        value = _eligible_domain(template, constraint, node)
        if value is not None:
            out[node.name] = value
    return out


def _by_pair(pods: Sequence[Pod]) -> dict[tuple[str, str], list[int]]:
    """The positions of the pods holding each label pair."""
    out: dict[tuple[str, str], list[int]] = {}
    for i, pod in enumerate(pods):
        for pair in pod.labels.items():
            out.setdefault(pair, []).append(i)
    return out


def _may_match(selector: LabelSelector | None, pods: Sequence[Pod],
               index: Mapping[tuple[str, str], list[int]]) -> Sequence[Pod]:
    """The pods (in order) the selector may match: those holding a pair it requires, all when it requires
    none; the caller still tests each."""
    if selector is None:
        return ()
    pairs = required_pairs(selector)
    if pairs is None:
        return pods
    if len(pairs) == 1:
        return [pods[i] for i in index.get(pairs[0], ())]
    return [pods[i] for i in sorted({i for pair in pairs for i in index.get(pair, ())})]


def _launch_domains(key: str, tolerations: tuple[Toleration, ...] | None, options: Sequence[LaunchOption],
                    cache: LaunchCache) -> frozenset[str]:
    """Values of `key` new nodes can have: options' labels and pools' finite requirements (Karpenter's
    domain universe); with `tolerations`, only options whose taints they tolerate (nodeTaintsPolicy Honor)."""
    cached = cache.get((key, tolerations))
    if cached is not None:
        return cached
    launch: set[str] = set()
    tolerated: dict[tuple[Taint, ...], bool] = {}
    finite: dict[int, frozenset[str]] = {}
    for o in options:
        if tolerations is not None:
            ok = tolerated.get(o.taints)
            if ok is None:
                ok = tolerated[o.taints] = not untolerated(tolerations, o.taints, SCHEDULING_EFFECTS)
            if not ok:
                continue
        value = o.labels.get(key)
        if value is not None:
            launch.add(value)
        values = finite.get(id(o.pool))
        if values is None:
            req = o.pool.requirements.get(key)
            values = finite[id(o.pool)] = (req.finite_values() or frozenset()) if req is not None else frozenset()
        launch |= values
    out = cache[(key, tolerations)] = frozenset(launch)
    return out


def build_topology(
    templates: Sequence[PodTemplate],
    nodes: Sequence[ExistingNode],
    bound: Sequence[Pod],
    options: Sequence[LaunchOption],
    namespace_labels: Mapping[str, Mapping[str, str]],
    eligible_cache: EligibleCache | None = None,
) -> Topology:
    """The templates' rules over the nodes (`eligible_cache`: a caller's `EligibleCache`)."""
    node_by_name = {n.name: n for n in nodes}
    counted = [p for p in bound if p.counts_for_topology and p.node_name in node_by_name]
    index = _by_pair(counted)
    spread: ByOwner[list[SpreadRule]] = ByOwner()  # by id(template), the templates kept: pickling keeps them
    affinity: ByOwner[AffinityRule] = ByOwner()
    anti: ByOwner[AffinityRule] = ByOwner()
    preferred_affinity: ByOwner[list[AffinityRule]] = ByOwner()
    preferred_anti: ByOwner[list[AffinityRule]] = ByOwner()
    launch_cache: LaunchCache = {} if eligible_cache is None else eligible_cache.launch_cache(options)
    uids = count()
    for pod_template in templates:
        rules = []
        for c in pod_template.spread:
            selector = c.selector_for(pod_template.labels)
            existing = _eligible_existing(pod_template, c, nodes, eligible_cache)
            launch: frozenset[str] = frozenset()
            if c.topology_key != HOSTNAME:
                launch = _launch_domains(c.topology_key, pod_template.tolerations if c.honors_taints else None,
                                         options, launch_cache)
            base: Counter[str] = Counter()
            rule = SpreadRule(pod_template, c, selector, selector is not None and selector.matches(pod_template.labels),
                              existing, launch, base, pod_domain_values(pod_template, c.topology_key), uid=next(uids))
            for pod in _may_match(selector, counted, index):
                assert pod.node_name is not None
                domain = existing.get(pod.node_name)
                if domain is not None and rule.counts(pod.namespace, pod.labels):
                    base[domain] += 1
            rules.append(rule)
        if rules:
            spread.put(pod_template, rules)
        for is_anti, spec in ((False, pod_template.pod_affinity), (True, pod_template.pod_anti_affinity)):
            if spec.required:
                rule_a = _affinity_rule(pod_template, spec.required, is_anti, 0, (counted, index), node_by_name,
                                        namespace_labels, uids)
                (anti if is_anti else affinity).put(pod_template, rule_a)
            if spec.preferred:
                heaviest_first = sorted(spec.preferred, key=lambda p: -p.weight)
                (preferred_anti if is_anti else preferred_affinity).put(pod_template, [
                    _affinity_rule(pod_template, (p.term,), is_anti, p.weight, (counted, index), node_by_name,
                                   namespace_labels, uids)
                    for p in heaviest_first
                ])
    existing_anti: list[tuple[AffinityTerm, str]] = []
    for pod in counted:
        node = node_by_name[pod.node_name or ""]
        for raw in pod.template.pod_anti_affinity.required:
            value = node.domain(raw.topology_key)
            if value is not None:
                term = AffinityTerm(raw, raw.selector_for(pod.labels), pod.namespace, uid=next(uids))
                existing_anti.append((term, value))
    return Topology(spread, affinity, anti, existing_anti, namespace_labels, preferred_affinity, preferred_anti)


def _affinity_rule(pod_template: PodTemplate, raw: Sequence[PodAffinityTerm], is_anti: bool, weight: int,
                   bound: tuple[Sequence[Pod], Mapping[tuple[str, str], list[int]]],
                   node_by_name: Mapping[str, ExistingNode],
                   namespace_labels: Mapping[str, Mapping[str, str]], uids: Iterator[int]) -> AffinityRule:
    """The rule of these terms of the template, with the bound pods (and their `_by_pair` index) each term
    counts per domain."""
    terms = [AffinityTerm(t, t.selector_for(pod_template.labels), pod_template.namespace, uid=next(uids)) for t in raw]
    self_checks = [t.matches(pod_template.namespace, pod_template.labels, namespace_labels) for t in terms]
    rule = AffinityRule(pod_template, terms, is_anti, any(self_checks) if is_anti else all(self_checks), weight=weight,
                        uid=next(uids))
    counted, index = bound
    for t in terms:
        counts: Counter[str] = Counter()
        # Anti-affinity counts the pods this term matches; affinity those all terms match, among them the first's.
        for pod in _may_match(t.selector if is_anti else terms[0].selector, counted, index):
            value = node_by_name[pod.node_name or ""].domain(t.key)
            if value is None:
                continue
            if is_anti:
                if t.matches(pod.namespace, pod.labels, namespace_labels):
                    counts[value] += 1
            elif all(x.matches(pod.namespace, pod.labels, namespace_labels) for x in terms):
                counts[value] += 1
        rule.existing.append(counts)
    return rule
