"""Columns for the master: a pattern read off a table (rounded requests, soft dimensions, maybe too many
pods of a cap set) repaired into a real pattern of a shape, then filled greedily."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from karpplan.engines.patterns.caps import NodeCaps
from karpplan.engines.patterns.instance import TOL, BoolArray, FloatArray, Instance, IntArray


class ColumnRepair:
    """Repairs patterns into columns of new or existing shapes (the caller charges the work clock)."""

    def __init__(self, inst: Instance, caps_new: NodeCaps, caps_old: NodeCaps) -> None:
        self.inst = inst
        self.caps_new = caps_new
        self.caps_old = caps_old
        self.req_rows = [tuple(float(v) for v in row) for row in inst.req]
        self.demand_int = [int(v) for v in inst.demand]

    def column(self, x: Mapping[int, int], room: FloatArray, allowed: BoolArray, existing: bool,
               pi: FloatArray) -> dict[int, int]:
        """A real pattern near x: classes the shape may not hold dropped, caps and room enforced by removing
        the least valuable pods, then the room left filled greedily (best value per room first)."""
        rows, demand = self.req_rows, self.demand_int
        node = self.caps_old if existing else self.caps_new
        caps = node.sets
        class_caps = node.sets_of_class
        out = {c: min(n, demand[c]) for c, n in x.items() if n > 0 and allowed[c]}
        n_dims = len(room)
        left = [float(v) for v in room]
        for c, n in out.items():
            r = rows[c]
            for d in range(n_dims):
                left[d] -= n * r[d]
        cap_left = {s: caps[s][1] for c in out for s in class_caps[c]}
        for c, n in out.items():
            for s in class_caps[c]:
                cap_left[s] -= n
        # Caps, then room: drop the pod of least value (per unit of the dimension that overflows).
        for s in list(cap_left):
            # Read afresh: a drop for an overlapping cap set may already have brought this one within its cap.
            while cap_left[s] < 0:
                c = min((c for c in out if s in class_caps[c]), key=lambda c: pi[c])
                self._drop(out, c, min(out[c], -cap_left[s]), left, cap_left, class_caps)
        for _ in range(4 * n_dims):
            worst, d_worst = 0.0, -1
            for d in range(n_dims):
                if left[d] < 0:
                    over = -left[d] / max(float(room[d]), 1.0)
                    if over > worst:
                        worst, d_worst = over, d
            if d_worst < 0:
                break
            # Drop the pods of least value per unit of the dimension that overflows most, in bulk.
            for c in sorted((c for c in out if rows[c][d_worst] > 0), key=lambda c: pi[c] / rows[c][d_worst]):
                if left[d_worst] >= 0:
                    break
                n = min(out[c], math.ceil(-left[d_worst] / rows[c][d_worst]))
                self._drop(out, c, n, left, cap_left, class_caps)
        self._fill(out, left, cap_left, room, allowed, pi, caps, class_caps)
        return out

    def _fill(self, out: dict[int, int], left: list[float], cap_left: dict[int, int], room: FloatArray,
              allowed: BoolArray, pi: FloatArray, caps: Sequence[tuple[IntArray, int]],
              class_caps: Sequence[Sequence[int]]) -> None:
        """The room left in `out` filled greedily: classes by value per room, most first, within demand and caps."""
        rows, demand, n_dims = self.req_rows, self.demand_int, len(room)
        cand = np.nonzero(allowed & (pi > TOL))[0]
        if not len(cand):
            return
        safe = np.where(room > 0, room, 1.0)
        req = self.inst.req
        size = (req[cand] / safe).max(axis=1)
        order = cand[np.argsort(-pi[cand] / np.maximum(size, 1e-12), kind="stable")]
        # Below the least request of every class still to come in some dimension, nothing fits: stop there.
        floor = np.minimum.accumulate(np.where(req[order] > 0, req[order], np.inf)[::-1], axis=0)[::-1]
        floor_rows = floor.tolist()
        for pos, c in enumerate(order.tolist()):
            low = floor_rows[pos]
            if (left[0] < low[0] or left[-1] < low[-1]) and any(left[d] < low[d] for d in range(n_dims)):
                break
            r = rows[c]
            n = demand[c] - out.get(c, 0)
            for d in range(n_dims):
                if r[d] > 0:
                    n = min(n, int(left[d] // r[d]))
            if n <= 0:
                continue
            for s in class_caps[c]:
                n = min(n, cap_left.get(s, caps[s][1]))
            if n <= 0:
                continue
            out[c] = out.get(c, 0) + n
            for d in range(n_dims):
                left[d] -= n * r[d]
            for s in class_caps[c]:
                cap_left[s] = cap_left.get(s, caps[s][1]) - n

    def _drop(self, out: dict[int, int], c: int, n: int, left: list[float], cap_left: dict[int, int],
              class_caps: list[list[int]]) -> None:
        out[c] -= n
        if out[c] == 0:
            del out[c]
        r = self.req_rows[c]
        for d in range(len(left)):
            left[d] += n * r[d]
        for s in class_caps[c]:
            cap_left[s] += n
