"""The optimiser: runs the optimal engine's phases inside one time limit and decides when each stops.

Warm start (the Karpenter simulation, re-packed) -> on small problems, the exact slot model (`exact.py`:
a broken warm start repaired, then a proof attempt) -> whole-plan CP-SAT model (unless proven) -> decode
-> re-pack -> zone repair (`zone_repair.py`: hard zone spread kept on the final counts) -> lower bounds
(fluid LP, configuration LP, zone LP) -> neighbourhood search; with two workers or more the configuration
and zone LPs run beside the search in a child process (`background_bound.py`). Every phase reads the same work clock,
owned by the run's `TimeBudget` (`effort.py`), so a seed and a time limit give the same plan on every run;
this module is the only place that decides when a phase stops. Each phase is timed under its name
(`simulate`, `repack`, `model`, `solve`, `decode`, `repair`, `bound`, `round`, `search`, `replay`) on the budget.
"""

from __future__ import annotations

import math
import time
from functools import partial
from typing import TYPE_CHECKING

from karpplan.engines.background_bound import BackgroundBound, lp_bounds, proves, start_background
from karpplan.engines.bound import fluid_lower_bound
from karpplan.engines.cpsat.decoder import ModelValues
from karpplan.engines.cpsat.optimal import MAX_MODEL_VARIABLES, Decoder, OptimalModel
from karpplan.engines.effort import (
    MACHINE_SLOWER_RATIO,
    TimeBudget,
    WorkClock,
    available_cores,
    model_build_seconds,
    post_search_seconds,
    pre_search_seconds,
)
from karpplan.engines.lp_rounding import ROUNDING_MIN_PODS, LpRounding, rounding_applies
from karpplan.engines.lp_start import master_applies, master_start
from karpplan.engines.neighbourhood import NeighbourhoodSearch
from karpplan.engines.optimiser_progress import Phase, ProgressSink, ProgressTracker
from karpplan.engines.patterns.mix import PatternMix
from karpplan.engines.repack import Repacker, state_for
from karpplan.engines.result import Solution
from karpplan.engines.small_plans import ExactOutcome, SmallPlanRun, complete, solve_small
from karpplan.engines.zone_repair import ZoneRepair
from karpplan.scheduling.problem import Problem
from karpplan.scheduling.state import PlacementState
from karpplan.verify import verify

if TYPE_CHECKING:
    from karpplan.engines.repack import Repacker

UNPRUNED_SKIP_FACTOR = 10  # beyond this many times the limit before pruning, the model is not even pruned
LARGE_MODEL_VARIABLES = 5_000  # beyond this CP-SAT gets a share of the time, neighbourhood search the rest
CP_SAT_SHARE_LARGE = 0.25
MIN_OPTIMISER_SECONDS = 1.0  # what the optimiser keeps when the simulation used up the time limit
SEARCH_MARGIN_SHARE = 0.03  # of the time limit, left at its end for the plan's replay and document
CLOCK_CUT_WARNING = ("the time limit ran out before the search finished (this machine is slower than the one "
                     "karpplan's timings assume), so it stopped early and a re-run may give a different plan; a "
                     "longer --time-limit gives the same plan every time")
# When the optimiser's work ran about as fast as modelled (`effort.MACHINE_SLOWER_RATIO`), a cut is not the machine's.
LIMIT_CUT_WARNING = ("the time limit ran out just before the search's own budget did, so it stopped a little early "
                     "and a re-run may give a different plan; a longer --time-limit gives the same plan every time")
# When what ran before the optimiser took this share of the limit, a cut is the limit's fault, not the machine's.
SHORT_LIMIT_SHARE = 0.5
TIME_LIMIT_SHORT_WARNING = "the time limit is short for this many pods"
WORK_HEADROOM_SHARE = 0.15  # of the time limit: how far the modelled work may be off before the wall guard cuts
BOUND_RESERVE_SHARE = 0.4  # of the time limit, for each lower bound (fluid LP, configuration LP, zone LP)
BOUND_RESERVE_CAP_SECONDS = 15.0


def within_limits(problem: Problem, greedy: Solution, budget: TimeBudget) -> Solution:
    """The Karpenter simulation's plan, or one that keeps the NodePools' limits when it does not.

    Karpenter's limit accounting is pessimistic (and lax on limits.nodes); a simulation that charges
    limits exactly gives a valid, often fuller, plan: the solver's start, and the plan whose kept
    preferences `--preferences honour` enforces."""
    from karpplan.engines.karpenter_simulation import (
        solve_karpenter,  # imported where used, as in solve_optimal
    )

    # A simulation the clock cut left its pods for lack of time, not of limits: simulating again cannot place
    # them in the time that is left, and would run past the limit. The exact run keeps what is left of it.
    if greedy.exceeds_node_limits or (greedy.unplaced and not greedy.not_simulated
                                      and any(h.resources is not None for h in problem.headroom.values())):
        with budget.phase("simulate"):
            exact, _ = solve_karpenter(problem, exact_limits=True,
                                       time_limit=max(budget.limit - budget.elapsed(), 0.001))
        better = not exact.not_simulated and (len(exact.unplaced), exact.cost) < (len(greedy.unplaced), greedy.cost)
        if better or greedy.exceeds_node_limits:
            return exact
    return greedy


def solve_optimal(problem: Problem, greedy: Solution, *, budget: TimeBudget | None = None, time_limit: float = 10.0,
                  seed: int = 0, workers: int = 0, progress: ProgressSink | None = None,
                  clock: WorkClock | None = None, fixed_cost: float = 0.0) -> tuple[Solution, PlacementState]:
    """The cheapest plan found within the time limit in all (warm start, CP-SAT, re-packing, neighbourhood
    search), with the best valid lower bound.

    The limit is `budget`'s (without one: `time_limit` seconds from now, kept on `clock` when given, whose
    own wall guard then stands). Time is kept on the budget's work clock (`effort.py`): the phases stop
    when their modelled time is spent, so the plan depends only on the problem, the seed, the limit and
    the workers. What ran on the budget before the optimiser (building the problem, the simulation) is
    charged its modelled time, never its measured one. The clock's wall guard (the limit counted from
    when the budget's limit began, at least `MIN_OPTIMISER_SECONDS` from now, less the margin for the plan
    document) stops every phase if the machine is slower than the model, and the plan then says so.

    Phases share the time limit: the Karpenter warm start (already run by the caller) is re-packed; on a
    small problem the exact slot model repairs it if the verifier rejects it and tries to prove a plan
    optimal (its plan a candidate, CP-SAT's bound a lower bound); CP-SAT searches the whole-plan model (when the model is not too large) and its answer is
    decoded and re-packed; the better plan by (pods left out, cost, CP-SAT's on a tie, nodes) is kept,
    its pods moved between zones when a zone spread is past maxSkew once every matching pod is counted
    (`zone_repair.py`, which Karpenter's plan can be: it checks a spread only when placing a pod carrying it);
    the fluid LP and configuration LP bounds run in reserves kept for them (beside the search, on a core of
    their own, when there are two workers or more); on a large plan the LP may leave out nothing the rounding
    cannot put back (`lp_rounding.py`), and then it runs first and its optimum, rounded into a plan, replaces
    the plan when cheaper; neighbourhood search improves the plan until the time limit. The result is never worse than the Karpenter simulation's
    plan when that plan keeps the pools' limits and every rule the verifier checks (a repaired plan may
    cost more than Karpenter's invalid one).

    `progress` hears the phases, the best plan and the best bound as they come (`optimiser_progress.py`), each with
    `fixed_cost` added (the plan's static NodePool nodes and Fargate pods, which the engine does not plan);
    it never changes the plan.
    """
    budget = TimeBudget.of(time_limit, clock) if budget is None else budget
    run = _OptimiserRun(problem, budget, seed, workers, progress, fixed_cost)
    run.warm_start(greedy)
    run.exact()
    run.whole_model()
    run.choose()
    run.bounds()
    run.round()
    run.search()
    return run.finish()


class _OptimiserRun:
    """One run of the optimiser's phases (`solve_optimal`), each a named step over the plans and bounds so far."""

    def __init__(self, problem: Problem, budget: TimeBudget, seed: int, workers: int, progress: ProgressSink | None,
                 fixed_cost: float) -> None:
        self.problem, self.budget, self.seed, self.workers = problem, budget, seed, workers
        self.time_limit, self.clock = budget.limit, budget.clock
        self.start = time.monotonic()
        self.margin = max(0.1, SEARCH_MARGIN_SHARE * self.time_limit)
        self.deadline = self.time_limit * (1 - WORK_HEADROOM_SHARE)  # on the work clock
        self.ran_before = budget.started is not None
        # wall seconds of the limit used before
        self.before = self.start - budget.started if budget.started is not None else 0.0
        if budget.started is None:
            budget.started = self.start
        self.progress = progress
        self.tracker = ProgressTracker(progress, self.time_limit, budget.started, fixed_cost)
        # Each bound gets up to a reserve; CP-SAT gets what is left after building its model, less the reserve.
        self.reserve = min(BOUND_RESERVE_CAP_SECONDS, BOUND_RESERVE_SHARE * self.time_limit)
        self.candidates: list[tuple[Solution, str]] = []
        self.notes: list[str] = []
        self.status = "unknown"
        self.values: ModelValues | None = None
        self.spent_at_start = 0.0  # the work clock when the optimiser's own phases began
        self.decoded_bound: float | None = None
        self.exact_status: str | None = None
        self.exact_plan: Solution | None = None
        self.exact_bound: float | None = None
        self.small = ExactOutcome()
        self.small_run: SmallPlanRun | None = None
        self.whole = False
        self.sourced: list[tuple[float, str]] = []
        self.mixes: list[PatternMix] = []
        self.background: BackgroundBound | None = None

    def warm_start(self, greedy: Solution) -> None:
        """The wall guard set, the time before charged, and the simulation's plan re-packed: the first candidate."""

        problem, budget, clock = self.problem, self.budget, self.clock
        self.tracker.update(cost=greedy.cost, unplaced=len(greedy.unplaced))
        if budget.wall_guard:
            # However long what came before took, the optimiser keeps a small minimum, so a slow simulation
            # still gets a re-packed plan and a bound. What comes after it (replay, the plan) has its time kept.
            soft = sum(1 for g in problem.groups for r in problem.topology.rules_for(g.template) if not r.hard)
            tail = max(self.margin, post_search_seconds(problem.pending_count, soft))
            assert budget.started is not None
            clock.wall_deadline = max(budget.started + self.time_limit - tail,
                                      self.start + min(MIN_OPTIMISER_SECONDS, self.time_limit) - self.margin)
        if self.ran_before:
            clock.charge(min(pre_search_seconds(problem.pending_count, len(problem.groups)),
                             max(self.deadline - MIN_OPTIMISER_SECONDS, 0.0)))
        self.spent_at_start = clock.now()  # the optimiser's own work is charged from here (`_cut_note`)
        hint = within_limits(problem, greedy, budget)
        self.hint = hint  # never bettered by a dearer plan (`choose`)
        self.repacker = Repacker(problem, clock)
        with budget.phase("repack"):
            self.warm = self.repacker.repack(hint)
        self.tracker.update(cost=self.warm.cost, unplaced=len(self.warm.unplaced))
        self.candidates.append((self.warm, "warm start"))

    def exact(self) -> None:
        """On a small problem, the bounds on plans placing every pod, then (unless they prove the warm start)
        the exact slot model, stopped as soon as a plan meets them (`small_plans.py`)."""
        self.small_run = SmallPlanRun(self.problem, self.warm, self.repacker, self.budget, self.reserve, self.deadline,
                                      self.margin, self.seed, self.workers, self.tracker)
        self.small = small = solve_small(self.small_run)
        self.exact_status, self.exact_plan, self.exact_bound = small.status, small.plan, small.bound
        if small.proven is not None:
            self.exact_status = "optimal"
        if self.exact_plan is not None:
            self.candidates.append((self.exact_plan,
                                    "CP-SAT (exact)" if self.exact_status is not None else "CP-SAT (slots)"))

    def whole_model(self) -> None:
        """The whole-plan CP-SAT model, when not too large and not proven already: solved, decoded, re-packed."""
        budget, clock = self.budget, self.clock
        self.tracker.enter(Phase.model)
        with budget.phase("model"):
            self.model = model = OptimalModel(self.problem, self.warm)
            # Dominance pruning takes about a second on large problems and rarely shrinks a model tenfold:
            # far beyond the limit, the whole-plan model is skipped without it.
            pruned = self.small_run.pruned if self.small_run is not None else None
            if pruned is not None:  # the slot models pruned the same options already
                model.options, model.group_options, model.pruned = list(pruned[0]), dict(pruned[1]), True
            elif model.size_estimate() <= UNPRUNED_SKIP_FACTOR * MAX_MODEL_VARIABLES:
                model.prune_options()
            self.whole = model.pruned and model.size_estimate() <= MAX_MODEL_VARIABLES and self.exact_status != "optimal"
            if self.whole:
                model.build()
                clock.charge(model_build_seconds(len(model.model.proto.variables) + len(model.model.proto.constraints)))
        cp_bound = 0.0
        if self.whole:
            cp_bound = self._solve_whole()
        elif self.exact_status is not None:
            self.status = self.exact_status  # the exact model proved its plan optimal
        else:
            notes = self.notes  # (the plain-output test reads every `notes.append` here)
            notes.append(f"a large plan ({model.size_estimate():,} ways to place pods on nodes): the optimiser "
                         "improved it a few nodes at a time instead of all at once, so it is not proven "
                         "cheapest; the lower bound and gap in the summary say how far from the cheapest it "
                         "can be at most")
        if self.values is not None:
            self._decode(cp_bound)

    def _solve_whole(self) -> float:
        """CP-SAT on the whole-plan model with the time left before the bounds' reserve: its bound."""
        clock, model, tracker = self.clock, self.model, self.tracker
        remaining = self.deadline - clock.now() - self.reserve
        # A large model rarely finds a plan of its own: it gets a share, neighbourhood search the rest.
        cp_time = remaining * (CP_SAT_SHARE_LARGE if model.size_estimate() > LARGE_MODEL_VARIABLES else 1.0)
        if cp_time <= 0.05 or clock.past_wall():
            return 0.0
        tracker.enter(Phase.solve)

        def incumbent(cost: float, unplaced: int, bound: float) -> None:
            tracker.update(cost=cost, unplaced=unplaced, bound=bound if unplaced == 0 else None)

        with self.budget.phase("solve"):
            self.status, self.values, cp_bound = model.solve(
                cp_time, self.seed, self.workers, incumbent if self.progress is not None else None, clock)
        return cp_bound

    def _decode(self, cp_bound: float) -> None:
        assert self.values is not None
        with self.budget.phase("decode"):
            decoder = Decoder(self.problem, self.model, self.values)
            nodes, unplaced = decoder.decode()
        with self.budget.phase("repack"):
            decoded = self.repacker.repack(Solution("optimal", nodes, unplaced, self.status))
        self.candidates.append((decoded, "CP-SAT"))
        self.decoded_bound = self.model.cost_bound(cp_bound, self.values)
        # `decoder.extra_nodes` (whole pods needed more nodes than the model's slots) is the solver's business: the
        # plan and its cost include them, and a user reading it as a warning could do nothing with it.

    def choose(self) -> None:
        """The best candidate (a valid one first), its zones repaired when a zone spread is past maxSkew."""
        # A plan the verifier rejects loses to one it accepts: the warm start is Karpenter's greedy plan, which
        # checks a spread rule only when placing a pod that carries it, so a node opened later for other pods
        # can leave it past maxSkew once every pod is counted (issue 14: every plan of the optimal engine valid).
        # Only checked when CP-SAT gave a plan to choose instead.
        broken: dict[str, bool] = {}
        if len(self.candidates) > 1:

            broken = {source: bool(verify(self.problem, plan)) for plan, source in self.candidates}
        # Ties in cost go to CP-SAT's plan: its objective weighs the soft constraints, the warm start's does not.
        best, source = min(self.candidates, key=lambda c: (broken.get(c[1], False), len(c[0].unplaced),
                                                           round(c[0].cost, 9), not c[1].startswith("CP-SAT"),
                                                           len(c[0].new_nodes)))
        # No candidate may still break a zone spread: pods move between zones until every one holds (the
        # bounds and the neighbourhood search after this keep every pod's zone).
        self.best, self.source = _repair_zones(self.problem, best, source, self.repacker, self.budget)
        hint = self.hint
        if (len(hint.unplaced), round(hint.cost, 9)) < (len(self.best.unplaced), round(self.best.cost, 9)) \
                and not hint.not_simulated and not verify(self.problem, hint):
            # Karpenter's own plan keeps every rule and is cheaper than what re-packing and repair made of it: the
            # optimal engine never answers with a plan dearer than the baseline it is compared with.
            self.best, self.source = hint, "Karpenter's plan"
            self.status = "feasible"
        if self.source.endswith("zone repair"):
            self.status = "feasible"  # whatever CP-SAT proved was of the plan before the moves
            self.tracker.best = None  # the cheaper plans shown so far broke a zone spread: the repaired one replaces them

    def bounds(self) -> None:
        """The lower bounds: CP-SAT's and the fluid LP's, then the LPs before the search or beside it."""
        # Bounds before the search: they depend only on how many pods of each group the plan places,
        # which the search keeps, so the search can then run to the deadline.

        problem, clock, best = self.problem, self.clock, self.best
        placed: dict[int, int] = {g.index: g.size for g in problem.groups}
        for group_info, _ in best.unplaced:
            placed[group_info.index] -= 1
        self.tracker.update(cost=best.cost, unplaced=len(best.unplaced))
        self.tracker.enter(Phase.bound)
        with self.budget.phase("bound"):
            # The fluid LP is solved to optimality; its time limit is only the clock's wall guard.
            # A small plan placing every pod has its LP bounds already (`small_plans.early_bounds`).
            early = self.small.early if complete(problem, best) else None
            fluid = self.small.fluid if early is not None else None if clock.past_wall() else fluid_lower_bound(
                problem, placed, time_limit=clock.wall_left(), clock=clock)
            # The exact model's bound holds for plans leaving out as many pods as its plan.
            exact = self.exact_bound if len(best.unplaced) == self.small.bound_unplaced else None
            self.sourced = [(b, name) for b, name in (
                (self.decoded_bound if self.source == "CP-SAT" else None, "cp-sat"), (exact, "cp-sat"),
                (fluid.cost if fluid is not None and early is None else None, "fluid-lp")) if b is not None]
            self.sourced += early or []
            known = [b for b, _ in self.sourced]
            proven = self.status == "optimal" or proves(known, best.cost)
            will_search = not proven and clock.now() < self.deadline - self.margin and not clock.past_wall()
            lanes = self.workers or available_cores()
            # A large plan starts the search from the configuration LP's optimum, rounded (`lp_rounding.py`), when
            # the LP leaves out nothing the rounding cannot put back: the LP then runs first, the search after.
            rounding = (will_search and problem.pending_count >= ROUNDING_MIN_PODS
                        and rounding_applies(problem, self.repacker))
            run_lps = partial(lp_bounds, problem, placed, fluid, known, self.reserve, self.deadline, self.margin,
                              plan_cost=best.cost, on_mix=self.mixes.append if rounding else None)
            # With a core to spare the LPs run beside the search (`background_bound.py`); else before it, as their
            # bounds may prove the plan optimal and spare the search.
            self.background = (start_background(run_lps, clock, lanes, known,
                                                lambda b: self.tracker.update(bound=max(known + [b])))
                               if will_search and not rounding and early is None else None)
            if self.background is None and early is None:
                self.sourced += run_lps(clock)  # (it skips each LP once the bounds prove the plan)

    def round(self) -> None:
        """On a large plan, the configuration LP's optimum rounded into a plan (a mid-sized one: its integer master's
        whole nodes, `lp_start.py`), kept when cheaper."""
        bounds = [b for b, _ in self.sourced]
        best = self.best
        # Smaller plans whose LP bounds run beside the search start it from the LP's integer master (`lp_start.py`).
        start = self.background is not None and master_applies(self.problem, self.repacker)
        if (self.mixes or start) and not self.clock.past_wall() and not proves(bounds, best.cost):
            with self.budget.phase("round"):
                rounded = (LpRounding(self.problem, self.repacker, self.mixes[0], self.clock).round(best) if self.mixes
                           else master_start(self.problem, self.repacker, best, self.clock))
            if rounded is not None and rounded.cost < best.cost - 1e-9:
                self.best = Solution(best.engine, rounded.nodes, best.unplaced, "feasible", best.lower_bound,
                                     best.solve_seconds, list(best.notes), best.exceeds_node_limits)
                self.source = "configuration LP, rounded" if self.mixes else "configuration LP, integer master"
                self.tracker.update(cost=self.best.cost, unplaced=len(self.best.unplaced))
        self.tracker.update(bound=max(bounds) if bounds else None)

    def search(self) -> None:
        """Neighbourhood search until the deadline, unless the bounds prove the plan; the background LPs' bounds."""

        clock, best, background, tracker = self.clock, self.best, self.background, self.tracker
        proven = self.status == "optimal" or proves([b for b, _ in self.sourced], best.cost)
        if not proven and clock.now() < self.deadline - self.margin and not clock.past_wall():
            search = NeighbourhoodSearch(self.repacker, self.seed, parallel=self.workers)
            tracker.enter(Phase.search)
            left_out = len(best.unplaced)

            def report(cost: float, tried: int, moves: int) -> None:
                tracker.update(cost=cost, unplaced=left_out, detail=f"{moves} of {tried} neighbourhoods improved")

            with self.budget.phase("search"):
                try:
                    improved = search.improve(best, clock, self.deadline - self.margin, report=report,
                                              core_share=background)
                except BaseException:
                    if background is not None:
                        background.close()  # an interrupted plan leaves no process behind
                    raise
            if improved.cost < best.cost - 1e-9:
                self.best = Solution(best.engine, improved.nodes, best.unplaced, best.status, best.lower_bound,
                                     best.solve_seconds, list(best.notes), best.exceeds_node_limits)
                self.source = f"{self.source} + neighbourhood search"
        if background is not None:
            with self.budget.phase("bound"):
                self.sourced += background.finish()
            if background.failure is not None:
                notes = self.notes  # (the plain-output test reads every `notes.append` here)
                notes.append("the tightest lower bound could not be computed, so the gap shown is against a "
                             "weaker one and the plan may be closer to the cheapest than it says (gave no lower "
                             "bound: " + background.failure.strip().splitlines()[-1] + ")")
            bounds = [b for b, _ in self.sourced]
            tracker.update(bound=max(bounds) if bounds else None)

    def finish(self) -> tuple[Solution, PlacementState]:
        """The plan with its binding bound, status and notes, and its placement state replayed."""

        best, notes, status = self.best, self.notes, self.status
        bounds = [b for b, _ in self.sourced]
        # The binding bound: the largest, the first computed on a tie.
        bound_source = max(self.sourced, key=lambda s: s[0])[1] if self.sourced else None
        lower = min(max(bounds), best.cost) if bounds else None
        if self.clock.cut:
            notes.append(_cut_note(self.before, self.time_limit,
                                   self.clock.slowdown(time.monotonic() - self.start, self.spent_at_start)))
        # Proven: the bounds meet the cost, and no plan places more pods (none is left out but those no plan can
        # place, or CP-SAT proved it).
        proven = proves(bounds, best.cost) and (complete(self.problem, best) or status == "optimal")
        if proven:
            status = "optimal"
        elif self.values is None and self.exact_plan is None:
            if self.whole or self.exact_status is not None:
                notes.append("the optimiser found no complete plan of its own in the time limit; the plan shown is "
                             "Karpenter's, with its pods packed tighter and improved a few nodes at a time "
                             "(a longer --time-limit may find a cheaper one)")
            status = "feasible"
        elif not self.source.startswith("CP-SAT"):
            notes.append("Karpenter's plan with its pods packed tighter was at least as cheap as the optimiser's own; "
                         "it is shown")
            status = "feasible"
        else:
            status = "feasible"
        solution = Solution("optimal", best.nodes, best.unplaced, status, lower, time.monotonic() - self.start, notes,
                            bound_source=bound_source if lower is not None else None)
        with self.budget.phase("replay"):
            state = state_for(self.problem, solution)
        self.tracker.finish(solution.cost, len(solution.unplaced), lower)
        return solution, state


def _cut_note(before: float, time_limit: float, slowdown: float | None = None) -> str:
    """Why the wall clock cut the search: a machine slower than the work clock's model, or (when what ran
    before the optimiser, building the problem and the Karpenter simulation, took most of the limit) a limit
    too short for the problem, with a limit that would let it finish."""
    if time_limit > 0 and before >= SHORT_LIMIT_SHARE * time_limit:
        enough = 10 * math.ceil(3 * before / 10)
        return (f"{TIME_LIMIT_SHORT_WARNING}: building the problem and the Karpenter simulation took {before:.1f} s "
                f"of the {time_limit:g} s limit, so the optimiser stopped early; --time-limit {enough} or more lets it "
                "finish and gives the same plan on every run")
    if slowdown is not None and slowdown < MACHINE_SLOWER_RATIO:
        return LIMIT_CUT_WARNING  # the work clock shows no slow machine: the limit simply ran out
    return CLOCK_CUT_WARNING


def _repair_zones(problem: Problem, best: Solution, source: str, repacker: Repacker, budget: TimeBudget
                  ) -> tuple[Solution, str]:
    """The chosen plan, its pods moved between zones (`zone_repair.py`) when a hard spread on a key other
    than hostname is past its limit once every matching pod is counted; with its source's name."""

    with budget.phase("repair"):
        repaired, moved = ZoneRepair(problem, repacker, budget.clock).repair(best)
    if not moved:
        return repaired, source
    repaired.status = "feasible"
    return repaired, f"{source} + zone repair"


__all__ = ["CLOCK_CUT_WARNING", "LIMIT_CUT_WARNING", "TIME_LIMIT_SHORT_WARNING", "MIN_OPTIMISER_SECONDS", "SEARCH_MARGIN_SHARE", "WORK_HEADROOM_SHARE", "solve_optimal"]
