"""What happens between Karpenter's provisioning batches (`provisioner.go`, `scheduling/scheduler.go`).

A batch ends with NodeClaims, each holding a set of instance types (and zones, capacity types) that fit
its pods. The cloud provider launches each one: EC2 Fleet's lowest-price allocation, the cheapest option
left, which holds every pod of the claim since options only survive while they do. The next batch
starts from a new scheduler (`NewScheduler`): NodePool limits are the spec's limits minus the capacity
of every node the pool owns (`updateRemainingResources`: the launched nodes' real capacity, and one
`nodes` each), and the launched nodes are state nodes (in-flight, uninitialised) that pods of the batch
are tried on after the initialised ones, before any new NodeClaim.

Here a launched node keeps its pods (kube-scheduler binds them once it is ready) and becomes a planned
node with a single launch option: its zone and every label are decided, so the next batch's placement
state is rebuilt with topology counts as Karpenter's next scheduler would count them (`relaunch`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from karpplan.constraints.pool_headroom import Headroom
from karpplan.model.labels import HOSTNAME
from karpplan.model.resources import Resources
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.nodeclaim import PlannedNode
from karpplan.scheduling.problem import Problem
from karpplan.scheduling.state import PlacementState

_NO_ROWS = np.zeros(0, dtype=np.intp)


@dataclass
class Launched:
    """A NodeClaim an earlier batch launched: its node in the current placement state and its option."""

    slot: PlannedNode
    option: LaunchOption
    batch: int  # 1 for the first provisioning batch


class PoolLedger:
    """Each NodePool's limits left once its launched nodes are charged with their real capacity.

    `problem.headroom` already holds the limits less the nodes the pool owned before planning; this adds
    the nodes the simulation launched, one `nodes` each (Karpenter: `StateNode.Capacity` counts 1 node).
    """

    def __init__(self, problem: Problem) -> None:
        self._base = problem.headroom
        self._used: dict[str, Resources] = {}
        self._count: dict[str, int] = {}

    def charge(self, option: LaunchOption) -> None:
        name = option.pool.name
        self._used[name] = self._used.get(name, Resources()) + option.capacity
        self._count[name] = self._count.get(name, 0) + 1

    def headroom(self, pool: str) -> Headroom:
        return self._base[pool].charged(self._used.get(pool, Resources()), self._count.get(pool, 0))

    def remaining(self, pool: str) -> Resources | None:
        return self.headroom(pool).resources

    def nodes_left(self, pool: str) -> int | None:
        return self.headroom(pool).nodes

    def launched(self, pool: str) -> int:
        return self._count.get(pool, 0)


class RecountWatch:
    """Does the next batch need its topology counts recorded again (`relaunch`)?

    Only when a pod was counted on a claim whose domain was still open on a key some topology rule
    uses (or where a spread rule counts only some of a claim's options): there the launched node
    counts it differently. A claim collapsed to one zone (a zone spread does that at its first pod) or
    rules on hostnames only leave the counts as they are, and the state goes on as it is.
    """

    def __init__(self, problem: Problem) -> None:
        topo = problem.topology
        keys = {r.key for rules in topo.spread.values() for r in rules}
        rules = [*topo.affinity.values(), *topo.anti_affinity.values(),
                 *(r for rs in topo.preferred_affinity.values() for r in rs),
                 *(r for rs in topo.preferred_anti.values() for r in rs)]
        for rule in rules:
            keys |= {t.key for t in rule.terms}
        keys |= {t.key for t, _ in topo.existing_anti}
        keys.discard(HOSTNAME)
        self._keys = sorted(keys)
        self._problem = problem
        self._partial: bool | None = None
        self.dirty = False

    def placed_on(self, slot: PlannedNode) -> None:
        """A pod was counted on this new node, with the domains its options leave open."""
        if self.dirty:
            return
        for key in self._keys:
            values, missing = slot.present(key)
            if len(values) > 1 or (missing and values):
                self.dirty = True
                return

    def needed(self, state: PlacementState) -> bool:
        if self._partial is None:
            masks = state.masks
            self._partial = any(not masks.mask_everywhere(masks.rule_mask_id(r))
                                for rules in self._problem.topology.spread.values() for r in rules)
        return self.dirty or self._partial


def relaunch(problem: Problem, old: PlacementState, launched: list[Launched]) -> PlacementState:
    """A placement state for the next batch: the existing nodes with the pods placed on them, and each
    launched node narrowed to its option with its pods, counted where the node really is.

    Counts are recorded again from scratch: during the batch a claim whose zone was still open counted
    its pods in no zone for spreads and affinity and in every possible zone for anti-affinity
    (Karpenter's `Record`); the launched node counts them in its own zone only. Each `Launched.slot` is
    replaced by its node in the new state.
    """
    state = PlacementState(problem)
    state.claims_created = old.claims_created  # claim names stay unique: they are hostname domains
    existing = len(problem.existing)
    for before, after in zip(old.slots[:existing], state.slots, strict=True):
        for group_info, pod in before.members:
            state.commit_rows(group_info, pod, after, _NO_ROWS)
    for item in launched:
        slot = PlannedNode(len(state.slots), item.slot.name, pool=item.option.pool, table=state.table)
        rows = state.table.indices([item.option])
        slot.narrow(rows)
        state.add_slot(slot)
        for group_info, pod in item.slot.members:
            state.commit_rows(group_info, pod, slot, rows)
        item.slot = slot
    return state
