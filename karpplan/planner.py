"""The planning pipeline: inventory + catalog -> problem -> engine -> Plan.

    manifests -> model (Inventory) -> candidates (Problem) -> solver (Solution) -> plan (Plan) -> renderers
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from karpplan.catalog.overlays import apply_node_overlays
from karpplan.catalog.types import Catalog
from karpplan.engines.result import Solution
from karpplan.explain.reasons import reasons_for
from karpplan.model import labels as L
from karpplan.model.cluster import FargateProfile
from karpplan.model.fargate import (
    FARGATE_NODE_TAINT,
    fargate_hourly_price,
    fargate_node_labels,
    profile_for,
    size_pod,
)
from karpplan.model.inventory import Inventory
from karpplan.model.pods import Pod, PodGroup
from karpplan.model.resources import CPU, MEMORY, Resources
from karpplan.plan import FargateInfo, Plan, PlanNode, PlanPod, Summary, UnschedulablePod
from karpplan.scheduling.problem import Problem, build_problem
from karpplan.scheduling.state import PlacementState

ENGINES = ("optimal", "karpenter")


@dataclass(frozen=True)
class PlanOptions:
    engine: str = "optimal"
    time_limit: float = 10.0
    seed: int = 0
    workers: int = 0  # 0 = all cores
    fargate_profiles: tuple[FargateProfile, ...] = ()
    progress: Callable[[str], None] | None = field(default=None, compare=False)


@dataclass
class FargatePlacement:
    pod: Pod
    profile: FargateProfile
    reasons: list[str]


def _split_fargate(inventory: Inventory, profiles: Sequence[FargateProfile]) -> tuple[list[FargatePlacement], list[Pod]]:
    """Pods matching a Fargate profile run on Fargate (never falling back to EC2); the rest go to EC2."""
    fargate: list[FargatePlacement] = []
    ec2: list[Pod] = []
    for pod in inventory.pending:
        profile = profile_for(profiles, pod.namespace, pod.labels) if profiles else None
        if profile is None:
            ec2.append(pod)
            continue
        reasons = [f"Fargate refuses {path}: {why}" for path, why in pod.template.fargate.refusals]
        fargate.append(FargatePlacement(pod, profile, reasons))
    return fargate, ec2


def _groups(pods: Sequence[Pod]) -> list[PodGroup]:
    groups: dict[int, list[Pod]] = {}
    for pod in pods:
        groups.setdefault(id(pod.template), []).append(pod)
    return [PodGroup(ps[0].workload, ps[0].template, tuple(ps)) for ps in groups.values()]


def make_problem(inventory: Inventory, catalog: Catalog, pods: Sequence[Pod]) -> Problem:
    from karpplan.catalog import instance_types_for, node_labels

    return build_problem(inventory, catalog, _groups(pods), instance_types_for, node_labels)


def solve(problem: Problem, options: PlanOptions,
          started: float | None = None) -> tuple[Solution, PlacementState, Solution]:
    """Run the chosen engine; always run the Karpenter simulation (baseline and warm start).

    The time limit counts from `started` (default: now; `make_plan` passes the moment it began, so
    building the problem counts too) and covers the simulation the optimiser starts from; the
    optimiser always keeps a small minimum so a slow simulation still gets a re-packed plan and a bound.
    The optimiser's search stops on its work clock, which is charged a model of the time spent before it,
    so the plan is the same on every run with the same seed (unless the wall clock cuts it, which the
    plan's notes say).
    """
    from karpplan.engines.karpenter import solve_karpenter

    started = time.monotonic() if started is None else started
    greedy, greedy_state = solve_karpenter(problem)
    if options.engine == "karpenter":
        return greedy, greedy_state, greedy
    from karpplan.engines.effort import WorkClock, pre_search_seconds
    from karpplan.engines.optimiser import (
        MIN_OPTIMISER_SECONDS,
        SEARCH_MARGIN_SHARE,
        WORK_HEADROOM_SHARE,
        solve_optimal,
    )

    # The optimiser's phases run on a work clock (deterministic for a seed); what came before is charged
    # its modelled time, never its measured one. The wall clock guards the limit.
    limit = options.time_limit
    margin = max(0.1, SEARCH_MARGIN_SHARE * limit)
    clock = WorkClock(wall_deadline=max(started + limit, time.monotonic() + min(MIN_OPTIMISER_SECONDS, limit)) - margin)
    budget = limit * (1 - WORK_HEADROOM_SHARE)  # where solve_optimal's work budget ends
    clock.charge(min(pre_search_seconds(problem.pending_count), max(budget - MIN_OPTIMISER_SECONDS, 0.0)))
    best, state = solve_optimal(problem, greedy, time_limit=limit, seed=options.seed,
                                workers=options.workers, progress=options.progress, clock=clock)
    return best, state, greedy


def make_plan(inventory: Inventory, catalog: Catalog, options: PlanOptions) -> Plan:
    started = time.monotonic()
    catalog, overlay_notes = apply_node_overlays(catalog, inventory.overlays)
    profiles = tuple(inventory.fargate_profiles) + tuple(options.fargate_profiles)
    fargate, ec2_pods = _split_fargate(inventory, profiles)
    problem = make_problem(inventory, catalog, ec2_pods)
    solution, state, greedy = solve(problem, options, started)
    nodes: list[PlanNode] = []
    placed: dict[str, str] = {}
    unschedulable: list[UnschedulablePod] = []
    warnings: list[str] = list(overlay_notes)
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
            nodes.append(PlanNode(node.name, False, node.labels.get(L.NODEPOOL) or node.labels.get(L.PROVISIONER_NAME),
                                  node.labels.get(L.INSTANCE_TYPE), node.labels.get(L.ZONE),
                                  node.labels.get(L.CAPACITY_TYPE), 0.0, False, dict(node.labels),
                                  tuple(t.as_dict() for t in node.taints), node.allocatable,
                                  requested + daemon, daemon, names))
            continue
        option = solved.option
        assert option is not None
        labels = dict(option.labels)
        labels[L.HOSTNAME] = solved.name
        requested = _sum(p.requests for p in pods_here)
        nodes.append(PlanNode(solved.name, True, option.pool.name, option.instance_type.name, option.zone,
                              option.capacity_type, option.price, option.price_estimated, labels,
                              tuple(t.as_dict() for t in option.taints), option.allocatable,
                              requested + option.daemon_overhead, option.daemon_overhead,
                              tuple(p.key for p in pods_here)))
    for gi, pod in solution.unplaced:
        unschedulable.append(UnschedulablePod(pod.key, pod.workload, tuple(reasons_for(problem, gi, pod, state))))
    fargate_cost = 0.0
    region = catalog.region or "us-east-1"
    zones = catalog.zones or (f"{region}a",)
    for i, fp in enumerate(fargate):
        pod = fp.pod
        size = size_pod(pod.requests.get(CPU), pod.requests.get(MEMORY))
        if size is None:
            fp.reasons.append(f"Fargate cannot size the pod: {pod.requests.formatted()} plus 256Mi exceeds 16 vCPU / 120 GB")
        if fp.reasons:
            fp.reasons.append(f"the pod matches Fargate profile {fp.profile.name!r}, so it does not fall back to EC2")
            unschedulable.append(UnschedulablePod(pod.key, pod.workload, tuple(fp.reasons)))
            continue
        assert size is not None
        price = fargate_hourly_price(size, region)
        if price is None:
            warnings.append(f"no Fargate price for region {region}; {pod.key} is counted at $0")
            price = 0.0
        name = f"fargate-{region}-{pod.namespace}-{pod.name}"
        zone = zones[i % len(zones)]
        labels = fargate_node_labels(zone, region, name, fp.profile.name)
        waste = size.rounding_waste(pod.requests.get(CPU), pod.requests.get(MEMORY))
        hint = ""
        spare = waste.formatted()
        growth = " and ".join(f"{spare[k]} {label}" for k, label in ((CPU, "CPU"), (MEMORY, "memory")) if k in spare)
        if growth:
            hint = f"requests could grow by {growth} at no extra cost (billed for {size.capacity_provisioned})"
        asked = pod.requests.formatted()
        info = FargateInfo(size.cpu_text, size.memory_text, size.capacity_provisioned, fp.profile.name,
                           requested_cpu=asked.get(CPU, "0"), requested_memory=asked.get(MEMORY, "0"),
                           waste_cpu=waste.formatted().get(CPU, "0"), waste_memory=waste.formatted().get(MEMORY, "0"),
                           hint=hint)
        if pod.template.fargate.limit_exceeds_requests:
            warnings.append(f"{pod.key}: a container limit exceeds its request; Fargate sizes from requests")
        nodes.append(PlanNode(name, True, None, None, zone, "fargate", price, False, labels,
                              (FARGATE_NODE_TAINT.as_dict(),), size.resources, pod.requests, Resources(),
                              (pod.key,), info))
        placed[pod.key] = name
        fargate_cost += price
    plan_pods = [
        PlanPod(p.name, p.namespace, p.workload, p.node_name if p.bound else placed.get(p.key), p.bound,
                p.gated and not p.bound, dict(p.labels), p.requests, str(p.origin))
        for p in inventory.pods if not p.terminal or p.bound
    ]
    pending = [p for p in inventory.pending]
    cost = solution.cost + fargate_cost
    lower = None if solution.lower_bound is None else solution.lower_bound + fargate_cost
    summary = Summary(
        pods=len(pending), scheduled=sum(1 for p in pending if p.key in placed),
        unschedulable=len(unschedulable), gated=len(inventory.gated), bound=len(inventory.bound),
        new_nodes=sum(1 for n in nodes if n.new), hourly_cost=cost, lower_bound=lower,
        engine=solution.engine, status=solution.status, solve_seconds=time.monotonic() - started,
        region=region, catalog=catalog.name, karpenter_cost=greedy.cost + fargate_cost,
        karpenter_new_nodes=len(greedy.new_nodes) + len(fargate) - sum(1 for f in fargate if f.reasons),
        karpenter_scheduled=len(pending) - len(greedy.unplaced) - sum(1 for f in fargate if f.reasons),
        estimated_prices=any(n.price_estimated for n in nodes), seed=options.seed,
        time_limit=options.time_limit if options.engine == "optimal" else None,
    )
    warnings.extend(solution.notes)
    warnings.extend(str(notice) for notice in inventory.notices)
    return Plan(summary, tuple(nodes), tuple(plan_pods), tuple(unschedulable), tuple(warnings))


def _sum(items: object) -> Resources:
    total = Resources()
    for r in items:  # type: ignore[attr-defined]
        total = total + r
    return total
