"""Nodes being packed (bins) and the steps every packing shares: adding a pod under the hostname rules,
first fit, round robin, placing the pods that carry hostname rules, and launching the cheapest option."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from karpplan.engines.repack.bucket import BoolArray, BucketShape, IntArray
from karpplan.engines.repack.rules import Rulebook
from karpplan.engines.result import SolvedNode
from karpplan.model.pods import HostPort, Pod
from karpplan.scheduling.problem import GroupInfo

Member = tuple[GroupInfo, Pod]
MaskedPod = tuple[GroupInfo, Pod, BoolArray]  # a pod and the bucket's options it may take


@dataclass
class Bin:
    used: IntArray
    allowed: BoolArray
    members: list[Member] = field(default_factory=list)
    spread_count: Counter[int] = field(default_factory=Counter)
    spread_owned: set[int] = field(default_factory=set)
    anti_count: Counter[int] = field(default_factory=Counter)
    anti_owned: set[int] = field(default_factory=set)
    ports: list[HostPort] = field(default_factory=list)
    choice: int = -1  # index of the cheapest bucket option holding the bin

    def copy(self) -> Bin:
        """The same node with its own counts (packings that start from the same owner nodes each grow a copy)."""
        return Bin(self.used.copy(), self.allowed.copy(), list(self.members), Counter(self.spread_count),
                   set(self.spread_owned), Counter(self.anti_count), set(self.anti_owned), list(self.ports), self.choice)


class BinFiller:
    """Puts pods into bins, keeping each bin's requests, allowed options and hostname-rule counts."""

    def __init__(self, rules: Rulebook, requests: dict[int, IntArray], dims: Sequence[str]) -> None:
        self.rules = rules
        self.requests = requests
        self.dims = dims

    def new_bin(self, allowed: BoolArray) -> Bin:
        return Bin(np.zeros(len(self.dims), dtype=np.int64), allowed)

    def add(self, b: Bin, group_info: GroupInfo, pod: Pod, mask: BoolArray) -> None:
        b.used = b.used + self.requests[group_info.index]
        b.allowed = b.allowed & mask
        b.members.append((group_info, pod))
        self.rules.record(b, self.rules.by_group[group_info.index])

    def owner_bins(self, bucket: BucketShape, pods: Sequence[MaskedPod], spread: bool = False
                   ) -> tuple[list[Bin], list[MaskedPod]]:
        """Pods carrying hostname rules placed first fit decreasing; the other pods returned, largest first.

        With `spread`, only owners of hostname anti-affinity go first fit; the other owners are dealt
        round the nodes those opened. Packed densely, owners of several hostname spread rules would
        fill a node that no pod their selectors match may then join, so it could hold nothing else.
        """
        constrained = [p for p in pods if self.rules.by_group[p[0].index].owner]
        free = [p for p in pods if not self.rules.by_group[p[0].index].owner]
        size = self.size_key(bucket)
        constrained.sort(key=lambda p: (-len(self.rules.by_group[p[0].index].anti_owned)
                                        - len(self.rules.by_group[p[0].index].spread_owned), size(p[0])))
        free.sort(key=lambda p: size(p[0]))
        bins: list[Bin] = []
        if spread:
            cliques = [p for p in constrained if self.rules.by_group[p[0].index].anti_owned]
            self.first_fit(bucket, bins, cliques)
            self.round_robin(bucket, bins, [p for p in constrained if not self.rules.by_group[p[0].index].anti_owned])
        else:
            self.first_fit(bucket, bins, constrained)
        return bins, free

    def first_fit(self, bucket: BucketShape, bins: list[Bin], pods: Iterable[MaskedPod]) -> None:
        # Rejections are monotone (nodes only fill up), so each (group, mask) keeps a cursor.
        cursor: dict[tuple[int, int], int] = {}
        for group_info, pod, mask in pods:
            rules = self.rules.by_group[group_info.index]
            ck = (group_info.index, id(mask))
            i = cursor.get(ck, 0)
            req = self.requests[group_info.index]
            while i < len(bins):
                b = bins[i]
                if self.rules.accepts(b, rules):
                    allowed = b.allowed & mask
                    if allowed.any() and bucket.cheapest(b.used + req, allowed) >= 0:
                        break
                i += 1
            cursor[ck] = i
            if i == len(bins):
                bins.append(self.new_bin(np.ones(len(bucket.options), dtype=np.bool_)))
            self.add(bins[i], group_info, pod, mask)

    def round_robin(self, bucket: BucketShape, bins: list[Bin], pods: Iterable[MaskedPod]) -> None:
        """Each pod into the next node (after the last one used, wrapping round) that takes it, or a new one."""
        start = 0
        for group_info, pod, mask in pods:
            rules = self.rules.by_group[group_info.index]
            req = self.requests[group_info.index]
            chosen = -1
            for step in range(len(bins)):
                i = (start + step) % len(bins)
                b = bins[i]
                if self.rules.accepts(b, rules):
                    allowed = b.allowed & mask
                    if allowed.any() and bucket.cheapest(b.used + req, allowed) >= 0:
                        chosen = i
                        break
            if chosen < 0:
                bins.append(self.new_bin(np.ones(len(bucket.options), dtype=np.bool_)))
                chosen = len(bins) - 1
            self.add(bins[chosen], group_info, pod, mask)
            start = chosen + 1

    def size_key(self, bucket: BucketShape) -> Callable[[GroupInfo], tuple[float, int]]:
        """Sort key: larger pods first, size measured in the bucket's price per unit of each dimension."""
        scale = np.zeros(len(self.dims), dtype=np.float64)
        for j in range(len(self.dims)):
            col = bucket.free[:, j]
            usable = col > 0
            if usable.any():
                scale[j] = float(np.min(bucket.price[usable] / col[usable]))

        def key(group_info: GroupInfo) -> tuple[float, int]:
            return (-float(np.max(self.requests[group_info.index] * scale)), group_info.index)

        return key

    @staticmethod
    def launch(bucket: BucketShape, bins: Iterable[Bin]) -> list[SolvedNode] | None:
        """Every bin as the cheapest option that holds it (the decision Karpenter makes at launch)."""
        out: list[SolvedNode] = []
        for b in bins:
            choice = bucket.cheapest(b.used, b.allowed)
            if choice < 0:
                return None
            out.append(SolvedNode("", None, bucket.options[choice], list(b.members)))
        return out
