"""Why a plan's gap is wide, in plain words: is the plan or the bound the likely cause? (issue 29)

The gap is how far from the cheapest plan this one can be at most, not how far it is. The lower bounds
(`engines/bound.py`, the configuration LPs) treat node counts as fractions and ignore some rules: hostname
anti-affinity and hostname spreads force a node per pod (per domain count), minDomains and zone
anti-affinity force nodes per zone, NodePool weights force the dearer tiers first. With such rules a wide
gap is most likely the bound's, and the plan may well be optimal; with only the fluid LP's bound (the
configuration LP did not finish) it is the bound's too; otherwise the configuration LP is usually within
a few percent of the cheapest plan, so the plan is the likely cause and more time may find a cheaper one.
The machine is never blamed here: a slow machine is said by the work clock's own note (`optimiser.py`).
"""

from __future__ import annotations

from karpplan.model.labels import HOSTNAME
from karpplan.scheduling.problem import Problem

WIDE_GAP = 0.05  # a gap from this share of the cost is explained


def weak_bound_rules(problem: Problem) -> list[str]:
    """The rules of the problem that the lower bounds count weakly, in the user's words (sorted)."""
    topo = problem.topology
    weak: set[str] = set()
    for rules in topo.spread.values():
        for rule in rules:
            if not rule.hard:
                continue
            if rule.hostname:
                weak.add("hostname topology spread")
            if rule.constraint.min_domains:
                weak.add("minDomains")
    for anti in topo.anti_affinity.values():
        for term in anti.terms:
            weak.add("hostname anti-affinity" if term.key == HOSTNAME else "zone anti-affinity")
    if len({pool.weight for pool in problem.pools}) > 1:
        weak.add("NodePool weights")
    return sorted(weak)


def gap_cause(problem: Problem, status: str, gap: float | None, bound_source: str | None) -> str | None:
    """A plain line on a wide gap's likely cause (None when the gap is narrow, absent or the plan proven)."""
    if gap is None or gap < WIDE_GAP or status == "optimal":
        return None
    share = f"{gap:.1%}"
    weak = weak_bound_rules(problem)
    if weak:
        return (f"gap {share}: the bound is weak for {', '.join(weak)} (it does not count the nodes these rules "
                "force), so the bound is the likely cause and the plan may be optimal; the gap is how far from "
                "the cheapest plan this one can be at most, not how far it is")
    if bound_source == "fluid-lp":
        return (f"gap {share}: the bound is the LP relaxation's only (it shares pods across nodes as if they "
                "were fluid), so the bound is the likely cause and the plan may be optimal; a longer --time-limit "
                "lets the tighter configuration LP finish")
    if bound_source == "cp-sat":
        return (f"gap {share}: the bound is CP-SAT's from a search the time limit stopped, so either the plan or "
                "the bound may be the cause; a longer --time-limit tightens both")
    return (f"gap {share}: the bound (the configuration LP) is usually within a few percent of the cheapest plan "
            "for pods like these, so the plan is the likely cause; a longer --time-limit may find a cheaper one")
