"""An existing node as the planner sees it: the node, the pods already bound to it, what they use."""

from __future__ import annotations

from dataclasses import dataclass, field

from karpplan.model.nodes import ExistingNode
from karpplan.model.pods import HostPort, Pod
from karpplan.model.resources import Resources
from karpplan.scheduling.daemon_ports import DaemonPort


@dataclass
class ExistingNodeInfo:
    """An existing node with what is already on it."""

    node: ExistingNode
    bound: list[Pod] = field(default_factory=list)
    used: Resources = Resources()  # requests of bound pods + DaemonSet pods still to come
    host_ports: list[HostPort] = field(default_factory=list)  # of bound pods and DaemonSet pods still to come
    daemon_ports: list[DaemonPort] = field(default_factory=list)  # those of `host_ports` a DaemonSet holds
    _free: tuple[Resources, Resources] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def free(self) -> Resources:
        """Allocatable less `used` (kept while `used`, an immutable value, is the same object)."""
        cached = self._free
        if cached is None or cached[0] is not self.used:
            cached = self._free = (self.used, self.node.allocatable - self.used)
        return cached[1]


__all__ = ["ExistingNodeInfo"]
