"""The planning pipeline: options -> inventory + catalog -> problem -> engine -> Plan.

    manifests -> model (Inventory) -> candidates (Problem) -> solver (Solution) -> plan (Plan) -> renderers

`PlanOptions` is everything a plan is asked (the `plan` command's flags, or a library caller's); the run's
time is kept by one `TimeBudget` (`engines/effort.py`), made from `time_limit` by the caller and handed
down, whose named phases the plan reports.

The scheduler and the engines are imported where a plan is made (the imports marked `lazy`): reading the
inputs (`PlanOptions`, `read_inventory`, `read_catalog`), which every command and the CLI's start-up do,
goes without them (about 0.2 s), and OR-Tools (another 0.45 s) loads only when the optimal engine runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Literal, get_args

from karpplan.catalog import (
    DEFAULT_REGION,
    instance_types_for,
    load_catalog,
    node_labels,
)
from karpplan.catalog.auto_mode_fee import auto_mode_fee_note
from karpplan.catalog.coverage import plan_coverage, pool_lacking_warning
from karpplan.catalog.overlays import apply_node_overlays
from karpplan.catalog.spot_prices import estimated_spot_note, spot_price_source
from karpplan.catalog.types import Catalog
from karpplan.catalog.zones import outside_zones_reason, with_cluster_zones, zones_warning
from karpplan.engines.effort import TimeBudget
from karpplan.engines.optimiser_progress import ProgressSink
from karpplan.inputs.loader import DEFAULT_MAX_BYTES
from karpplan.model import labels as L
from karpplan.model.build import load_inventory
from karpplan.model.cluster import ClusterConfig, FargateProfile
from karpplan.model.enforced_preferences import enforce_preferences
from karpplan.model.fargate_prices import FargatePrice
from karpplan.model.inventory import Inventory
from karpplan.model.missing_requests import unrequested_warning
from karpplan.model.pods import Pod, group_pods
from karpplan.model.resources import Resources
from karpplan.model.scale import ScaleOptions
from karpplan.plan import (
    PREFERENCE_POLICIES,
    IgnoredDocument,
    Plan,
    PlanNode,
    PlanPod,
    PreferenceOutcome,
    PreferencePolicy,
    SteadyState,
    Summary,
    UnschedulablePod,
)
from karpplan.plan_fargate import (
    FargatePlacement,
    fargate_price,
    fargate_rate_text,
    on_fargate,
    split_fargate,
)
from karpplan.plan_volumes import volume_reasons
from karpplan.plan_windows import linux_pods_on_windows
from karpplan.time_limit import auto_seconds

if TYPE_CHECKING:
    from karpplan.constraints.base import UnmetPreference
    from karpplan.engines.result import Solution
    from karpplan.scheduling.candidates import LaunchOption
    from karpplan.scheduling.problem import Problem
    from karpplan.scheduling.state import PlacementState

# The share of the time limit kept for consolidating Karpenter's plan to its steady state: the optimal engine
# stops that much earlier (the Karpenter simulation leaves the rest of the limit anyway). The steady state gets
# what is left of the one limit, this share and whatever the engine did not use, and no more: when it runs
# out, the steady state is said to be not computed (`consolidate/from_plan.py`), never quoted.
STEADY_STATE_SHARE = 0.1
# Assembling the plan after a simulation the clock may cut (reasons, preferences, the Plan) takes about this long
# per pending pod on a loaded 2-core machine (2.8 s at 50,000 pods): the simulation leaves it, at most half.
ASSEMBLE_POD_SECONDS = 1e-4
STEADY_STATE_AFTER_CUT = ("not computed: the time limit ran out before the Karpenter simulation had placed every pod, "
                          "so its launch is not complete; raise --time-limit")


def _simulation_seconds(problem: Problem, budget: TimeBudget) -> float:
    """The Karpenter simulation's time: what is left of the limit but the plan's assembly after it."""
    left = budget.limit - budget.elapsed()
    return max(left - min(ASSEMBLE_POD_SECONDS * problem.pending_count, left / 2), 0.001)


@dataclass(frozen=True)
class SteadyStateRequest:
    """Karpenter's provisioning plan, handed to the consolidation simulation (`PlanOptions.steady_state`)."""

    inventory: Inventory
    catalog: Catalog  # with the NodeOverlays applied
    solution: Solution  # the Karpenter simulation's plan over all batches
    time_limit: float  # seconds left of the plan's limit (0 or less: none); when they run out it is not computed
    launch_cost: float  # $/h of Karpenter's plan, Fargate pods and static NodePools' nodes included
    launch_nodes: int  # its new nodes, counted as `summary.karpenter.newNodes`
    problem: Problem | None = None  # the problem planned: what the consolidated cluster is a plan of
    optimal: Solution | None = None  # the optimal engine's plan, which a cheaper steady state replaces


@dataclass(frozen=True)
class SteadyPlan(SteadyState):
    """A steady state cheaper than the optimal engine's plan (issue 29): its consolidated cluster as the plan
    to show instead (`plan`, whose notes say so), or why it cannot be shown (`why_not`, a warning)."""

    plan: Solution | None = None
    why_not: str | None = None

    def figures(self) -> SteadyState:
        """The steady state alone, as the summary quotes it."""
        return SteadyState(**{f.name: getattr(self, f.name) for f in fields(SteadyState)})


SteadyStateHook = Callable[[SteadyStateRequest], SteadyState]

Engine = Literal["optimal", "karpenter"]  # `--engine`: CP-SAT, or the Karpenter simulation
ENGINES: tuple[Engine, ...] = get_args(Engine)  # the first is the default


@dataclass(frozen=True)
class PlanOptions:
    """Everything a plan is asked: what to read (`paths`, ... `fargate_profiles`) and how to plan."""

    paths: tuple[str, ...] = ()
    catalog: str | None = None  # an InstanceCatalog file replacing the embedded catalog
    region: str | None = None  # None: a ClusterConfig's region, else the catalog's DEFAULT_REGION
    engine: Engine = ENGINES[0]
    time_limit: float = 10.0
    time_limit_auto: bool = False  # `--time-limit auto`: `time_limit` is `fitted_time_limit`'s, from the input
    seed: int = 0
    workers: int = 0  # 0 = all cores
    max_file_size: int = DEFAULT_MAX_BYTES
    allow_estimated_prices: bool = False
    fargate_profiles: tuple[FargateProfile, ...] = ()  # `--fargate-profile`: added by `read_inventory`
    preferences: PreferencePolicy = PREFERENCE_POLICIES[0]  # `--preferences` (preference_policy.py)
    zones: tuple[str, ...] = ()  # `--zones`: the cluster's zones (`catalog/zones.py`); empty: from the input
    scale: ScaleOptions = ScaleOptions()  # `--replicas`, `--scale`, `--hpa` (`model/scale.py`)
    fargate_prices: FargatePrice | None = None  # `--fargate-prices`: replaces the region's rate (`read_catalog`)
    spot_prices: str | None = None  # `--spot-prices FILE`: describe-spot-price-history JSON or a price CSV
    # `--default-requests`: requests for containers that set none (a namespace's LimitRange defaults win)
    default_requests: Mapping[str, int] | None = field(default=None, compare=False)
    namespace: str | None = None  # `--namespace`: where objects that name no namespace are (kubectl's -n)
    progress: ProgressSink | None = field(default=None, compare=False)  # the optimal engine's progress events
    # Consolidates Karpenter's plan to its steady state (`consolidate/from_plan.py`; the planner cannot import
    # the consolidation, a later stage, so the caller hands it in). None: the steady state is not computed.
    steady_state: SteadyStateHook | None = field(default=None, compare=False)


def read_inventory(options: PlanOptions) -> Inventory:
    """The manifests at `options.paths`, with the `--fargate-profile` flags added (`with_fargate_profiles`).
    Raises InputError (file:line) for bad input."""
    return with_fargate_profiles(load_inventory(options.paths, max_bytes=options.max_file_size, scale=options.scale,
                                                default_requests=options.default_requests,
                                                namespace=options.namespace),
                                 options.fargate_profiles)


def with_fargate_profiles(inventory: Inventory, profiles: Sequence[FargateProfile]) -> Inventory:
    """The `--fargate-profile` flags as one more ClusterConfig (named `cli`) after those in the manifests:
    every command (`plan`, `lint`, ...) sees the same profiles."""
    if not profiles:
        return inventory
    cli = ClusterConfig(name="cli", region=None, fargate_profiles=tuple(profiles))
    return replace(inventory, clusters=(*inventory.clusters, cli))


def fitted_time_limit(options: PlanOptions, inventory: Inventory) -> PlanOptions:
    """The options with an `auto` time limit fitted to the inventory's pending pods and pod groups
    (`time_limit.py`, as `diff` and `consolidate` fit theirs); unchanged when the limit was given."""
    if not options.time_limit_auto:
        return options
    return replace(options, time_limit=auto_seconds(inventory.pending))


def read_catalog(options: PlanOptions, inventory: Inventory) -> Catalog:
    """The catalog `options` name for this inventory (see `catalog_for`), carrying `--fargate-prices` so that
    every plan made with it (the fixes' re-plans too) prices Fargate alike."""
    catalog = catalog_for(inventory, options.region, options.catalog,
                          allow_estimated_prices=options.allow_estimated_prices, zones=options.zones,
                          spot_prices_file=options.spot_prices)
    return catalog if options.fargate_prices is None else replace(catalog, fargate_price=options.fargate_prices)


def catalog_for(inventory: Inventory, region: str | None, catalog_file: str | None, *,
                allow_estimated_prices: bool = False, zones: Sequence[str] = (),
                spot_prices_file: str | None = None) -> Catalog:
    """`--catalog`, or the embedded catalog of `--region` (default: a ClusterConfig's region, else the existing
    Nodes' region, else DEFAULT_REGION; an unknown one is blamed on where it was written), with `--spot-prices`, narrowed to the
    cluster's zones (`--zones`, else what the input says: `catalog/zones.py`). Raises InputError for a bad
    catalog, an unknown region or a zone outside it. Every command that plans reads its catalog here."""
    catalog = load_catalog(region or inventory.region or DEFAULT_REGION, catalog_file,
                           allow_estimated_prices=allow_estimated_prices, spot_prices_file=spot_prices_file,
                           region_origin=None if region else inventory.region_origin,
                           region_field=inventory.region_field)
    return with_cluster_zones(catalog, inventory, zones)


@dataclass
class Prepared:
    """What every planning command builds before an engine runs: the catalog as NodeOverlays change it
    (and their notes), the pods Fargate takes, and the scheduling problem of the rest."""

    catalog: Catalog
    notes: list[str]
    fargate: list[FargatePlacement]
    problem: Problem


def prepare(inventory: Inventory, catalog: Catalog) -> Prepared:
    from karpplan.scheduling.node_groups import with_node_groups  # lazy: start-up, see the docstring

    catalog, notes = apply_node_overlays(catalog, inventory.overlays, inventory.nodepools)
    inventory, group_notes = with_node_groups(inventory, catalog)  # eksctl node groups: existing nodes
    fargate, ec2_pods, fargate_notes = split_fargate(inventory, inventory.fargate_profiles)
    notes = [*notes, *group_notes, *fargate_notes]
    return Prepared(catalog, notes, fargate, make_problem(inventory, catalog, ec2_pods))


def make_problem(inventory: Inventory, catalog: Catalog, pods: Sequence[Pod]) -> Problem:
    from karpplan.scheduling.build_problem import build_problem  # lazy: start-up, see the docstring

    return build_problem(inventory, catalog, group_pods(pods), instance_types_for, node_labels)


def solve(problem: Problem, options: PlanOptions, budget: TimeBudget | None = None,
          fixed_cost: float = 0.0, greedy: Solution | None = None) -> tuple[Solution, PlacementState, Solution]:
    """Run the chosen engine; always run the Karpenter simulation (baseline and warm start), unless
    `greedy` is that simulation's result already.

    The time limit is `budget`'s (default: `options.time_limit` from now) and covers the simulation the
    optimiser starts from; the optimiser (`engines/optimiser.py`) decides when each of its phases stops.
    `fixed_cost` (`fixed_hourly_cost`: static NodePools' nodes, Fargate pods) is added to the costs and bounds
    `options.progress` hears, so they match the plan's.
    """
    from karpplan.engines.karpenter_simulation import solve_karpenter  # lazy: start-up, see the docstring

    budget = TimeBudget(options.time_limit) if budget is None else budget
    if greedy is None:
        with budget.phase("simulate"):
            greedy, greedy_state = solve_karpenter(problem, time_limit=_simulation_seconds(problem, budget))
        if options.engine == "karpenter":
            return greedy, greedy_state, greedy
    from karpplan.engines.optimiser import solve_optimal  # lazy: OR-Tools, see the docstring

    best, state = solve_optimal(problem, greedy, budget=budget, seed=options.seed, workers=options.workers,
                                progress=options.progress, fixed_cost=fixed_cost)
    if greedy.not_simulated:  # the clock cut the simulation: what the optimiser left of its pods is not simulated
        from karpplan.engines.karpenter_simulation import cut_note  # lazy: start-up, see the docstring

        left = frozenset(p.key for _, p in best.unplaced) & greedy.not_simulated
        placed = problem.pending_count - len(greedy.unplaced)
        best = replace(best, not_simulated=left,
                       notes=[*best.notes, cut_note(len(left), placed, problem.pending_count)] if left else best.notes)
    return best, state, greedy


def _with_kept_preferences(inventory: Inventory, catalog: Catalog, prepared: Prepared, budget: TimeBudget
                           ) -> tuple[Inventory, Prepared, Solution | None, PreferenceOutcome]:
    """`--preferences honour`: the inventory and problem with the preferences Karpenter keeps made
    required (preference_policy.py), with Karpenter's plan of that problem: its own plan carried over, or
    (when it cannot be) the simulation run again; unchanged when nothing is kept."""
    from karpplan.engines.karpenter_simulation import solve_karpenter  # lazy: start-up, see the docstring
    from karpplan.engines.optimiser import within_limits  # lazy: OR-Tools, see the docstring
    from karpplan.preference_policy import (  # lazy: start-up, see the docstring
        carried_over,
        kept_by_karpenter,
    )

    with budget.phase("simulate"):
        greedy, _ = solve_karpenter(prepared.problem, time_limit=_simulation_seconds(prepared.problem, budget))
    # What Karpenter keeps on a plan that keeps the NodePools' limits: where its batch would launch past
    # limits.nodes, the plan cannot, and the pods beyond the limit relax their preferences.
    hint = within_limits(prepared.problem, greedy, budget)
    kept, relaxed = kept_by_karpenter(prepared.problem, hint)
    if not kept:
        return inventory, prepared, greedy, PreferenceOutcome("honour", 0, relaxed)
    with budget.phase("build"):
        pods, count = enforce_preferences(inventory.pods, kept)
        enforced = replace(inventory, pods=pods)
        again = prepare(enforced, catalog)
        # Karpenter's plan keeps what it kept: carried over, it needs no second simulation (preference_policy.py).
        # A plan the clock cut too: its pods not simulated stay so, where a second simulation, given less time
        # still, would place fewer pods and be thrown away.
        carried = carried_over(greedy, again.problem) if hint is greedy else None
    if carried is not None:
        return enforced, again, carried, PreferenceOutcome("honour", count, relaxed)
    with budget.phase("simulate"):
        greedy_again, _ = solve_karpenter(again.problem, time_limit=_simulation_seconds(again.problem, budget))
    if len(greedy_again.unplaced) > len(greedy.unplaced):
        return inventory, prepared, greedy, PreferenceOutcome("honour", 0, relaxed, not_enforced=count)
    return enforced, again, greedy_again, PreferenceOutcome("honour", count, relaxed)


def make_plan(inventory: Inventory, catalog: Catalog, options: PlanOptions, budget: TimeBudget | None = None) -> Plan:
    """Plan the inventory's pending pods within `budget` (default: `options.time_limit`); the plan's
    summary reports the wall seconds of every phase the budget has timed so far.

    With the optimal engine and pods that carry preferences, `options.preferences` decides what becomes
    of them (preference_policy.py); under `drop` the plan that keeps them is planned first, in half of
    the time limit, so the summary can say what dropping them saves, and the plan itself in the rest."""
    from karpplan.preference_policy import has_preferences  # lazy: start-up, see the docstring

    budget = TimeBudget(options.time_limit) if budget is None else budget
    outcome: PreferenceOutcome | None = None
    preferences = options.engine == "optimal" and has_preferences(inventory.pending)
    if preferences and options.preferences == "drop":
        half = options.time_limit / 2
        kept = make_plan(inventory, catalog, replace(options, preferences="honour", time_limit=half, progress=None,
                                                     steady_state=None))
        budget.limit = max(budget.limit - half, 0.0)
        outcome = PreferenceOutcome("drop", honoured_cost=kept.summary.hourly_cost)
    with budget.phase("build"):
        prepared = prepare(inventory, catalog)
    greedy: Solution | None = None
    if preferences and options.preferences == "honour":
        inventory, prepared, greedy, outcome = _with_kept_preferences(inventory, catalog, prepared, budget)
    problem = prepared.problem
    hook = options.steady_state if inventory.nodepools else None
    reserve = STEADY_STATE_SHARE * budget.limit if hook is not None and options.engine == "optimal" else 0.0
    budget.limit -= reserve
    solution, state, greedy = solve(problem, options, budget, fixed_hourly_cost(prepared), greedy)
    budget.limit += reserve
    with budget.phase("assemble"):
        plan = _assemble(inventory, prepared.catalog, options, problem, prepared.fargate, solution, state, greedy,
                         prepared.notes, budget.clock.cut)
    steady = plan.summary.karpenter_steady
    if hook is not None and plan.summary.karpenter_cost is not None:
        steady = SteadyState(None, note=STEADY_STATE_AFTER_CUT)  # a launch the clock cut short: no settling
        if not greedy.not_simulated:
            with budget.phase("steady-state"):  # what is left of the one limit
                steady = hook(SteadyStateRequest(inventory, prepared.catalog, greedy, budget.limit - budget.elapsed(),
                                                 plan.summary.karpenter_cost, plan.summary.karpenter_new_nodes or 0,
                                                 problem, solution if options.engine == "optimal" else None))
    if isinstance(steady, SteadyPlan):  # Karpenter's consolidated cluster is cheaper than the optimiser's plan
        if steady.plan is not None:
            from karpplan.engines.repack.replay import state_for  # lazy: loaded with the optimal engine

            with budget.phase("assemble"):
                plan = _assemble(inventory, prepared.catalog, options, problem, prepared.fargate, steady.plan,
                                 state_for(problem, steady.plan), greedy, prepared.notes, budget.clock.cut)
        elif steady.why_not is not None:
            plan = replace(plan, warnings=(*plan.warnings, steady.why_not))
        steady = steady.figures()
    summary = replace(plan.summary, solve_seconds=budget.elapsed(), phases=budget.phases(),
                      time_limit=budget.limit, preferences=outcome,
                      time_limit_auto=options.time_limit_auto, karpenter_steady=steady)
    return replace(plan, summary=summary)


def _static_launches(problem: Problem) -> dict[str, LaunchOption]:
    """The static NodePools' nodes to come, by node name, with what launching each costs."""
    return {n.name: s.launch for s in problem.static if s.launch is not None for n in s.nodes}


def fixed_hourly_cost(prepared: Prepared) -> float:
    """$/h the plan pays whatever the engine chooses: the static NodePools' nodes and the Fargate pods (at the
    catalog's `--fargate-prices`, else the region's known rate)."""
    region = prepared.catalog.region or DEFAULT_REGION
    return (sum(launch.price for launch in _static_launches(prepared.problem).values())
            + sum(fargate_price(fp, region, prepared.catalog.fargate_price) for fp in prepared.fargate))


def _unmet(problem: Problem, solution: Solution) -> list[UnmetPreference]:
    """Each preference (soft constraint) the solution does not honour, with what it did instead."""
    from karpplan.constraints.registry import REGISTRY  # lazy: start-up, see the docstring

    return [u for kind in REGISTRY for u in kind.unmet_preferences(problem, solution)]


def _unmet_preferences(problem: Problem, unmet: Sequence[UnmetPreference], solution: Solution, greedy: Solution,
                       fixed: float = 0.0) -> list[str]:
    """The preferences the plan does not honour (`unmet`), never silently: Karpenter would honour each while it
    can, so say what a plan that honours it costs when the Karpenter simulation's does (with `fixed`, the static
    NodePools' nodes and the Fargate pods every plan pays for)."""
    if not unmet or solution is greedy:
        return [str(u) + u.karpenter_note for u in unmet]
    greedy_unmet = {u.preference for u in _unmet(problem, greedy)}
    out = []
    for u in unmet:
        line = str(u)
        if u.preference not in greedy_unmet and not greedy.unplaced:
            extra = greedy.cost - solution.cost
            line += (f"; honouring it as Karpenter's plan does costs ${greedy.cost + fixed:.4f}/h"
                     + (f" (+${extra:.4f}/h)" if extra > 0 else ""))
        out.append(line)
    return out


def _assemble(inventory: Inventory, catalog: Catalog, options: PlanOptions, problem: Problem,
              fargate: list[FargatePlacement], solution: Solution, state: PlacementState, greedy: Solution,
              notes: Sequence[str] = (), clock_cut: bool = False) -> Plan:
    """The Plan of a solution (its summary's timings are the caller's to fill in); `clock_cut`: the time limit
    stopped a phase before its share (`WorkClock.cut`)."""
    static_launch = _static_launches(problem)
    nodes, placed = _ec2_nodes(solution, static_launch)
    from karpplan.plan_reasons import not_simulated_pods  # lazy: start-up, see the docstring
    from karpplan.scheduling.daemon_ports import daemonset_port_clashes
    from karpplan.scheduling.preferences import unhonourable_spreads

    unschedulable = _unschedulable(problem, solution, state, catalog)
    not_simulated = not_simulated_pods(solution)  # the pods the clock cut left undecided, never unschedulable
    ours = on_fargate(fargate, catalog)  # the pods Fargate runs or refuses
    nodes += ours.nodes
    placed.update(ours.placed)
    unschedulable += ours.unschedulable
    plan_pods = [
        PlanPod(p.name, p.namespace, p.workload, p.node_name if p.bound else placed.get(p.key), p.bound,
                p.gated and not p.bound, dict(p.labels), p.requests, str(p.origin))
        for p in inventory.pods if not p.terminal or p.bound
    ]
    static_cost = sum(launch.price for launch in static_launch.values())
    summary = _summary(inventory, catalog, options, nodes, placed, len(unschedulable), solution, greedy,
                       (ours.cost, static_cost), len(static_launch), fargate)
    from karpplan.gap_cause import gap_cause  # lazy: start-up, see the docstring

    summary = replace(summary, not_simulated=len(not_simulated),
                      karpenter_not_simulated=len(greedy.not_simulated) if summary.karpenter_cost is not None else 0,
                      gap_cause=gap_cause(problem, summary.status, summary.gap, summary.bound_source,
                                                  clock_cut))
    warnings = [*notes, *ours.warnings]
    unrequested = unrequested_warning(inventory.pending, options.default_requests)
    if unrequested is not None:
        warnings.append(unrequested)
    warnings.extend(solution.notes)
    if greedy.batch_note:
        warnings.append(greedy.batch_note)
    if summary.gap_cause:
        warnings.append(summary.gap_cause)
    zones_note = zones_warning(catalog) if problem.groups else None
    if zones_note:
        warnings.append(zones_note)
    warnings.extend(estimated_spot_note(catalog, nodes, options.spot_prices))
    warnings.extend(_auto_mode_fee(problem, catalog, nodes))
    warnings.extend(unhonourable_spreads(problem))  # relaxed before anything counts: in no plan's unmet ones
    unmet = _unmet(problem, solution)
    warnings.extend(_unmet_preferences(problem, unmet, solution, greedy, ours.cost + static_cost))
    warnings.extend(s.describe() for s in problem.static)
    launchable = {o.pool.name for o in problem.options}
    warnings.extend(w for pool in problem.pools if not pool.static and pool.name not in launchable
                    if (w := pool_lacking_warning(pool, catalog)) is not None)
    warnings.extend(daemonset_port_clashes([*(n.option.daemon_ports for n in solution.nodes if n.option is not None),
                                            *(info.daemon_ports for info in problem.existing)], inventory.daemonsets))
    warnings.extend(str(notice) for notice in (*inventory.notices, *inventory.scale_notes))
    warnings.extend(linux_pods_on_windows(solution.nodes))
    ignored = tuple(IgnoredDocument(d.kind, d.name, d.origin, d.why)
                    for d in inventory.skipped)
    return Plan(summary, tuple(nodes), tuple(plan_pods), tuple(unschedulable), tuple(warnings), ignored,
                not_simulated, unmet_preferences=tuple(sorted({u.preference for u in unmet})))


def _auto_mode_fee(problem: Problem, catalog: Catalog, nodes: Sequence[PlanNode]) -> list[str]:
    """The line on EKS Auto Mode's management fee of the plan's new Auto Mode nodes (none without them)."""
    auto_pools = {pool.name for pool in problem.pools if pool.auto_mode}
    fee = auto_mode_fee_note(catalog, [(n.instance_type, n.zone, n.node_pool or "") for n in nodes
                                       if n.new and n.node_pool in auto_pools and n.instance_type and n.fargate is None])
    return [] if fee is None else [fee]


def _ec2_nodes(solution: Solution, static_launch: Mapping[str, LaunchOption]
               ) -> tuple[list[PlanNode], dict[str, str]]:
    """The solution's nodes (new, and existing ones with the pods placed on them), and the node of each
    placed pod by pod key."""
    nodes: list[PlanNode] = []
    placed: dict[str, str] = {}
    for solved in solution.nodes:
        pods_here = [p for _, p in solved.pods]
        for pod in pods_here:
            placed[pod.key] = solved.name
        if solved.existing is not None:
            node = solved.existing.node
            bound = [p for p in solved.existing.bound if p.occupies_resources]
            names = tuple(p.key for p in solved.existing.bound) + tuple(p.key for p in pods_here)
            requested = _sum(p.requests for p in bound + pods_here)
            daemon = solved.existing.used - _sum(p.requests for p in bound)
            launch = static_launch.get(node.name)  # a static NodePool's node to come: new, and paid for
            nodes.append(PlanNode(node.name, launch is not None,
                                  node.labels.get(L.NODEPOOL) or node.labels.get(L.PROVISIONER_NAME),
                                  node.labels.get(L.INSTANCE_TYPE), node.labels.get(L.ZONE),
                                  node.labels.get(L.CAPACITY_TYPE) or node.capacity_type,
                                  (node.hourly_price or 0.0) if launch is None else launch.price,
                                  node.price_estimated if launch is None else launch.price_estimated, dict(node.labels),
                                  tuple(t.as_dict() for t in node.taints), node.allocatable,
                                  requested + daemon, daemon, names, static=launch is not None))
            continue
        option = solved.option
        assert option is not None
        labels = dict(option.labels)
        labels[L.HOSTNAME] = solved.name
        # The deprecated aliases the node will carry besides (kubelet, the cloud node controller); not in the
        # option's labels: Karpenter finds no topology domain for them (kubernetes-sigs/karpenter#3307).
        labels.update({alias: labels[key] for alias, key in L.NODE_ALIASES if key in labels and alias not in labels})
        requested = _sum(p.requests for p in pods_here)
        nodes.append(PlanNode(solved.name, True, option.pool.name, option.instance_type.name, option.zone,
                              option.capacity_type, option.price, option.price_estimated, labels,
                              tuple(t.as_dict() for t in option.taints), option.allocatable,
                              requested + option.daemon_overhead, option.daemon_overhead,
                              tuple(p.key for p in pods_here)))
    return nodes, placed


def _unschedulable(problem: Problem, solution: Solution, state: PlacementState, catalog: Catalog
                   ) -> list[UnschedulablePod]:
    """The pods the solution leaves unplaced, each with the reasons kube-scheduler and Karpenter would give
    (its volumes' and the cluster's zones too)."""
    from karpplan.plan_reasons import lonely_affinity, reasons_for, with_leading_notes  # lazy: start-up

    not_simulated = solution.not_simulated
    # A group's pods share their template, hence their reasons: work them out once per group and workload.
    reasons_of: dict[tuple[int, str], tuple[str, ...]] = {}
    matched: dict[tuple[str, ...], bool] = {}  # lonely_affinity's memo
    unschedulable: list[UnschedulablePod] = []
    for group, pod in solution.unplaced:
        if pod.key in not_simulated:  # the clock cut: not simulated (`not_simulated_pods`), not unschedulable
            continue
        key = (group.index, pod.workload)
        if key not in reasons_of:
            outside = outside_zones_reason(pod.template, catalog)
            reasons_of[key] = with_leading_notes(volume_reasons(group.template, reasons_for(
                problem, group, pod, state)) + ((outside,) if outside else ()), pod.template,
                other_capacity=bool(problem.existing or problem.inventory.fargate_profiles),
                lonely=lonely_affinity(pod.template, problem.inventory.pods, problem.namespace_labels, matched))
        unschedulable.append(UnschedulablePod(pod.key, pod.workload, reasons_of[key]))
    return unschedulable


def _summary(inventory: Inventory, catalog: Catalog, options: PlanOptions, nodes: Sequence[PlanNode],
             placed: Mapping[str, str], unschedulable: int, solution: Solution, greedy: Solution,
             fixed: tuple[float, float], static_nodes: int, fargate: Sequence[FargatePlacement]) -> Summary:
    """The plan's summary: counts, cost and bound (with `fixed`, what every plan pays for the Fargate pods and
    the static NodePools' nodes), and Karpenter's plan beside it."""
    fargate_cost, static_cost = fixed
    pending = inventory.pending
    region = catalog.region or DEFAULT_REGION
    karpenter = bool(inventory.nodepools)
    refused = sum(1 for f in fargate if f.reasons)
    lower = None if solution.lower_bound is None else solution.lower_bound + fargate_cost + static_cost
    return Summary(
        pods=len(pending), scheduled=sum(1 for p in pending if p.key in placed),
        unschedulable=unschedulable, gated=len(inventory.gated), bound=len(inventory.bound),
        new_nodes=sum(1 for n in nodes if n.new), hourly_cost=solution.cost + fargate_cost + static_cost,
        lower_bound=lower,
        engine=solution.engine, status=solution.status, solve_seconds=0.0,
        region=region, catalog=catalog.name,
        # Karpenter's plan, where the input has a NodePool for it to launch from (with none, a Fargate- or
        # node-group-only cluster, there is no Karpenter to compare with).
        karpenter_cost=greedy.cost + fargate_cost + static_cost if karpenter else None,
        karpenter_new_nodes=(len(greedy.new_nodes) + static_nodes + len(fargate) - refused) if karpenter else None,
        karpenter_scheduled=len(pending) - len(greedy.unplaced) - refused if karpenter else None,
        karpenter_batches=greedy.batches if karpenter else None,
        batches=solution.batches if options.engine == "karpenter" else None,
        estimated_prices=any(n.new and n.price_estimated for n in nodes), seed=options.seed,
        bound_source=solution.bound_source if lower is not None else None,
        zones=catalog.zones, zones_source=catalog.zones_source, region_source=_region_source(inventory, options, region),
        catalog_coverage=plan_coverage(catalog, inventory.nodepools),
        spot_prices=spot_price_source(catalog, options.spot_prices),
        fargate_prices=None if fargate_cost == 0 else fargate_rate_text(region, catalog.fargate_price),
    )


def _region_source(inventory: Inventory, options: PlanOptions, region: str) -> str:
    """Where the plan's region came from, for the summary: a user who pasted an eu-west-1 repo and sees
    us-east-1 prices must see why."""
    if options.catalog:
        return "from --catalog"
    if options.region:
        return "--region"
    if inventory.region == region:
        return inventory.region_source
    return "default: the input names no region; --region R to choose"


def _sum(items: object) -> Resources:
    total = Resources()
    for r in items:  # type: ignore[attr-defined]
        total = total + r
    return total
