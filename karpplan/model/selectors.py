"""Label selectors and node selector terms (kube-scheduler semantics)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.requirements import Requirement, Requirements


@dataclass(frozen=True)
class LabelSelector:
    """A `metav1.LabelSelector`. `{}` (no requirements) matches everything.

    A *null* selector is represented by `None` at the place that holds it: it matches nothing.
    `valid` is False when an expression could not be parsed; such a selector matches nothing.
    """

    requirements: Requirements = Requirements()
    valid: bool = True

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.valid and self.requirements.matches(labels)

    def is_empty(self) -> bool:
        return self.valid and len(self.requirements) == 0

    def with_requirement(self, req: Requirement) -> LabelSelector:
        return LabelSelector(self.requirements.with_requirement(req), self.valid)

    def __str__(self) -> str:
        return str(self.requirements) if self.requirements else "{}"


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Null matches nothing; `{}` matches everything."""
    return selector is not None and selector.matches(labels)


def required_pairs(selector: LabelSelector) -> tuple[tuple[str, str], ...] | None:
    """(key, value) pairs one of which every label map the selector matches holds: the values of its
    narrowest `In` requirement (`matchLabels` entries are `In` of one value). None when it has none
    (`{}`, only NotIn/Exists/DoesNotExist/Gt/Lt): any label map may match it."""
    best: Requirement | None = None
    for key in selector.requirements:
        req = selector.requirements[key]
        if req.complement or req.absent_ok or req.gte is not None or req.lte is not None:
            continue
        if best is None or len(req.values) < len(best.values):
            best = req
    if best is None:
        return None
    return tuple((best.key, v) for v in sorted(best.values))


T = TypeVar("T")


class SelectorIndex(Generic[T]):
    """Items filed by a (namespace, label selector), found for a pod without testing every selector.

    Ten thousand Deployments each spreading over their own `app` label are ten thousand selectors; testing
    each against each pod template is quadratic. An item is filed under every (namespace, key, value) of its
    selector's `required_pairs`, or scanned always when it has none; `candidates` returns, in the order
    added, every item whose selector *may* match (a superset): callers still test the real rule, which
    keeps its semantics (namespace scope, null and invalid selectors) in one place. A null or invalid
    selector matches nothing, so such items are never candidates. `namespace=None` files an item for
    every namespace (terms with a namespace selector)."""

    def __init__(self) -> None:
        self._items: list[T] = []
        self._by_pair: dict[tuple[str | None, str, str], list[int]] = defaultdict(list)
        self._scan: dict[str | None, list[int]] = defaultdict(list)

    def add(self, item: T, namespace: str | None, selector: LabelSelector | None) -> None:
        i = len(self._items)
        self._items.append(item)
        if selector is None or not selector.valid:
            return
        pairs = required_pairs(selector)
        if pairs is None:
            self._scan[namespace].append(i)
        else:
            for key, value in pairs:
                self._by_pair[(namespace, key, value)].append(i)

    def __len__(self) -> int:
        return len(self._items)

    def candidates(self, namespace: str, labels: Mapping[str, str]) -> Iterator[T]:
        hits: set[int] = set()
        for ns in (namespace, None):
            hits.update(self._scan.get(ns, ()))
            for key, value in labels.items():
                hits.update(self._by_pair.get((ns, key, value), ()))
        for i in sorted(hits):
            yield self._items[i]


@dataclass(frozen=True)
class NodeSelectorTerm:
    """One ORed term: matchExpressions and matchFields are ANDed; an empty term matches nothing."""

    requirements: Requirements = Requirements()
    # matchFields on metadata.name: (operator In|NotIn, name)
    field_names: tuple[tuple[str, str], ...] = ()
    empty: bool = False
    valid: bool = True
    origin: Origin = field(default=UNKNOWN, compare=False)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.empty or not self.valid:
            return False
        for op, name in self.field_names:
            if (op == "In") != (node_name == name):
                return False
        return self.requirements.matches(labels)


@dataclass(frozen=True)
class PreferredTerm:
    weight: int
    term: NodeSelectorTerm


@dataclass(frozen=True)
class NodeAffinity:
    """`spec.nodeSelector` plus required node affinity (terms ORed) and weighted preferences."""

    node_selector: Requirements = Requirements()
    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: tuple[PreferredTerm, ...] = ()

    def matches(self, labels: Mapping[str, str], node_name: str = "") -> bool:
        """`RequiredNodeAffinity.Match`: nodeSelector and (if given) one required term."""
        if not self.node_selector.matches(labels):
            return False
        if self.required is None:
            return True
        return any(t.matches(labels, node_name) for t in self.required)

    def strict_alternatives(self) -> list[Requirements]:
        """nodeSelector ∩ each required term (one entry when there are no terms): Karpenter's strict requirements."""
        if self.required is None:
            return [self.node_selector]
        return [self.node_selector & t.requirements for t in self.required if not t.empty and t.valid]

    def forbids(self, key: str) -> bool:
        """Does every alternative require `key` to be absent (`DoesNotExist`)? `karpenter.sh/nodepool`: the pod
        keeps off every node Karpenter launches (the Karpenter chart's own controller does)."""
        alternatives = self.strict_alternatives()
        return bool(alternatives) and all(key in alt and alt[key].absent_ok and not alt[key].allows_values()
                                          for alt in alternatives)

    def preference_score(self, labels: Mapping[str, str], node_name: str = "") -> int:
        return sum(p.weight for p in self.preferred if p.term.matches(labels, node_name))


class LabelIndex(Generic[T]):
    """Items filed by a (namespace, label map), found for a selector without testing every item: the
    other direction of `SelectorIndex`. `candidates` returns, in the order added, every item of the
    namespace the selector *may* match (those holding one of its `required_pairs`, or all of the
    namespace's when it has none); callers still test the selector."""

    def __init__(self) -> None:
        self._items: list[T] = []
        self._by_pair: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        self._by_namespace: dict[str, list[int]] = defaultdict(list)

    def add(self, item: T, namespace: str, labels: Mapping[str, str]) -> None:
        i = len(self._items)
        self._items.append(item)
        self._by_namespace[namespace].append(i)
        for key, value in labels.items():
            self._by_pair[(namespace, key, value)].append(i)

    def candidates(self, namespace: str, selector: LabelSelector | None) -> list[T]:
        if selector is None or not selector.valid:
            return []
        pairs = required_pairs(selector)
        if pairs is None:
            return [self._items[i] for i in self._by_namespace.get(namespace, ())]
        hits: set[int] = set()
        for key, value in pairs:
            hits.update(self._by_pair.get((namespace, key, value), ()))
        return [self._items[i] for i in sorted(hits)]

