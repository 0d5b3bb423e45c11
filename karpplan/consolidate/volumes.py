"""The zones a running pod's persistent volumes hold it to, once it is evicted.

`plan` reads a pod's claims only while the pod waits for a node (a bound pod stays where it is), but
consolidation re-schedules bound pods, and Karpenter's scheduler injects each claim's volume topology
into the evicted pod (`VolumeTopology.Inject`, provisioning/scheduling/volumetopology.go): a pod whose
EBS volume lives in us-east-1b can only move to a node in us-east-1b. Here the snapshot's StorageClasses,
PersistentVolumes and PersistentVolumeClaims are read with the model's own builders and each bound pod's
claims are applied to its template exactly as `plan` applies them to a pending pod's (model/pod_volumes.py:
bound PVs' `nodeAffinity`, local volumes' hostname terms left out as Karpenter does). Pods of one template
whose claims place them alike keep sharing one template.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from karpplan.errors import InputProblem
from karpplan.inputs.loader import Document
from karpplan.model.build_fields import Field
from karpplan.model.build_storage import (
    build_persistent_volume,
    build_persistent_volume_claim,
    build_storage_class,
)
from karpplan.model.build_volumes import VolumeTemplates, pod_claim_uses
from karpplan.model.kinds import role_of
from karpplan.model.pod_volumes import place_claims, with_volumes
from karpplan.model.pods import Pod, PodTemplate
from karpplan.model.storage import PersistentVolume, PersistentVolumeClaim, Storage, StorageClass


def read_storage(documents: Sequence[Document]) -> Storage:
    """The snapshot's StorageClasses, PersistentVolumes and claims (a document the model refuses is left out:
    `build_inventory` has already reported it)."""
    classes: dict[str, StorageClass] = {}
    volumes: dict[str, PersistentVolume] = {}
    claims: dict[tuple[str, str], PersistentVolumeClaim] = {}
    for doc in documents:
        role = role_of(doc)
        if role not in ("StorageClass", "PersistentVolume", "PersistentVolumeClaim"):
            continue
        sink: list[InputProblem] = []
        root = Field.root(doc.body, doc.origin, sink)
        if role == "StorageClass":
            storage_class = build_storage_class(doc, root)
            if not sink:
                classes.setdefault(storage_class.name, storage_class)
        elif role == "PersistentVolume":
            volume = build_persistent_volume(doc, root)
            if not sink:
                volumes.setdefault(volume.name, volume)
        else:
            claim = build_persistent_volume_claim(doc, root)
            if not sink:
                claims.setdefault(claim.key, claim)
    return Storage(classes, volumes, claims)


def with_bound_volumes(pods: Sequence[Pod], documents: Sequence[Document]) -> list[Pod]:
    """`pods` with each bound pod's claims' zones in its template's required node affinity."""
    storage = read_storage(documents)
    if not storage.claims and not storage.volumes:
        return list(pods)
    specs = {(d.namespace, d.name): d for d in documents if d.kind == "Pod"}
    shared = VolumeTemplates(storage)
    cache: dict[tuple[int, tuple[object, ...]], PodTemplate] = {}
    out: list[Pod] = []
    for pod in pods:
        doc = specs.get((pod.namespace, pod.name))
        if pod.node_name is None or pod.terminal or doc is None:
            out.append(pod)
            continue
        sink: list[InputProblem] = []
        spec = Field.root(doc.body, doc.origin, sink)["spec"]
        uses = pod_claim_uses(spec, pod.namespace, pod.name, shared.storage)
        if not uses:
            out.append(pod)
            continue
        placement = place_claims(uses, shared.storage, f"Pod/{pod.name}")
        key = (id(pod.template), placement.key)
        if key not in cache:
            cache[key] = with_volumes(pod.template, placement)
        out.append(replace(pod, template=cache[key]))
    return out
