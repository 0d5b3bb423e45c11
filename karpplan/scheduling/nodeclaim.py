"""A node of the plan (Karpenter's `nodeclaim.go` and `existingnode.go`): an existing node, or a new node
being built that keeps a *set* of possible launch options (instance types, zones, capacity types of one
pool), narrowed as pods join; the cheapest survivor is launched at the end.

Internally a new node's options are an ascending array of rows of the problem's `OptionTable`, so
narrowing is a vectorised mask; `PlannedNode.options` gives them as `LaunchOption`s, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import HostPort, Pod
from karpplan.model.pools import NodePool
from karpplan.model.resources import EMPTY, Resources
from karpplan.scheduling.candidates import BoolArray, IndexArray, LaunchOption, OptionTable
from karpplan.scheduling.existing_nodes import ExistingNodeInfo
from karpplan.scheduling.option_masks import OptionMasks
from karpplan.scheduling.preferences import Attempt
from karpplan.scheduling.problem import GroupInfo


class PlannedNode:
    """A node of the plan: an existing node, or a new node with its remaining launch options."""

    def __init__(self, index: int, name: str, existing: ExistingNodeInfo | None = None,
                 pool: NodePool | None = None, options: list[LaunchOption] | None = None,
                 requests: Resources = EMPTY, members: list[tuple[GroupInfo, Pod]] | None = None,
                 host_ports: list[HostPort] | None = None, table: OptionTable | None = None) -> None:
        self.index = index
        self.name = name
        self.existing = existing
        self.pool = pool
        self.requests = requests
        self.members: list[tuple[GroupInfo, Pod]] = [] if members is None else members
        self.host_ports: list[HostPort] = [] if host_ports is None else host_ports
        self._list: list[LaunchOption] | None = [] if options is None else options
        self._table = table
        self._rows: IndexArray | None = None
        self._caches()

    def _caches(self) -> None:
        # Facts about the current options, dropped when they change.
        self.domains: dict[str, set[str]] = {}  # key -> domain values of the current options (new node)
        self._missing: dict[str, bool] = {}  # key -> some option lacks it
        self._free: dict[str, npt.NDArray[Any]] = {}  # resource -> free room per option
        self._most: dict[str, int] = {}  # resource -> most free room of an option
        self._least: dict[str, int] = {}  # resource -> least free room of an option
        self.domain_codes: dict[int, list[int]] = {}  # spread rule uid -> codes of its eligible domains
        self.counts: dict[int, bool] = {}  # rule mask id -> some current option is an eligible domain
        self._smallest: LaunchOption | None = None
        # Groups that found no option with room here: final, as a node only fills up and narrows.
        self.full_for: set[int] = set()
        # Per resource, at least the most any option has left (max free minus requests; an upper bound).
        self.headroom: dict[str, int] = {}

    @property
    def table(self) -> OptionTable:
        assert self._table is not None
        return self._table

    @property
    def options(self) -> list[LaunchOption]:
        if self._list is None:
            assert self._table is not None and self._rows is not None
            self._list = self._table.rows(self._rows)
        return self._list

    @options.setter
    def options(self, options: list[LaunchOption]) -> None:
        self._list = options
        self._rows = None
        self._caches()

    def narrow(self, rows: IndexArray) -> None:
        """Keep only these rows (a subset of the current ones)."""
        full_for, headroom = self.full_for, self.headroom
        self._rows = rows
        self._list = None
        self._caches()
        self.full_for, self.headroom = full_for, headroom

    def is_current(self, rows: IndexArray) -> bool:
        """Are these rows the node's current ones (the very array, so caches of them apply)?"""
        return rows is self._rows

    @property
    def new(self) -> bool:
        return self.existing is None

    def values(self, key: str, options: Sequence[LaunchOption] | None = None) -> set[str]:
        """The domain values this node may have for a key (one for existing nodes)."""
        if self.existing is not None:
            value = self.existing.node.domain(key)
            return set() if value is None else {value}
        if key == HOSTNAME:
            return {self.name}
        opts = self.options if options is None else options
        return {v for o in opts if (v := o.labels.get(key)) is not None}

    def __repr__(self) -> str:
        return f"PlannedNode({self.index}, {self.name!r}, members={len(self.members)})"

    # ------------------------------------------------------------------------------ options as rows
    def rows(self) -> IndexArray:
        """A new node's options as table rows."""
        if self._rows is None:
            self._rows = self.table.indices(self.options)
        return self._rows

    def smallest(self) -> LaunchOption:
        """The option with the least capacity (cpu, memory, then price; first in order on ties)."""
        if self._smallest is None:
            rows = self.rows()
            self._smallest = self.table.options[int(rows[np.argmin(self.table.rank("smallest")[rows])])]
        return self._smallest

    def cheapest(self) -> LaunchOption:
        """The option with the lowest price (then type, zone, capacity type; first in order on ties)."""
        rows = self.rows()
        return self.table.options[int(rows[np.argmin(self.table.rank("cheapest")[rows])])]

    def capacity_max(self, key: str) -> int:
        """The largest limit capacity of `key` among the node's options."""
        rows = self.rows()
        return int(self.table.column("capacity", key)[rows].max()) if len(rows) else 0

    def values_in(self, key: str, rows: IndexArray | None = None) -> set[str]:
        """`values(key)` for the current options (rows None) or for these rows."""
        if self.existing is not None or key == HOSTNAME:
            return self.values(key)
        return self.present(key, rows)[0]

    def domain_values(self, key: str) -> set[str]:
        """The domain values the node may have for a key (cached for a new node's current options)."""
        cached = self.domains.get(key)
        return cached if cached is not None else self.values_in(key)

    def present(self, key: str, rows: IndexArray | None = None) -> tuple[set[str], bool]:
        """A new node's values of a (non-hostname) key among its options (rows None) or these rows, and
        whether some option lacks the key."""
        own = rows is None or rows is self._rows
        if own:
            values = self.domains.get(key)
            if values is not None:
                return values, self._missing[key]
            rows = self.rows()
        assert rows is not None
        if len(rows):
            codes, names, _ = self.table.labels(key)
            seen = np.bincount(codes[rows] + 1)
            values, missing = {names[int(c)] for c in np.flatnonzero(seen[1:])}, bool(seen[0])
        else:
            values, missing = set(), False
        if own:
            self.domains[key], self._missing[key] = values, missing
        return values, missing

    # ------------------------------------------------------------------------------ resources
    def room(self, group_info: GroupInfo, attempt: Attempt, masks: OptionMasks, monotone: bool) -> IndexArray | None:
        """The new node's options the group may use that still have room for one more pod of it
        (`monotone`: slots only fill up, so a resource failure is final)."""
        if group_info.index in self.full_for:
            return None
        rows = self.rows()
        requests = group_info.template.requests
        used = self.requests
        headroom = self.headroom
        for key, value in requests.items():
            if value > 0:
                room = headroom.get(key)
                if room is None:
                    room = headroom[key] = self._extreme(key, True) - used.get(key)
                if value > room and value + used.get(key) > 0:  # as `fits`: no option has room
                    if monotone:
                        self.full_for.add(group_info.index)
                    return None
        # `Resources.fits_in` of requests plus the pod's, per option; skipped for resources every
        # option has room for (the least free one does).
        mask: BoolArray | None = None
        for key in _union_keys(used, requests):
            total = used.get(key) + requests.get(key)
            if total <= 0 or total <= self._extreme(key, False):
                continue
            fits = self._free_column(key) >= total
            mask = fits if mask is None else mask & fits
        if not masks.group_everywhere(group_info):
            usable = masks.group_mask(group_info)[rows]
            mask = usable if mask is None else mask & usable
        if mask is not None and not mask.any():
            if monotone:
                self.full_for.add(group_info.index)
            return None
        if not attempt.tolerate_prefer_no_schedule and not masks.tier_everywhere(group_info):
            preferred = masks.tier_mask(group_info)[rows]
            mask = preferred if mask is None else mask & preferred
        if attempt.node_preference is not None:
            matching = self.table.term_mask(attempt.node_preference.term)[rows]
            mask = matching if mask is None else mask & matching
        if attempt.node_term is not None:  # the group's rows allow every term: keep this attempt's
            matching = self.table.term_mask(attempt.node_term)[rows]
            mask = matching if mask is None else mask & matching
        if mask is None:
            return rows
        if not mask.any():
            return None
        return rows if mask.all() else rows[mask]

    def _free_column(self, key: str) -> npt.NDArray[Any]:
        """The free room of `key` per option of the node (cached while its options stay)."""
        col = self._free.get(key)
        if col is None:
            col = self._free[key] = self.table.column("free", key)[self.rows()]
        return col

    def _extreme(self, key: str, most: bool) -> int:
        """The most (or least) free room of `key` among the node's options (0 without options)."""
        cache = self._most if most else self._least
        hit = cache.get(key)
        if hit is None:
            col = self._free_column(key)
            hit = cache[key] = (int(col.max()) if most else int(col.min())) if len(col) else 0
        return hit


def _union_keys(a: Resources, b: Resources) -> Iterable[str]:
    return b if all(k in b for k in a) else {*a, *b}
