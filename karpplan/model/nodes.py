"""Existing cluster nodes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.labels import COMPUTE_TYPE, HOSTNAME
from karpplan.model.resources import Resources
from karpplan.model.taints import Taint


@dataclass(frozen=True)
class ExistingNode:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Resources = Resources()
    capacity: Resources = Resources()
    origin: Origin = field(default=UNKNOWN, compare=False)
    # What the node costs and how it is bought, when karpplan knows (an eksctl node group's nodes); a Node
    # read from the input leaves both unset (its labels may say the capacity type).
    hourly_price: float | None = field(default=None, compare=False)
    capacity_type: str | None = field(default=None, compare=False)
    price_estimated: bool = field(default=False, compare=False)  # hourly_price is an estimate, not a published price

    @property
    def is_fargate(self) -> bool:
        return self.labels.get(COMPUTE_TYPE) == "fargate"

    def domain(self, key: str) -> str | None:
        """The node's value for a topology key; hostname falls back to the node name (Karpenter)."""
        value = self.labels.get(key)
        if value is None and key == HOSTNAME:
            return self.name
        return value
