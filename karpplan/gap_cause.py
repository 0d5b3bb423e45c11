"""Why a plan's gap is wide, in plain words: is the plan or the bound the likely cause? (issue 29)

The gap is how far from the cheapest plan this one can be at most, not how far it is. What the lower bounds
count decides whose a wide gap is likely to be:

* Counted. A workload's own hostname anti-affinity and hostname spread (at most one, or maxSkew, of its
  pods per node: the cap sets of `engines/bound.py` and the configuration LP's patterns); zone spreads
  (whole nodes in every zone the spread forces, `engines/combinatorial_bound.py` one dimension at a time and
  `engines/zone_node_bound.py` every dimension and whole pods per node at once, and the zone-indexed LP);
  spreads over any other key (a custom label whose values come from the pools) the same way, per domain.
  NodePool weights bound nothing: they order Karpenter's choice, but the optimal engine may take any pool,
  so the cheapest plan, which the bound is a bound of, ignores them.
* Relaxed. Hostname anti-affinity or hostname spreads that count other workloads' pods, zone anti-affinity
  and minDomains (nodes per zone the LPs buy as fractions), required pod affinity on the hostname or to pods
  other than the workload's own (a workload affine to its own pods in a zone only picks a zone). With such rules a wide
  gap is most likely the bound's, and the plan may well be optimal.

With only the fluid LP's bound (the configuration LP did not finish) the gap is likely the bound's too;
otherwise the configuration LP is usually within a few percent of the cheapest plan, so the plan is the
likely cause and more time may find a cheaper one (what was measured: docs/design-notes/optimiser.md,
"Bounds (session 13)").
The machine is never blamed here: a slow machine is said by the work clock's own note (`optimiser.py`).
"""

from __future__ import annotations

from karpplan.model.labels import HOSTNAME
from karpplan.scheduling.problem import Problem
from karpplan.scheduling.topology import AffinityRule

WIDE_GAP = 0.05  # a gap from this share of the cost is explained


def weak_bound_rules(problem: Problem) -> list[str]:
    """The rules of the problem that the lower bounds relax, in the user's words (sorted)."""
    topo = problem.topology
    weak: set[str] = set()
    for rules in topo.spread.values():
        for rule in rules:
            if not rule.hard:
                continue
            if rule.hostname and not rule.self_match:
                weak.add("hostname topology spread across workloads")
            if rule.constraint.min_domains:
                weak.add("minDomains")
    for anti in topo.anti_affinity.values():
        owner = anti.owner
        for term in anti.terms:
            if term.key != HOSTNAME:
                weak.add("zone anti-affinity")
            elif not term.matches(owner.namespace, owner.labels, topo.namespace_labels):
                weak.add("hostname anti-affinity across workloads")
    if any(_affinity_relaxed(rule) for rule in topo.affinity.values()):
        weak.add("pod affinity")
    return sorted(weak)


def _affinity_relaxed(rule: AffinityRule) -> bool:
    """Whether the bounds' relaxation of this required pod affinity may cost the cheapest plan much: pods that
    must share a node (hostname) are split across nodes by the LPs, and a group that must join pods already
    running (or other workloads' pods) may be pinned to a dearer domain. A workload affine to its own pods in a
    zone only chooses a zone, as the LPs may: measured on the bench's aws diverse 100 (a fifth of the pods
    zone-affine to their own Deployment), the best plan found keeping every zonal rule costs 1.0% more than the
    best packing found without any, while the 10 s plan was 1.9% or more above the best (docs/design-notes/optimiser.md,
    session 15)."""
    return (any(term.key == HOSTNAME for term in rule.terms) or not rule.self_match
            or any(rule.existing))


def gap_cause(problem: Problem, status: str, gap: float | None, bound_source: str | None,
              clock_cut: bool = False) -> str | None:
    """A plain line on a wide gap's likely cause (None when the gap is narrow, absent or the plan proven).
    `clock_cut`: the time limit stopped a phase before its share (`WorkClock.cut`), which may have been the
    configuration LP's, so its bound is then no evidence that the plan is the cause."""
    if gap is None or gap < WIDE_GAP or status == "optimal":
        return None
    share = f"{gap:.1%}"
    weak = weak_bound_rules(problem)
    if clock_cut:
        return (f"gap {share}: the time limit stopped planning before the bound's LPs and the search had their "
                "share, so either the plan or the bound may be the cause; a longer --time-limit tightens both")
    if weak:
        # A weak bound explains much of a wide gap, not all of it: the search too stopped at the limit (a new user's
        # 7.3% "bound" gap had a plan 1.9% cheaper at 90 s).
        return (f"gap {share}: the bound is weak for {', '.join(weak)} (it does not count the nodes these rules "
                "force), so much of the gap is likely the bound's and the plan may be optimal; the gap is how far "
                "from the cheapest plan this one can be at most, not how far it is, and the search stopped at the "
                "time limit: a longer --time-limit may still find a cheaper plan")
    if bound_source == "fluid-lp":
        return (f"gap {share}: the bound is the LP relaxation's only (it shares pods across nodes as if they "
                "were fluid), so the bound is the likely cause and the plan may be optimal; a longer --time-limit "
                "lets the tighter configuration LP finish")
    if bound_source == "whole-nodes":
        return (f"gap {share}: the bound counts only the whole nodes the spreads need in each domain, so the "
                "bound is the likely cause and the plan may be optimal; a longer --time-limit lets the tighter "
                "configuration LP finish")
    if bound_source == "cp-sat":
        return (f"gap {share}: the bound is CP-SAT's from a search the time limit stopped, so either the plan or "
                "the bound may be the cause; a longer --time-limit tightens both")
    return (f"gap {share}: the bound (the configuration LP) is usually within a few percent of the cheapest plan "
            "for pods like these, so the plan is the likely cause; a longer --time-limit may find a cheaper one")
