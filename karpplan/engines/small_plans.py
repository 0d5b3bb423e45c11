"""Small plans proven at once: the lower bounds known before the exact slot model, and the model stopped as soon as a plan meets them.

For a plan of up to `MAX_EXACT_PODS` pending pods the optimiser (`optimiser.py`) first computes the bounds on
plans that place every pod (the fluid LP, the configuration LP and the zone LP, `background_bound.lp_bounds`).
A valid warm start that meets them is proven optimal and nothing else runs. Otherwise the exact slot model
(`cpsat/exact.py`) searches with those bounds in hand: CP-SAT stops at the first plan placing every pod whose
price meets them (`SlotModel.solve_exact(stop_at=...)`), instead of running on to prove with its own bound what
the LPs already proved. A warm start the verifier rejects is first repaired in a slot model around it.
The bounds are kept for the plan's report (`ExactOutcome.early`) when the chosen plan places every pod, so they
are not computed twice. A tiny model (`QUICK_ENTRIES`, no NodePool weights) is first solved by one CP-SAT worker
for up to `QUICK_SECONDS`, before any LP: proven there (the README quickstart), no LP bound is computed at all.
Before either, whole nodes per topology domain (`combinatorial_bound.zone_integer_bound`: a few dynamic
programmes, milliseconds) are asked: where a spread forces a node into every domain of a zone or of any
other key (a custom label whose values come from the pools), that bound alone meets the warm start and
proves it, and neither a slot model nor an LP is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from karpplan.engines.background_bound import Sourced, lp_bounds, proves
from karpplan.engines.bound import FluidBound, fluid_lower_bound
from karpplan.engines.combinatorial_bound import integer_bound_seconds, zone_integer_bound
from karpplan.engines.cpsat.exact import MAX_EXACT_ENTRIES, MAX_EXACT_PODS, MAX_REPAIR_ENTRIES, SlotModel
from karpplan.engines.effort import TimeBudget, model_build_seconds
from karpplan.engines.optimiser_progress import Phase, ProgressTracker
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution
from karpplan.engines.whole_node_plan import complete, programme_plan, unplaceable
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import Problem
from karpplan.verify import verify

# A slot model of at most this many entries first gets one CP-SAT worker for up to QUICK_SECONDS modelled seconds,
# before any LP bound: with its content rows (`exact.py`) that proves the README quickstart (624 entries) in
# 0.3-0.7 deterministic seconds, where the LP bounds alone cost 0.9 s of CPU and prove nothing there. A model it
# does not prove goes on as before (LP bounds, then the model stopped by them); the seed's host-spread case
# (1,140 entries, proven by its LP bounds without the model) stays above the line.
QUICK_ENTRIES = 800
QUICK_SECONDS = 1.0
EXACT_SHARE = 0.6  # of what is left before the bounds' reserve, for the exact slot model of a small problem
REPAIR_EXTRA_SLOTS = 1  # slots per bucket beyond a broken warm start's nodes, when it is re-solved in the slot model
REPAIR_SHARE = 1.0  # ... and the share of that time it gets
MIN_REPAIR_SECONDS = 8.0  # modelled seconds below which it is not tried (at 100 diverse pods it finds nothing)
# ... unless its model is this small; it then gets this share, the proof the rest. Measured on bench diverse
# pods (aws): 20, 30, 50 pods (600-1,400 entries) give valid plans placing every pod in 10 s where the
# re-packed Karpenter plan broke zone spread; 100 pods (3,900) find none in the time left.
SMALL_REPAIR_ENTRIES = 2_500
SMALL_REPAIR_SHARE = 0.8
WHOLE_NODES = "whole-nodes"  # the source of the whole-node bound when it is reported alone
# Wall seconds the whole-node programme's plan may take: it proves small plans in milliseconds (the quickstart,
# 30- and 50-pod blueprints); at aws diverse 100 it ran on through the search's time and left a dearer plan.
PROGRAMME_SECONDS = 1.0
# Modelled seconds the whole-node bound may cost before any search: it proves small real plans in milliseconds,
# but at aws diverse 100 (six zones, 40 option lists) it is charged 1.4 s that the search then lacks (the row
# went 2.7853 -> 2.7948); past this the background bound computes it in its reserve, as before.
UP_FRONT_SECONDS = 0.3


@dataclass
class ExactOutcome:
    """What the small-plan phase found: the exact model's status (None: it did not run), its plan (or a
    repaired warm start), its lower bound and how many pods that bound's plans leave out, the bounds on
    plans placing every pod computed before it (`early`, with the fluid LP they started from), and whether
    a valid plan placing every pod is proven optimal by them (`proven`: the warm start or the exact plan)."""

    status: str | None = None
    plan: Solution | None = None
    bound: float | None = None
    bound_unplaced: int = 0
    early: Sourced | None = None
    fluid: FluidBound | None = None
    proven: Solution | None = None
    warm_valid: bool = True
    notes: list[str] = field(default_factory=list)


@dataclass
class SmallPlanRun:
    """The optimiser's run as the small-plan phase reads it: the problem, the warm start, the clocks."""

    problem: Problem
    warm: Solution
    repacker: Repacker
    budget: TimeBudget
    reserve: float  # work seconds each LP bound may take
    deadline: float  # on the work clock
    margin: float
    seed: int
    workers: int
    tracker: ProgressTracker
    # The launch options left after dominance pruning (`OptimalModel.prune_options`, which reads only the
    # problem), and each group's: pruned once, shared by every slot model and the whole-plan model.
    pruned: tuple[list[LaunchOption], dict[int, list[LaunchOption]]] | None = None
    # Bounds on plans placing every pod found before the LPs (`whole_node_bounds`): `early_bounds` keeps them.
    known: Sourced = field(default_factory=list)

    def slot_model(self, hint: Solution, incumbent: float, extra_slots: int | None = None) -> SlotModel:
        """A slot model of the problem, its options pruned once for all models."""
        model = SlotModel(self.problem, hint, self.repacker, incumbent, extra_slots=extra_slots)
        if self.pruned is None:
            model.prune_options()
            self.pruned = (model.options, model.group_options)
        else:
            model.options, model.group_options, model.pruned = list(self.pruned[0]), dict(self.pruned[1]), True
        return model


def solve_small(run: SmallPlanRun) -> ExactOutcome:
    """The bounds first, then (unless they prove the warm start) the exact slot model stopped by them."""
    problem, warm, budget = run.problem, run.warm, run.budget
    out = ExactOutcome()
    if problem.pending_count > MAX_EXACT_PODS or not problem.groups:
        return out
    with budget.phase("model"):
        out.warm_valid = not verify(problem, warm)
    out.status, out.plan, out.bound = solve_exact(run, out)
    plan = out.plan
    if plan is None:
        return out
    out.bound_unplaced = len(plan.unplaced)
    if out.status == "optimal" and out.warm_valid and len(plan.unplaced) > len(warm.unplaced):
        # The model left out a pod the valid warm start places: it is not exact for this problem (a rule it
        # writes more strictly than the verifier reads it), so it proves nothing.
        out.status, out.bound = "feasible", None
    valid = not verify(problem, plan)
    if not valid:
        out.status = "feasible"  # a plan the verifier rejects is no proof (its bound, of a laxer model, holds)
    known = [b for b, _ in out.early or []]
    bounds = known + ([out.bound] if out.bound is not None and complete(problem, plan) else [])
    if valid and complete(problem, plan) and proves(bounds, plan.cost):
        out.proven = plan
    return out


def early_bounds(run: SmallPlanRun, warm_valid: bool) -> tuple[Sourced, FluidBound | None]:
    """The fluid, configuration and zone LP bounds on plans placing every pod; each LP only while the
    bounds so far do not prove the warm start (when it is valid and places every pod)."""
    problem, clock = run.problem, run.budget.clock
    placed = _placeable(problem)
    run.tracker.enter(Phase.bound)
    with run.budget.phase("bound"):
        fluid = None if clock.past_wall() else fluid_lower_bound(problem, placed, time_limit=clock.wall_left(),
                                                                 clock=clock)
        sourced: Sourced = list(run.known) + ([(fluid.cost, "fluid-lp")] if fluid is not None else [])
        cost = run.warm.cost if warm_valid and complete(problem, run.warm) else float("inf")
        if not clock.past_wall():
            sourced += lp_bounds(problem, placed, fluid, [b for b, _ in sourced], run.reserve, run.deadline,
                                 run.margin, clock, plan_cost=cost)
    if sourced and complete(problem, run.warm):
        run.tracker.update(bound=max(b for b, _ in sourced))
    return sourced, fluid


def solve_exact(run: SmallPlanRun, out: ExactOutcome) -> tuple[str | None, Solution | None, float | None]:
    """The exact slot model (`exact.py`) on a small problem: (its status, or None when it did not run;
    its plan, or a repaired warm start's; a lower bound on any plan leaving out as many pods as its plan).

    A warm start the verifier rejects (Karpenter checks a spread rule only when placing a pod that carries
    it) is first re-solved in the slot model around it: its nodes per bucket and `REPAIR_EXTRA_SLOTS` more,
    every rule exact, when that model is small or can have `MIN_REPAIR_SECONDS`. Its plan, kept when it
    places as many pods, is the exact model's hint and, placing every pod, caps its slots. When the exact
    model is small enough to run, the LP bounds come first (`out.early`): a valid warm start they meet is
    proven (`out.proven`) and the model is not solved; else they stop its search. A problem too large for
    the model keeps them for later, beside the search (`background_bound.py`)."""
    problem, warm, budget = run.problem, run.warm, run.budget
    repaired = None if out.warm_valid else _repaired(run)
    start = repaired or warm
    preferences = weighs_preferences(problem)
    price_proven = whole_node_bounds(run, start if start is not warm or out.warm_valid else None)
    if not price_proven:
        made = _programme_plan(run)
        if made is not None and (not complete(problem, start) or made.cost < start.cost - 1e-9 or start is warm
                                 and not out.warm_valid):
            start = repaired = made
            price_proven = proves([b for b, _ in run.known], made.cost)
    if price_proven and not preferences:
        out.early, out.proven = list(run.known), start
        return None, repaired, None
    # A plan that places every pod and keeps every rule caps the nodes any cheaper plan has per bucket.
    incumbent = start.cost if complete(problem, start) and (start is not warm or out.warm_valid) else -1.0
    with budget.phase("model"):
        model = run.slot_model(start, incumbent)
        entries = model.plan_slots()
    if price_proven:
        out.early = list(run.known)
        return _weigh_preferences(run, model, start, entries)
    if entries > MAX_EXACT_ENTRIES or not model.uniform:
        return None, repaired, None
    tiered = any(t != 0 for g in problem.groups for t in g.tier.values())
    quick: _Solved | None = None
    # (NodePool weights: CP-SAT's bound is then no bound on the price, so the LP bounds are wanted first.)
    if entries <= QUICK_ENTRIES and not tiered:
        quick = _quick_solve(run, model, out)
        if quick is not None and quick[0] == "optimal":
            return quick
    out.early, out.fluid = early_bounds(run, out.warm_valid)
    known = [b for b, _ in out.early]
    # With preferences to weigh, plans of the cheapest price differ in those they honour: the bounds prove the
    # price only, so the model still runs, to its own end, to pick the cheapest plan that honours the most.
    if out.warm_valid and complete(problem, warm) and proves(known, warm.cost) and not preferences:
        out.proven = warm
        return None, repaired, None
    # The LP bounds hold for plans placing every pod, computed now: the reserve kept for them is the model's.
    stop_at = max(known) if known and not preferences else None
    status, plan, bound = _slot_plan(run, model, run.deadline - run.margin, EXACT_SHARE, stop_at)
    if quick is not None and (plan is None or _fewer_then_cheaper(quick[1], plan)):
        status, plan, bound = quick[0], quick[1], max(quick[2], bound) if plan is not None and \
            len(plan.unplaced) == len(quick[1].unplaced) else quick[2]
    if plan is None:
        return status, repaired, None
    # Under weights too: `cost_bound` takes the plan's tier penalty off, and a plan honouring the weights (the
    # fewest tier steps, as Karpenter's heaviest-pool-first) has at most that penalty, so its price is bounded.
    return status, plan, bound


def _weigh_preferences(run: SmallPlanRun, model: SlotModel, start: Solution,
                       entries: int) -> tuple[str | None, Solution | None, float | None]:
    """`start`'s price is proven by the whole nodes per domain: only the preferences are left to weigh, so the
    slot model (when it runs at all) gets one worker for `QUICK_SECONDS` from it, never the search a price would
    need; its plan is kept when the verifier accepts it at the same price."""
    if entries > MAX_EXACT_ENTRIES or not model.uniform:
        return None, start, None  # a valid plan placing every pod at the bound: `solve_small` proves it
    status, plan, bound = _slot_plan(run, model, run.deadline - run.margin, 1.0, None, quick=True)
    if plan is None or verify(run.problem, plan) or _fewer_then_cheaper(start, plan):
        return None, start, None
    return status, plan, bound


def _repaired(run: SmallPlanRun) -> Solution | None:
    """A warm start the verifier rejects, re-solved in the slot model around it (`solve_exact`): the plan when the
    verifier accepts it and it places as many pods, else None."""
    problem, warm, budget = run.problem, run.warm, run.budget
    until = run.deadline - run.reserve
    with budget.phase("model"):
        model = run.slot_model(warm, -1.0, extra_slots=REPAIR_EXTRA_SLOTS)
        entries = model.plan_slots()
    small = entries <= SMALL_REPAIR_ENTRIES
    if model.uniform and entries <= MAX_REPAIR_ENTRIES and \
            (small or (until - budget.clock.now()) * REPAIR_SHARE >= MIN_REPAIR_SECONDS):
        repaired = _slot_plan(run, model, until, SMALL_REPAIR_SHARE if small else REPAIR_SHARE, None)[1]
        if repaired is not None and len(repaired.unplaced) <= len(warm.unplaced) and not verify(problem, repaired):
            return repaired
    return None


def whole_node_bounds(run: SmallPlanRun, valid: Solution | None) -> bool:
    """Whole nodes per topology domain (`zone_integer_bound`), kept in `run.known` when it bounds anything;
    whether it proves `valid` (a plan the verifier accepts, or None) optimal, placing every pod."""
    problem, clock = run.problem, run.budget.clock
    placeable = _placeable(problem)
    if clock.past_wall() or integer_bound_seconds(problem, placeable) > UP_FRONT_SECONDS:
        return False
    run.tracker.enter(Phase.bound)
    with run.budget.phase("bound"):
        whole = zone_integer_bound(problem, placeable, clock)
    if whole.cost <= 0:
        return False
    run.known = [(whole.cost, WHOLE_NODES)]
    if valid is None or not complete(problem, valid):
        return False
    run.tracker.update(bound=whole.cost)
    return proves([whole.cost], valid.cost)


def _programme_plan(run: SmallPlanRun) -> Solution | None:
    """A plan read off the whole-node programme (`whole_node_plan.py`), verified; its bound joins `run.known`."""
    clock = run.budget.clock
    if clock.past_wall():
        return None
    with run.budget.phase("bound"):
        made = programme_plan(run.problem, clock, wall_seconds=min(max(clock.wall_left(), 0.1), PROGRAMME_SECONDS))
    if made is None:
        return None
    if made.bound > max((b for b, _ in run.known), default=0.0):
        run.known = [*run.known, (made.bound, WHOLE_NODES)]
    run.tracker.update(cost=made.plan.cost, unplaced=len(made.plan.unplaced), bound=max(b for b, _ in run.known) if run.known else None)
    return made.plan


def _placeable(problem: Problem) -> dict[int, int]:
    """Pods per group a plan places when it places every pod some plan can (`unplaceable` groups: none)."""
    left_out = unplaceable(problem)
    return {g.index: 0 if g.index in left_out else g.size for g in problem.groups}


def _fewer_then_cheaper(plan: Solution, other: Solution) -> bool:
    """Whether `plan` leaves out fewer pods than `other`, or as many at a lower cost."""
    return (len(plan.unplaced), plan.cost) < (len(other.unplaced), other.cost)


_Solved = tuple[str | None, Solution, float]  # a slot model's status, plan and bound


def _quick_solve(run: SmallPlanRun, model: SlotModel, out: ExactOutcome) -> _Solved | None:
    """The quick solve of a small slot model: its plan when the verifier accepts it, status "optimal" only when
    it is a proof. Not a proof, it is a valid plan the progress display has shown: kept in case the clock runs
    out before the full solve (a loaded machine), so the answer is never dearer than a plan already reported."""
    problem, warm = run.problem, run.warm
    status, plan, bound = _slot_plan(run, model, run.deadline - run.margin, 1.0, None, quick=True)
    if plan is None or verify(problem, plan):
        return None
    # A proof only when it leaves out no pod the valid warm start places (else the model is not exact here,
    # `solve_small`, and the LP bounds are wanted after all).
    if status == "optimal":
        if out.warm_valid and len(plan.unplaced) > len(warm.unplaced):
            return None
        if complete(problem, plan):
            out.early = []  # proven by CP-SAT alone: the plan's report needs no LP bound
    return status, plan, bound


def weighs_preferences(problem: Problem) -> bool:
    """Whether plans of one price can differ in the preferences they honour: a ScheduleAnyway spread, a
    preferred pod (anti-)affinity term or a preferred node-affinity term on a pending group (what the
    optimiser did not make required, `preference_policy.py`)."""
    topology = problem.topology
    return any(not rule.hard for g in problem.groups for rule in topology.rules_for(g.template)) or any(
        topology.preferred_affinity.get(id(g.template)) or topology.preferred_anti.get(id(g.template))
        or g.template.affinity.preferred for g in problem.groups)


def _slot_plan(run: SmallPlanRun, model: SlotModel, until: float, share: float, stop_at: float | None,
               quick: bool = False) -> tuple[str | None, Solution | None, float]:
    """Build (once) and solve a slot model with `share` of the work time left before `until`; `quick`: one
    worker for at most `QUICK_SECONDS`."""
    budget, tracker = run.budget, run.tracker
    clock = budget.clock
    if not model.built:
        tracker.enter(Phase.model, "exact slot model")
        with budget.phase("model"):
            model.build()
            clock.charge(model_build_seconds(len(model.model.proto.variables) + len(model.model.proto.constraints)))
    cp_time = (until - clock.now()) * share
    if quick:
        cp_time = min(cp_time, QUICK_SECONDS)
    if cp_time <= 0.05 or clock.past_wall():
        return None, None, 0.0
    with budget.phase("solve"):
        tracker.enter(Phase.solve, "exact slot model")
        status, plan, bound = model.solve_exact(cp_time, run.seed, 1 if quick else run.workers, clock, stop_at)
    if plan is None:
        return status, None, 0.0
    tracker.update(cost=plan.cost, unplaced=len(plan.unplaced))
    with budget.phase("repack"):
        plan = run.repacker.renamed(plan, plan.nodes)
    plan.status = status
    return status, plan, bound


__all__ = ["WHOLE_NODES", "complete", "ExactOutcome", "SmallPlanRun", "early_bounds", "solve_exact", "solve_small",
           "whole_node_bounds"]
