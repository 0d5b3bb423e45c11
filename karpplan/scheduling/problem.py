"""The scheduling problem: pending pod groups, existing nodes, launch options, topology, static verdicts.

Built once from the inventory and the catalog (`build_problem.py`); both engines, the constraint kinds and
the explanations read it and nothing here changes while solving.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from karpplan.catalog.types import Catalog
from karpplan.constraints.pool_headroom import Headroom
from karpplan.model.inventory import Inventory
from karpplan.model.pods import PodGroup, PodTemplate
from karpplan.model.pools import NodePool
from karpplan.scheduling.by_owner import ByOwner
from karpplan.scheduling.candidates import (
    LaunchOption,
    PoolVerdict,
)
from karpplan.scheduling.existing_nodes import ExistingNodeInfo
from karpplan.scheduling.static_pools import StaticPool
from karpplan.scheduling.topology import Topology

if TYPE_CHECKING:
    pass

PREFER_NO_SCHEDULE_TIER = 100


@dataclass
class GroupInfo:
    """A pending pod group and what it may use."""

    index: int
    group: PodGroup
    existing_ok: list[int]  # indices into Problem.existing passing static filters
    existing_reasons: dict[str, list[str]]  # node name -> static failures
    verdicts: list[PoolVerdict]  # per pool, in weight order
    # What the group may use. Groups that may use the same pools' same options share these objects (and
    # their allowed verdicts), so they are read-only: thousands of options, thousands of groups.
    options: Sequence[LaunchOption]  # launch options the group may use
    tier: Mapping[int, int] = field(default_factory=dict)  # option index -> pool preference tier (0 = best)
    option_ids: frozenset[int] = frozenset()  # indices of `options`

    @property
    def template(self) -> PodTemplate:
        return self.group.template

    @property
    def size(self) -> int:
        return self.group.size


@dataclass
class Problem:
    inventory: Inventory
    catalog: Catalog
    pools: list[NodePool]
    groups: list[GroupInfo]
    existing: list[ExistingNodeInfo]
    options: list[LaunchOption]
    headroom: dict[str, Headroom]  # per pool: what its limits leave after the nodes it owns
    topology: Topology
    namespace_labels: Mapping[str, Mapping[str, str]]
    # Static NodePools and the nodes Karpenter launches for them, which are among `existing` (after the
    # input's nodes): they are there whatever is pending, so pods may use them like any node.
    static: list[StaticPool] = field(default_factory=list)
    # id(pod) -> its rank among pods of equal requests in the queue; None: the groups' order, then each
    # group's pods in order (a caller whose groups fold pods it listed interleaved keeps its own order).
    queue_rank: Mapping[int, int] | None = None
    # existing nodes tried after the others (Karpenter's `sortExistingNodes`: initialized nodes first)
    existing_last: frozenset[str] = frozenset()

    def __getstate__(self) -> dict[str, object]:
        """As pickled: `queue_rank`, keyed by id(pod), kept with its pods (those of the groups) so that the loaded
        copy finds them again (`by_owner.py`); the topology's maps are `ByOwner`s already."""
        state = dict(self.__dict__)
        rank = self.queue_rank
        if rank is not None and not isinstance(rank, ByOwner):
            pods = {id(p): p for g in self.groups for p in g.group.pods}
            state["queue_rank"] = ByOwner((pods[k], v) for k, v in rank.items() if k in pods)
        return state

    @property
    def pending_count(self) -> int:
        return sum(g.size for g in self.groups)
