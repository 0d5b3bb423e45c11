"""Persistent storage a pod can claim: StorageClasses, PersistentVolumes, PersistentVolumeClaims.

Only what placement needs is kept: which CSI driver (or in-tree plugin) backs a volume, which zones a
volume or a class allows, and how a claim is bound. `Storage` holds them all and answers the questions the
PV controller and the DefaultStorageClass admission plugin answer in a cluster: which class a claim
without one gets, and which PV an unbound claim would bind to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.selectors import NodeSelectorTerm

EBS_CSI_DRIVER = "ebs.csi.aws.com"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
EFS_CSI_DRIVER = "efs.csi.aws.com"
IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)
DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
# The pre-`storageClassName` way to name a claim's class; still honoured by the API server.
CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

# What backs a volume, as far as placement is concerned.
EBS = "EBS"
EFS = "EFS"
NFS = "NFS"
HOST = "host"  # hostPath and local volumes: tied to one node
OTHER = "other"

# The StorageClass every EKS cluster is created with (in-tree EBS plugin, migrated to the EBS CSI driver).
EKS_BUILT_IN_CLASS = "gp2"


def backend_of_driver(driver: str) -> str:
    """EBS/EFS/... for a CSI driver or provisioner name (in-tree names included)."""
    if driver in (EBS_CSI_DRIVER, EBS_IN_TREE):
        return EBS
    if driver == EFS_CSI_DRIVER:
        return EFS
    if driver == "kubernetes.io/no-provisioner":
        return HOST  # static local volumes
    return OTHER


@dataclass(frozen=True)
class StorageClass:
    name: str
    provisioner: str
    binding_mode: str = IMMEDIATE
    # allowedTopologies as node selector terms (ORed); empty: any zone.
    allowed_topologies: tuple[NodeSelectorTerm, ...] = ()
    default: bool = False
    created: str = ""  # metadata.creationTimestamp (RFC 3339 sorts as text)
    origin: Origin = field(default=UNKNOWN, compare=False)

    @property
    def backend(self) -> str:
        return backend_of_driver(self.provisioner)

    @property
    def waits_for_consumer(self) -> bool:
        return self.binding_mode == WAIT_FOR_FIRST_CONSUMER


@dataclass(frozen=True)
class PersistentVolume:
    name: str
    # "csi:<driver>" style is avoided: the CSI driver name, or the in-tree plugin's provisioner name
    # (awsElasticBlockStore reads as kubernetes.io/aws-ebs), or "nfs" / "hostPath" / "local"; "" unknown.
    driver: str = ""
    storage_class: str = ""
    claim: tuple[str, str] | None = None  # spec.claimRef (namespace, name)
    # spec.nodeAffinity.required terms (ORed); None: no node affinity.
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    zone_labels: tuple[str, ...] = ()  # legacy zone label values on the PV (VolumeZone), `a__b` split
    capacity: int | None = None  # bytes
    access_modes: frozenset[str] = frozenset()
    origin: Origin = field(default=UNKNOWN, compare=False)

    @property
    def backend(self) -> str:
        if self.driver == "nfs":
            return NFS
        if self.driver in ("hostPath", "local"):
            return HOST
        return backend_of_driver(self.driver)


@dataclass(frozen=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    storage_class: str | None = None  # None: not set (the default class applies); "": no class
    volume_name: str = ""  # spec.volumeName: the PV it is (or is to be) bound to
    request: int | None = None  # bytes of spec.resources.requests.storage
    access_modes: frozenset[str] = frozenset()
    origin: Origin = field(default=UNKNOWN, compare=False)

    @property
    def key(self) -> tuple[str, str]:
        return self.namespace, self.name


@dataclass(frozen=True)
class Storage:
    """Every StorageClass, PersistentVolume and PersistentVolumeClaim in the inputs."""

    classes: Mapping[str, StorageClass] = field(default_factory=dict)
    volumes: Mapping[str, PersistentVolume] = field(default_factory=dict)
    claims: Mapping[tuple[str, str], PersistentVolumeClaim] = field(default_factory=dict)

    def default_class(self) -> StorageClass | None:
        """The class DefaultStorageClass admission gives a claim without one: the newest default-marked class."""
        marked = [c for c in self.classes.values() if c.default]
        return max(marked, key=lambda c: (c.created, c.name)) if marked else None

    def volume_for(self, claim: PersistentVolumeClaim) -> PersistentVolume | None:
        """The PV a claim is bound to (spec.volumeName, or a PV pre-bound to it by claimRef), else the PV the
        PV controller would bind it to now: same class, unclaimed, big enough, the smallest such."""
        if claim.volume_name:
            return self.volumes.get(claim.volume_name)
        for volume in self.volumes.values():
            if volume.claim == claim.key:
                return volume
        wanted = claim.storage_class
        if wanted is None:
            default = self.default_class()
            wanted = default.name if default is not None else ""
        candidates = [
            v
            for v in self.volumes.values()
            if v.claim is None
            and v.storage_class == wanted
            and claim.access_modes <= v.access_modes
            and (claim.request is None or v.capacity is None or v.capacity >= claim.request)
        ]
        return min(candidates, key=lambda v: (v.capacity or 0, v.name)) if candidates else None
