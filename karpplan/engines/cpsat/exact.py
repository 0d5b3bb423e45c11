"""The exact slot model: small problems solved node by node, so CP-SAT can prove its plan optimal.

The whole-plan model (`optimal.py`) aggregates the new nodes of one launch option (fluid capacity plus
cuts), so its plans need decoding and its bound is the fluid one. For small problems this model gives
every possible new node a *slot* instead: a slot belongs to one bucket (pool, zone, capacity type,
topology labels: everything a zone-level rule or a spread policy reads, see `Repacker.bucket_key`),
picks at most one of the bucket's launch options, and holds a count of pods of each group. Capacity is
exact per slot, so a solution is a plan as it stands and CP-SAT's bound is a bound on any plan.

The rows are the constraint kinds' own (`karpplan/constraints/`): a slot is read as a launch option of
which at most one node is launched (`n[s]` in {0, 1}), with the bucket's labels, so every per-node rule
(hostname spread and anti-affinity caps, hostname self-affinity holders) is exact and every domain rule
(zone spread, zone (anti-)affinity) counts the same pods as on the real nodes. Only the kinds whose
rows read an option's size or price per node (resources, pool limits) add rows of their own for slots
(`ConstraintKind.add_to_slot_model`).

Symmetry breaking: slots of a bucket are sorted by (option rank, CPU load), non-increasing, so an empty
slot comes last and two plans that differ by a permutation of nodes are one. Redundant rows: the total
capacity per dimension (resources) and, for every per-node cap, the number of nodes it implies; per bucket of
few possible contents, the cheapest whole nodes of the content it holds (`bucket_contents.py`); per domain of a
hard zone spread, the pods the spread forces there (`spread_floors.py`). These lift CP-SAT's LP from fractional
nodes, and one worker then proves small models far faster than the portfolio (`_solve_single_first`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from ortools.sat.python import cp_model

from karpplan.constraints.registry import REGISTRY
from karpplan.constraints.resources import floor_fit
from karpplan.constraints.spread_counts import minimum_pinned, skew_limit
from karpplan.engines.cpsat.bucket_contents import Content, content_costs
from karpplan.engines.cpsat.optimal import PRICE_SCALE, ModelValues, OptimalModel
from karpplan.engines.cpsat.spread_floors import add_spread_floors
from karpplan.engines.dominance import BucketKey, drop_dominated_buckets
from karpplan.engines.effort import WHOLE_MODEL_DETERMINISTIC_PER_SECOND, WorkClock
from karpplan.engines.repack import Repacker
from karpplan.engines.result import Solution, SolvedNode, node_name
from karpplan.model.labels import ZONE, ZONE_ID
from karpplan.model.pods import Pod
from karpplan.model.selectors import LabelIndex
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem

ZONE_KEYS = frozenset({ZONE, ZONE_ID})
MAX_EXACT_PODS = 300  # pending pods up to which the slot model is tried
# Slot x option choices plus slot x group counts beyond which it is not built. Measured (2 cores, 10 s):
# the seed host-spread case (1,140) and 10 bench pods on AWS (792) are proven optimal in a few seconds;
# 20 bench pods on AWS (2,448) are not, and CP-SAT does not even find a plan placing every pod.
MAX_EXACT_ENTRIES = 1_500
MAX_REPAIR_ENTRIES = 20_000  # the same, for a slot model around a plan (a few slots per bucket)
# Objective units per unit of PRICE_SCALE: prices weigh this much more than a preference's weight, so the
# model is cheapest first, and its bound on the price is within (soft penalties + nodes) / COST_FIRST units.
COST_FIRST = 1_000
# The share of the exact model's time its first, single-worker search gets (`SlotModel._solve_single_first`).
SINGLE_WORKER_SHARE = 0.3
STOP_TOLERANCE = 1e-6  # $/h: a plan this close to a known lower bound is proven (`background_bound.proves`)


class _StopAtBound(cp_model.CpSolverSolutionCallback):
    """Stops CP-SAT at the first plan placing every pod whose price a known lower bound already meets."""

    def __init__(self, model: SlotModel, bound: float) -> None:
        super().__init__()
        self.model, self.bound = model, bound
        self.stopped = False

    def on_solution_callback(self) -> None:
        if any(self.value(v) for v in self.model.u.values()):
            return
        price = sum(self.model.problem.options[k].price for (_, k), v in self.model.z.items() if self.value(v))
        if price - self.bound <= STOP_TOLERANCE:
            self.stopped = True
            self.stop_search()


class SlotModel(OptimalModel):
    """Per-node model: slot variables in place of the aggregated ones (see the module docstring)."""

    # CP-SAT 9.15's presolve certifies wrong optima when a linear row meets an exactly-one (its
    # ProcessAtMostOneAndLinear, gated by presolve_inclusion_work_limit; google/or-tools#5293): with the content
    # rows it "proved" 0.1 $/h for a problem whose optimum is 0.09 (tests/test_exact_small_plans.py).
    inclusion_presolve = False

    def __init__(self, problem: Problem, hint: Solution | None, repacker: Repacker, incumbent: float,
                 extra_slots: int | None = None) -> None:
        super().__init__(problem, hint)
        self.repacker = repacker
        # Not None: a neighbourhood of the hint, not a proof: each bucket gets the hint's nodes there plus
        # this many slots, so CP-SAT's bound holds only for plans that fit them.
        self.extra_slots = extra_slots
        # The cost of a plan placing every pod (negative: none known); no cheaper plan has more nodes in a
        # bucket than it pays for at the bucket's cheapest price.
        self.incumbent = incumbent
        self.slot_option: list[LaunchOption] = []  # per slot: a representative option (the bucket's labels)
        self.slot_bucket: list[int] = []
        self.bucket_options: list[list[LaunchOption]] = []
        self.z: dict[tuple[int, int], cp_model.IntVar] = {}  # (slot, option index): the slot launches it
        self.allowed: dict[int, set[int]] = {}  # group -> option indices it may use
        self.uniform = True  # tiers and preferences are the same for a group over a bucket's options
        self.replaced: dict[int, int] = {}  # option of a dropped bucket -> the option that stands in for it
        self._counted: dict[int, int] = {}  # spread rule uid -> the pods it counts over its domains (`_zonal_cap`)
        self._by_labels: LabelIndex[GroupInfo] | None = None
        self.tier_of: dict[tuple[int, int], int] = {}  # (group, slot) -> tier
        self.pref_of: dict[tuple[int, int], int] = {}
        self.node_caps: list[tuple[frozenset[int], int]] = []  # (groups, cap) of `cap_per_node`
        self.contents: dict[int, tuple[list[int], dict[Content, cp_model.IntVar]]] = {}  # bucket -> (groups, choice)
        self.built = False

    # ------------------------------------------------------------------------------------ slots
    def plan_slots(self) -> int:
        """Buckets, their options and how many slots each needs; returns the model's choice entries."""
        if not self.pruned:
            self.prune_options()
        self._static_exclusions()
        # Preferred pod (anti-)affinity and ScheduleAnyway spreads add their soft rows as in the whole-plan
        # model (slack weighed in the objective); the price outweighs them (`COST_FIRST`), so the plan is
        # the cheapest and, among the cheapest, the one that honours the most preferences.
        usable: dict[int, set[int]] = defaultdict(set)
        for g in self.groups:
            allowed = {o.index for o in self.group_options[g.index] if (g.index, o.index) not in self.banned_option
                       and floor_fit(g.template.requests, o.free, g.size) > 0}
            self.allowed[g.index] = allowed
            for k in allowed:
                usable[k].add(g.index)
        buckets: dict[BucketKey, list[LaunchOption]] = defaultdict(list)
        for o in self.options:
            if o.index in usable:
                buckets[self.repacker.bucket_of(o)].append(o)
        fronts = {key: self._undominated(options, sorted(set().union(*(usable[o.index] for o in options))), usable)
                  for key, options in buckets.items()}
        if self.extra_slots is None:  # (a repair keeps the hint's buckets: its slots are counted there)
            self.replaced = drop_dominated_buckets(fronts, self._dominates(usable))
        entries = 0
        self._bucket_slots: list[int] = []
        self._bucket_groups: list[list[tuple[GroupInfo, list[LaunchOption], int]]] = []
        for options in fronts.values():
            groups = sorted(set().union(*(usable[o.index] for o in options)))
            pods = sum(self.groups[g].size for g in groups)
            cheapest = options[0].price
            by_cost = int(self.incumbent / cheapest) if cheapest > 0 and self.incumbent >= 0 else pods
            count = max(min(pods, by_cost, sum(self._zonal_cap(self.groups[g], options) for g in groups)), 0)
            if self.extra_slots is not None and self.hint is not None:
                have = sum(1 for n in self.hint.nodes if n.option is not None
                           and self.repacker.bucket_of(n.option) == self.repacker.bucket_of(options[0]))
                count = min(count, have + self.extra_slots) if self.incumbent >= 0 else have + self.extra_slots
            self.bucket_options.append(options)
            self._bucket_slots.append(count)
            members = []
            for gi in groups:
                mine = [o for o in options if o.index in self.allowed[gi]]
                if mine:
                    info = self.groups[gi]
                    members.append((info, mine, max(floor_fit(info.template.requests, o.free, info.size) for o in mine)))
            self._bucket_groups.append(members)
            entries += count * (len(options) + len(members))
        return entries

    def _zonal_cap(self, g: GroupInfo, options: list[LaunchOption]) -> int:
        """The most pods of `g` a bucket of these options can hold under g's hard zonal spreads: a domain that
        receives one of its pods holds at most the rule's minimum plus maxSkew, and the minimum over the rule's
        domains is at most the pods it counts over their number (0 while minDomains pins it). A plan never has
        an empty new node, so the bucket never has more nodes than pods: the slots it needs."""
        cap = g.size
        topo = self.problem.topology
        for rule in topo.rules_for(g.template):
            if not rule.hard or rule.hostname or not rule.self_match:
                continue
            domains = rule.static_domains()
            values = {o.labels.get(rule.key) for o in options}
            if not domains or len(values) != 1 or not values <= domains or not all(rule.option_counts(o) for o in options):
                continue
            counted = self._counted.get(rule.uid)
            if counted is None:
                if self._by_labels is None:  # groups by their labels: a rule tests only those its selector may match
                    self._by_labels = LabelIndex()
                    for h in self.groups:
                        self._by_labels.add(h, h.template.namespace, h.template.labels)
                counted = sum(rule.base_counts.get(d, 0) for d in domains) + sum(
                    h.size for h in self._by_labels.candidates(rule.owner.namespace, rule.selector)
                    if rule.counts(h.template.namespace, h.template.labels))
                self._counted[rule.uid] = counted
            minimum = 0 if minimum_pinned(rule, len(domains)) else counted // len(domains)
            cap = min(cap, skew_limit(rule, minimum))
        return cap

    def _dominates(self, usable: dict[int, set[int]]) -> Callable[[LaunchOption, LaunchOption], bool]:
        """Whether option f makes option o useless, wherever a node of o stands in a plan (`dominance.py`)."""
        limits = {name: list(h.resources) if h.resources is not None else [] for name, h in self.problem.headroom.items()}
        costs = {(g.index, o.index): (g.tier.get(o.index, 0),
                                      sum(p.weight for p in g.template.affinity.preferred if not p.term.matches(o.labels, "")))
                 for g in self.groups for o in self.options if o.index in self.allowed[g.index]}

        def dominates(f: LaunchOption, o: LaunchOption) -> bool:
            return (f.price <= o.price and usable[f.index] >= usable[o.index]
                    and all(f.free.get(d) >= o.free.get(d) for d in self.dims)
                    and all(f.capacity.get(k) <= o.capacity.get(k) for k in limits[o.pool.name])
                    and all(costs[(g, f.index)] <= costs[(g, o.index)] for g in usable[o.index]))

        return dominates

    def _undominated(self, options: list[LaunchOption], groups: list[int], usable: dict[int, set[int]]
                     ) -> list[LaunchOption]:
        """The bucket's options no cheaper one (usable by the same groups) makes useless: a node holds at
        most what the bucket's pods ask for in all, so room beyond that is worth nothing. Pool limits
        that a plan with a node per pending pod cannot reach are ignored; under the others the cheaper
        option must not have more capacity either."""
        demand = {d: sum(self.groups[g].template.requests.get(d) * self.groups[g].size for g in groups)
                  for d in self.dims}
        options = sorted(options, key=lambda o: (o.price, o.index))
        pool = options[0].pool.name
        limited = self.problem.headroom[pool].resources
        # A limit binds when a plan of one node per pending pod, each of the pool's largest, could reach it.
        binding = [k for k in (limited or {}) if limited is not None and limited.get(k) < self.problem.pending_count
                   * max(o.capacity.get(k) for o in self.options if o.pool.name == pool)]
        wanted = [demand[d] for d in self.dims]
        free = {o.index: [o.free.get(d) for d in self.dims] for o in options}
        front: list[LaunchOption] = []
        seen: set[tuple[object, ...]] = set()
        for o in options:
            need = [min(a, b) for a, b in zip(free[o.index], wanted, strict=True)]
            # An option equal to an earlier one in all this reads (most, past the bucket's demand) is dominated by
            # it, or by what dominates it: skipped without comparing.
            key = (*need, *(o.capacity.get(k) for k in binding), frozenset(usable[o.index]))
            if key in seen:
                continue
            seen.add(key)
            if not any(all(a >= b for a, b in zip(free[f.index], need, strict=True))
                       and all(f.capacity.get(k) <= o.capacity.get(k) for k in binding)
                       and usable[f.index] >= usable[o.index] for f in front):
                front.append(o)
        return front

    def add_variables(self) -> None:
        m = self.model
        self._slot_groups: list[list[tuple[int, cp_model.IntVar]]] = []
        for b, options in enumerate(self.bucket_options):
            for _ in range(self._bucket_slots[b]):
                s = len(self.slot_option)
                self.slot_option.append(options[0])
                self.slot_bucket.append(b)
                for o in options:
                    self.z[(s, o.index)] = m.new_bool_var(f"z_s{s}_k{o.index}")
                used = m.new_int_var(0, 1, f"n_s{s}")
                m.add(used == sum(self.z[(s, o.index)] for o in options))
                self.n[s] = used
                items = []
                for g, mine, cap in self._bucket_groups[b]:
                    v = m.new_int_var(0, cap, f"y_g{g.index}_s{s}")
                    self.y[(g.index, s)] = v
                    items.append((g.index, v))
                    if len(mine) < len(options):
                        m.add(v <= cap * sum(self.z[(s, o.index)] for o in mine))
                    self._uniform_costs(g, s, mine)
                self._slot_groups.append(items)
        for g in self.groups:
            for e in g.existing_ok:
                if (g.index, e) in self.banned_existing:
                    continue
                cap = floor_fit(g.template.requests, self.problem.existing[e].free, g.size)
                if cap:
                    self.x[(g.index, e)] = m.new_int_var(0, cap, f"x_g{g.index}_e{e}")
            self.u[g.index] = m.new_int_var(0, g.size, f"u_g{g.index}")
        self._index_variables()
        self._break_symmetry()

    def _uniform_costs(self, g: GroupInfo, s: int, options: Sequence[LaunchOption]) -> None:
        tiers = {g.tier.get(o.index, 0) for o in options}
        prefs = {sum(p.weight for p in g.template.affinity.preferred if not p.term.matches(o.labels, ""))
                 for o in options}
        if len(tiers) > 1 or len(prefs) > 1:
            self.uniform = False
        self.tier_of[(g.index, s)] = max(tiers)
        self.pref_of[(g.index, s)] = max(prefs)

    def _break_symmetry(self) -> None:
        """Slots of a bucket sorted by (option rank, CPU load), non-increasing."""
        m = self.model
        by_bucket: dict[int, list[int]] = defaultdict(list)
        for s, b in enumerate(self.slot_bucket):
            by_bucket[b].append(s)
        for b, slots in by_bucket.items():
            options = self.bucket_options[b]
            big = max(o.free.get("cpu") for o in options) + 1
            keys = []
            for s in slots:
                load = [self.groups[g].template.requests.get("cpu") * v for g, v in self._slot_items(s)]
                rank = sum((r + 1) * self.z[(s, o.index)] for r, o in enumerate(options))
                keys.append(rank * big + sum(load))
            for a, c in zip(keys, keys[1:], strict=False):
                m.add(a >= c)
        # Interchangeable zones: sorted by the CPU their pods ask for, non-increasing.
        for members in self._twin_buckets():
            loads = [sum(self.groups[g].template.requests.get("cpu") * v for s in by_bucket[b]
                         for g, v in self._slot_items(s)) for b in members]
            for a, c in zip(loads, loads[1:], strict=False):
                m.add(a >= c)

    def _twin_buckets(self) -> list[list[int]]:
        """Buckets that differ only by their zone, with the same options (types, prices, room) for the same
        groups, on a problem without existing nodes: swapping their zones maps any plan onto another as
        good (every zonal rule counts the same pods per domain, only under another name)."""
        if self.problem.existing or not self.uniform:
            return []
        keys = [k for k in self.problem.topology.domain_keys() if k != ZONE]
        if any(k in ZONE_KEYS for k in keys):
            return []
        zonal = [r for rules in self.problem.topology.spread.values() for r in rules if not r.hostname]
        classes: dict[tuple[object, ...], list[int]] = defaultdict(list)
        for b, options in enumerate(self.bucket_options):
            o = options[0]
            zone = o.zone
            domains = tuple(zone in r.static_domains() for r in zonal)
            signature = (o.pool.name, o.capacity_type, tuple(o.labels.get(k) for k in keys), domains,
                         tuple((x.instance_type.name, x.price, tuple(x.free.get(d) for d in self.dims),
                                tuple(sorted(x.capacity.items()))) for x in options),
                         tuple((g.index, tuple(x.instance_type.name for x in mine)) for g, mine, _ in self._bucket_groups[b]),
                         self._bucket_slots[b])
            classes[signature].append(b)
        return [members for members in classes.values() if len(members) > 1]

    def _slot_items(self, s: int) -> list[tuple[int, cp_model.IntVar]]:
        return self._slot_groups[s]

    def option(self, index: int) -> LaunchOption:
        """A slot read as a launch option: its bucket's labels (what the kinds' rows read of it)."""
        return self.slot_option[index]

    def cap_per_node(self, members: list[GroupInfo], cap: int) -> None:
        """At most `cap` pods of these groups on each slot, and the nodes that takes in all (redundant)."""
        super().cap_per_node(members, cap)
        self.node_caps.append((frozenset(h.index for h in members), cap))
        items = [v for h in members for _, v in self.y_of[h.index]]
        slots = {s for h in members for s, _ in self.y_of[h.index]}
        if items:
            self.model.add(sum(items) <= cap * sum(self.n[s] for s in slots))

    # ------------------------------------------------------------------------------------ objective
    def add_objective(self) -> None:
        max_price = max((o.price for options in self.bucket_options for o in options), default=1.0)
        price_unit = (int(round(max_price * PRICE_SCALE)) + 1) * COST_FIRST
        max_tier = max((t for g in self.groups for t in g.tier.values()), default=0)
        self.tier_penalty = 2 * price_unit
        self.unplaced_penalty = 2 * price_unit * (max_tier + 2)
        terms: list[tuple[cp_model.LinearExprT, int]] = []
        for (_, k), v in self.z.items():
            terms.append((v, self._units(self.problem.options[k])))
        for v in self.u.values():
            terms.append((v, self.unplaced_penalty))
        for (g, s), v in self.y.items():
            cost = self.tier_of[(g, s)] * self.tier_penalty + self.pref_of[(g, s)]
            if self.pref_of[(g, s)]:
                self.max_soft += self.pref_of[(g, s)] * self.groups[g].size
            if cost:
                terms.append((v, cost))
        self._minimize_with_preferences(terms)

    @staticmethod
    def _units(option: LaunchOption) -> int:
        """A node's objective units: its price first, then one per node."""
        return int(round(option.price * PRICE_SCALE * COST_FIRST)) + 1

    def add_content_rows(self) -> None:
        """Per bucket with few possible contents: one content chosen, its pods per group the slots', and the
        bucket's node units at least that content's cheapest whole nodes (`bucket_contents.py`)."""
        m = self.model
        slots_of: dict[int, list[int]] = defaultdict(list)
        for s, b in enumerate(self.slot_bucket):
            slots_of[b].append(s)
        for b, slots in slots_of.items():
            members = self._bucket_groups[b]
            caps = [min(g.size, cap * len(slots), self._zonal_cap(g, self.bucket_options[b])) for g, _, cap in members]
            costs = content_costs([(g, mine) for g, mine, _ in members], caps, self.dims, self.node_caps, self._units)
            if costs is None:
                continue
            choice = {k: m.new_bool_var(f"content_b{b}_{'_'.join(map(str, k))}") for k in costs}
            m.add_exactly_one(choice.values())
            for i, (g, _, _) in enumerate(members):
                m.add(sum(self.y[(g.index, s)] for s in slots) == sum(k[i] * v for k, v in choice.items() if k[i]))
            m.add(sum(self._units(o) * self.z[(s, o.index)] for s in slots for o in self.bucket_options[b])
                  >= sum(c * v for k, v in choice.items() if (c := costs[k])))
            self.contents[b] = ([g.index for g, _, _ in members], choice)

    def add_hint(self) -> None:
        """The hint's new nodes in the slots of their buckets, in the symmetry order."""
        if self.hint is None:
            return
        existing_index = {info.node.name: e for e, info in enumerate(self.problem.existing)}
        bucket_index = {id(options[0]): b for b, options in enumerate(self.bucket_options)}
        rank = {o.index: r for options in self.bucket_options for r, o in enumerate(options)}
        free: dict[int, list[int]] = defaultdict(list)
        for s, b in enumerate(self.slot_bucket):
            free[b].append(s)
        xs: dict[tuple[int, int], int] = defaultdict(int)
        ys: dict[tuple[int, int], int] = defaultdict(int)
        zs: set[tuple[int, int]] = set()
        nodes = sorted((n for n in self.hint.nodes if n.option is not None),
                       key=lambda n: (-rank.get(n.option.index, -1) if n.option is not None else 0,
                                      -sum(g.template.requests.get("cpu") for g, _ in n.pods)))
        for node in self.hint.nodes:
            if node.existing is not None:
                for group_info, _ in node.pods:
                    xs[(group_info.index, existing_index[node.name])] += 1
        bucket_of_option = {o.index: bucket_index[id(options[0])] for options in self.bucket_options for o in options}
        for node in nodes:
            assert node.option is not None
            option_index = self.replaced.get(node.option.index, node.option.index)
            found = bucket_of_option.get(option_index)
            if found is None or not free[found]:
                return  # the plan uses a pruned option or more nodes than the slots: start fresh
            s = free[found].pop(0)
            zs.add((s, option_index))
            for group_info, _ in node.pods:
                ys[(group_info.index, s)] += 1
        if any(key not in self.x for key in xs) or any(key not in self.y for key in ys):
            return
        unplaced: dict[int, int] = defaultdict(int)
        for group_info, _ in self.hint.unplaced:
            unplaced[group_info.index] += 1
        m = self.model
        for key, v in self.x.items():
            m.add_hint(v, xs.get(key, 0))
        for key, v in self.y.items():
            m.add_hint(v, ys.get(key, 0))
        for key, v in self.z.items():
            m.add_hint(v, key in zs)
        used = {s for s, _ in zs}
        for s, v in self.n.items():
            m.add_hint(v, s in used)
        for g, v in self.u.items():
            m.add_hint(v, unplaced.get(g, 0))
        slots_of: dict[int, list[int]] = defaultdict(list)
        for s, b in enumerate(self.slot_bucket):
            slots_of[b].append(s)
        for b, (groups, choice) in self.contents.items():
            held = tuple(sum(ys.get((g, s), 0) for s in slots_of[b]) for g in groups)
            for k, v in choice.items():
                m.add_hint(v, k == held)

    def build(self) -> None:
        self.built = True
        if not self.bucket_options:
            self.plan_slots()
        self.add_variables()
        for kind in REGISTRY:
            kind.add_to_slot_model(self)
        add_spread_floors(self)
        self.add_content_rows()
        self.add_objective()
        self.add_hint()
        # Place every pod first: a plan leaving pods out is always feasible, and a poor start.
        self.model.add_decision_strategy(list(self.u.values()), cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE)

    # ------------------------------------------------------------------------------------ solving
    def solve_exact(self, time_limit: float, seed: int, workers: int, clock: WorkClock,
                    stop_at: float | None = None) -> tuple[str, Solution | None, float]:
        """(Status, the plan, a lower bound on the cost of any plan placing as many pods.)

        `stop_at`: a lower bound already known on plans placing every pod; the search stops at the first
        plan placing every pod that costs no more (within `STOP_TOLERANCE`), which that bound proves."""
        callback = _StopAtBound(self, stop_at) if stop_at is not None else None
        solver, status = self._solve_single_first(time_limit, seed, workers, clock, callback)
        name = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible"}.get(status, "unknown")
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return name, None, 0.0
        values = ModelValues({k: solver.value(v) for k, v in self.x.items()},
                             {k: solver.value(v) for k, v in self.y.items()},
                             {k: solver.value(v) for k, v in self.n.items()},
                             {k: solver.value(v) for k, v in self.u.items()})
        chosen = {s: k for (s, k), v in self.z.items() if solver.value(v)}
        bound = self.cost_bound(solver.best_objective_bound, values) if self.extra_slots is None else 0.0
        return name if self.extra_slots is None else "feasible", self.decode(values, chosen), bound

    def _solve_single_first(self, time_limit: float, seed: int, workers: int, clock: WorkClock,
                            callback: _StopAtBound | None) -> tuple[cp_model.CpSolver, cp_model.CpSolverStatus]:
        """One CP-SAT worker first, for `SINGLE_WORKER_SHARE` of the time; unless it proves its plan (or
        stops at the known bound), the portfolio of `workers` gets the rest, from its plan.

        On the small exact model one worker's LP-guided search is far cheaper than the portfolio: the
        quickstart is proven in 0.3 deterministic seconds on one worker, 3.1 on two interleaved (which
        spend their time in workers that neither improve the plan nor the bound)."""
        if workers == 1 or self.extra_slots is not None:
            return self.run_solver(time_limit, seed, workers, clock, callback)
        first = time_limit * SINGLE_WORKER_SHARE
        solver, status = self.run_solver(first, seed, 1, clock, callback)
        if status == cp_model.OPTIMAL or callback is not None and callback.stopped:
            return solver, status
        spent = solver.response_proto.deterministic_time / WHOLE_MODEL_DETERMINISTIC_PER_SECOND
        if status == cp_model.FEASIBLE:
            m = self.model
            m.clear_hints()  # type: ignore[no-untyped-call]
            for i in range(len(m.proto.variables)):
                v = m.get_int_var_from_proto_index(i)
                m.add_hint(v, solver.value(v))
        if time_limit - spent <= 0.05 or clock.past_wall():
            return solver, status
        again, status_again = self.run_solver(time_limit - spent, seed, workers, clock, callback)
        if status_again in (cp_model.OPTIMAL, cp_model.FEASIBLE) or status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return again, status_again
        return solver, status

    def decode(self, values: ModelValues, chosen: dict[int, int]) -> Solution:
        groups = self.groups
        queues: dict[int, list[Pod]] = {g.index: list(g.group.pods) for g in groups}
        nodes: list[SolvedNode] = []
        by_existing: dict[int, list[tuple[GroupInfo, Pod]]] = defaultdict(list)
        for (g, e), count in sorted(values.x.items()):
            for _ in range(count):
                by_existing[e].append((groups[g], queues[g].pop(0)))
        for e, info in enumerate(self.problem.existing):  # every existing node, as the decoder lists them
            nodes.append(SolvedNode(info.node.name, info, None, by_existing.get(e, [])))
        ordinal = 0
        for s in sorted(chosen):
            option = self.problem.options[chosen[s]]
            pods = [(groups[g], queues[g].pop(0)) for g, v in self._slot_items(s) for _ in range(values.y[(g, s)])]
            if not pods:
                continue
            ordinal += 1
            nodes.append(SolvedNode(node_name(option, ordinal), None, option, pods))
        unplaced = [(groups[g], queues[g].pop(0)) for g, count in sorted(values.u.items()) for _ in range(count)]
        return Solution("optimal", nodes, unplaced, "feasible")

    def cost_bound(self, objective_bound: float, values: ModelValues) -> float:
        penalties = self.unplaced_penalty * sum(values.u.values())
        penalties += sum(v * self.tier_of[(g, s)] * self.tier_penalty for (g, s), v in values.y.items())
        # Every plan's node count is at most the slots', and its soft penalty at most `max_soft`.
        slack = self.max_soft + len(self.n)
        return max(objective_bound - penalties - slack, 0.0) / (PRICE_SCALE * COST_FIRST)


__all__ = ["MAX_EXACT_ENTRIES", "MAX_EXACT_PODS", "MAX_REPAIR_ENTRIES", "SlotModel"]
