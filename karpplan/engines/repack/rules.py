"""Which per-node (hostname) rules a group's pods carry and match, and whether a node may take one more."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from karpplan.constraints.port_conflicts import ports_clash
from karpplan.constraints.spread_counts import node_cap
from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import HostPort
from karpplan.model.selectors import SelectorIndex
from karpplan.scheduling.problem import Problem
from karpplan.scheduling.topology import SpreadRule

if TYPE_CHECKING:
    from collections import Counter



class RuleCounts(Protocol):
    """What the rulebook reads and records of a node (`bins.Bin`): per rule id, the matching pods it holds
    and whether pods owning the rule are there; the host ports taken."""

    spread_count: Counter[int]
    spread_owned: set[int]
    anti_count: Counter[int]
    anti_owned: set[int]
    ports: list[HostPort]

@dataclass(frozen=True)
class GroupRules:
    """What a group's pods bring to a node and what they need from it (hostname-level rules only)."""

    spread_owned: tuple[int, ...]  # hard hostname spread rules the pods carry (rule ids)
    spread_matches: frozenset[int]  # hostname spread rules whose selector counts these pods
    anti_owned: tuple[int, ...]  # hostname anti-affinity terms the pods carry (term ids)
    anti_matches: frozenset[int]  # hostname anti-affinity terms whose selector matches these pods
    host_ports: tuple[HostPort, ...]
    pinned: bool  # takes part in hostname pod affinity: left where it is

    @property
    def owner(self) -> bool:
        """Carries a per-node rule (or host ports), so it limits the nodes it may join."""
        return bool(self.spread_owned or self.anti_owned or self.host_ports)

    @property
    def matched(self) -> bool:
        """Counted by some per-node rule: free to go anywhere no owner of that rule is."""
        return bool(self.spread_matches or self.anti_matches)


class Rulebook:
    """Per-group hostname rules of the whole problem, with stable integer ids."""

    def __init__(self, problem: Problem) -> None:
        topo = problem.topology
        ns_labels = problem.namespace_labels
        groups = problem.groups
        spread: list[SpreadRule] = [r for g in groups for r in topo.rules_for(g.template) if r.hostname and r.hard]
        spread_ids = {id(r): i for i, r in enumerate(spread)}
        anti_terms = [(g.index, t) for g in groups
                      if (a := topo.anti_affinity.get(id(g.template))) is not None
                      for t in a.terms if t.key == HOSTNAME]
        affinity_terms = [(g.index, t) for g in groups
                          if (a := topo.affinity.get(id(g.template))) is not None
                          for t in a.terms if t.key == HOSTNAME]
        affine_matched: set[int] = set()
        for _, term in affinity_terms:
            for h in groups:
                if term.matches(h.template.namespace, h.template.labels, ns_labels):
                    affine_matched.add(h.index)
        affine_owners = {g for g, _ in affinity_terms}
        spread_index = RuleIndex(spread)
        self.by_group: dict[int, GroupRules] = {}
        for g in groups:
            pod_template = g.template
            owned = tuple(spread_ids[id(r)] for r in topo.rules_for(pod_template) if r.hostname and r.hard)
            matches = spread_index.matching(pod_template.namespace, pod_template.labels)
            anti_owned = tuple(i for i, (owner, _) in enumerate(anti_terms) if owner == g.index)
            anti_matches = frozenset(i for i, (_, t) in enumerate(anti_terms)
                                     if t.matches(pod_template.namespace, pod_template.labels, ns_labels))
            self.by_group[g.index] = GroupRules(owned, matches, anti_owned, anti_matches, tuple(pod_template.host_ports),
                                                g.index in affine_owners or g.index in affine_matched)
        self.node_cap = [node_cap(r) for r in spread]  # hostname spreads: the most matching pods per node

    def accepts(self, node: RuleCounts, rules: GroupRules) -> bool:
        """May one more pod with these rules join the node (final counts, both directions)?"""
        for rid in rules.spread_owned:
            if node.spread_count[rid] + (1 if rid in rules.spread_matches else 0) > self.node_cap[rid]:
                return False
        for rid in rules.spread_matches:
            if rid in node.spread_owned and node.spread_count[rid] + 1 > self.node_cap[rid]:
                return False
        for tid in rules.anti_owned:
            if node.anti_count[tid]:
                return False
        if rules.anti_matches and not rules.anti_matches.isdisjoint(node.anti_owned):
            return False
        return not ports_clash(rules.host_ports, node.ports)

    @staticmethod
    def record(node: RuleCounts, rules: GroupRules) -> None:
        node.spread_owned.update(rules.spread_owned)
        for rid in rules.spread_matches:
            node.spread_count[rid] += 1
        node.anti_owned.update(rules.anti_owned)
        for tid in rules.anti_matches:
            node.anti_count[tid] += 1
        node.ports.extend(rules.host_ports)


class RuleIndex:
    """Spread rules by what they count (namespace and selector), so each pod template is tested once per
    distinct selector instead of once per rule (many Deployments share a selector)."""

    def __init__(self, rules: Sequence[SpreadRule]) -> None:
        self.ids: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.sample: dict[tuple[str, str], SpreadRule] = {}
        for i, r in enumerate(rules):
            key = (r.owner.namespace, repr(r.selector))
            self.ids[key].append(i)
            self.sample.setdefault(key, r)
        # ... and the distinct selectors by the labels they require (`SelectorIndex`): a template is tested
        # against those that may select it, not all of them (thousands of Deployments, thousands of selectors).
        self._index: SelectorIndex[tuple[str, str]] = SelectorIndex()
        for key, r in self.sample.items():
            self._index.add(key, r.owner.namespace, r.selector)

    def matching(self, namespace: str, labels: Mapping[str, str]) -> frozenset[int]:
        return frozenset(i for key in self._index.candidates(namespace, labels)
                         if self.sample[key].counts(namespace, labels) for i in self.ids[key])
