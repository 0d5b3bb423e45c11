"""The optimal engine: an OR-Tools CP-SAT model over integer pod counts, then a decoder to real nodes.

Formulation (one class, named parts, in the spirit of the CP-SAT primer). The rows of each rule live in
its constraint kind (`karpplan/constraints/`), which `build` adds in registry order; this module keeps the
variables, the option pruning, the objective, the hint and the solve:

* `y[g,k]` pods of group g on new nodes of launch option k, `n[k]` nodes of option k, `x[g,e]` pods of g on
  existing node e, `u[g]` pods of g left out. Replicas of a template are one integer, never one boolean
  per pod, so the model's size depends on groups x options, not on pods.
* Existing nodes are single bins, so their capacity rows are exact. New nodes of one option are
  aggregated: `sum_g r[g] y[g,k] <= A[k] n[k]` (the fluid packing, whose LP bound is the physical limit on
  cost) tightened by `y[g,k] <= floor(A[k]/r[g]) n[k]` (whole pods per node) and a redundant total-capacity
  row. The decoder packs each option's pods into its `n[k]` nodes and opens one more if granularity needs it.
* Topology is the batch form of the per-placement rules (kube-scheduler.md §10): a domain that receives a
  self-matching pod ends with `count <= min + maxSkew`; hostname rules on new nodes cap matching pods per
  node; anti-affinity empties domains; required affinity follows existing matches or opens one domain.
* Dominated launch options (same pool, zone, capacity type and topology labels, usable by no fewer groups,
  no less room and no higher price) are pruned: this keeps the bound valid.
* Objective: pods left out (heavy), lighter-pool penalties, hourly cost, soft-constraint penalties, nodes.
* The Karpenter simulation's plan is the hint; the search is seeded and time-limited, and its status line
  shows best cost, bound and gap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from ortools.sat.python import cp_model

from karpplan.constraints.registry import REGISTRY
from karpplan.constraints.resources import floor_fit
from karpplan.engines.cpsat.decoder import Decoder, ModelValues
from karpplan.engines.dominance import pareto_front
from karpplan.engines.effort import (
    WHOLE_MODEL_DETERMINISTIC_PER_SECOND,
    WorkClock,
    available_cores,
)
from karpplan.engines.result import Solution
from karpplan.model.labels import HOSTNAME
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import SpreadRule

PRICE_SCALE = 10**7  # objective units per dollar-hour
MAX_MODEL_VARIABLES = 40_000  # placement variables beyond which the whole-plan model is not built
LinearExpr = cp_model.LinearExpr




class OptimalModel:
    inclusion_presolve = True  # CP-SAT's inclusion presolve (off in `SlotModel`: see there)

    def __init__(self, problem: Problem, hint: Solution | None) -> None:
        self.problem = problem
        self.hint = hint
        self.model = cp_model.CpModel()
        self.groups = problem.groups
        self.dims = sorted({name for g in self.groups for name in g.template.requests})
        self.options: list[LaunchOption] = []
        self.group_options: dict[int, list[LaunchOption]] = {}
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}
        self.y: dict[tuple[int, int], cp_model.IntVar] = {}
        self.n: dict[int, cp_model.IntVar] = {}
        self.u: dict[int, cp_model.IntVar] = {}
        self.soft_terms: list[tuple[cp_model.LinearExprT, int]] = []
        self.max_soft = 0
        self.banned_existing: set[tuple[int, int]] = set()
        self.banned_option: set[tuple[int, int]] = set()
        self.pruned = False

    # ------------------------------------------------------------------------------------ options
    def prune_options(self) -> None:
        """Drop launch options another option dominates for every group that could use them."""
        self.pruned = True
        users: dict[int, set[int]] = defaultdict(set)
        for g in self.groups:
            for o in g.options:
                users[o.index].add(g.index)
        keys = self._topology_keys()
        classes: dict[tuple[object, ...], list[LaunchOption]] = defaultdict(list)
        for o in self.problem.options:
            if o.index not in users:
                continue
            tiers = tuple(sorted((g, self.groups[g].tier.get(o.index, 0)) for g in users[o.index]))
            label_key = tuple(o.labels.get(k) for k in keys)
            classes[(o.pool.name, o.zone, o.capacity_type, label_key, tiers)].append(o)
        kept: list[LaunchOption] = []
        for members in classes.values():
            limited = self.problem.headroom[members[0].pool.name].resources
            limited_keys = list(limited) if limited is not None else []
            front = pareto_front(members, self.dims, limited_keys)
            kept.extend(front)
        kept_ids = {o.index for o in kept}
        self.options = [o for o in self.problem.options if o.index in kept_ids]
        for g in self.groups:
            self.group_options[g.index] = [o for o in g.options if o.index in kept_ids]

    def _topology_keys(self) -> list[str]:
        """Keys whose values tell launch options apart for some rule or preference."""
        topo = self.problem.topology
        keys = set(topo.domain_keys())
        for g in self.groups:
            for pref in g.template.affinity.preferred:
                keys |= set(pref.term.requirements)
            for rule in [*topo.preferred_affinity.get(id(g.template), []), *topo.preferred_anti.get(id(g.template), [])]:
                if rule.terms[0].key != HOSTNAME:
                    keys.add(rule.terms[0].key)
        return sorted(keys)

    # ------------------------------------------------------------------------------------ variables
    def add_variables(self) -> None:
        m = self.model
        self._static_exclusions()
        upper: dict[int, int] = defaultdict(int)
        for g in self.groups:
            for o in self.group_options[g.index]:
                if (g.index, o.index) in self.banned_option:
                    continue
                per_node = floor_fit(g.template.requests, o.free, g.size)
                if per_node == 0:
                    continue
                self.y[(g.index, o.index)] = m.new_int_var(0, g.size, f"y_g{g.index}_k{o.index}")
                upper[o.index] += g.size
            for e in g.existing_ok:
                if (g.index, e) in self.banned_existing:
                    continue
                cap = floor_fit(g.template.requests, self.problem.existing[e].free, g.size)
                if cap == 0:
                    continue
                self.x[(g.index, e)] = m.new_int_var(0, cap, f"x_g{g.index}_e{e}")
            self.u[g.index] = m.new_int_var(0, g.size, f"u_g{g.index}")
        for o in self.options:
            if upper.get(o.index):
                self.n[o.index] = m.new_int_var(0, upper[o.index], f"n_k{o.index}")
        self._index_variables()

    def _index_variables(self) -> None:
        """Per-group views of the variables, so no constraint family scans them all (linear build time)."""
        self.y_of: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
        self.x_of: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
        for (g, k), v in self.y.items():
            self.y_of[g].append((k, v))
        for (g, e), v in self.x.items():
            self.x_of[g].append((e, v))
        self._domain_cache: dict[tuple[int, str, int], dict[str, list[cp_model.IntVar]]] = {}

    def _static_exclusions(self) -> None:
        """Placements the constraint kinds rule out before solving (bound pods' anti-affinity, unmatched
        spread domains...)."""
        for kind in REGISTRY:
            kind.exclude(self)

    # ------------------------------------------------------------------------------------ constraints
    # The rows of each constraint kind live in its module (`karpplan/constraints/`); these views of the
    # variables by topology domain are what their rows share.
    def placed_in(self, group: int, key: str, value: str, rule: SpreadRule | None = None) -> list[cp_model.IntVar]:
        """Variables placing pods of `group` in domain `value` of `key` (counted by `rule` when given)."""
        return self.domain_map(group, key, rule).get(value, [])

    def domain_map(self, group: int, key: str, rule: SpreadRule | None) -> dict[str, list[cp_model.IntVar]]:
        cache_key = (group, key, id(rule) if rule is not None else 0)
        cached = self._domain_cache.get(cache_key)
        if cached is not None:
            return cached
        out: dict[str, list[cp_model.IntVar]] = defaultdict(list)
        for e, v in self.x_of[group]:
            node = self.problem.existing[e].node
            value = rule.existing_domains.get(node.name) if rule is not None else node.domain(key)
            if value is not None:
                out[value].append(v)
        for k, v in self.y_of[group]:
            o = self.option(k)
            value = o.labels.get(key)
            if value is not None and (rule is None or rule.option_counts(o)):
                out[value].append(v)
        self._domain_cache[cache_key] = out
        return out

    def option(self, index: int) -> LaunchOption:
        return self.problem.options[index]

    def cap_per_node(self, members: list[GroupInfo], cap: int) -> None:
        """At most `cap` pods of these groups on each new node of every option."""
        per_option: dict[int, list[cp_model.IntVar]] = defaultdict(list)
        for h in members:
            for k, v in self.y_of[h.index]:
                per_option[k].append(v)
        for k, items in per_option.items():
            self.model.add(sum(items) <= cap * self.n[k])

    # ------------------------------------------------------------------------------------ objective
    def add_objective(self) -> None:
        max_price = max((self.option(k).price for k in self.n), default=1.0)
        price_unit = int(round(max_price * PRICE_SCALE)) + 1
        max_tier = max((t for g in self.groups for t in g.tier.values()), default=0)
        self.tier_penalty = 2 * price_unit
        self.unplaced_penalty = 2 * price_unit * (max_tier + 2)
        terms: list[tuple[cp_model.LinearExprT, int]] = []
        for k, v in self.n.items():
            terms.append((v, int(round(self.option(k).price * PRICE_SCALE)) + 1))  # +1: fewer nodes on ties
        for v in self.u.values():
            terms.append((v, self.unplaced_penalty))
        for (g, k), v in self.y.items():
            tier = self.groups[g].tier.get(k, 0)
            weight = self._preference_penalty(self.groups[g], self.option(k).labels, "")
            cost = tier * self.tier_penalty + weight
            if cost:
                terms.append((v, cost))
        self._minimize_with_preferences(terms)

    def _minimize_with_preferences(self, terms: list[tuple[cp_model.LinearExprT, int]]) -> None:
        """Minimise `terms` plus the unmet preferred node affinity of pods on existing nodes and the kinds'
        soft-constraint penalties (both models end their objective here)."""
        for (g, e), v in self.x.items():
            node = self.problem.existing[e].node
            weight = self._preference_penalty(self.groups[g], node.labels, node.name)
            if weight:
                terms.append((v, weight))
        terms.extend(self.soft_terms)
        self.model.minimize(sum(c * v for v, c in terms))

    def _preference_penalty(self, g: GroupInfo, labels: dict[str, str] | object, name: str) -> int:
        """Preferred node affinity: each unmet term's weight, per pod."""
        total = 0
        for pref in g.template.affinity.preferred:
            if not pref.term.matches(labels, name):  # type: ignore[arg-type]
                total += pref.weight
        if total:
            self.max_soft += total * g.size
        return total

    def add_hint(self) -> None:
        if self.hint is None:
            return
        xs: dict[tuple[int, int], int] = defaultdict(int)
        ys: dict[tuple[int, int], int] = defaultdict(int)
        ns: dict[int, int] = defaultdict(int)
        existing_index = {info.node.name: e for e, info in enumerate(self.problem.existing)}
        for node in self.hint.nodes:
            if node.existing is not None:
                e = existing_index[node.name]
                for group_info, _ in node.pods:
                    xs[(group_info.index, e)] += 1
            elif node.option is not None:
                ns[node.option.index] += 1
                for group_info, _ in node.pods:
                    ys[(group_info.index, node.option.index)] += 1
        if any(key not in self.x for key in xs) or any(key not in self.y for key in ys):
            return  # the greedy plan uses a pruned option: let the solver start fresh
        unplaced: dict[int, int] = defaultdict(int)
        for group_info, _ in self.hint.unplaced:
            unplaced[group_info.index] += 1
        for key, v in self.x.items():
            self.model.add_hint(v, xs.get(key, 0))
        for key, v in self.y.items():
            self.model.add_hint(v, ys.get(key, 0))
        for k, v in self.n.items():
            self.model.add_hint(v, ns.get(k, 0))
        for g, v in self.u.items():
            self.model.add_hint(v, unplaced.get(g, 0))

    def size_estimate(self) -> int:
        """Integer variables the model would have (placements on new and existing nodes)."""
        return sum(len(self.group_options.get(g.index, g.options)) + len(g.existing_ok) for g in self.groups)

    def build(self) -> None:
        if not self.pruned:
            self.prune_options()
        self.add_variables()
        for kind in REGISTRY:  # resources (demand, existing, new capacity), limits, spread, affinity
            kind.add_to_model(self)
        self.add_objective()
        self.add_hint()

    # ------------------------------------------------------------------------------------ solving
    def solve(self, time_limit: float, seed: int, workers: int,
              progress: IncumbentSink | None, clock: WorkClock | None = None) -> tuple[str, ModelValues | None, float]:
        """CP-SAT on the whole model for `time_limit` modelled seconds (a deterministic-time budget; the
        clock's wall guard, if any, also stops it and is then recorded as a cut). `progress` hears each
        incumbent's (cost $/h, pods left out, lower bound $/h)."""
        clock = clock or WorkClock()
        # Probing dominates presolve on large aggregated models and can eat the whole time limit.
        probing_off = len(self.y) + len(self.x) > 2000
        callback = _Progress(self, progress) if progress is not None else None
        solver, status = self.run_solver(time_limit, seed, workers, clock, callback, probing_off=probing_off)
        name = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
                cp_model.INFEASIBLE: "infeasible-model", cp_model.MODEL_INVALID: "invalid-model"}.get(status, "unknown")
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return name, None, 0.0
        values = ModelValues(
            {k: solver.value(v) for k, v in self.x.items()},
            {k: solver.value(v) for k, v in self.y.items()},
            {k: solver.value(v) for k, v in self.n.items()},
            {k: solver.value(v) for k, v in self.u.items()},
        )
        return name, values, solver.best_objective_bound

    def run_solver(self, time_limit: float, seed: int, workers: int, clock: WorkClock,
                   callback: cp_model.CpSolverSolutionCallback | None = None, *,
                   probing_off: bool = False) -> tuple[cp_model.CpSolver, cp_model.CpSolverStatus]:
        """CP-SAT on this model for `time_limit` modelled seconds (a deterministic-time budget, charged to
        the clock; its wall guard, if any, also stops it and is recorded as a cut): (solver, status)."""
        solver = cp_model.CpSolver()
        solver.parameters.max_deterministic_time = max(time_limit, 0.05) * WHOLE_MODEL_DETERMINISTIC_PER_SECOND
        guard = clock.wall_left()
        if guard != float("inf"):
            solver.parameters.max_time_in_seconds = max(guard, 0.05)
        solver.parameters.random_seed = seed
        solver.parameters.num_workers = workers or available_cores()
        # Interleaved search keeps multi-worker runs reproducible for a given seed.
        solver.parameters.interleave_search = True
        if probing_off:
            solver.parameters.cp_model_probing_level = 0
        if not self.inclusion_presolve:
            solver.parameters.presolve_inclusion_work_limit = 0
        status = solver.solve(self.model, callback) if callback is not None else solver.solve(self.model)
        clock.charge(solver.response_proto.deterministic_time / WHOLE_MODEL_DETERMINISTIC_PER_SECOND)
        clock.record_stop(status == cp_model.OPTIMAL, solver.wall_time, solver.parameters.max_time_in_seconds)
        return solver, status

    def cost_bound(self, objective_bound: float, values: ModelValues) -> float:
        """A lower bound on the hourly cost of any plan that places as many pods as this one."""
        penalties = self.unplaced_penalty * sum(values.u.values())
        penalties += sum(v * self.groups[g].tier.get(k, 0) * self.tier_penalty for (g, k), v in values.y.items())
        nodes = sum(values.n.values())
        raw = objective_bound - penalties - self.max_soft - nodes
        return max(raw, 0.0) / PRICE_SCALE


class _Progress(cp_model.CpSolverSolutionCallback):
    """Each incumbent as (cost $/h of its new nodes, pods it leaves out, `cost_bound` of CP-SAT's bound)."""

    def __init__(self, owner: OptimalModel, sink: IncumbentSink) -> None:
        super().__init__()
        self.owner = owner
        self.sink = sink
        self.tiered = [k for k in owner.y if owner.groups[k[0]].tier.get(k[1], 0)]

    def on_solution_callback(self) -> None:
        owner = self.owner
        n = {k: self.value(v) for k, v in owner.n.items()}
        u = {k: self.value(v) for k, v in owner.u.items()}
        y = {k: self.value(owner.y[k]) for k in self.tiered}
        cost = sum(owner.option(k).price * count for k, count in n.items())
        bound = owner.cost_bound(self.best_objective_bound, ModelValues({}, y, n, u))
        self.sink(cost, sum(u.values()), bound)


IncumbentSink = Callable[[float, int, float], None]


__all__ = ["Decoder", "OptimalModel", "ModelValues"]
