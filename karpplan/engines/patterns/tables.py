"""The steps of a dynamic-programming pricing table (see the package docstring): a table is an array
[rows, cells of dimension 1, cells of dimension 2, ...] of best pattern values, and every step adds an
item (some pods of one class) or a choose-one group (at most one pod of a cap set) to it, in place. A
table built with keep=True remembers its choices, so the pattern behind any cell can be read back."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from karpplan.engines.patterns.instance import BoolArray, FloatArray

NEG = -1e30  # the value of a class a table row may not use


@dataclass
class Stage:
    """One step of a table: an item (`count` pods of class c, weight w) or a choice of at most one pod of
    a group of classes."""

    c: int
    count: int
    w: tuple[int, ...]
    always: BoolArray | None  # a weightless item: taken in the rows where it is worth something
    mask: BoolArray | None  # cells where the item was taken
    choice: npt.NDArray[np.int16] | None  # cells' chosen member of a group (-1: none)
    members: list[tuple[int, tuple[int, ...]]]


def _expand(v: FloatArray, ndim: int) -> FloatArray:
    return v.reshape((len(v),) + (1,) * (ndim - 1))


def add_item(f: FloatArray, c: int, count: int, w: tuple[int, ...], v: FloatArray, keep: bool) -> Stage:
    if not any(w):
        gain = np.maximum(v, 0.0)
        f += _expand(gain, f.ndim)
        return Stage(c, count, w, gain > 0, None, None, [])
    at = (slice(None), *(slice(x, None) for x in w))
    dst = f[at]
    src = f[(slice(None), *(slice(0, n - x) for n, x in zip(f.shape[1:], w, strict=True)))] + _expand(v, f.ndim)
    mask = None
    if keep:
        mask = np.zeros(f.shape, dtype=np.bool_)
        np.greater(src, dst, out=mask[at])
    np.maximum(dst, src, out=dst)
    return Stage(c, count, w, None, mask, None, [])


def undominated_members(items: list[tuple[int, tuple[int, ...], FloatArray]]
                         ) -> list[tuple[int, tuple[int, ...], FloatArray]]:
    """Members of a choose-one group that no other member beats: at most its weight in every table
    dimension and at least its value in every row (ties: the first stays)."""
    if len(items) < 2:
        return items
    w = np.array([it[1] for it in items], dtype=np.int64).reshape(len(items), -1)
    v = np.stack([it[2] for it in items], axis=0)
    lighter = (w[:, None, :] <= w[None, :, :]).all(axis=2)  # [a, b]: a weighs at most b
    richer = (v[:, None, :] >= v[None, :, :]).all(axis=2)
    equal = (w[:, None, :] == w[None, :, :]).all(axis=2) & (v[:, None, :] == v[None, :, :]).all(axis=2)
    order = np.arange(len(items))
    beats = lighter & richer & (~equal | (order[:, None] < order[None, :]))
    np.fill_diagonal(beats, False)
    keep = ~beats.any(axis=0)
    return [it for it, k in zip(items, keep.tolist(), strict=True) if k]


def add_group(f: FloatArray, items: list[tuple[int, tuple[int, ...], FloatArray]], keep: bool
           ) -> tuple[Stage, FloatArray]:
    g = f.copy()
    choice = np.full(f.shape, -1, dtype=np.int16) if keep else None
    for idx, (_, w, v) in enumerate(items):
        at = (slice(None), *(slice(x, None) for x in w))
        src = f[(slice(None), *(slice(0, n - x) for n, x in zip(f.shape[1:], w, strict=True)))] + _expand(v, f.ndim)
        dst = g[at]
        if choice is not None:
            better = src > dst
            np.copyto(dst, src, where=better)
            np.copyto(choice[at], np.int16(idx), where=better)
        else:
            np.maximum(dst, src, out=dst)
    return Stage(-1, 1, (), None, None, choice, [(c, w) for c, w, _ in items]), g



def backtrack(stages: list[Stage], row: int, cell: tuple[int, ...]) -> dict[int, int]:
    """The pattern behind one cell of a table built with keep=True."""
    at = [row, *cell]
    x: dict[int, int] = defaultdict(int)
    for st in reversed(stages):
        if st.choice is not None:
            idx = int(st.choice[tuple(at)])
            if idx >= 0:
                c, w = st.members[idx]
                x[c] += 1
                at = [at[0], *(a - v for a, v in zip(at[1:], w, strict=True))]
        elif st.mask is None:
            if st.always is not None and st.always[row]:
                x[st.c] += st.count
        elif st.mask[tuple(at)]:
            x[st.c] += st.count
            at = [at[0], *(a - v for a, v in zip(at[1:], st.w, strict=True))]
    return dict(x)
