"""The launch options of the same NodePools, catalog and DaemonSets, built once per process for the plans that ask again.

A `karpplan plan` builds every (pool, instance type, offering) more than once from the very same inputs: the
problem, the problem again with the preferences Karpenter keeps made required (`planner.py`), and the Karpenter
steady state's cluster (`consolidate/state.py`). On the aws catalog that is 10,020 options and about 0.075 CPU
seconds each time (session 15, design-notes). `launch_options` returns the options built before when every
input is the very same object (all are frozen) and the pods ask for the same custom label values (the only
thing of the pods the options read, `custom_labels.custom_label_values`), else builds them. A shallow copy of
the list is returned; the options themselves are frozen. The last `MEMO_ENTRIES` inputs are kept, with the
objects themselves, so an id is never mistaken for a later object's.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.catalog.types import Catalog
from karpplan.model.pods import DaemonSet, Pod
from karpplan.model.pools import NodeClass, NodePool
from karpplan.scheduling.candidates import LaunchOption, build_launch_options
from karpplan.scheduling.custom_labels import custom_label_values, pod_requirement_values

MEMO_ENTRIES = 2

_Entry = tuple[tuple[object, ...], tuple[object, ...], list[LaunchOption]]
_memo: list[_Entry] = []


def launch_options(pools: Sequence[NodePool], node_classes: Sequence[NodeClass], catalog: Catalog,
                   daemonsets: Sequence[DaemonSet], pending: Sequence[Pod], instance_types_for: object,
                   node_labels: object, *, static: bool = False) -> list[LaunchOption]:
    """`build_launch_options` of these inputs, reused when the same inputs were built before."""
    held: tuple[object, ...] = (*pools, None, *node_classes, None, catalog, *daemonsets, None, instance_types_for,
                                node_labels)
    values = pod_requirement_values(pending)
    key = (static, tuple(tuple(tuple(sorted(v.items())) for v in custom_label_values(pool, values, catalog.label_keys()))
                         for pool in pools if pool.static == static))
    for objects, known, options in _memo:
        if known == key and len(objects) == len(held) and all(a is b for a, b in zip(objects, held, strict=True)):
            return list(options)
    options = build_launch_options(pools, node_classes, catalog, daemonsets, pending, instance_types_for, node_labels,
                                   static=static)
    _memo.insert(0, (held, key, options))
    del _memo[MEMO_ENTRIES:]
    return list(options)


__all__ = ["MEMO_ENTRIES", "launch_options"]
