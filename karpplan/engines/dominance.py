"""Dominated buckets of launch options: a bucket that differs from another only by capacity type, and whose every option the other's cheaper options outdo, never helps a plan.

The exact slot model (`cpsat/exact.py`) gives every bucket (pool, zone, capacity type, the labels the rules
read, rule eligibility: `Repacker.bucket_key`) its own slots. Where spot and on-demand offerings of a zone
both exist and nothing reads the capacity type (no pod selects or spreads on it, so the two buckets' keys
differ only there), a node of the dearer bucket can be replaced by a node of an option of the other that
`dominates` it: as cheap or cheaper, at least as much room in every dimension a pod asks for (cpu, memory,
pods, ephemeral storage, extended resources), usable by every group that could use it, no more of what the
pool's limits count, and no worse NodePool-weight tier or preferred node affinity for any of those groups.
The replacement stands in the same pool and zone with the same labels the rules read, so every rule
(per-node caps, zone counts, pool limits) holds as before, and the plan costs no more. Dropping such a
bucket halves the slots of a problem on a catalog with both capacity types, and never raises the optimum.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence

import numpy as np

from karpplan.scheduling.candidates import LaunchOption

BucketKey = tuple[object, ...]  # pool, zone, capacity type, topology labels, rule eligibility (`Repacker.bucket_key`)
CAPACITY_TYPE_FIELD = 2  # where the capacity type sits in a bucket key
PARETO_CHUNK = 256  # options compared against all the others at once (memory: chunk x options x dimensions)


def _twin_key(key: BucketKey) -> BucketKey:
    """The key with its capacity type left out: buckets that differ only there are compared."""
    return key[:CAPACITY_TYPE_FIELD] + key[CAPACITY_TYPE_FIELD + 1:]


def covering(options: Sequence[LaunchOption], by: Sequence[LaunchOption],
             dominates: Callable[[LaunchOption, LaunchOption], bool]) -> dict[int, int] | None:
    """For each option, an option of `by` that dominates it (option index -> index), or None when one has none."""
    out: dict[int, int] = {}
    for o in options:
        f = next((f for f in by if dominates(f, o)), None)
        if f is None:
            return None
        out[o.index] = f.index
    return out


def pareto_front(members: Sequence[LaunchOption], dims: Sequence[str], limited: Sequence[str]) -> list[LaunchOption]:
    """The options no cheaper-or-equal earlier one dominates (at least as much room in every one of `dims`, no
    more of what the pool's limits count, `limited`), visited by (price, type name); of equal options the
    first is kept. The same front as comparing each pair, on arrays (a catalog gives thousands of options)."""
    order = sorted(members, key=lambda o: (o.price, o.instance_type.name))
    if not order:
        return []
    # Options with equal rows (a catalog has many types of one size): the first is kept, the rest are dominated
    # by it, so only each row's first option is compared (`distinct`, in order).
    first: dict[tuple[int, ...], int] = {}
    for i, o in enumerate(order):
        first.setdefault(tuple([o.free.get(d) for d in dims] + [o.capacity.get(k) for k in limited]), i)
    distinct = list(first.values())
    rows = np.array(list(first), dtype=np.int64).reshape(len(distinct), len(dims) + len(limited))
    free, cap = rows[:, :len(dims)], rows[:, len(dims):]
    # Dominance is transitive, so "dominated by an earlier kept option" is "dominated by any earlier one".
    n = len(distinct)
    dominated = np.zeros(n, dtype=bool)
    for lo in range(0, n, PARETO_CHUNK):
        hi = min(n, lo + PARETO_CHUNK)
        room = np.all(free[None, :hi, :] >= free[lo:hi, None, :], axis=2)
        cheaper = np.all(cap[None, :hi, :] <= cap[lo:hi, None, :], axis=2)
        earlier = np.arange(hi)[None, :] < np.arange(lo, hi)[:, None]  # [i, j]: j comes before i
        dominated[lo:hi] = np.any(room & cheaper & earlier, axis=1)
    return [order[distinct[i]] for i in range(n) if not dominated[i]]


def drop_dominated_buckets(fronts: MutableMapping[BucketKey, list[LaunchOption]],
                           dominates: Callable[[LaunchOption, LaunchOption], bool]) -> dict[int, int]:
    """Remove from `fronts` (bucket key -> its options) every bucket whose options are each dominated by an
    option of one kept bucket differing from it only by capacity type; return, for every option of a
    removed bucket, the option that stands in for it. Buckets are visited cheapest first, so of two equal
    buckets the first is kept; a bucket is only ever replaced by one that stays."""
    order = sorted(fronts, key=lambda k: (min((o.price for o in fronts[k]), default=0.0), repr(k)))
    kept: list[BucketKey] = []
    replaced: dict[int, int] = {}
    for key in order:
        twin = _twin_key(key)
        cover = next((c for c in (covering(fronts[key], fronts[k], dominates) for k in kept if _twin_key(k) == twin)
                      if c is not None), None)
        if cover is None:
            kept.append(key)
            continue
        replaced.update(cover)
        del fronts[key]
    return replaced


__all__ = ["BucketKey", "covering", "drop_dominated_buckets", "pareto_front"]
