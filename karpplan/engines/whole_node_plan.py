"""A plan read off the whole-node programme's solution (`zone_node_bound.py`): its nodes per domain, its pods packed into them, kept only when the verifier accepts it.

The programme buys whole nodes of each launch option per domain (zone, or the values of another spread's key)
and places whole pods of each class per domain, each node holding at most the pods of a class its room takes:
its optimum is a lower bound on the component's cost. When its solution also packs pod by pod into the nodes it
buys (largest pods first, depth first over the nodes of each domain, each pod on a node of an option its group
may use, within the node's free room, the node holding fewest pods of its group first, so hostname rules are
kept where they can be), that packing is a
plan at the programme's own price, and once the verifier accepts it the bound proves it optimal: a small plan
whose pods a spread or whole-node rounding forces onto few node shapes (30 pods of one Deployment over the
zones, or over a custom label's values) is then proven without a search.

Only for problems whose every group with pods is in a component the programme bounds (none may use an
existing node), the packing's nodes are the programme's incumbent's (empty ones dropped), so its cost never exceeds
the incumbent's; whether it meets the bound (and so is proven) is the caller's question.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from karpplan.constraints.topology_spread import TOPOLOGY_SPREAD
from karpplan.engines.combinatorial_bound import SpansByKey, components, domain_keys, domain_of
from karpplan.engines.effort import WorkClock
from karpplan.engines.result import Solution, SolvedNode, node_name
from karpplan.engines.zone_node_bound import ZoneNodes, component_bound, modelled_seconds
from karpplan.model.pods import Pod
from karpplan.model.resources import CPU, MEMORY, Resources
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.verify import verify

MAX_PODS = 200  # problems past this many pending pods are not tried (the small-plan phase's size)
PACK_STEPS = 20_000  # placements tried at most per component before its packing is given up


@dataclass(frozen=True)
class ProgrammePlan:
    plan: Solution
    bound: float  # $/h: the sum over the components of the programme's proven bound (a bound on any plan)


@dataclass
class _Node:
    option: LaunchOption
    used: Resources
    pods: list[tuple[GroupInfo, Pod]]


def programme_plan(problem: Problem, clock: WorkClock | None = None, wall_seconds: float = 5.0) -> ProgrammePlan | None:
    """The module docstring's plan, verified, with the programmes' bound; None when a programme is not solved
    to its end, its solution does not pack, or the verifier rejects the packing."""
    if not 0 < problem.pending_count <= MAX_PODS:
        return None
    start = time.monotonic()
    left_out = unplaceable(problem)
    groups = [g for g in problem.groups if g.size > 0 and g.index not in left_out]
    if not groups or any(g.existing_ok or problem.topology.affinity.get(id(g.template))
                         or any(t != 0 for t in g.tier.values()) for g in groups):
        return None  # (required pod affinity: the programme relaxes it, and the verifier reads it in the final
        # state only, where pods affine to their own kind on two nodes each find a match: kube-scheduler's order
        # puts them in one domain, as the engines' rows do; NodePool weights: the engines take the heaviest
        # pool first, the programme the cheapest)
    demand = {g.index: g.size for g in groups}
    spans = SpansByKey(problem)
    nodes: list[_Node] = []
    bound = 0.0
    for members in components(groups):
        packings: list[list[_Node]] = []
        value = 0.0
        for key in domain_keys(problem, members):  # each key's programme: its own solution, its own bound
            left = wall_seconds - (time.monotonic() - start)
            found = component_bound(problem, members, demand, spans.get(key), wall_seconds=left, keep=True) \
                if left > 0 else None
            if found is None:
                continue
            if clock is not None:
                clock.charge(modelled_seconds(found))
            value = max(value, found.bound)
            packed = _pack(problem, members, found, key)
            if packed is not None:
                packings.append(packed)
        # The cheapest packing that keeps every rule among the component's pods (the zone programme knows
        # nothing of a custom key's domains, and the other way round).
        chosen = next((p for p in sorted(packings, key=lambda p: sum(n.option.price for n in p))
                       if _valid(problem, _solution(p))), None)
        if chosen is None:
            return None
        nodes.extend(chosen)
        bound += value
    plan = _solution(nodes)
    plan.unplaced = [(g, pod) for g in problem.groups if g.index in left_out for pod in g.group.pods]
    if not _valid(problem, plan):
        return None
    return ProgrammePlan(plan, bound)


def unplaceable(problem: Problem) -> frozenset[int]:
    """The groups no plan can place: no launch option and no existing node may hold their pods (a static
    verdict), so every plan leaves them out and proving a plan is proving the rest."""
    return frozenset(g.index for g in problem.groups if not g.options and not g.existing_ok)


def complete(problem: Problem, plan: Solution) -> bool:
    """Whether the plan places every pod some plan can place (`unplaceable`: it leaves out no other)."""
    if not plan.unplaced:
        return True
    left_out = unplaceable(problem)
    return all(g.index in left_out for g, _ in plan.unplaced)


def _solution(nodes: Sequence[_Node]) -> Solution:
    solved = [SolvedNode(node_name(n.option, i), None, n.option, n.pods) for i, n in enumerate(nodes, 1)]
    return Solution("optimal", solved, [], "feasible")


def _valid(problem: Problem, plan: Solution) -> bool:
    """The verifier's rules, and spreads over Karpenter's launchable domains (a domain left empty counts, as the
    engines plan it: `TopologySpreadKind.launch_violations`)."""
    return not verify(problem, plan) and not TOPOLOGY_SPREAD.launch_violations(problem, plan)


def _pack(problem: Problem, members: Sequence[GroupInfo], found: ZoneNodes, key: str) -> list[_Node] | None:
    """The programme's pods per class and domain packed into its nodes (None: they do not pack within
    `PACK_STEPS`). A pod with a hard spread never goes to a node without the spread's key (kube-scheduler's
    filter; the engines ban it too)."""
    by_index = {o.index: o for g in members for o in g.options}
    usable = {g.index: {o.index for o in g.options if all(o.labels.get(k) is not None for k in _spread_keys(problem, g))}
              for g in members}
    pods: dict[int, list[Pod]] = {g.index: list(g.group.pods) for g in members}
    by_group = {g.index: g for g in members}
    here: dict[str, list[_Node]] = defaultdict(list)
    for index, count in found.bought:
        option = by_index[index]
        here[domain_of(option, key)].extend(_Node(option, Resources(), []) for _ in range(count))
    items: dict[str, list[tuple[GroupInfo, Pod]]] = defaultdict(list)
    for class_groups, domain, count in found.placed:
        for _ in range(count):
            g = max((by_group[i] for i in sorted(class_groups) if pods[i]), key=lambda h: len(pods[h.index]),
                    default=None)
            if g is None:
                return None
            items[domain].append((g, pods[g.index].pop()))
    if any(pods.values()):
        return None
    steps = [PACK_STEPS]
    for domain, placed in items.items():
        placed.sort(key=lambda item: _size(item[0]), reverse=True)
        if not _fill(placed, 0, here[domain], usable, defaultdict(int), steps):
            return None
    return [n for nodes in here.values() for n in nodes if n.pods]


def _fill(items: Sequence[tuple[GroupInfo, Pod]], k: int, nodes: Sequence[_Node], usable: Mapping[int, set[int]],
          held: dict[tuple[int, int], int], steps: list[int]) -> bool:
    """Place items[k:] on the nodes, depth first (each pod first on the node holding fewest of its group, so
    hostname rules are kept where they can be; alike nodes tried once), within `steps`."""
    if k == len(items):
        return True
    g, pod = items[k]
    tried: set[tuple[object, ...]] = set()
    for i in sorted(range(len(nodes)), key=lambda i: held[(i, g.index)]):
        n = nodes[i]
        if n.option.index not in usable[g.index] or not (n.used + pod.requests).fits_in(n.option.free):
            continue
        alike = (n.option.index, tuple(sorted(n.used.items())), held[(i, g.index)], len(n.pods))
        if alike in tried:
            continue
        tried.add(alike)
        steps[0] -= 1
        if steps[0] < 0:
            return False
        before = n.used
        n.used = before + pod.requests
        n.pods.append((g, pod))
        held[(i, g.index)] += 1
        if _fill(items, k + 1, nodes, usable, held, steps):
            return True
        n.used = before
        n.pods.pop()
        held[(i, g.index)] -= 1
    return False


def _spread_keys(problem: Problem, g: GroupInfo) -> list[str]:
    """The keys of the group's hard spreads but the hostname (every node has its own)."""
    return [r.key for r in problem.topology.rules_for(g.template) if r.hard and not r.hostname]


def _size(g: GroupInfo) -> tuple[int, int]:
    """A pod's size for the packing order: its CPU, then its memory request."""
    return g.template.requests.get(CPU), g.template.requests.get(MEMORY)


__all__ = ["ProgrammePlan", "complete", "programme_plan", "unplaceable"]
