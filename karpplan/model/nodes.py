"""Existing cluster nodes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.labels import COMPUTE_TYPE, HOSTNAME, NODEPOOL
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
    starting: bool = field(default=False, compare=False)  # a Karpenter node not yet initialized (`as_started`)

    @property
    def is_fargate(self) -> bool:
        return self.labels.get(COMPUTE_TYPE) == "fargate"

    def domain(self, key: str) -> str | None:
        """The node's value for a topology key; hostname falls back to the node name (Karpenter)."""
        value = self.labels.get(key)
        if value is None and key == HOSTNAME:
            return self.name
        return value


# `StateNode.Initialized`: a node Karpenter manages is initialized once it carries this label as "true"
INITIALIZED_LABEL = "karpenter.sh/initialized"
REGISTERED_LABEL = "karpenter.sh/registered"
UNREGISTERED_TAINT = "karpenter.sh/unregistered"
# `scheduling.IsKnownEphemeralTaint`: taints an uninitialized node sheds as it starts, which Karpenter's simulation
# ignores on it (`StateNode.Taints`), as it ignores its NodePool's startupTaints
EPHEMERAL_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
                    "node.cloudprovider.kubernetes.io/uninitialized", UNREGISTERED_TAINT)


def is_starting(labels: Mapping[str, str], taint_keys: Sequence[str]) -> bool:
    """A Karpenter node still starting, as the Node shows it: registered (`karpenter.sh/registered`) or still
    tainted `karpenter.sh/unregistered`, without `karpenter.sh/initialized: "true"`. A Node with neither mark
    (a hand-written snapshot) is taken as initialized."""
    if NODEPOOL not in labels or str(labels.get(INITIALIZED_LABEL)) == "true":
        return False
    return REGISTERED_LABEL in labels or INITIALIZED_LABEL in labels or UNREGISTERED_TAINT in taint_keys


def shed_startup_taints(node: ExistingNode, startup: Sequence[Taint]) -> ExistingNode:
    """An uninitialized node as Karpenter's simulation sees it: without the ephemeral and startup taints."""
    kept = tuple(t for t in node.taints if t.key not in EPHEMERAL_TAINTS
                 and not any(s.key == t.key and s.effect == t.effect for s in startup))
    return node if kept == node.taints else replace(node, taints=kept)


def as_started(nodes: Sequence[ExistingNode], startup: Mapping[str, Sequence[Taint]]) -> tuple[ExistingNode, ...]:
    """The nodes, each Karpenter node still starting (`is_starting`) without the taints it sheds as it starts (its
    NodePool's startupTaints, `startup` by pool, and the ephemeral ones): Karpenter counts on it for the pods it
    will take once initialized (`StateNode.Taints`) and launches nothing for them; kube-scheduler binds them then."""
    return tuple(replace(shed_startup_taints(n, startup.get(n.labels.get(NODEPOOL, ""), ())), starting=True)
                 if is_starting(n.labels, [t.key for t in n.taints]) else n for n in nodes)
