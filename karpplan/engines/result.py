"""What an engine returns: nodes with their pods, pods it could not place, and how good the answer is."""

from __future__ import annotations

from dataclasses import dataclass, field

from karpplan.model.pods import Pod
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.existing_nodes import ExistingNodeInfo
from karpplan.scheduling.problem import GroupInfo


@dataclass
class SolvedNode:
    name: str
    existing: ExistingNodeInfo | None
    option: LaunchOption | None  # the launch choice for a new node
    pods: list[tuple[GroupInfo, Pod]] = field(default_factory=list)

    @property
    def new(self) -> bool:
        return self.existing is None

    @property
    def price(self) -> float:
        return self.option.price if self.option is not None else 0.0


@dataclass
class Solution:
    engine: str
    nodes: list[SolvedNode]
    unplaced: list[tuple[GroupInfo, Pod]]
    status: str  # optimal | feasible | heuristic | infeasible-model
    lower_bound: float | None = None
    solve_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    # Karpenter's batch can launch past `limits.nodes`; such a plan is a prediction, not a valid answer.
    exceeds_node_limits: bool = False
    # Which bound `lower_bound` is: "cp-sat", "fluid-lp", "configuration-lp", "zone-lp" or "whole-nodes" (None: no bound).
    bound_source: str | None = None
    # Provisioning batches the Karpenter simulation needed (None: another engine's plan).
    batches: int | None = None
    # Keys of the unplaced pods the time limit left undecided (the Karpenter simulation was cut before it
    # could place them): not simulated, never unschedulable.
    not_simulated: frozenset[str] = frozenset()
    # Why the Karpenter simulation needed several batches, when its NodePool limits' pessimistic charging did it
    # (`karpenter_simulation.limit_stall_note`): shown beside any engine's plan, since it explains Karpenter's.
    batch_note: str | None = None

    @property
    def cost(self) -> float:
        return sum(n.price for n in self.nodes if n.new)

    @property
    def new_nodes(self) -> list[SolvedNode]:
        return [n for n in self.nodes if n.new]

    def placement(self) -> dict[str, str]:
        return {pod.key: node.name for node in self.nodes for _, pod in node.pods}


def node_name(option: LaunchOption, ordinal: int) -> str:
    """`<pool>-<instance-type>-<zone>-<n>`, dots made DNS-safe (contract example: default-t3a-micro-ap-northeast-2a-1)."""
    it = option.instance_type.name.replace(".", "-")
    return f"{option.pool.name}-{it}-{option.zone}-{ordinal}".lower()
