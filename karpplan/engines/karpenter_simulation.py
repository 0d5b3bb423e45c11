"""A faithful simulation of Karpenter's provisioning scheduler (karpenter-scheduler.md §1-§10).

Pods are sorted by CPU then memory (descending) and placed one at a time: existing nodes first (by name),
then the open NodeClaims with the fewest pods, then a new NodeClaim per NodePool in weight order. A claim
keeps every launch option that still fits and absorbs pods until none does; at the end it launches its
cheapest option. Required node-affinity terms are tried one at a time (term[0] first) and preferences
are first enforced, then both are relaxed in Karpenter's order (`template_attempts`); a pod that still
fails is requeued, and a batch stops after a full pass without progress.

Batches follow until one places nothing (`karpenter_batches.py`): the batch's claims are launched (the
cheapest option each), NodePool limits are charged with the launched nodes' capacity, and the pods left
are tried on the launched nodes (after the existing ones) before new claims.

Deliberate limits, as in Karpenter: no backtracking, zones of open claims are committed late, within a
batch NodePool resource limits are charged pessimistically (largest candidate, `subtractMax`) and
`limits.nodes` is only checked against nodes that existed when the batch started.
"""

from __future__ import annotations

import operator
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from karpplan.constraints.pool_headroom import Headroom, capacity_fits, full_limits
from karpplan.engines.karpenter_batches import Launched, PoolLedger, RecountWatch, relaunch
from karpplan.engines.karpenter_claims import ClaimOrder
from karpplan.engines.result import Solution, SolvedNode, node_name
from karpplan.model.pods import Pod
from karpplan.model.resources import Resources
from karpplan.scheduling.candidates import BoolArray, IndexArray, LaunchOption, PoolVerdict
from karpplan.scheduling.nodeclaim import PlannedNode
from karpplan.scheduling.preferences import Attempt, template_attempts
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.state import PlacementState

_INDEX = operator.attrgetter("index")


class KarpenterSimulation:
    def __init__(self, problem: Problem, progress: Callable[[int, int], None] | None = None,
                 exact_limits: bool = False) -> None:
        self.problem = problem
        # exact_limits: charge each claim the capacity of its smallest remaining option and count nodes in
        # the batch (a valid plan for the optimiser's warm start) instead of Karpenter's subtractMax.
        self.exact_limits = exact_limits
        self.state = PlacementState(problem)
        self.table = self.state.table
        self.ledger = PoolLedger(problem)
        self._watch = RecountWatch(problem)
        self.launched: list[Launched] = []  # the claims earlier batches launched, in launch order
        self.batches = 0  # provisioning batches that placed a pod
        self.progress = progress
        self._attempts: dict[int, list[Attempt]] = {}
        self._verdicts: dict[int, list[tuple[PoolVerdict, bool, IndexArray]]] = {}
        self._limit_masks: dict[str, tuple[Resources, BoolArray]] = {}
        self.cut_short = False  # the deadline stopped the run before every pod was tried
        # When cut: the pods left that some node could still take (`undecided`), which Karpenter would have
        # gone on trying; they are not simulated, never unschedulable.
        self.undecided: frozenset[str] = frozenset()
        self._placed = 0
        # Pools whose in-batch subtractMax charges turned away a pod their limits at the batch's start would
        # have let them launch for: why Karpenter needs another batch (`limit_stall_note`).
        self.limit_stalled: dict[str, int] = {}
        self._start_batch()

    def _start_batch(self) -> None:
        """A new scheduler: no claims yet, the limits left after the launched nodes (`NewScheduler`)."""
        self.claims: list[PlannedNode] = []
        # The claims in the order pods try them (fewest pods first, then creation order), screened.
        self._order = ClaimOrder(self.table, self.problem.groups, self.problem.pools, self.state.monotone)
        self._pool_claims: dict[int, int] = {}  # id(pool) -> claims opened
        self.remaining: dict[str, Resources | None] = {}
        self.nodes_left: dict[str, int | None] = {}
        for pool in self.problem.pools:
            self.remaining[pool.name] = self.ledger.remaining(pool.name)
            self.nodes_left[pool.name] = self.ledger.nodes_left(pool.name)
        self._batch_remaining = dict(self.remaining)
        self._existing_order: dict[int, list[PlannedNode]] = {}
        self._existing_first: dict[int, int] = {}  # group -> its first existing node not known to be full
        self._name_rank: list[int] | None = None  # per existing node, its rank by name
        self._watch.dirty = False
        # Launched nodes are state nodes too, tried after the existing ones (initialised first, as Karpenter).
        self._launched_slots = [item.slot for item in self.launched]
        self._launched_names = {slot.name: slot for slot in self._launched_slots}

    def _attempts_for(self, group_info: GroupInfo) -> list[Attempt]:
        if group_info.index not in self._attempts:
            self._attempts[group_info.index] = template_attempts(group_info.template, self.problem)
        return self._attempts[group_info.index]

    def _existing_for(self, group_info: GroupInfo) -> list[PlannedNode]:
        """The existing nodes the group passed the static filters on, in name order."""
        found = self._existing_order.get(group_info.index)
        if found is None:
            if self._name_rank is None:
                existing = self.state.slots[: len(self.problem.existing)]
                self._name_rank = [0] * len(existing)
                last = self.problem.existing_last
                for rank, slot in enumerate(sorted(existing, key=lambda s: (s.name in last, s.name))):
                    self._name_rank[slot.index] = rank
            slots = self.state.slots
            found = self._existing_order[group_info.index] = [
                slots[i] for i in sorted(group_info.existing_ok, key=self._name_rank.__getitem__)]
        return found

    def _verdicts_for(self, group_info: GroupInfo) -> list[tuple[PoolVerdict, bool, IndexArray]]:
        """The pools the group may use (weight order): only as a last resort?, and options as rows."""
        cached = self._verdicts.get(group_info.index)
        if cached is None:
            cached = []
            for verdict in group_info.verdicts:
                if not verdict.ok or not verdict.options:
                    continue
                rows = verdict.rows_in(self.table)
                # Only PreferNoSchedule-tier options: the pool waits for the attempt that tolerates them.
                last_resort = not self.state.tier_mask(group_info)[rows].any()
                cached.append((verdict, last_resort, rows))
            self._verdicts[group_info.index] = cached
        return cached

    def _within(self, pool: str, remaining: Resources, rows: IndexArray) -> IndexArray:
        """The rows whose capacity fits the pool's limits left."""
        if self.exact_limits:
            return rows[self.table.within_rows(remaining, rows)]
        cached = self._limit_masks.get(pool)
        if cached is None or cached[0] is not remaining:
            cached = self._limit_masks[pool] = (remaining, self.table.within_rows(remaining, self.table.all))
        return rows[cached[1][rows]]

    def place(self, group_info: GroupInfo, pod: Pod) -> bool:
        state = self.state
        existing = self._existing_for(group_info)
        group = group_info.index
        first = self._existing_first.get(group, 0)
        while first < len(existing) and group in existing[first].full_for:
            first += 1  # the leading nodes found full for the group stay full (PlacementState._evaluate)
        self._existing_first[group] = first
        claims: list[PlannedNode] | None = None  # the open claims the pod may fit, in order (asked once)
        for attempt in self._attempts_for(group_info):
            for i in range(first, len(existing)):
                slot = existing[i]
                if group in slot.full_for:
                    continue
                if state.try_place(group_info, pod, slot, attempt):
                    return True
            if self._launched_slots:
                # Nodes earlier batches launched: already charged against limits, so no limit check here.
                for slot in self._screened(group_info, attempt, self._launched_slots, self._launched_names):
                    rows = state.feasible(group_info, slot, attempt, screened=True)
                    if rows is not None:
                        state.commit_rows(group_info, pod, slot, rows)
                        return True
            if claims is None:
                claims = self._order.candidates(group_info)
            for slot in self._screened(group_info, attempt, claims):
                if self._add_to_claim(group_info, pod, slot, attempt):
                    self._order.moved(slot, group_info.template.requests)
                    self._watch.placed_on(slot)
                    return True
            for verdict, last_resort, verdict_rows in self._verdicts_for(group_info):
                pool = verdict.pool
                if last_resort and not attempt.tolerate_prefer_no_schedule:
                    continue
                nodes_left = self.nodes_left[pool.name]
                if self.exact_limits and nodes_left is not None:
                    nodes_left -= self._pool_claims.get(id(pool), 0)
                if nodes_left is not None and nodes_left <= 0:
                    continue
                remaining = self.remaining[pool.name]
                if self.exact_limits and remaining is not None:
                    remaining = self._left_after_claims(pool.name, remaining, None)
                rows = verdict_rows
                if remaining is not None:
                    rows = self._within(pool.name, remaining, rows)
                if not len(rows):
                    self._note_stall(pool.name, verdict_rows)
                    continue
                slot = state.new_slot_rows(pool, rows)
                if state.try_place(group_info, pod, slot, attempt):
                    state.add_slot(slot)
                    self._opened(slot)
                    self._watch.placed_on(slot)
                    if remaining is not None and not self.exact_limits:
                        # Karpenter's subtractMax: charge the largest candidate's capacity.
                        self.remaining[pool.name] = Headroom(remaining, None).charged(
                            {k: state.capacity_max(slot, k) for k in remaining}, 0).resources
                    return True
        return False

    def _note_stall(self, pool: str, rows: IndexArray) -> None:
        """The pool's limits turned the pod away: count it as a stall when only this batch's subtractMax
        charges did (the limits left at the batch's start had an option for it)."""
        if self.exact_limits:
            return
        start = self._batch_remaining.get(pool)
        if start is not None and self.remaining[pool] is not start and len(rows[self.table.within_rows(start, rows)]):
            self.limit_stalled[pool] = self.limit_stalled.get(pool, 0) + 1

    def _screened(self, group_info: GroupInfo, attempt: Attempt, slots: list[PlannedNode],
                  by_name: dict[str, PlannedNode] | None = None) -> Iterator[PlannedNode]:
        """The new nodes of `slots` (in order) the pod may fit: those it fails on whatever their options
        (see PlacementState.feasible; a zonal spread's domains that may not take it, `spread_screen`), and
        those it found full, are skipped; with many nodes most pods pass
        over most of them. `by_name`: the same nodes by name, in order (a set difference then screens
        names). Stop iterating once a node is changed."""
        state = self.state
        group = group_info.index
        blocks = state.name_blocks(group_info.template, attempt)
        screen = state.affinity_screen(group_info.template) + state.spread_screen(group_info.template, attempt)
        if blocks and sum(map(len, blocks)) * 2 >= len(slots):
            # Most nodes are blocked: filter them in one pass.
            names = blocks[0] if len(blocks) == 1 else set().union(*blocks)
            if by_name is not None:
                slots = sorted((by_name[n] for n in by_name.keys() - names), key=_INDEX)
            else:
                slots = [s for s in slots if s.name not in names]
            blocks = []
        for slot in slots:
            if group in slot.full_for:
                continue
            if blocks:
                name = slot.name
                excluded = False
                for names in blocks:
                    if name in names:
                        excluded = True
                        break
                if excluded:
                    continue
            if screen:
                excluded = False
                for key, allowed in screen:
                    values = slot.domains.get(key)
                    if values is None:
                        values = state.domain_values(slot, key)
                    if values.isdisjoint(allowed):
                        excluded = True
                        break
                if excluded:
                    continue
            yield slot

    def _opened(self, slot: PlannedNode) -> None:
        self.claims.append(slot)
        assert slot.pool is not None
        self._pool_claims[id(slot.pool)] = self._pool_claims.get(id(slot.pool), 0) + 1
        self._order.opened(slot)

    def _smallest(self, slot: PlannedNode) -> LaunchOption:
        return self.state.smallest(slot)

    def _left_after_claims(self, pool: str, remaining: Resources, skip: PlannedNode | None,
                           decided: dict[int, LaunchOption] | None = None) -> Resources:
        """Limits left once every other claim of the pool is charged (its decided or smallest option)."""
        used = Resources()
        for claim in self.claims:
            if claim.pool is not None and claim.pool.name == pool and claim is not skip and claim.members:
                used = used + ((decided or {}).get(id(claim)) or self._smallest(claim)).capacity
        left = Headroom(remaining, None).charged(used, 0).resources
        assert left is not None
        return left

    def _add_to_claim(self, group_info: GroupInfo, pod: Pod, slot: PlannedNode, attempt: Attempt) -> bool:
        """Add the pod to an open claim the caller screened (see `place`)."""
        rows = self.state.feasible(group_info, slot, attempt, screened=True)
        if rows is None:
            return False
        if not self.exact_limits or slot.pool is None or self.remaining[slot.pool.name] is None:
            self.state.commit_rows(group_info, pod, slot, rows)
            return True
        remaining = self.remaining[slot.pool.name]
        assert remaining is not None
        left = self._left_after_claims(slot.pool.name, remaining, slot)
        rows = rows[self.table.within_rows(left, rows)]
        if not len(rows):
            return False
        self.state.commit_rows(group_info, pod, slot, rows)
        return True

    def run(self, deadline: float | None = None, max_batches: int | None = None) -> list[tuple[GroupInfo, Pod]]:
        """Provisioning batches until one places nothing (or the deadline, or `max_batches`: 1 is one
        `Scheduler.Solve`, as disruption's `SimulateScheduling`); the pods left, in queue order."""
        pods = [(group_info, pod) for group_info in self.problem.groups for pod in group_info.group.pods]
        order = self.problem.queue_rank or {id(p): i for i, (_, p) in enumerate(pods)}
        pods.sort(key=lambda gp: (-gp[1].requests.get("cpu"), -gp[1].requests.get("memory"), order[id(gp[1])]))
        rank = {id(p): i for i, (_, p) in enumerate(pods)}
        pending = pods
        while pending:
            left = self._batch(pending, deadline)
            if len(left) == len(pending):
                break  # a batch that places nothing: Karpenter would launch nothing more
            self.batches += 1
            self._launch()
            pending = left
            if self.cut_short or not pending or (max_batches is not None and self.batches >= max_batches):
                break
            # The next batch: a new scheduler over the pods still pending, in Karpenter's order.
            pending.sort(key=lambda gp: rank[id(gp[1])])
            if self._watch.needed(self.state):
                self.state = relaunch(self.problem, self.state, self.launched)
            self._start_batch()
        if self.cut_short:
            self.undecided = frozenset(pod.key for group_info, pod in pending if self._could_go_somewhere(group_info))
        return pending

    def _could_go_somewhere(self, group_info: GroupInfo) -> bool:
        """Could some node take a pod of the group, before any other pod is counted? A pod no existing node
        and no NodePool can take is unschedulable however long the simulation runs."""
        return bool(group_info.existing_ok) or bool(self._verdicts_for(group_info))

    def _batch(self, pods: list[tuple[GroupInfo, Pod]], deadline: float | None) -> list[tuple[GroupInfo, Pod]]:
        """One provisioning batch (`Scheduler.Solve`): the pods it could not place, in queue order."""
        queue = deque(pods)
        pushed_at: dict[int, int] = {}
        total = self.problem.pending_count
        while queue:
            group_info, pod = queue[0]
            if pushed_at.get(id(pod)) == len(queue):
                break  # a full pass without progress
            queue.popleft()
            if deadline is not None and time.monotonic() > deadline:
                queue.appendleft((group_info, pod))
                self.cut_short = True
                break
            if self.place(group_info, pod):
                self._placed += 1
                pushed_at.clear()
                if self.progress is not None and self._placed % 500 == 0:
                    self.progress(self._placed, total)
            else:
                queue.append((group_info, pod))
                pushed_at[id(pod)] = len(queue)
        return list(queue)

    def _launch(self) -> None:
        """Launch the batch's claims (each as its `_launch_choice`) and charge their pools' limits."""
        chosen: dict[int, LaunchOption] = {}
        for slot in self.claims:
            if slot.members:
                chosen[id(slot)] = self._launch_choice(slot, chosen)
        for slot in self.claims:
            if not slot.members:
                continue
            option = chosen[id(slot)]
            slot.narrow(self.table.indices([option]))
            self.launched.append(Launched(slot, option, self.batches))
            self.ledger.charge(option)

    def _launch_choice(self, slot: PlannedNode, decided: dict[int, LaunchOption]) -> LaunchOption:
        """The cheapest option still open (the fake provider's and CreateFleet's choice).

        With exact limits, a claim whose cheapest option would overrun its pool's limits launches its
        smallest option instead, which the run kept within them.
        """
        cheapest = self.state.cheapest(slot)
        if not self.exact_limits or slot.pool is None:
            return cheapest
        remaining = self.remaining[slot.pool.name]
        if remaining is None:
            return cheapest
        left = self._left_after_claims(slot.pool.name, remaining, slot, decided)
        return cheapest if capacity_fits(cheapest.capacity, left) else self._smallest(slot)

    def solution(self, unplaced: list[tuple[GroupInfo, Pod]], seconds: float) -> Solution:
        nodes: list[SolvedNode] = []
        for slot in self.state.slots[: len(self.problem.existing)]:
            nodes.append(SolvedNode(slot.name, slot.existing, None, list(slot.members)))
        for ordinal, item in enumerate(self.launched, start=1):
            nodes.append(SolvedNode(node_name(item.option, ordinal), None, item.option, list(item.slot.members)))
        over = any(left is not None and self.ledger.launched(pool.name) > left
                   for pool in self.problem.pools for left in (self.problem.headroom[pool.name].nodes,))
        notes: list[str] = []
        if over:
            notes.append("Karpenter checks limits.nodes only against nodes that existed when a provisioning batch "
                         "started; this plan launches past it, as Karpenter would")
        if self.undecided:
            notes.append(cut_note(len(self.undecided), self._placed, self.problem.pending_count))
        stalled = self.limit_stalled and self.batches > 1
        return Solution("karpenter", nodes, unplaced, "heuristic", None, seconds, notes, over, batches=self.batches,
                        not_simulated=self.undecided,
                        batch_note=limit_stall_note(self.problem, sorted(self.limit_stalled), self.batches)
                        if stalled else None)


NOT_SIMULATED_REASON = "not simulated: the time limit ran out"


def limit_stall_note(problem: Problem, pools: Sequence[str], batches: int) -> str:
    """Why Karpenter needs several batches: within a batch each new NodeClaim is charged against its
    NodePool's limits at the largest instance type it could still become (`subtractMax`), so a pool whose
    limits are far above the plan still stops opening NodeClaims after a few; the pods left wait for the
    launched nodes and go to new nodes of the next batch, beside half-empty ones."""
    limits = {pool.name: full_limits(pool).resources for pool in problem.pools}
    named = []
    for name in pools:
        pool_limits = limits.get(name)
        shown = ", ".join(f"{k} {v}" for k, v in sorted(pool_limits.formatted().items())) if pool_limits else ""
        named.append(f"{name} (limits {shown})" if shown else name)
    which = "NodePool " + named[0] if len(named) == 1 else "NodePools " + ", ".join(named)
    return (f"Karpenter needs {batches} provisioning batches here: within a batch it charges each new NodeClaim "
            f"against {which} at the largest instance type the NodeClaim could still become (subtractMax), so a "
            "batch stops opening NodeClaims before the limits are used; the pods left wait for the next batch "
            "and land on new nodes beside half-filled ones. Raising the limits far above what the pool runs, or "
            "removing them, lets one batch pack them")


def cut_note(left: int, placed: int, total: int) -> str:
    """The plan's warning when the time limit cut the Karpenter simulation."""
    return (f"{NOT_SIMULATED_REASON} after the Karpenter simulation had placed {placed:,} of {total:,} pending "
            f"pods: {left:,} pod(s) were never simulated, so they are listed as not simulated, not as "
            "unschedulable; a longer --time-limit lets it finish")


def solve_karpenter(problem: Problem, time_limit: float | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    exact_limits: bool = False, max_batches: int | None = None) -> tuple[Solution, PlacementState]:
    start = time.monotonic()
    sim = KarpenterSimulation(problem, progress, exact_limits)
    deadline = start + time_limit if time_limit else None
    unplaced = sim.run(deadline, max_batches)
    return sim.solution(unplaced, time.monotonic() - start), sim.state
