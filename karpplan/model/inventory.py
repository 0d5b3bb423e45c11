"""Everything karpplan read from the user's manifests, typed and grouped for planning."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from karpplan.errors import Origin
from karpplan.inputs.loader import Document
from karpplan.model.cluster import ClusterConfig, FargateProfile, Namespace, RuntimeClass
from karpplan.model.nodes import ExistingNode
from karpplan.model.overlays import NodeOverlay
from karpplan.model.pods import DaemonSet, Pod, PodGroup, group_pods
from karpplan.model.pools import NodeClass, NodePool
from karpplan.model.prometheus_operator import DerivedWorkload
from karpplan.model.shared_claims import SharedClaim


@dataclass(frozen=True)
class SkippedDocument:
    kind: str
    name: str
    origin: str
    reason: str = ""  # empty: a kind karpplan does not read

    @property
    def why(self) -> str:
        """The reason as a person reads it."""
        return self.reason or "kind not read by karpplan"


@dataclass(frozen=True)
class InputNotice:
    """Something in the input that karpplan reads differently from how it is written, or not at all,
    in a way that can change the plan: always reported (plan warnings), never silent."""

    origin: Origin  # where it is written
    message: str
    fix: str = field(default="", compare=False)  # what to change in the manifest (lint's fix); "" none to say

    def __str__(self) -> str:
        return f"{self.origin}: {self.message}"


@dataclass(frozen=True)
class Inventory:
    pods: tuple[Pod, ...] = ()  # every pod: pending, bound, gated
    daemonsets: tuple[DaemonSet, ...] = ()
    nodes: tuple[ExistingNode, ...] = ()
    nodepools: tuple[NodePool, ...] = ()
    nodeclasses: tuple[NodeClass, ...] = ()
    clusters: tuple[ClusterConfig, ...] = ()
    runtime_classes: tuple[RuntimeClass, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    skipped: tuple[SkippedDocument, ...] = ()
    notices: tuple[InputNotice, ...] = ()
    # What the what-if counts did (an HPA that changed a count, an HPA without its workload, every workload
    # at 0 replicas) and what karpplan does not simulate (a node group's growth
    # to maxSize): the plan says them; they are about what is planned, not about how the manifests read.
    scale_notes: tuple[InputNotice, ...] = ()
    # Workloads whose replicas all mount one ReadWriteOnce(Pod) claim (said among scale_notes too): lint gives
    # them no spread advice.
    shared_claims: tuple[SharedClaim, ...] = ()
    overlays: tuple[NodeOverlay, ...] = ()
    # Operators' resources planned as the workloads their operator creates (a Prometheus as its StatefulSets)
    derived: tuple[DerivedWorkload, ...] = ()
    # The Nodes, karpenter.sh NodePools and PodDisruptionBudgets as the one parse read them: what the disruption
    # simulation reads beyond the typed model (Node annotations such as karpenter.sh/do-not-disrupt, a pool's
    # spec.disruption, the budgets), so `plan`'s steady state never reads a file again (stdin cannot be).
    disruption_documents: tuple[Document, ...] = field(default=(), compare=False, repr=False)

    @property
    def pending(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if not p.bound and not p.gated and not p.terminal)

    @property
    def bound(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.bound)

    @property
    def gated(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.gated and not p.bound)

    @property
    def fargate_profiles(self) -> tuple[FargateProfile, ...]:
        return tuple(fp for c in self.clusters for fp in c.fargate_profiles)

    @property
    def _regional_cluster(self) -> ClusterConfig | None:
        """The first ClusterConfig that names a region: the one that sets the plan's region."""
        return next((c for c in self.clusters if c.region), None)

    @property
    def region(self) -> str | None:
        cluster = self._regional_cluster
        return cluster.region if cluster else None

    @property
    def region_origin(self) -> Origin | None:
        """Where the region `region` returns is written (a ClusterConfig's metadata.region)."""
        cluster = self._regional_cluster
        return cluster.region_origin if cluster else None

    @property
    def namespace_labels(self) -> Mapping[str, Mapping[str, str]]:
        return {n.name: n.labels for n in self.namespaces}

    def pending_groups(self) -> list[PodGroup]:
        """Pending pods grouped by shared template, in input order."""
        return group_pods(self.pending)

    @property
    def disruption_budgets(self) -> tuple[Document, ...]:
        """The PodDisruptionBudgets: read by `plan`'s steady state and by `consolidate`, not skipped."""
        return tuple(d for d in self.disruption_documents if d.kind == "PodDisruptionBudget")

    def skipped_counts(self) -> Counter[str]:
        return Counter(s.kind for s in self.skipped)
