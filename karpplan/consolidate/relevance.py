"""Which bound pods a simulation must see one by one, and which it may fold into their node's size.

A bound pod matters to where the moving pods can go through its requests, and through topology only when a
moving pod's spread or (anti-)affinity selector matches it, when its own required anti-affinity may repel a
moving pod, when it holds host ports, or when it is a DaemonSet's (whose absence would count its overhead).
Every other bound pod is folded into its node: the node is offered with that much less allocatable. The
placement is the same; the topology built for it counts a few pods instead of the whole cluster's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from karpplan.consolidate.snapshot import is_daemon
from karpplan.model.pods import Pod, PodTemplate
from karpplan.model.selectors import LabelSelector, required_pairs, selector_matches


def rule_selectors(templates: Iterable[PodTemplate]) -> list[LabelSelector]:
    """Every selector of the templates' spread and pod (anti-)affinity rules (namespaces ignored: more pods
    kept, never fewer)."""
    out: list[LabelSelector] = []
    for t in templates:
        for c in t.spread:
            s = c.selector_for(t.labels)
            if s is not None:
                out.append(s)
        for aff in (t.pod_affinity, t.pod_anti_affinity):
            for term in (*aff.required, *(w.term for w in aff.preferred)):
                s = term.selector_for(t.labels)
                if s is not None:
                    out.append(s)
    return out


def relevant_pods(pods: Sequence[Pod], moving: Sequence[Pod]) -> set[int]:
    """ids of the `pods` the placement of `moving` must see (see the module's docstring)."""
    return BoundIndex(pods).relevant(moving)


class BoundIndex:
    """The bound pods indexed once for many simulations: those always kept, those holding each label pair,
    and the pods each selector (by its text) matches. Valid while the pods bound do not change; asked about
    a subset of them (the nodes left by a simulation) the answer for that subset is the same."""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self.pods = pods
        self.always: set[int] = set()
        self.by_pair: dict[tuple[str, str], list[Pod]] = {}
        self.matched: dict[str, set[int]] = {}
        self._position: dict[int, int] | None = None
        for p in pods:
            if p.template.host_ports or is_daemon(p) or p.template.pod_anti_affinity.required:
                self.always.add(id(p))
            for pair in p.labels.items():
                self.by_pair.setdefault(pair, []).append(p)

    def _matching(self, selector: LabelSelector) -> set[int]:
        text = repr(selector)
        found = self.matched.get(text)
        if found is None:
            pairs = required_pairs(selector)
            pool: Iterable[Pod] = self.pods if pairs is None else [p for pair in pairs for p in self.by_pair.get(pair, ())]
            found = self.matched[text] = {id(p) for p in pool if selector_matches(selector, p.labels)}
        return found

    def by_node(self, keep: set[int]) -> dict[str, list[Pod]]:
        """The pods of `keep` (ids of indexed pods) per node, each node's in indexed order."""
        if self._position is None:
            self._position = {id(p): i for i, p in enumerate(self.pods)}
        out: dict[str, list[Pod]] = {}
        for i in sorted(self._position[k] for k in keep):
            pod = self.pods[i]
            out.setdefault(pod.node_name or "", []).append(pod)
        return out

    def relevant(self, moving: Sequence[Pod]) -> set[int]:
        keep = set(self.always)
        templates = {id(p.template): p.template for p in moving}
        for selector in rule_selectors(templates.values()):
            keep |= self._matching(selector)
        return keep
