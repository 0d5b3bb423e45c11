"""Everything karpplan read from the user's manifests, typed and grouped for planning."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.inputs.loader import Document
from karpplan.model.aws_zones import AWS_REGION, region_of_zone
from karpplan.model.cluster import ClusterConfig, FargateProfile, Namespace, RuntimeClass
from karpplan.model.labels import REGION, ZONE
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
    # DaemonSets read from their newest pod, or derived from it where the input lacks them (among scale_notes too)
    daemon_notices: tuple[InputNotice, ...] = ()
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
    def _regional_node(self) -> tuple[str, ExistingNode] | None:
        """The first existing Node whose labels say its region: a pasted `kubectl get nodes -o yaml` names the
        cluster's region as surely as a ClusterConfig does."""
        return next(((region, n) for n in self.nodes if (region := node_region(n.labels))), None)

    @property
    def _regional_nodeclass(self) -> tuple[str, NodeClass] | None:
        """The first EC2NodeClass whose `status.subnets` zones name a region: the subnets Karpenter resolved are
        in the cluster's VPC, so their zones' region is the cluster's."""
        for nodeclass in self.nodeclasses:
            region = next((r for z in nodeclass.zones if (r := region_of_zone(z)) and AWS_REGION.fullmatch(r)), None)
            if region:
                return region, nodeclass
        return None

    @property
    def region(self) -> str | None:
        """The cluster's region: a ClusterConfig's metadata.region, else the existing Nodes' labels, else the zones
        of an EC2NodeClass's resolved subnets."""
        cluster = self._regional_cluster
        if cluster:
            return cluster.region
        found = self._regional_node or self._regional_nodeclass
        return found[0] if found else None

    @property
    def region_origin(self) -> Origin | None:
        """Where the region `region` returns is written (a ClusterConfig's metadata.region, the Node, the
        EC2NodeClass)."""
        cluster = self._regional_cluster
        if cluster:
            return cluster.region_origin
        found = self._regional_node or self._regional_nodeclass
        return found[1].origin if found else None

    @property
    def region_source(self) -> str:
        """Where the region `region` returns comes from, as the plan's summary says it; "" when none does."""
        if not self.region:
            return ""
        cluster = self._regional_cluster
        what = (f"ClusterConfig {cluster.name}" if cluster else
                f"Node {self._regional_node[1].name}'s labels" if self._regional_node else self.region_field)
        origin = self.region_origin
        return f"from {what}" + (f", {origin}" if origin is not None and origin != UNKNOWN else "")

    @property
    def region_field(self) -> str:
        """What names the region at `region_origin`, for an error that blames it."""
        if self._regional_cluster:
            return "metadata.region"
        if self._regional_node:
            return f"Node {self._regional_node[1].name}'s region label"
        if self._regional_nodeclass:
            return f"{self._regional_nodeclass[1].kind} {self._regional_nodeclass[1].name}'s subnet zones"
        return "metadata.region"

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


def node_region(labels: Mapping[str, str]) -> str | None:
    """A Node's region: its topology.kubernetes.io/region label, else the region its zone label names (another
    cloud's labels, "eastus2" or "us-central1", say nothing of AWS's)."""
    region = labels.get(REGION) or labels.get("failure-domain.beta.kubernetes.io/region") or ""
    if AWS_REGION.fullmatch(region):
        return region
    parent = region_of_zone(labels.get(ZONE) or labels.get("failure-domain.beta.kubernetes.io/zone") or "")
    return parent if parent is not None and AWS_REGION.fullmatch(parent) else None
