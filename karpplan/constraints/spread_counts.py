"""How a topology spread counts: the one home of the spread arithmetic (Karpenter's `topologygroup.go`).

Pure functions over counts, not over engine objects: the greedy engine's per-placement check
(`scheduling/state.py`, `topology_counts.py`), the CP-SAT rows (`topology_spread.py`), the zone repair and
its moves, the neighbourhood sub-model, the bounds, the pattern generators, the re-packer, the decoder and
the verifier all ask here, so changing how a spread counts is changing this module.

* `global_minimum`: Karpenter's `domainMinCount` / kube-scheduler's global minimum: the least count over
  the eligible domains, 0 when they are fewer than minDomains;
* `skew_limit` / `admits`: a domain receiving a pod may hold at most that minimum plus maxSkew;
* `next_domains`: the domains a pod may take (`nextDomainTopologySpread`);
* `node_cap`: the most matching pods one new node may hold on a hostname spread (a new node is a fresh
  domain, so Karpenter's global minimum for it is 0);
* `least_domain_count`: how few matching pods a domain can hold once a number of them are spread within
  maxSkew over a number of domains (the bounds' linking rows).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

from karpplan.model.taints import SCHEDULING_EFFECTS, untolerated

if TYPE_CHECKING:
    from ortools.sat.python.cp_model import LinearExpr, LinearExprT

    from karpplan.model.pods import PodTemplate, TopologySpreadConstraint
    from karpplan.model.taints import Taint


class Skew(Protocol):
    """What the counting reads of a spread: maxSkew, and minDomains in effect (1 when the manifest has none)."""

    @property
    def max_skew(self) -> int: ...

    @property
    def min_domains(self) -> int: ...


_Domain = TypeVar("_Domain")


@dataclass(frozen=True)
class ConstraintSkew:
    """A spread constraint as the counting reads it (`Skew`), for readers holding the manifest's constraint."""

    max_skew: int
    min_domains: int


def constraint_skew(c: TopologySpreadConstraint) -> ConstraintSkew:
    """The constraint's maxSkew and minDomains in effect (1 when unset)."""
    return ConstraintSkew(c.max_skew, c.effective_min_domains)


def policies_count(c: TopologySpreadConstraint, template: PodTemplate, labels: Mapping[str, str],
                   taints: Iterable[Taint], node_name: str = "") -> bool:
    """Do the constraint's inclusion policies count a node with these labels and taints as a domain for a pod
    of the template: nodeAffinityPolicy Honor (the default) asks the pod's required node affinity to match,
    nodeTaintsPolicy Honor asks the pod to tolerate the node's NoSchedule/NoExecute taints? (Whether the node
    has the topology key is the caller's: hostname falls back to the node's name.)"""
    if c.honors_affinity and not template.affinity.matches(labels, node_name):
        return False
    return not (c.honors_taints and untolerated(template.tolerations, taints, SCHEDULING_EFFECTS))


def minimum_pinned(rule: Skew, n_domains: int) -> bool:
    """Is the global minimum 0 whatever the counts: fewer eligible domains than minDomains (or none)?"""
    return n_domains < max(rule.min_domains, 1)


def most_pods_while_pinned(rule: Skew, n_domains: int) -> int:
    """How many matching pods the domains can hold while the global minimum is pinned at 0 (`minimum_pinned`):
    maxSkew in each."""
    return n_domains * rule.max_skew


def global_minimum(rule: Skew, counts: Collection[int]) -> int:
    """The global minimum over the eligible domains' counts (`domainMinCount`): 0 below minDomains."""
    if minimum_pinned(rule, len(counts)):
        return 0
    return min(counts)


def domain_minimum(rule: Skew, counts: Mapping[_Domain, int], domains: Iterable[_Domain]) -> int:
    """`global_minimum` over these eligible domains, a domain absent from `counts` holding 0."""
    return global_minimum(rule, [counts.get(d, 0) for d in domains])


@overload
def skew_limit(rule: Skew, minimum: int) -> int: ...


@overload
def skew_limit(rule: Skew, minimum: LinearExpr) -> LinearExpr: ...


@overload
def skew_limit(rule: Skew, minimum: LinearExprT) -> LinearExprT: ...


def skew_limit(rule: Skew, minimum: object) -> object:
    """The most matching pods a domain receiving a pod may hold: the global minimum plus maxSkew (an int,
    or a CP-SAT expression when the minimum is a variable)."""
    return minimum + rule.max_skew  # type: ignore[operator]


def admits(rule: Skew, count: int, minimum: int) -> bool:
    """May a domain hold `count` matching pods (the pod being placed included) given the global minimum?"""
    return count - minimum <= rule.max_skew


def next_domains(rule: Skew, counts: Mapping[str, int], domains: Collection[str], own: int) -> set[str]:
    """The domains a pod may take (`nextDomainTopologySpread`): those that, with the pod (`own`: 1 when it
    matches the selector, else 0), stay within maxSkew of the global minimum over `domains`."""
    minimum = domain_minimum(rule, counts, domains)
    return {d for d in domains if admits(rule, counts.get(d, 0) + own, minimum)}


def node_cap(rule: Skew) -> int:
    """The most matching pods a new node may hold on a hostname spread: a new node is a domain of its own
    and Karpenter's global minimum for it is 0."""
    return skew_limit(rule, 0)


def least_domain_count(rule: Skew, pods: int, n_domains: int) -> int:
    """The fewest matching pods any one of `n_domains` domains holds once `pods` of them are spread within
    maxSkew (the others at most that plus maxSkew each); 0 or less means no floor."""
    if n_domains <= 0:
        return 0
    return math.ceil((pods - rule.max_skew * (n_domains - 1)) / n_domains)


def max_skew_of(rule: Skew) -> int:
    """The rule's maxSkew, for wording and for keys that group rules counting alike."""
    return rule.max_skew


__all__ = ["ConstraintSkew", "Skew", "constraint_skew", "admits", "domain_minimum", "global_minimum", "least_domain_count", "max_skew_of",
           "minimum_pinned", "next_domains", "node_cap", "policies_count", "skew_limit"]
