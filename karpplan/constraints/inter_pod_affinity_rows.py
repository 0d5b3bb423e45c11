"""The (anti-)affinity rows of the CP-SAT counts models: required terms as hard rows, preferred terms as
penalties of their weight (the rules are those of `inter_pod_affinity`'s module docstring)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from karpplan.model.labels import HOSTNAME

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ortools.sat.python import cp_model

    from karpplan.constraints.base import CountsModel
    from karpplan.scheduling.problem import GroupInfo
    from karpplan.scheduling.topology import AffinityRule


class AffinityRows:
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
        if key == HOSTNAME and anywhere:
            # Pods the term selects run already: a new node is a domain of its own and holds none of them, so
            # the group's pods there need a partner group's pods launched with them (affinity_order.py).
            for k, v in model.y_of[g.index]:
                beside = [w for h in partners for kk, w in model.y_of[h.index] if kk == k]
                if not beside:
                    m.add(v == 0)
                    continue
                joined = m.new_bool_var(f"joined_g{g.index}_k{k}")
                m.add(v <= g.size * joined)
                m.add(sum(beside) >= 1).only_enforce_if(joined)
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
