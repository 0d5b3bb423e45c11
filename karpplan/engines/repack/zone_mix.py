"""Interchangeable pods traded between a pool's zones so each zone's CPU/memory mix suits its nodes.

Pods are interchangeable when the same zonal spread rules count them, they carry the same zonal rules
and preferences and take part in no zonal (anti-)affinity: swapping two of them between zones leaves
every domain count as it was. Per class, the number of pods per bucket stays; which pods go where is
chosen by a small LP (GLOP) that minimises the buckets' fluid cost, each bucket's CPU and memory priced
by the mix of its options that holds them most cheaply, so every zone gets a mix of CPU-heavy and
memory-heavy pods its nodes can hold without waste.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from ortools.linear_solver import pywraplp

from karpplan.engines.effort import WorkClock
from karpplan.engines.repack.bucket import BucketKey, BucketShape, IntArray, PlacedPod, placed_pods
from karpplan.engines.repack.rules import Rulebook, RuleIndex
from karpplan.engines.result import SolvedNode
from karpplan.model.labels import HOSTNAME
from karpplan.scheduling.problem import Problem

MIX_LP_MILLISECONDS = 2000  # GLOP's time limit for the zone mix of interchangeable pods
# One class of interchangeable pods: how many of them each bucket holds, and the pods with their bucket.
MixClass = tuple[Counter[BucketKey], list[tuple[BucketKey, PlacedPod]]]


class ZoneMix:
    """Reassigns interchangeable pods between the buckets of one pool, every zone-level count unchanged."""

    def __init__(self, problem: Problem, rules: Rulebook, requests: dict[int, IntArray], dims: int,
                 clock: WorkClock | None) -> None:
        self.problem = problem
        self.rules = rules
        self.requests = requests
        self.dims = dims
        self.clock = clock

    def reassigned(self, buckets: dict[BucketKey, list[SolvedNode]],
                   shapes: dict[BucketKey, BucketShape]) -> dict[BucketKey, list[PlacedPod]] | None:
        """Each bucket's pods after the trade, or None when no pod moves."""
        if len(buckets) < 2:
            return None
        items = {key: placed_pods(nodes) for key, nodes in buckets.items()}
        movable = self._movable_groups()
        members: dict[BucketKey, list[tuple[BucketKey, PlacedPod]]] = defaultdict(list)
        fixed: dict[BucketKey, list[PlacedPod]] = defaultdict(list)
        for key, its in items.items():
            for it in its:
                signature = movable.get(it[0].index)
                if signature is None:
                    fixed[key].append(it)
                else:
                    members[(key[0], signature)].append((key, it))
        classes = []
        for cls in sorted(members, key=repr):
            quota: Counter[BucketKey] = Counter(key for key, _ in members[cls])
            if len(quota) < 2 or any(not self._group_fits_bucket(members[cls], shapes[key]) for key in quota):
                for key, it in members[cls]:
                    fixed[key].append(it)
                continue
            classes.append((cls, quota))
        if not classes:
            return None
        plan = MixLP(self.requests, self.dims, self.clock, shapes, fixed,
                     [(quota, members[cls]) for cls, quota in classes]).solve()
        if plan is None:
            return None
        out: dict[BucketKey, list[PlacedPod]] = {k: list(fixed.get(k, [])) for k in items}
        changed = False
        for (cls, _), counts in zip(classes, plan, strict=True):
            # Pods stay in their bucket where the new counts allow; the rest move.
            by_group: dict[int, list[tuple[BucketKey, PlacedPod]]] = defaultdict(list)
            for key, it in members[cls]:
                by_group[it[0].index].append((key, it))
            for gidx, pods in sorted(by_group.items()):
                want = dict(counts.get(gidx, {}))
                leftovers = []
                for key, it in pods:
                    if want.get(key, 0) > 0:
                        want[key] -= 1
                        out[key].append(it)
                    else:
                        leftovers.append(it)
                for it in leftovers:
                    key = next(k for k in sorted(want, key=repr) if want[k] > 0)
                    want[key] -= 1
                    out[key].append(it)
                    changed = True
        return out if changed else None

    @staticmethod
    def _group_fits_bucket(members: Sequence[tuple[BucketKey, PlacedPod]], shape: BucketShape) -> bool:
        """Every member's group may use some option of the bucket that holds one of its pods."""
        for group_info in {it[0].index: it[0] for _, it in members}.values():
            if not any(o.index in group_info.option_ids and group_info.template.requests.fits_in(o.free) for o in shape.options):
                return False
        return True

    def _movable_groups(self) -> dict[int, tuple[object, ...]]:
        """Group index -> interchangeability signature, for groups whose pods may change zone."""
        topo = self.problem.topology
        ns_labels = self.problem.namespace_labels
        zonal_rules = [r for rules in topo.spread.values() for r in rules if not r.hostname]
        zonal_terms = [t for rule in list(topo.affinity.values()) + list(topo.anti_affinity.values())
                       for t in rule.terms if t.key != HOSTNAME] + [t for t, _ in topo.existing_anti if t.key != HOSTNAME]
        zonal_index = RuleIndex(zonal_rules)
        out: dict[int, tuple[object, ...]] = {}
        for g in self.problem.groups:
            pod_template = g.template
            if self.rules.by_group[g.index].pinned:
                continue
            owns_zonal_affinity = any(
                t.key != HOSTNAME for rule in (topo.affinity.get(id(pod_template)), topo.anti_affinity.get(id(pod_template)))
                if rule is not None for t in rule.terms)
            if owns_zonal_affinity or any(t.matches(pod_template.namespace, pod_template.labels, ns_labels) for t in zonal_terms):
                continue
            counted = tuple(sorted(zonal_index.matching(pod_template.namespace, pod_template.labels)))
            own = tuple(sorted(repr(r.signature()) for r in topo.rules_for(pod_template) if not r.hostname))
            out[g.index] = (counted, own, repr(pod_template.affinity), frozenset(g.option_ids))
        return out


class MixLP:
    """Which bucket each interchangeable pod goes to: an LP over pod counts, rounded to whole pods."""

    def __init__(self, requests: dict[int, IntArray], dims: int, clock: WorkClock | None,
                 shapes: dict[BucketKey, BucketShape], fixed: dict[BucketKey, list[PlacedPod]],
                 classes: list[MixClass]) -> None:
        self.requests = requests
        self.dims = dims
        # The LP is solved to optimality; its time limit is a guard that, when it stops the LP, tells
        # the optimiser's work clock (the plan may then differ between runs).
        self.clock = clock
        self.shapes = shapes
        self.fixed = fixed
        self.classes = classes

    def solve(self) -> list[dict[int, dict[BucketKey, int]]] | None:
        """Per class: group index -> bucket -> pods, or None when GLOP gives no optimal answer."""
        solver = pywraplp.Solver.CreateSolver("GLOP")
        if solver is None:
            return None
        inf = solver.infinity()
        keys = sorted(self.shapes, key=repr)
        dims = self.dims
        fixed_demand = {k: np.sum([self.requests[group_info.index] for group_info, _, _ in self.fixed.get(k, [])], axis=0)
                        if self.fixed.get(k) else np.zeros(dims, dtype=np.int64) for k in keys}
        terms: dict[BucketKey, list[list[Any]]] = {k: [[] for _ in range(dims)] for k in keys}
        variables: list[dict[int, dict[BucketKey, pywraplp.Variable]]] = []
        for quota, members in self.classes:
            sizes: Counter[int] = Counter(it[0].index for _, it in members)
            group_vars: dict[int, dict[BucketKey, pywraplp.Variable]] = {}
            for gidx, count in sorted(sizes.items()):
                group_vars[gidx] = {k: solver.NumVar(0.0, float(count), "") for k in sorted(quota, key=repr)}
                solver.Add(solver.Sum(list(group_vars[gidx].values())) == float(count))
                for k, v in group_vars[gidx].items():
                    for d in range(dims):
                        amount = float(self.requests[gidx][d])
                        if amount:
                            terms[k][d].append(amount * v)
            for k, q in quota.items():
                solver.Add(solver.Sum([group_vars[g][k] for g in group_vars]) == float(q))
            variables.append(group_vars)
        cost: list[Any] = []
        for k in keys:
            shape = self.shapes[k]
            # Fluid nodes of each option: the bucket's cheapest mix for what it must hold.
            nodes = [solver.NumVar(0.0, inf, "") for _ in shape.options]
            for d in range(dims):
                need = float(fixed_demand[k][d]) + (solver.Sum(terms[k][d]) if terms[k][d] else 0.0)
                solver.Add(solver.Sum([float(shape.free[i][d]) * nodes[i] for i in range(len(nodes))]) >= need)
            cost.extend(float(shape.price[i]) * nodes[i] for i in range(len(nodes)))
        solver.Minimize(solver.Sum(cost))
        solver.SetTimeLimit(MIX_LP_MILLISECONDS)
        began = time.monotonic()
        status = solver.Solve()
        if self.clock is not None:  # (its time is in the model of what precedes the search)
            self.clock.record_stop(status == pywraplp.Solver.OPTIMAL, time.monotonic() - began,
                                   MIX_LP_MILLISECONDS / 1000)
        if status != pywraplp.Solver.OPTIMAL:
            return None
        return [self._rounded(group_vars, quota) for (quota, _), group_vars in zip(self.classes, variables, strict=True)]

    @staticmethod
    def _rounded(group_vars: dict[int, dict[BucketKey, pywraplp.Variable]],
                 quota: Counter[BucketKey]) -> dict[int, dict[BucketKey, int]]:
        """Whole pods with the same totals per group and per bucket: floors, then the remaining units
        to the largest fractions (row and column sums are whole, so this always completes)."""
        out: dict[int, dict[BucketKey, int]] = {}
        fractions: list[tuple[float, int, BucketKey]] = []
        left_in_bucket = Counter(quota)
        left_in_group: Counter[int] = Counter()
        for g, per_key in group_vars.items():
            out[g] = {}
            total = round(sum(v.solution_value() for v in per_key.values()))
            for k, v in per_key.items():
                value = max(v.solution_value(), 0.0)
                whole = int(math.floor(value + 1e-6))
                out[g][k] = whole
                left_in_bucket[k] -= whole
                fractions.append((value - whole, g, k))
            left_in_group[g] = total - sum(out[g].values())
        for _, g, k in sorted(fractions, key=lambda f: (-f[0], f[1], repr(f[2]))):
            if left_in_group[g] > 0 and left_in_bucket[k] > 0:
                out[g][k] += 1
                left_in_group[g] -= 1
                left_in_bucket[k] -= 1
        # Whatever the fractions did not settle: any bucket with room left.
        for g in sorted(group_vars):
            for k in sorted(left_in_bucket, key=repr):
                while left_in_group[g] > 0 and left_in_bucket[k] > 0:
                    out[g][k] += 1
                    left_in_group[g] -= 1
                    left_in_bucket[k] -= 1
        return out
