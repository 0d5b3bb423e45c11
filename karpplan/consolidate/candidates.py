"""Which nodes may be disrupted, and why not, in Karpenter's words (`NewCandidate` in disruption/types.go,
`ValidateNodeDisruptable` / `ValidatePodsDisruptable` in state/statenode.go, `utils/pod`, `utils/disruption`).

A candidate carries its price (the offering of its type, zone and capacity type), its pods, the pods that
must be rescheduled (not DaemonSet or mirror pods) and `RescheduleDisruptionCost` (1 per node plus each such
pod's eviction cost); it is empty when that cost is the node's 1 alone. Candidates are ordered by price over
that cost, the highest first (`sortCandidates`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

from karpplan.consolidate.budgets import Disruption
from karpplan.consolidate.cron import go_duration
from karpplan.consolidate.legacy import DO_NOT_DISRUPT
from karpplan.consolidate.pdb import Limits, tolerates_disrupted
from karpplan.consolidate.snapshot import SimNode, is_daemon, is_mirror
from karpplan.model.pods import Pod
from karpplan.model.pools import NodePool

PER_NODE_COST = 1.0  # PerNodeBaseDisruptionCost
# Karpenter publishes no event for it: consolidation waits for the NodeClaim's Consolidatable condition
NOT_CONSOLIDATABLE = ("Its NodeClaim is not Consolidatable yet: consolidateAfter has not passed since its pods "
                      "last changed (Consolidatable condition not True)")
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


def is_active(pod: Pod) -> bool:
    return not pod.terminal and not pod.terminating


def is_reschedulable(pod: Pod) -> bool:
    """`IsReschedulable`: active (or a terminating StatefulSet pod), not a DaemonSet's, not a mirror pod."""
    stateful = bool(pod.owner and pod.owner.startswith("StatefulSet/"))
    return (is_active(pod) or (stateful and pod.terminating)) and not is_daemon(pod) and not is_mirror(pod)


def do_not_disrupt(pod: Pod) -> bool:
    """`IsDoNotDisruptActive`: "true", or a positive Go duration not yet run out (`waiting.py` takes off those
    that have at the simulation's time; without a time, none has); anything else protects nothing."""
    value = pod.template.annotations.get(DO_NOT_DISRUPT)
    if value is None:
        return False
    if value == "true":
        return True
    span = go_duration(value)
    return span is not None and span.total_seconds() > 0


def is_evictable(pod: Pod) -> bool:
    """`IsEvictable`: what PDBs are checked for."""
    return (is_active(pod) and not tolerates_disrupted(pod.template.tolerations) and not is_mirror(pod)
            and not do_not_disrupt(pod))


def eviction_cost(pod: Pod) -> float:
    """`EvictionCost`: 1, plus pod-deletion-cost / 2^27, plus priority / 2^25, clamped to [-10, 10]."""
    cost = 1.0
    raw = pod.template.annotations.get(DELETION_COST)
    if raw is not None:
        with contextlib.suppress(ValueError):
            cost += float(raw) / 2**27
    cost += pod.template.priority / 2**25
    return min(max(cost, -10.0), 10.0)


@dataclass
class Candidate:
    node: SimNode
    pool: NodePool
    disruption: Disruption
    pods: list[Pod]
    moving: list[Pod]  # reschedulable pods: the ones a command must place elsewhere
    price: float
    cost: float  # RescheduleDisruptionCost
    # what about its pods blocks a graceful disruption (consolidation, Emptiness): set only when its NodePool's
    # `terminationGracePeriod` makes it a candidate for eventual disruption (drift) all the same
    graceful_block: str | None = None

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def empty(self) -> bool:
        return self.cost <= PER_NODE_COST

    @property
    def ratio(self) -> float:
        """`SavingsRatio`: price over disruption cost."""
        return self.price / self.cost


def blocked_by_pods(pods: list[Pod], limits: Limits) -> str | None:
    """`ValidatePodsDisruptable`: a do-not-disrupt pod, then a PDB that allows no eviction."""
    for pod in pods:
        if is_active(pod) and do_not_disrupt(pod):
            return f'Pod has "{DO_NOT_DISRUPT}" annotation (Pod={pod.key})'
    for pod in pods:
        if not is_evictable(pod):
            continue
        keys = limits.blocking(pod)
        if len(keys) > 1:
            return f"Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{' '.join(keys)}])"
        if keys:
            return f"Pdb prevents pod evictions (PodDisruptionBudget=[{keys[0]}])"
    return None


@dataclass(frozen=True)
class Block:
    """What about one pod keeps its node from being disrupted: the rule (`DO_NOT_DISRUPT_RULE`, `PDB_RULE`,
    `PDBS_RULE`: two or more PDBs select it) and the PodDisruptionBudgets involved (namespace/name)."""

    pod: str
    rule: str
    budgets: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """In plain words."""
        if self.rule == DO_NOT_DISRUPT_RULE:
            return f'blocks the node: "{DO_NOT_DISRUPT}" annotation'
        if self.rule == PDBS_RULE:
            return (f"blocks the node: under {len(self.budgets)} PodDisruptionBudgets ({', '.join(self.budgets)}), "
                    "eviction refused")
        return f"blocks the node: PodDisruptionBudget {self.budgets[0]} allows no eviction now"


DO_NOT_DISRUPT_RULE = "do-not-disrupt"
PDB_RULE = "pdb"
PDBS_RULE = "multiple-pdbs"


def pod_block(pod: Pod, limits: Limits) -> Block | None:
    """What about this pod keeps its node from being disrupted (None: nothing)."""
    if is_active(pod) and do_not_disrupt(pod):
        return Block(pod.key, DO_NOT_DISRUPT_RULE)
    if is_evictable(pod):
        keys = limits.blocking(pod)
        if keys:
            return Block(pod.key, PDBS_RULE if len(keys) > 1 else PDB_RULE, tuple(keys))
    return None


def pod_blocker(pod: Pod, limits: Limits) -> str | None:
    """What about this pod keeps its node from being disrupted, in plain words (None: nothing)."""
    block = pod_block(pod, limits)
    return None if block is None else block.text


def drained(node: SimNode, pods: list[Pod], pool: NodePool, disruption: dict[str, Disruption]) -> Candidate:
    """The node as if nothing blocked it (to show where its pods would go were it drained)."""
    moving = [p for p in pods if is_reschedulable(p)]
    cost = PER_NODE_COST + sum(max(0.0, eviction_cost(p)) for p in moving)
    return Candidate(node, pool, disruption.get(pool.name) or Disruption(pool.name), pods, moving, node.cost, cost)


def new_candidate(node: SimNode, pods: list[Pod], pools: dict[str, NodePool], disruption: dict[str, Disruption],
                  limits: Limits) -> Candidate | str:
    """The node as a disruption candidate, or why it is none (Karpenter's wording, as a sentence)."""
    if node.pool is None:
        return "Node isn't managed by karpenter"
    if node.claim_only:
        return "Nodeclaim does not have an associated node"
    if node.uninitialized:
        return "Node isn't initialized"
    if node.deleting:
        return "Node is deleting or marked for deletion"
    if node.annotations.get(DO_NOT_DISRUPT) == "true":
        return f'Disruption is blocked through the "{DO_NOT_DISRUPT}" annotation'
    pool = pools.get(node.pool)
    if pool is None:
        return f"NodePool not found (NodePool={node.pool})"
    blocked = blocked_by_pods(pods, limits)
    if blocked is None:
        return drained(node, pods, pool, disruption)
    settings = disruption.get(pool.name)
    if settings is not None and settings.termination_grace_period is not None:
        # types.go NewCandidate: with a terminationGracePeriod, a node whose pods block eviction is still a
        # candidate for eventual disruption (drift): its drain waits for them up to that period
        return replace(drained(node, pods, pool, disruption), graceful_block=blocked)
    return blocked


def consolidation_refusal(c: Candidate, gate: str) -> str | None:
    """`ShouldDisrupt` of the consolidation methods (`gate`: "empty" for Emptiness, else "underutilized").
    None: the method may consider the node; "": it may not, and Karpenter says nothing."""
    if c.pool.static:
        return "NodePool is static: Karpenter does not consolidate its nodes"
    if c.graceful_block is not None:
        return c.graceful_block
    if c.node.price is None:
        # `NewCandidate`'s "Instance Type not found" stops every method; here the type is most often one the
        # region's catalog has no price for (the snapshot's warning says which): no action karpplan cannot price
        return (f'Instance Type "{c.node.instance_type or ""}" not found in karpplan\'s catalog (no price here), so '
                "not judged: Karpenter, which has its price, may consolidate it")
    if gate != "empty":
        if c.node.capacity_type is None:
            return 'Node does not have label "karpenter.sh/capacity-type"'
        if c.node.zone is None:
            return 'Node does not have label "topology.kubernetes.io/zone"'
    if not c.disruption.enabled:
        return f'NodePool "{c.pool.name}" has consolidation disabled'
    waiting = (c.node.waiting or NOT_CONSOLIDATABLE) if c.node.not_consolidatable else None
    if gate == "empty":
        return waiting if c.empty else ""
    if c.empty:
        return waiting or ""  # else Emptiness's to take
    if c.disruption.policy == "WhenEmpty":
        return f'NodePool "{c.pool.name}" has consolidation policy WhenEmpty, but node is not empty'
    return waiting
