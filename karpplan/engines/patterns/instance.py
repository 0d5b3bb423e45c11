"""The instance the configuration LP bound works on: pod classes (groups that the bound cannot tell apart
merged, their demands), the shapes of the new nodes worth pricing (identical options once, dominated ones
dropped), the existing nodes' shapes, and the per-node caps (see the package docstring)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from karpplan.engines.bound import _CapSet, _usable_existing, cap_sets, superset_blocks
from karpplan.model.resources import CPU, MEMORY, PODS
from karpplan.scheduling.problem import GroupInfo, Problem

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

TOL = 1e-9


@dataclass
class Instance:
    dims: list[str]
    req: FloatArray  # [C, D] requests per class
    demand: FloatArray  # [C]
    caps: list[tuple[IntArray, int, bool]]  # (classes, pods per node, applies to existing nodes)
    free: FloatArray  # [K, D] shapes of new nodes
    price: FloatArray  # [K]
    allowed: BoolArray  # [K, C]
    old_free: FloatArray  # [E, D] shapes of existing nodes
    old_count: FloatArray  # [E]
    old_allowed: BoolArray  # [E, C]
    class_of_group: dict[int, int] = field(default_factory=dict)  # group index -> its class (kept classes only)


def caps_and_dims(problem: Problem, groups: Sequence[GroupInfo]
                  ) -> tuple[list[_CapSet], dict[int, list[int]], list[str]]:
    """The groups' per-node cap sets (`bound.cap_sets`), the indices of those each group is in, and the
    dimensions the groups request (CPU, memory and pods first): what both LP instances are built on."""
    caps = cap_sets(problem, groups)
    caps_of: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(caps):
        for m in c.members:
            caps_of[m].append(i)
    present = {d for g in groups for d, v in g.template.requests.items() if v > 0}
    dims = [d for d in (CPU, MEMORY, PODS) if d in present] + sorted(present - {CPU, MEMORY, PODS})
    return caps, caps_of, dims


_ClassKey = tuple[frozenset[int], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _classes(problem: Problem, groups: Sequence[GroupInfo], demand: Mapping[int, int],
             caps_of: Mapping[int, Sequence[int]], dims: Sequence[str]
             ) -> tuple[list[_ClassKey], list[int], dict[int, int]]:
    """Pod classes: groups with the same options, existing nodes, cap sets and requests are one class. Each
    class's key and demand, and each group's class."""
    index: dict[tuple[object, ...], int] = {}
    keys: list[_ClassKey] = []
    amounts: list[int] = []
    class_of: dict[int, int] = {}
    for g in groups:
        options = g.option_ids or frozenset(o.index for o in g.options)
        key = (options, _usable_existing(problem, g), tuple(caps_of.get(g.index, ())),
               tuple(g.template.requests.get(d) for d in dims))
        i = index.setdefault(key, len(keys))
        if i == len(keys):
            keys.append(key)
            amounts.append(0)
        amounts[i] += demand[g.index]
        class_of[g.index] = i
    return keys, amounts, class_of


def _old_shapes(problem: Problem, keys: Sequence[_ClassKey], req: FloatArray, keep: BoolArray, dims: Sequence[str]
                ) -> dict[tuple[tuple[float, ...], tuple[int, ...]], int]:
    """Existing nodes as shapes: (room, the kept classes that fit) -> how many nodes."""
    users: dict[int, list[int]] = defaultdict(list)
    for ci, key in enumerate(keys):
        for e in key[1]:
            users[e].append(ci)
    old: dict[tuple[tuple[float, ...], tuple[int, ...]], int] = defaultdict(int)
    for e, who in users.items():
        room = tuple(float(max(problem.existing[e].free.get(d), 0)) for d in dims)
        ok = tuple(c for c in who if keep[c] and all(r <= f for r, f in zip(req[c], room, strict=True)))
        if ok:
            old[(room, ok)] += 1
    return old


def pod_classes(problem: Problem, groups: Sequence[GroupInfo], demand: Mapping[int, int]) -> Instance | None:
    caps, caps_of, dims = caps_and_dims(problem, groups)
    keys, amounts, class_of = _classes(problem, groups, demand, caps_of, dims)
    n_classes = len(keys)
    req = np.array([k[3] for k in keys], dtype=np.float64).reshape(n_classes, len(dims))
    # New-node options: one row per option any class may use.
    used = sorted({k for key in keys for k in key[0]})
    opt_pos = {k: i for i, k in enumerate(used)}
    may = np.zeros((len(used), n_classes), dtype=np.bool_)
    for ci, key in enumerate(keys):
        may[[opt_pos[k] for k in key[0]], ci] = True
    opt_free = np.array([[max(problem.options[k].free.get(d), 0) for d in dims] for k in used],
                        dtype=np.float64).reshape(len(used), len(dims))
    opt_price = np.array([problem.options[k].price for k in used], dtype=np.float64)
    fits = (req[None, :, :] <= opt_free[:, None, :]).all(axis=2)
    may &= fits
    # A class that fits an option of price 0 costs nothing: unbounded free nodes hold it.
    free_classes = np.asarray(may[opt_price <= 0].any(axis=0), dtype=np.bool_)
    keep = np.logical_not(free_classes)
    old = _old_shapes(problem, keys, req, keep, dims)
    kept = np.nonzero(keep)[0]
    remap = np.full(n_classes, -1, dtype=np.int64)
    remap[kept] = np.arange(len(kept))
    reachable = np.asarray(may[:, kept].any(axis=0), dtype=np.bool_)
    for (_, ok) in old:
        reachable[remap[list(ok)]] = True
    if not reachable.all():
        return None  # some pods can go nowhere: no plan places them
    # Shapes: identical (room, price, classes) options priced once, dominated ones dropped.
    rows = np.nonzero((opt_price > 0) & may[:, kept].any(axis=1))[0]
    shape_of: dict[tuple[bytes, float, bytes], int] = {}
    for r in rows:
        shape_of.setdefault((opt_free[r].tobytes(), float(opt_price[r]), may[r, kept].tobytes()), int(r))
    reps = np.array(sorted(shape_of.values()), dtype=np.int64)
    free = opt_free[reps]
    price = opt_price[reps]
    allowed = may[reps][:, kept]
    alive = _undominated(free, price, allowed)
    cap_list: list[tuple[IntArray, int, bool]] = []
    for i, c in enumerate(caps):
        members = remap[[ci for ci, key in enumerate(keys) if i in key[2] and keep[ci]]]
        if len(members):
            cap_list.append((np.array(sorted(members), dtype=np.int64), c.per_node, c.existing))
    old_keys = list(old)
    n_kept = len(kept)
    old_allowed = np.zeros((len(old_keys), n_kept), dtype=np.bool_)
    for i, (_, ok) in enumerate(old_keys):
        old_allowed[i, remap[list(ok)]] = True
    return Instance(
        dims, req[kept], np.array(amounts, dtype=np.float64)[kept], cap_list,
        free[alive], price[alive], allowed[alive],
        np.array([k[0] for k in old_keys], dtype=np.float64).reshape(len(old_keys), len(dims)),
        np.array([old[k] for k in old_keys], dtype=np.float64), old_allowed,
        {g: int(remap[c]) for g, c in class_of.items() if remap[c] >= 0})


def _undominated(free: FloatArray, price: FloatArray, allowed: BoolArray) -> BoolArray:
    """Shapes no other shape beats: k2 dominates k when it allows every class k allows, has at least k's
    room in every dimension and costs no more (ties: the first one stays)."""
    m = len(price)
    alive = np.ones(m, dtype=np.bool_)
    # Only a shape allowing every class another allows can dominate it: compared block by block.
    pattern_of, blocks = superset_blocks(allowed)
    for rows, cols in blocks:
        for lo in range(0, len(rows), 64):
            r = rows[lo:lo + 64]
            room = (free[r][:, None, :] <= free[cols][None, :, :]).all(axis=2)
            pr, pc = price[r][:, None], price[cols][None, :]
            cheaper = (pc < pr) | ((pc == pr) & (
                ~(free[r][:, None, :] == free[cols][None, :, :]).all(axis=2) | (cols[None, :] < r[:, None])
                | (pattern_of[r][:, None] != pattern_of[cols][None, :])))
            dom = room & cheaper & (r[:, None] != cols[None, :])
            alive[r] = ~dom.any(axis=1)
    return alive
