"""A large pool's split packed zone by zone by the re-packer, for pools too large for the packing's CP-SAT model.

`pool_resolve.py` re-solves a pool whole in two steps: the split (how many pods of each kind each zone holds,
fluid within a zone) and the packing (whole pods on whole nodes). Its packing is one CP-SAT model over every
slot and kind, which grows with nodes x kinds: on the bench's many-deployments 20,000 row a pool holds about 50
nodes and 500 groups, a model of tens of thousands of variables. Once the split has fixed each zone's pods the
zones no longer interact, and a zone of many small pods is what the re-packer's packings (`repack/`: pods with
hostname rules first, then the slack the right-sized nodes pay for, then bulk nodes of the most cost-efficient
option; every per-node rule kept) pack within a node or two of fluid. So each zone's pods, as the split counts
them, are packed by the re-packer, and the pool's new nodes are kept when they cost less than its nodes now,
keep a node wherever the zone ledger needs one, and stay within the pool's resource limits.

Which pods of a kind move: each zone keeps its own pods up to the split's count, and the rest go, in the
kind's order, to the zones short of theirs. A pod keeps the masks of its old node (the preferences it met
there), as in every neighbourhood. Deterministic: no randomness, no clock but the re-packer's wall guard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from karpplan.engines.cpsat.neighbourhood_model import Kind, Side, node_capacity
from karpplan.engines.repack import Repacker
from karpplan.engines.repack.bucket import PlacedPod
from karpplan.engines.result import SolvedNode
from karpplan.engines.zone_moves import ZoneLedger
from karpplan.model.pods import Pod
from karpplan.scheduling.candidates import LaunchOption

PACK_POD_SECONDS = 2e-4  # modelled seconds the re-packer's packings take per pod of the pool (fitted: see notes)


def pack_zones(repacker: Repacker, ledger: ZoneLedger, sides: Sequence[Side], kinds: Sequence[Kind],
               counts: Sequence[Sequence[int]], headroom: Mapping[str, Mapping[str, int]], cheaper: bool = True
               ) -> tuple[list[SolvedNode] | None, float]:
    """(The pool's nodes packed zone by zone with `counts[s][k]` pods of kind k on side s, or None when not
    cheaper (unless `cheaper` is off: a start for a finer packing) or not valid; the modelled seconds the
    packings took.)"""
    origin: dict[int, LaunchOption] = {id(pod): node.option for side in sides for node in side.nodes
                                        if node.option is not None for _, pod in node.pods}
    items: list[list[PlacedPod]] = [[] for _ in sides]
    for k, kind in enumerate(kinds):
        for s, pods in enumerate(_moved(kind, [counts[t][k] for t in range(len(sides))])):
            items[s].extend((kind.group, pod, origin[id(pod)]) for pod in pods)
    seconds = PACK_POD_SECONDS * sum(len(kind.pods) for kind in kinds)
    out: list[SolvedNode] = []
    for s, side in enumerate(sides):
        packed = repacker.pack_bucket(side.shape, items[s]) if items[s] else []
        if packed is None or (not packed and ledger.must_keep_a_node(side, side.shape.options[0])):
            return None, seconds
        out.extend(packed)
    old_price = sum(n.price for side in sides for n in side.nodes)
    if (cheaper and sum(n.price for n in out) >= old_price - 1e-9) or not within_limits(sides, out, headroom):
        return None, seconds
    return out, seconds


def _moved(kind: Kind, want: Sequence[int]) -> list[list[Pod]]:
    """The kind's pods per side: each side keeps its own up to its count; the others fill the sides short of
    theirs, in order. `kind.pods` lists the pods of side 0 first, then side 1's, and so on (`kinds`)."""
    own: list[list[Pod]] = []
    start = 0
    for count in kind.origin:
        own.append(list(kind.pods[start:start + count]))
        start += count
    spare = [pod for s, pods in enumerate(own) for pod in pods[want[s]:]]
    out = []
    for s, pods in enumerate(own):
        mine = pods[:want[s]]
        while len(mine) < want[s]:
            mine.append(spare.pop(0))
        out.append(mine)
    return out


def within_limits(sides: Sequence[Side], nodes: Sequence[SolvedNode], headroom: Mapping[str, Mapping[str, int]]
                   ) -> bool:
    """The pool's limited resources: no more than its nodes now hold plus its headroom (as the split's rows)."""
    pools = {str(side.key[0]) for side in sides}
    for pool, rooms in headroom.items():
        if pool not in pools:
            continue
        for name, room in rooms.items():
            before = sum(node_capacity(n, name) for side in sides if str(side.key[0]) == pool for n in side.nodes)
            after = sum(node_capacity(n, name) for n in nodes if n.option is not None and n.option.pool.name == pool)
            if after > before + room:
                return False
    return True


__all__ = ["PACK_POD_SECONDS", "pack_zones", "within_limits"]
