"""Whether kube-scheduler could have placed a plan's required pod-affinity pods one at a time.

kube-scheduler checks a required pod-affinity term when it places a pod, not on the final state: the node's domain of
the term's key must already hold a pod matching all the pod's terms, unless no such pod runs anywhere yet and the pod
matches its own terms (the first pod of a self-affine workload opens a domain). Karpenter follows it ("should respect
self pod affinity for first empty topology domain only", topology_test.go). So a plan may put ten self-affine pods on
two nodes five and five, each pod with a partner beside it, and still be one no scheduler reaches: the first pod on
the second node had nothing beside it while its partners ran elsewhere.

A plan is reachable when its affinity pods can be ordered so that each joins a pod placed before it: bound pods and
pods without required affinity are placed first (`grounded`); a pending pod joins when each term's domain holds a
grounded pod its terms select; a self-matching workload that nothing bound selects may open one domain (its first
pod), unless another opened workload's pods and its own select each other (only one of them can be first). What is
left is unreachable: `unreachable` returns those pods.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from karpplan.constraints.view import NodeView
    from karpplan.model.pods import Pod

Placed = Sequence[tuple["NodeView", "Pod", bool]]  # (node, pod, pending)
Matches = Callable[["Pod", "Pod"], bool]  # does the first pod's every required affinity term select the second?


def _domains(view: NodeView, pod: Pod) -> tuple[str | None, ...]:
    return tuple(view.domain(t.topology_key) for t in pod.template.pod_affinity.required)


class _Order:
    """The grounded pods indexed by (key, domain), and the pods still waiting for a partner."""

    def __init__(self, placed: Placed, matches: Matches) -> None:
        self.matches = matches
        self.index: dict[tuple[str, str | None], list[Pod]] = defaultdict(list)
        self.waiting: list[tuple[NodeView, Pod]] = []
        self.bound = [p for _, p, pending in placed if not pending]
        self.keys = {t.topology_key for _, p, pending in placed if pending for t in p.template.pod_affinity.required}
        for view, pod, pending in placed:
            if pending and pod.template.pod_affinity.required:
                self.waiting.append((view, pod))
            else:
                self.ground(view, pod)

    def ground(self, view: NodeView, pod: Pod) -> None:
        for key in self.keys:
            self.index[(key, view.domain(key))].append(pod)

    def joins(self, view: NodeView, pod: Pod) -> bool:
        """Each of the pod's terms has a grounded pod it selects in the pod's domain of the term's key."""
        for term in pod.template.pod_affinity.required:
            domain = view.domain(term.topology_key)
            if domain is None or not any(q is not pod and self.matches(pod, q)
                                         for q in self.index.get((term.topology_key, domain), ())):
                return False
        return True

    def settle(self) -> None:
        """Ground every waiting pod that joins a grounded one, until none does."""
        changed = True
        while changed and self.waiting:
            changed = False
            still: list[tuple[NodeView, Pod]] = []
            for view, pod in self.waiting:
                if self.joins(view, pod):
                    self.ground(view, pod)
                    changed = True
                else:
                    still.append((view, pod))
            self.waiting = still

    def open_one(self, opened: list[Pod]) -> bool:
        """Let one self-matching workload's first pod open a domain: the domain holding most of its waiting
        pods. False when no waiting workload may."""
        by_template: dict[int, list[tuple[NodeView, Pod]]] = defaultdict(list)
        for view, pod in self.waiting:
            by_template[id(pod.template)].append((view, pod))
        for pods in sorted(by_template.values(), key=lambda ps: min(p.key for _, p in ps)):
            first = pods[0][1]
            if not self.matches(first, first) or any(self.matches(first, q) for q in self.bound):
                continue
            if any(self.matches(first, q) and self.matches(q, first) for q in opened):
                continue
            counts: dict[tuple[str | None, ...], int] = defaultdict(int)
            for view, pod in pods:
                counts[_domains(view, pod)] += 1
            chosen = max(counts, key=lambda d: (counts[d], str(d)))
            if any(d is None for d in chosen):
                continue  # a node without the key is no domain (the per-pod check says so)
            opener = next((view, pod) for view, pod in pods if _domains(view, pod) == chosen)
            self.waiting.remove(opener)
            self.ground(*opener)
            opened.append(opener[1])
            return True
        return False


def unreachable(placed: Placed, matches: Matches) -> list[tuple[NodeView, Pod]]:
    """The pending pods with required pod affinity that no order of placement lets in (module docstring)."""
    if not any(pending and pod.template.pod_affinity.required for _, pod, pending in placed):
        return []  # most plans: nothing to order, and the verifier runs on every plan
    order = _Order(placed, matches)
    opened: list[Pod] = []
    order.settle()
    while order.waiting and order.open_one(opened):
        order.settle()
    return order.waiting


def matcher(ns_labels: Mapping[str, Mapping[str, str]],
            selects: Callable[..., bool]) -> Matches:
    """`matches(p, q)`: every required affinity term of p selects q, cached per (p's template, q's namespace and
    labels)."""
    cache: dict[tuple[int, str, frozenset[tuple[str, str]]], bool] = {}

    def matches(pod: Pod, other: Pod) -> bool:
        key = (id(pod.template), other.namespace, frozenset(other.labels.items()))
        found = cache.get(key)
        if found is None:
            found = all(selects(t, pod, other, ns_labels) for t in pod.template.pod_affinity.required)
            cache[key] = found
        return found

    return matches
