"""The open NodeClaims of a Karpenter provisioning batch, in the order a pod tries them (fewest pods first,
then creation order: Karpenter's stable sort of `newNodeClaims`), screened by what could take the pod.

With thousands of claims open, most pods fit few of them: a claim whose options all lack the room for a
pod's requests, or whose NodePool offers the pod's group no option, fails `PlacementState.feasible`
whatever else holds. The screen finds those claims with array arithmetic instead of evaluating each:

- per claim and resource, an upper bound of the room its best option has left: the most free room among
  its options when it opened, less every request added since (options only narrow, so the bound holds);
- per claim, its NodePool, against the pools of the options the pod's group may use.

The screen only skips claims `feasible` would reject, so the claims tried, their order, and every
placement are those of trying them all. It is off when some request is negative (then a node does not
only fill up, and the bound does not hold).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from karpplan.model.pools import NodePool
from karpplan.model.resources import Resources
from karpplan.scheduling.candidates import OptionTable
from karpplan.scheduling.nodeclaim import PlannedNode
from karpplan.scheduling.problem import GroupInfo

_GROW = 256


class ClaimOrder:
    """A batch's open claims: their try order, and a screen by resources and pool (see the module)."""

    def __init__(self, table: OptionTable, groups: Sequence[GroupInfo], pools: Sequence[NodePool],
                 screen: bool) -> None:
        self.table = table
        self.claims: list[PlannedNode] = []  # in creation order (a claim's rank is its position)
        self._rank: dict[int, int] = {}  # id(claim) -> rank
        self._screen = screen
        self._pool_index = {id(pool): i for i, pool in enumerate(pools)}
        # The resources screened: those some group requests, with exact (int64) free-room columns.
        keys = sorted({key for g in groups for key, value in g.template.requests.items() if value > 0})
        self.keys = [key for key in keys if table.column("free", key).dtype == np.int64]
        self._members = np.zeros(_GROW, dtype=np.int64)
        self._pool = np.zeros(_GROW, dtype=np.intp)
        self._room = np.zeros((len(self.keys), _GROW), dtype=np.int64)
        self._requests: dict[int, tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]] = {}
        self._pools_of: dict[frozenset[int], npt.NDArray[np.bool_]] = {}
        self._row_pool: npt.NDArray[np.intp] | None = None  # per table row, its pool's index

    def __len__(self) -> int:
        return len(self.claims)

    def opened(self, slot: PlannedNode) -> None:
        """A new claim, holding its first pod."""
        rank = len(self.claims)
        if rank == len(self._members):
            self._members = np.concatenate([self._members, np.zeros(rank, dtype=np.int64)])
            self._pool = np.concatenate([self._pool, np.zeros(rank, dtype=np.intp)])
            self._room = np.concatenate([self._room, np.zeros((len(self.keys), rank), dtype=np.int64)], axis=1)
        self.claims.append(slot)
        self._rank[id(slot)] = rank
        self._members[rank] = len(slot.members)
        assert slot.pool is not None
        self._pool[rank] = self._pool_index[id(slot.pool)]
        rows = slot.rows()
        for k, key in enumerate(self.keys):
            most = int(self.table.column("free", key)[rows].max()) if len(rows) else 0
            self._room[k, rank] = most - slot.requests.get(key)

    def moved(self, slot: PlannedNode, requests: Resources) -> None:
        """A claim gained a pod with these requests."""
        rank = self._rank[id(slot)]
        self._members[rank] = len(slot.members)
        for k, key in enumerate(self.keys):
            self._room[k, rank] -= requests.get(key)

    def candidates(self, group_info: GroupInfo) -> list[PlannedNode]:
        """The claims a pod of the group may fit, in the order it tries them."""
        n = len(self.claims)
        if not n:
            return []
        if not self._screen:
            ranks = np.arange(n)
        else:
            keys, amounts = self._requests_of(group_info)
            ok = self._pools_for(group_info)[self._pool[:n]]
            if len(keys):
                ok &= (self._room[keys, :n] >= amounts[:, None]).all(axis=0)
            ranks = np.flatnonzero(ok)
            if not len(ranks):
                return []
        members = self._members[ranks]
        ranks = ranks[np.argsort(members, kind="stable")]  # fewest pods, then creation order
        claims = self.claims
        return [claims[r] for r in ranks.tolist()]

    def _requests_of(self, group_info: GroupInfo) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
        hit = self._requests.get(group_info.index)
        if hit is None:
            requests = group_info.template.requests
            screened = [(k, requests.get(key)) for k, key in enumerate(self.keys) if requests.get(key) > 0]
            hit = self._requests[group_info.index] = (np.array([k for k, _ in screened], dtype=np.intp),
                                                      np.array([v for _, v in screened], dtype=np.int64))
        return hit

    def _pools_for(self, group_info: GroupInfo) -> npt.NDArray[np.bool_]:
        """Per pool: may the group use some option of it (a claim of another pool has none for it)?"""
        hit = self._pools_of.get(group_info.option_ids)  # groups of the same options share the set
        if hit is None:
            if self._row_pool is None:
                self._row_pool = np.fromiter((self._pool_index[id(o.pool)] for o in self.table.options),
                                             dtype=np.intp, count=self.table.size)
            hit = np.zeros(len(self._pool_index), dtype=np.bool_)
            hit[self._row_pool[self.table.rows_of(group_info.option_ids)]] = True
            self._pools_of[group_info.option_ids] = hit
        return hit
