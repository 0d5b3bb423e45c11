"""Spread floors: the fewest pods a hard zone spread leaves in each of its domains, as rows of an exact model.

A hard spread with maxSkew s over D domains, every pod it counts carrying it (so any domain holding one of
them receives one, and holds at most the minimum plus s), puts T counted pods so that each domain holds at
least ceil((T - (D - 1) s) / D): were one below that, the others (at most its count plus s each) could not
hold the rest. Six `web` pods over six zones with maxSkew 1: one in every zone. The model's rows imply it for
integer counts, but its LP relaxation does not (it spreads the pods as fractions), so the row lets CP-SAT's LP
see that every domain needs a pod, hence a node. Pods a plan leaves out lower the floor: the row is
`count(d) >= floor - unplaced`, valid since ceil((A - U) / D) >= ceil(A / D) - U for whole U >= 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpplan.constraints.spread_counts import minimum_pinned, skew_limit

if TYPE_CHECKING:
    from karpplan.engines.cpsat.optimal import OptimalModel


def add_spread_floors(model: OptimalModel) -> list[int]:
    """Add the floor rows of every hard zone spread they apply to (see the module docstring): each row's floor."""
    topo = model.problem.topology
    done: set[tuple[object, ...]] = set()
    added: list[int] = []
    for g in model.groups:
        for rule in topo.rules_for(g.template):
            if not rule.hard or rule.hostname or not rule.self_match or rule.signature() in done:
                continue
            done.add(rule.signature())
            domains = sorted(rule.static_domains())  # sorted: a frozenset's order changes with the hash seed
            if not domains or minimum_pinned(rule, len(domains)) or any(rule.base_counts.values()):
                continue
            raisers = [h for h in model.groups if rule.counts(h.template.namespace, h.template.labels)]
            # Every counted pod carries the rule (a domain holding one receives one) and is counted wherever
            # the plan may put it.
            if not all(any(r.hard and r.signature() == rule.signature() for r in topo.rules_for(h.template))
                       for h in raisers):
                continue
            spots = {d: vs for d, vs in ((d, [v for h in raisers for v in model.placed_in(h.index, rule.key, d, rule)])
                                         for d in domains)}
            if sum(len(vs) for vs in spots.values()) != sum(len(model.x_of[h.index]) + len(model.y_of[h.index])
                                                            for h in raisers):
                continue
            total = sum(h.size for h in raisers)
            # A domain above the minimum holds at most skew_limit(rule, its count) pods: maxSkew more than it.
            floor = -(-(total - (len(domains) - 1) * skew_limit(rule, 0)) // len(domains))
            if floor <= 0:
                continue
            unplaced = sum(model.u[h.index] for h in raisers)
            for vs in spots.values():
                model.model.add(sum(vs) >= floor - unplaced)
                added.append(floor)
    return added


__all__ = ["add_spread_floors"]
