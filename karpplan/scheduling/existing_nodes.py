"""An existing node as the planner sees it: the node, the pods already bound to it, what they use."""

from __future__ import annotations

from dataclasses import dataclass, field

from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import HostPort, Pod
from karpplan.model.resources import Resources


@dataclass
class ExistingNodeInfo:
    """An existing node with what is already on it."""

    node: ExistingNode
    bound: list[Pod] = field(default_factory=list)
    used: Resources = Resources()  # requests of bound pods + DaemonSet pods still to come
    host_ports: list[HostPort] = field(default_factory=list)

    @property
    def free(self) -> Resources:
        return self.node.allocatable - self.used


__all__ = ["ExistingNodeInfo"]
