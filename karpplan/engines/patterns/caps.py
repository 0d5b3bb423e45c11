"""The per-node caps of one kind of node (new or existing), in the forms the pricing needs: every cap set
(hostname anti-affinity cliques and hostname spread, from `bound.cap_sets`), the sets each class belongs
to, the least cap on each class, and the disjoint small sets the tables price as choose-one groups."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from karpplan.engines.patterns.instance import FloatArray, Instance, IntArray

REPEAT = 4  # a cap set of at most this many pods per node is a choose-one group, repeated, in the tables


@dataclass(frozen=True)
class NodeCaps:
    sets: list[tuple[IntArray, int]]  # every cap set that applies: (classes, pods per node)
    sets_of_class: list[list[int]]  # [C] the indices (into sets) of the cap sets each class belongs to
    loose: FloatArray  # [C] the least cap on the pods of each class on one node (inf: none)
    groups: list[tuple[IntArray, int]]  # disjoint cap sets for the tables (choose-one groups)
    group_of: IntArray  # [C] each class's group (index into groups), -1 for none


def node_caps(inst: Instance, existing: bool) -> NodeCaps:
    """The caps on a new node (every cap set) or on an existing one (the sets that apply to existing
    nodes)."""
    n_classes = len(inst.demand)
    applying = [c for c in inst.caps if c[2]] if existing else list(inst.caps)
    sets = [(m, s) for m, s, _ in applying]
    sets_of_class: list[list[int]] = [[] for _ in range(n_classes)]
    for i, (m, _) in enumerate(sets):
        for c in m:
            sets_of_class[int(c)].append(i)
    loose = np.full(n_classes, np.inf)
    for members, per_node in sets:
        loose[members] = np.minimum(loose[members], per_node)
    groups = _disjoint_groups(applying)
    group_of = np.full(n_classes, -1, dtype=np.int64)
    for i, (m, _) in enumerate(groups):
        group_of[m] = i
    return NodeCaps(sets, sets_of_class, loose, groups, group_of)


def _disjoint_groups(caps: list[tuple[IntArray, int, bool]]) -> list[tuple[IntArray, int]]:
    """Disjoint cap sets for the tables (a subset of a cap set keeps its cap)."""
    covered: set[int] = set()
    out: list[tuple[IntArray, int]] = []
    for members, per_node, _ in sorted(caps, key=lambda c: (c[1], -len(c[0]))):
        if per_node > REPEAT:
            continue
        rest = np.array([c for c in members if int(c) not in covered], dtype=np.int64)
        if len(rest):
            out.append((rest, per_node))
            covered.update(int(c) for c in rest)
    return out
