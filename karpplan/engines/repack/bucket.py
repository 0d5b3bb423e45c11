"""A bucket: its key, its launch options as arrays (room and price), and the pods placed in it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from karpplan.engines.result import SolvedNode
from karpplan.model.pods import Pod
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
BucketKey = tuple[object, ...]  # pool, zone, capacity type, topology labels, rule eligibility
PlacedPod = tuple[GroupInfo, Pod, LaunchOption]  # a pod and the option of the node it was on


class BucketShape:
    """Launch options that are interchangeable for every zone-level rule, as arrays sorted by price."""

    def __init__(self, options: Sequence[LaunchOption], dims: Sequence[str]) -> None:
        self.options = sorted(options, key=lambda o: (o.price, o.instance_type.name, o.index))
        self.position = {o.index: i for i, o in enumerate(self.options)}
        self.indices = np.array([o.index for o in self.options], dtype=np.intp)  # `LaunchOption.index` per row
        self.free = np.array([[o.free.get(d) for d in dims] for o in self.options], dtype=np.int64)
        self.price = np.array([o.price for o in self.options], dtype=np.float64)

    def cheapest(self, used: IntArray, allowed: BoolArray) -> int:
        """Index of the cheapest allowed option with room for `used`, or -1."""
        fits = allowed & np.all(self.free >= used, axis=1)
        if not fits.any():
            return -1
        return int(np.argmax(fits))

    def most_efficient(self, mask: BoolArray, demand: IntArray | npt.NDArray[np.float64]) -> int:
        """The allowed option that holds the most of this demand mix per dollar (the cheapest on a tie), or -1."""
        positive = demand > 0
        rows = np.flatnonzero(mask)
        if not rows.size:
            return -1
        if not positive.any():  # nothing asked: the cheapest allowed option holds it
            return int(rows[0])
        free = self.free[rows][:, positive]
        usable = np.all(free > 0, axis=1)
        if not usable.any():
            return -1
        share = np.min(free / demand[positive], axis=1)
        score = np.where(usable, share / np.maximum(self.price[rows], 1e-12), 0.0)
        best = int(np.argmax(score))
        return int(rows[best]) if score[best] > 0 else -1

def placed_pods(nodes: Iterable[SolvedNode]) -> list[PlacedPod]:
    return [(group, pod, n.option) for n in nodes if n.option is not None for group, pod in n.pods]
