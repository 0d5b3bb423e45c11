"""How the shapes are laid out in the pricing tables (see the package docstring): a *bucket* is the set of
shapes one table prices. Small shapes of one profile share tables over two or more dimensions; large
ones are stacked in tables over the first dimension, one row (with its own multipliers) per profile; the
shapes that decide the bound get tables of their own."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from karpplan.engines.patterns.instance import BoolArray, FloatArray, Instance, IntArray

CELLS = 1 << 14  # cells of a table shared by small shapes
REFINE = 1 << 16  # cells of a table of its own for a shape that decides the bound
ROW = 1 << 13  # cells of one row of a table over the first dimension (large shapes)
SMALL = 256  # shapes with at most this many cells of the first dimension get multi-dimensional tables
STACK = 4.0  # largest ratio between the first dimension of large shapes in one table


@dataclass
class Bucket:
    """Shapes priced by one table. A table has rows (each with its own classes and multipliers, shared by
    the shapes of one profile); within a row, cell (i1, i2, ...) holds the best value of a pattern using at
    most i_t cells of table dimension t, so every shape reads its own cell of its row."""

    shapes: IntArray  # rows of the instance's new (or existing) shapes
    existing: bool
    classes: IntArray  # classes some shape of the bucket may hold
    allowed: BoolArray  # [rows, classes] the classes each row may use
    dims: tuple[int, ...]  # table dimensions (indices into the instance's dims)
    grids: tuple[float, ...]  # amount per cell, per table dimension
    exact: BoolArray  # [D] the table holds this dimension exactly (or nothing asks for it)
    held: BoolArray  # [D] the table holds this dimension, maybe on a coarser grid (or nothing asks for it)
    cells: IntArray  # [shapes, table dims] each shape's cell
    row_of: IntArray  # [shapes] the table row each shape reads
    rep: IntArray  # [rows] the shape (position in `shapes`) whose pattern steers each row's multipliers
    lam: FloatArray  # [rows, D] Lagrange multipliers of the dimensions the table does not hold exactly
    step: FloatArray  # [rows, D] the multipliers' step factors (Rprop)
    sign: FloatArray  # [rows, D] the last direction of each multiplier


def _gcd(values: FloatArray) -> int:
    ints = [int(v) for v in values if v > 0]
    return math.gcd(*ints) if ints else 1


def shared_buckets(inst: Instance, free: FloatArray, allowed: BoolArray, existing: bool) -> list[Bucket]:
    """Small shapes of one profile (the same classes up to fit, similar ratios between dimensions) share
    tables over two or more dimensions, in runs of growing size; large shapes are stacked, in runs of
    similar size, in tables over the first dimension."""
    if not len(free):
        return []
    req = inst.req
    n_dims = len(inst.dims)
    used = allowed.any(axis=0)
    gcds = [_gcd(req[used, d]) if (req[used, d] > 0).any() else 0 for d in range(n_dims)]
    order = [d for d in range(n_dims) if gcds[d] > 0]
    out: list[Bucket] = []
    if not order:
        rows = np.arange(len(free), dtype=np.int64)
        out.append(_new_bucket(rows, free, allowed, existing, gcds, (), (), np.zeros(len(rows), dtype=np.int64)))
        return out
    first = order[0]
    cells_first = free[:, first] // gcds[first] + 1
    small = np.nonzero(cells_first <= SMALL)[0]
    large = np.nonzero(cells_first > SMALL)[0]
    fits = (req[None, :, :] <= free[:, None, :]).all(axis=2)
    loose = allowed | ~fits
    with np.errstate(divide="ignore"):
        ratio = np.log2((free + 1.0) / (free[:, first:first + 1] + 1.0))
    profile = np.round(2 * ratio).astype(np.int64)
    groups: dict[tuple[bytes, bytes], list[int]] = defaultdict(list)
    for k in small.tolist():
        groups[(loose[k].tobytes(), profile[k].tobytes())].append(k)
    for members in groups.values():
        shapes = sorted(members, key=lambda k: tuple(free[k]))
        start = 0
        while start < len(shapes):
            end = start + 1
            top = free[shapes[start]].copy()
            while end < len(shapes):
                nxt = np.maximum(top, free[shapes[end]])
                if len(order) > 1 and not _exact_fit(nxt, gcds, order) and \
                        nxt[order[1]] > 2 * max(free[shapes[start], order[1]], 1.0):
                    break
                top = nxt
                end += 1
            dims, grids = _small_grid(top, gcds, order)
            rows = np.array(shapes[start:end], dtype=np.int64)
            out.append(_new_bucket(rows, free, allowed, existing, gcds, dims, grids,
                                   np.zeros(len(rows), dtype=np.int64)))
            start = end
    out.extend(_stacked_buckets(large, free, allowed, existing, gcds, first, loose, profile))
    return out


def _stacked_buckets(large: IntArray, free: FloatArray, allowed: BoolArray, existing: bool, gcds: list[int],
                     first: int, loose: BoolArray, profile: IntArray) -> list[Bucket]:
    """Large shapes stacked in runs of similar size (within STACK of the run's first) over the first dimension."""
    out: list[Bucket] = []
    ordered = large[np.argsort(free[large, first], kind="stable")].tolist()
    start = 0
    while start < len(ordered):
        end = start + 1
        while end < len(ordered) and free[ordered[end], first] <= STACK * free[ordered[start], first]:
            end += 1
        rows = np.array(ordered[start:end], dtype=np.int64)
        top = float(free[rows, first].max())
        grid = float(gcds[first] * max(1, math.ceil(top / gcds[first] / (ROW - 1))))
        keys = [(loose[k].tobytes(), profile[k].tobytes()) for k in rows.tolist()]
        ids: dict[tuple[bytes, bytes], int] = {}
        row_of = np.array([ids.setdefault(key, len(ids)) for key in keys], dtype=np.int64)
        out.append(_new_bucket(rows, free, allowed, existing, gcds, (first,), (grid,), row_of))
        start = end
    return out


def _exact_fit(top: FloatArray, gcds: list[int], order: list[int]) -> bool:
    return int(top[order[0]] // gcds[order[0]] + 1) * int(top[order[1]] // gcds[order[1]] + 1) <= CELLS


def _small_grid(top: FloatArray, gcds: list[int], order: list[int], budget: int | None = None
                ) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The first requested dimension exactly, the second exactly or on a coarser grid, then every other
    one whose exact cells still fit the table."""
    budget = CELLS if budget is None else budget
    first = order[0]
    dims, grids, size = [first], [float(gcds[first])], int(top[first] // gcds[first]) + 1
    for pos, d in enumerate(order[1:]):
        n = int(top[d] // gcds[d]) + 1
        if size * n <= budget:
            dims.append(d)
            grids.append(float(gcds[d]))
            size *= n
        elif pos == 0:
            cells = max(budget // size, 2)
            dims.append(d)
            grids.append(max(float(gcds[d]), float(top[d]) / (cells - 1)))
            size *= cells
    return tuple(dims), tuple(grids)


def solo_buckets(inst: Instance, shapes: list[int], existing: bool, lam: FloatArray) -> list[Bucket]:
    """Tables for single shapes (those that decide the bound), each with its own multipliers (lam, per
    shape): small ones on their own grids of up to REFINE cells, large ones stacked one row each over
    the first dimension."""
    free, allowed = (inst.old_free, inst.old_allowed) if existing else (inst.free, inst.allowed)
    req = inst.req
    used = allowed[shapes].any(axis=0)
    gcds = [_gcd(req[used, d]) if (req[used, d] > 0).any() else 0 for d in range(len(inst.dims))]
    order = [d for d in range(len(inst.dims)) if gcds[d] > 0]
    out: list[Bucket] = []
    if not order:
        return out
    first = order[0]
    large: list[int] = []
    for k in shapes:
        if free[k, first] // gcds[first] + 1 > SMALL:
            large.append(k)
            continue
        dims, grids = _small_grid(free[k], gcds, order, REFINE)
        b = _new_bucket(np.array([k], dtype=np.int64), free, allowed, existing, gcds, dims, grids,
                        np.zeros(1, dtype=np.int64))
        b.lam[0] = np.where(b.held, 0.0, lam[shapes.index(k)])
        out.append(b)
    if large:
        rows = np.array(large, dtype=np.int64)
        top = float(free[rows, first].max())
        grid = float(gcds[first] * max(1, math.ceil(top / gcds[first] / (ROW - 1))))
        b = _new_bucket(rows, free, allowed, existing, gcds, (first,), (grid,),
                        np.arange(len(rows), dtype=np.int64))
        b.lam[:] = np.where(b.held[None, :], 0.0, np.array([lam[shapes.index(k)] for k in large]))
        out.append(b)
    return out


def _new_bucket(rows: IntArray, free: FloatArray, allowed: BoolArray, existing: bool, gcds: list[int],
                dims: tuple[int, ...], grids: tuple[float, ...], row_of: IntArray) -> Bucket:
    exact = np.array([g == 0 for g in gcds], dtype=np.bool_)
    held = exact.copy()
    for d, g in zip(dims, grids, strict=True):
        exact[d] = g == gcds[d]
        held[d] = True
    if dims:
        cells = np.stack([np.floor(free[rows, d] / g) for d, g in zip(dims, grids, strict=True)],
                         axis=1).astype(np.int64)
    else:
        cells = np.zeros((len(rows), 0), dtype=np.int64)
    classes = np.nonzero(allowed[rows].any(axis=0))[0]
    n_rows = int(row_of.max()) + 1
    row_allowed = np.zeros((n_rows, len(classes)), dtype=np.bool_)
    rep = np.zeros(n_rows, dtype=np.int64)
    size = free[rows, dims[0]] if dims else np.zeros(len(rows))
    for r in range(n_rows):
        mine = np.nonzero(row_of == r)[0]
        row_allowed[r] = allowed[rows[mine]][:, classes].any(axis=0)
        rep[r] = mine[int(np.argmax(size[mine]))]
    lam = np.zeros((n_rows, len(gcds)), dtype=np.float64)
    return Bucket(rows, existing, classes, row_allowed, dims, grids, exact, held, cells, row_of, rep, lam,
                  np.full_like(lam, 1.5), np.zeros_like(lam))
