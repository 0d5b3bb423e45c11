"""pool-limits-too-small: NodePool limits that cannot hold the pods only that pool can take, counted as
Karpenter counts them (each launched node's whole capacity, not the pods' requests)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator, Sequence

from karpplan.constraints.pool_headroom import UNLIMITED
from karpplan.engines.result import Solution
from karpplan.inputs.loader import Document
from karpplan.lint.context import LintContext
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.rules.capacity import _scaled_templates, _short
from karpplan.lint.rules.examples import NODEPOOL, ZONE_SPREAD, deployment
from karpplan.lint.rules.placed import alone, best_placement
from karpplan.model.pools import NodePool
from karpplan.model.resources import Resources
from karpplan.scheduling.problem import GroupInfo
from karpplan.scheduling.problem import Problem as SchedulingProblem


def _only_pool_groups(ctx: LintContext) -> dict[str, list[GroupInfo]]:
    """Per pool, the groups (not scaled to 0) that no existing node and no other pool can take."""
    only: dict[str, list[GroupInfo]] = {}
    scaled = _scaled_templates(ctx)
    for group_info in ctx.planner.problem.groups:
        if id(group_info.template) in scaled:
            continue  # 0 replicas now: nothing to hold
        ok = [v for v in group_info.verdicts if v.ok]
        if not group_info.existing_ok and len(ok) == 1:
            only.setdefault(ok[0].pool.name, []).append(group_info)
    return only


def _launched(solution: Solution, pool: NodePool) -> tuple[Resources, str]:
    """The capacity the solution's new nodes of the pool charge against its limits, and those nodes in words."""
    options = [n.option for n in solution.new_nodes if n.option is not None and n.option.pool.name == pool.name]
    used = Resources()
    for option in options:
        used = used + option.capacity
    counts = Counter(o.instance_type.name for o in options)
    return used, ", ".join(f"{n} x {name}" for name, n in sorted(counts.items())) or "none"


def _in_limits(amount: Resources, keys: Sequence[str]) -> str:
    """`amount` in the limits' resources only (`cpu: 30, memory: 120Gi`)."""
    shown = Resources({k: amount.get(k) for k in keys}).formatted()
    return ", ".join(f"{k}: {v}" for k, v in shown.items())


_GI = 1 << 30


def _rounded_up(amount: Resources) -> Resources:
    """Limits a user writes: CPU in whole cores, memory in whole Gi, up from `amount`."""
    out = {}
    for key in amount:
        value = amount.get(key)
        step = 1000 if key == "cpu" else _GI if key == "memory" else 1
        out[key] = -(-value // step) * step
    return Resources(out)


def _limits_words(problem: SchedulingProblem, pool: NodePool) -> tuple[str, list[str]]:
    remaining, nodes_left = problem.headroom[pool.name]
    keys = list(remaining.keys()) if remaining is not None else []
    words = [f"{k}: {v}" for k, v in Resources(problem.headroom[pool.name].room()).formatted().items()]
    if nodes_left is not None:
        words.append(f"nodes: {max(nodes_left, 0)}")
    return ", ".join(words), keys


@lint_rule("pool-limits-too-small", "KPL405", Severity.warning, needs_pools=True,
           fix="raise the NodePool's limits",
           bad=NODEPOOL.replace("spec:\n  template:", "spec:\n  limits: {cpu: \"10\"}\n  template:") + deployment(
               ZONE_SPREAD, replicas=3).replace("cpu: 500m", "cpu: \"3\""),
           good=NODEPOOL.replace("spec:\n  template:", "spec:\n  limits: {cpu: \"64\"}\n  template:") + deployment(
               ZONE_SPREAD, replicas=3).replace("cpu: 500m", "cpu: \"3\""))
def POOL_LIMITS_TOO_SMALL(ctx: LintContext) -> Iterator[Hit]:
    """NodePool limits cannot hold the pods that only that pool can take.

    Karpenter stops launching when a NodePool's limits are reached, and it charges each node it launches
    its whole capacity against them, not the requests of the pods on it (`subtractMax` in its scheduler:
    a node of 32 CPU counts 32 CPU however few its pods request). Pods that no other NodePool or node can
    take then stay pending. The planner's Karpenter engine places those pods alone, under the limits as
    `plan` charges them: the finding says how many the nodes within the limits hold, and the limits that
    would hold them all. In the bad example the pods request 9 CPU, below the limit of 10, but each of the
    three zones' nodes is a 4-CPU xlarge: 12 CPU.
    """
    problem = ctx.planner.problem
    docs = {(d.origin.file, d.origin.line): d for d in ctx.documents}
    only = _only_pool_groups(ctx)
    for pool in problem.pools:
        groups = only.get(pool.name)
        doc = docs.get((pool.origin.file, pool.origin.line))
        if not groups or doc is None or not problem.headroom[pool.name].limited:
            continue
        sub = alone(problem, groups)
        solution = best_placement(sub, groups)
        ids = {id(g) for g in groups}
        total = sum(g.size for g in groups)
        placed = total - sum(1 for g, _ in solution.unplaced if id(g) in ids)
        if placed >= total:
            continue
        yield _hit(ctx, doc, pool, groups, solution, placed, total)


def _hit(ctx: LintContext, doc: Document, pool: NodePool, groups: Sequence[GroupInfo], solution: Solution,
         placed: int, total: int) -> Hit:
    problem = ctx.planner.problem
    limits, keys = _limits_words(problem, pool)
    requests = Resources()
    for group_info in groups:
        for _ in range(group_info.size):
            requests = requests + group_info.template.requests
    used, nodes = _launched(solution, pool)
    unlimited = dataclasses.replace(alone(problem, groups), headroom={**problem.headroom, pool.name: UNLIMITED})
    wanted, _ = _launched(best_placement(unlimited, groups), pool)
    workloads = sorted({group_info.group.workload for group_info in groups})
    counted = (f"; the pods request {_in_limits(requests, keys)}, but Karpenter charges each node it launches "
               f"its whole capacity against the limits: the nodes within them ({nodes}: {_in_limits(used, keys)})"
               f" hold {placed}") if keys else ""
    fix = (f"raise the NodePool's limits to {_in_limits(_rounded_up(wanted), keys)} (the capacity of the nodes Karpenter "
           "launches for all of them)" if keys else "raise the NodePool's limits.nodes")
    return Hit(
        doc, "spec.limits",
        f"NodePool {pool.name} limits ({limits}) let {placed} of the {total} pod(s) only this pool can take "
        f"run ({_short(workloads, 4)}){counted}",
        fix + " or let another NodePool take some of these pods",
    )


RULES = (POOL_LIMITS_TOO_SMALL,)
