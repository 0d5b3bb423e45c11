"""Label selectors and node selector terms (kube-scheduler semantics)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

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

    def preference_score(self, labels: Mapping[str, str], node_name: str = "") -> int:
        return sum(p.weight for p in self.preferred if p.term.matches(labels, node_name))
