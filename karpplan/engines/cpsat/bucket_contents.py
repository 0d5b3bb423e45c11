"""Bucket contents: the cheapest whole nodes that hold each possible content of a slot-model bucket.

The slot model's LP relaxation launches fractions of nodes, so CP-SAT's own bound starts at the fluid one
(the quickstart: 0.145 $/h against its 0.166 optimum) and the search has to close the rest by branching.
When the pods a bucket can hold are few (zone spreads cap each group's pods per zone, `SlotModel._zonal_cap`),
every content of the bucket (pods per group) is listed with the cheapest set of whole nodes that holds it,
under the per-node rules that bind every plan: resources, the option each group may use and the per-node caps
of hostname spreads and anti-affinity. The model then picks one content per bucket, its pods per group equal
to the bucket's slots', and the bucket's price at least that content's cost. The row is valid (every plan's
bucket holds some content, on nodes that cost at least its cheapest packing), so the optimum never moves; its
LP is the zone-pattern LP, with whole nodes per content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product

from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo

MAX_CONTENTS = 256  # contents of one bucket (the product of its groups' caps plus one) beyond which none are listed
# ... and (content, node content) pairs the cheapest-cost DP visits, the product of (cap + 1)(cap + 2) / 2: one
# group of 255 pods would take 32,896 (about 0.05 s of Python per bucket), so a bucket past this lists none.
MAX_PAIRS = 4_096

Content = tuple[int, ...]


def content_costs(members: Sequence[tuple[GroupInfo, Sequence[LaunchOption]]], caps: Sequence[int],
                  dims: Sequence[str], node_caps: Sequence[tuple[frozenset[int], int]],
                  cost: Callable[[LaunchOption], int]) -> dict[Content, int] | None:
    """Each content (pods per member group, at most `caps`) that whole nodes of the members' options can
    hold, with the least total `cost` of such nodes; None when the bucket has more than `MAX_CONTENTS` (or the
    DP more than `MAX_PAIRS` pairs).

    `node_caps`: (group indices, cap): at most cap pods of those groups on one node."""
    total = pairs = 1
    for c in caps:
        total *= c + 1
        pairs *= (c + 1) * (c + 2) // 2
    if total > MAX_CONTENTS or pairs > MAX_PAIRS:
        return None
    vectors: list[Content] = sorted(product(*(range(c + 1) for c in caps)), key=sum)
    single = {v: _node_cost(v, members, dims, node_caps, cost) for v in vectors if any(v)}
    best: dict[Content, int] = {tuple(0 for _ in caps): 0}
    for v in vectors:
        if not any(v):
            continue
        first = next(i for i, n in enumerate(v) if n)
        found: int | None = None
        # Some node holds a pod of the first group present: that node's content, then the rest.
        for part in product(*(range((1 if i == first else 0), n + 1) for i, n in enumerate(v))):
            node = single.get(part)
            rest = best.get(tuple(a - b for a, b in zip(v, part, strict=True)))
            if node is None or rest is None:
                continue
            if found is None or node + rest < found:
                found = node + rest
        if found is not None:
            best[v] = found
    return best


def _node_cost(content: Content, members: Sequence[tuple[GroupInfo, Sequence[LaunchOption]]],
               dims: Sequence[str], node_caps: Sequence[tuple[frozenset[int], int]],
               cost: Callable[[LaunchOption], int]) -> int | None:
    """The cost of the cheapest option one node of this content may launch, or None."""
    present = [(g, options, n) for (g, options), n in zip(members, content, strict=True) if n]
    for groups, cap in node_caps:
        if sum(n for g, _, n in present if g.index in groups) > cap:
            return None
    allowed = set.intersection(*({o.index for o in options} for _, options, _ in present))
    found: int | None = None
    for o in present[0][1]:
        if o.index not in allowed:
            continue
        if all(sum(g.template.requests.get(d) * n for g, _, n in present) <= o.free.get(d) for d in dims):
            c = cost(o)
            if found is None or c < found:
                found = c
    return found


__all__ = ["MAX_CONTENTS", "MAX_PAIRS", "Content", "content_costs"]
