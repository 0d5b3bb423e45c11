"""The search's start from the configuration LP's integer master, on plans of a few hundred to a few thousand pods.

On aws diverse 1,000 pods the neighbourhood search, a few nodes at a time, does not reach the LP's mix of small
and large nodes (docs/design-notes/optimiser.md, "Session 16"). Here the configuration LP runs for a short
budget of its own (`MASTER_LP_SECONDS`, on the search's core: the LP bounds keep theirs, beside the search), its
columns and the plan's nodes go to the integer master (`integer_master.py`, zones ignored), and its whole nodes
are dealt to the zones and filled (`LpRounding.dealt`): a plan that replaces the plan the search starts from
when cheaper. It applies where the rounding does (`lp_rounding.rounding_applies`), from `MASTER_MIN_PODS`
pending pods up to where the rounding itself takes over (`lp_rounding.ROUNDING_MIN_PODS`).
"""

from __future__ import annotations

from karpplan.engines.effort import WorkClock
from karpplan.engines.integer_master import IntegerMaster
from karpplan.engines.lp_rounding import ROUNDING_MIN_PODS, LpRounding, rounding_applies
from karpplan.engines.patterns import pattern_lower_bound
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution
from karpplan.scheduling.problem import Problem

MASTER_MIN_PODS = 500  # pending pods from which the search starts from the integer master
MASTER_LP_SECONDS = 1.0  # modelled seconds of column generation for the master's columns


def master_applies(problem: Problem, repacker: Repacker) -> bool:
    """Whether the plan is in the master's range of sizes and the LP leaves out nothing the rounding cannot put
    back."""
    return MASTER_MIN_PODS <= problem.pending_count < ROUNDING_MIN_PODS and rounding_applies(problem, repacker)


def master_start(problem: Problem, repacker: Repacker, plan: Solution, clock: WorkClock) -> Solution | None:
    """A plan placing the pods `plan` places, from the integer master over a short LP's columns; None when the
    master is no cheaper than `plan`'s nodes, nothing valid was built, or the wall guard passed."""
    placed = {g.index: g.size for g in problem.groups}
    for g, _ in plan.unplaced:
        placed[g.index] -= 1
    bound = pattern_lower_bound(problem, placed, time_limit=MASTER_LP_SECONDS, clock=clock, want_mix=True)
    if bound is None or bound.mix is None or clock.past_wall():
        return None
    whole = IntegerMaster(problem, bound.mix, clock).whole_nodes(plan)
    if whole is None or whole[1] >= plan.cost - 1e-9 or clock.past_wall():
        return None
    return LpRounding(problem, repacker, bound.mix, clock).dealt(plan, whole[0])


__all__ = ["MASTER_MIN_PODS", "master_applies", "master_start"]
