"""The grown-owners packing of a bucket: the nodes hostname rules force are grown to carry a share of
the other pods, each filled by dot product; what is left goes to nodes of the most cost-efficient option."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from karpplan.engines.repack.bins import Bin, BinFiller, MaskedPod
from karpplan.engines.repack.bucket import BoolArray, BucketShape, IntArray
from karpplan.engines.repack.rules import Rulebook
from karpplan.engines.result import SolvedNode
from karpplan.model.pods import Pod
from karpplan.scheduling.problem import GroupInfo


class PodKinds:
    """Unplaced pods of one bucket by (group, option mask), as arrays for vectorised choice."""

    def __init__(self, pods: Sequence[MaskedPod], requests: dict[int, IntArray],
                 bucket: BucketShape, rulebook: Rulebook) -> None:
        index: dict[tuple[int, int], int] = {}
        self.keys: list[tuple[GroupInfo, BoolArray]] = []
        self.pods: list[list[MaskedPod]] = []
        for p in pods:  # largest first: kind order and pod order within a kind follow it
            key = (p[0].index, id(p[2]))
            if key not in index:
                index[key] = len(self.keys)
                self.keys.append((p[0], p[2]))
                self.pods.append([])
            self.pods[index[key]].append(p)
        for members in self.pods:
            members.reverse()  # taken from the end
        dims = len(bucket.free[0]) if len(bucket.free) else 0
        self.req = np.array([requests[group_info.index] for group_info, _ in self.keys], dtype=np.int64).reshape(len(self.keys), dims)
        self.count = np.array([len(m) for m in self.pods], dtype=np.int64)
        self.mask = np.array([m for _, m in self.keys], dtype=np.bool_).reshape(len(self.keys), len(bucket.options))
        self.rules = [rulebook.by_group[group_info.index] for group_info, _ in self.keys]

    def left(self) -> bool:
        return bool(self.count.sum() > 0)

    def first(self) -> int:
        """The kind of the largest pod left."""
        return int(np.argmax(self.count > 0))

    def remaining_demand(self, mask: BoolArray | None = None) -> npt.NDArray[np.float64]:
        weights = self.count if mask is None else self.count * np.all(self.mask == mask, axis=1)
        return weights.astype(np.float64) @ self.req.astype(np.float64)

    def take(self, k: int) -> tuple[GroupInfo, Pod, BoolArray]:
        self.count[k] -= 1
        return self.pods[k].pop()


def pack_grown(filler: BinFiller, bucket: BucketShape, pods: Sequence[MaskedPod],
               share: float = 1.0, owners: tuple[list[Bin], list[MaskedPod]] | None = None) -> list[SolvedNode] | None:
    """Owner nodes grown to share the other pods, then bulk nodes; each node filled by dot product.

    The nodes hostname rules force are paid for anyway, so the other pods ride on them first: each
    owner node in turn is sized for its owners plus `share` times an even share of the pods still
    unplaced (the cheapest option that holds that much) and filled to that option's room, always taking the pod
    whose request vector best matches the room left (the dot-product rule of vector bin packing, so
    CPU and memory run out together). What is left goes to nodes of the most cost-efficient option.
    `owners`: `filler.owner_bins(bucket, pods, spread=True)` computed already (its nodes are copied, never
    changed): the packings of several shares place the owners once.
    """
    if owners is None:
        owners = filler.owner_bins(bucket, pods, spread=True)
    bins, free = [b.copy() for b in owners[0]], owners[1]
    kinds = PodKinds(free, filler.requests, bucket, filler.rules)
    for i, b in enumerate(bins):
        even = kinds.remaining_demand() / float(len(bins) - i)
        target = _target_option(bucket, b, b.used.astype(np.float64) + share * even)
        if target >= 0:
            _fill_dot(filler, bucket, b, target, kinds)
    while kinds.left():
        k = kinds.first()
        mask = kinds.mask[k]
        target = bucket.most_efficient(mask, kinds.remaining_demand(mask))
        b = filler.new_bin(mask.copy())
        if target >= 0:
            _fill_dot(filler, bucket, b, target, kinds)
        if not b.members:
            # Nothing fits the target option: the largest pod left gets a node of its own.
            group_info, pod, pmask = kinds.take(k)
            filler.add(b, group_info, pod, pmask)
        bins.append(b)
    return filler.launch(bucket, bins)


def _target_option(bucket: BucketShape, b: Bin, want: npt.NDArray[np.float64]) -> int:
    """The cheapest option of the node's that holds `want`; else the one holding most of it per dollar."""
    allowed = b.allowed & np.all(bucket.free >= b.used, axis=1)
    fits = allowed & np.all(bucket.free >= want, axis=1)
    if fits.any():
        return int(np.argmax(fits))
    if not allowed.any():
        return -1
    positive = want > 0
    share = np.min(bucket.free[:, positive] / want[positive], axis=1) if positive.any() else np.ones(len(bucket.options))
    score = np.where(allowed, share / np.maximum(bucket.price, 1e-12), -1.0)
    return int(np.argmax(score))


def _fill_dot(filler: BinFiller, bucket: BucketShape, b: Bin, target: int, kinds: PodKinds) -> None:
    """Fill the node up to `target`'s room, each time with the pod that best matches the room left."""
    cap = np.maximum(bucket.free[target].astype(np.float64), 1.0)
    blocked = np.zeros(len(kinds.keys), dtype=np.bool_)  # rules refuse them here; counts only grow
    usable = kinds.mask[:, target] if len(kinds.keys) else blocked
    while True:
        room = bucket.free[target] - b.used
        ok = usable & ~blocked & (kinds.count > 0) & np.all(kinds.req <= room, axis=1)
        if not ok.any():
            return
        score = np.where(ok, (kinds.req / cap) @ (room / cap), -np.inf)
        placed = False
        for k in np.argsort(-score, kind="stable"):
            if not ok[k]:
                break
            rules = kinds.rules[k]
            if rules.matched and not filler.rules.accepts(b, rules):
                blocked[k] = True
                continue
            group_info, pod, pmask = kinds.take(int(k))
            filler.add(b, group_info, pod, pmask)
            placed = True
            break
        if not placed:
            return
