"""How NodePool limits count: the one home of the limits arithmetic (Karpenter's `limits` check).

Pure values over counts: a pool's `Headroom` is what its limits leave once some capacity and some nodes
are used. `Problem.headroom` holds each pool's headroom after its existing nodes (`pool_headroom`); the
greedy engine, the decoder, the zone repair, the re-packer, the neighbourhood search and the CP-SAT rows
charge what they launch against it (`charged`) and ask whether one more node keeps it (`admits`).
Only resources named in the limits are limited; `limits.nodes` counts nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from karpplan.model.resources import LimitVector, Resources

if TYPE_CHECKING:
    from karpplan.model.nodes import ExistingNode
    from karpplan.model.pools import NodePool

NODES = "nodes"  # the key `excess` reports `limits.nodes` under


class Headroom(NamedTuple):
    """What a pool may still launch: resources left under its limits and nodes left under `limits.nodes`
    (None: not limited). Either may be negative when existing nodes already overrun a limit."""

    resources: Resources | None
    nodes: int | None

    @property
    def limited(self) -> bool:
        """Does any limit apply?"""
        return self.resources is not None or self.nodes is not None

    def charged(self, capacity: Mapping[str, int], nodes: int) -> Headroom:
        """The headroom left once `nodes` more nodes with this much capacity in all are launched."""
        resources = None if self.resources is None else LimitVector(
            {k: v - capacity.get(k, 0) for k, v in self.resources.items()})
        return Headroom(resources, None if self.nodes is None else self.nodes - nodes)

    def fits(self, capacity: Mapping[str, int]) -> bool:
        """Does this much capacity fit the resources left (`limits.nodes` aside)?"""
        return self.resources is None or capacity_fits(capacity, self.resources)

    def admits(self, capacity: Mapping[str, int], nodes: int = 1) -> bool:
        """Do `nodes` more nodes with this much capacity in all keep every limit?"""
        if self.nodes is not None and self.nodes < nodes:
            return False
        return self.fits(capacity)

    def excess(self, capacity: Mapping[str, int], nodes: int) -> dict[str, int]:
        """How far past each limit (`NODES` for `limits.nodes`) this much use goes: 0 where it keeps it."""
        out: dict[str, int] = {}
        if self.nodes is not None:
            out[NODES] = max(nodes - self.nodes, 0)
        for k, v in (self.resources or {}).items():
            out[k] = max(capacity.get(k, 0) - v, 0)
        return out

    def room(self) -> dict[str, int]:
        """The resources left, none below 0 (empty when resources are not limited)."""
        return {k: max(v, 0) for k, v in (self.resources or {}).items()}

    def nodes_room(self) -> int | None:
        """The nodes left, not below 0 (None: not limited)."""
        return None if self.nodes is None else max(self.nodes, 0)


UNLIMITED = Headroom(None, None)


def capacity_fits(capacity: Mapping[str, int], remaining: Mapping[str, int]) -> bool:
    """Does this much capacity fit what a pool's limits leave? Only resources named in the limits count."""
    return all(capacity.get(k, 0) <= v for k, v in remaining.items())


def node_capacity(node: ExistingNode) -> Resources:
    """What an existing node charges against its pool's limits: its capacity, or allocatable when it
    reports none."""
    return node.capacity if len(node.capacity) else node.allocatable


def owned_by(pool: NodePool, nodes: Iterable[ExistingNode]) -> list[ExistingNode]:
    """The existing nodes the pool owns (its pool label)."""
    return [n for n in nodes if n.labels.get(pool.pool_label_key) == pool.name]


def pool_headroom(pool: NodePool, nodes: Iterable[ExistingNode]) -> Headroom:
    """What the pool may still launch: its limits less the capacity and the number of the nodes it owns (a pool
    without limits is UNLIMITED at once: no scan of the nodes)."""
    if pool.limits is None and pool.node_limit is None:
        return UNLIMITED
    owned = owned_by(pool, nodes)
    used = Resources()
    for node in owned:
        used = used + node_capacity(node)
    resources = None if pool.limits is None else LimitVector({k: v - used.get(k) for k, v in pool.limits.items()})
    return Headroom(resources, None if pool.node_limit is None else pool.node_limit - len(owned))


def full_limits(pool: NodePool) -> Headroom:
    """The pool's limits as a headroom with nothing used: the verifier charges it the pool's existing nodes and
    the plan's, counted from the plan alone."""
    return Headroom(pool.limits, pool.node_limit)


__all__ = ["NODES", "UNLIMITED", "Headroom", "capacity_fits", "full_limits", "node_capacity",
           "owned_by", "pool_headroom"]
