"""What a pod's persistent volume claims mean for its placement: Fargate refusals and zone requirements.

A pod claims storage through `persistentVolumeClaim` volumes, generic ephemeral volumes (a claim
`<pod>-<volume>` made from `ephemeral.volumeClaimTemplate`) and, for a StatefulSet, its
`volumeClaimTemplates` (claims `<template>-<statefulset>-<ordinal>`, mounted even when no pod volume names
them). Each claim is looked up in the inputs, or built as its controller would create it.

Zones follow the kube-scheduler's VolumeBinding and VolumeZone filters (and Karpenter's volume topology):
a bound PV's `spec.nodeAffinity.required` terms (hostname requirements of local volumes left out, as
Karpenter does) and legacy zone labels; for a claim still to be provisioned, its StorageClass's
`allowedTopologies`. They become extra required node-affinity terms on the pod's template, ANDed with
the pod's own, so every engine honours them. Of persistent volumes, a Fargate pod mounts Amazon EFS ones
(statically provisioned), never EBS (`shared/data/fargate.md` §4, the EKS user guide's "Fargate storage"):
any other claim is a refusal, worded like the fargate-scheduler's `volumes not supported: ...` events.
Volumes without storage of their own (emptyDir, configMap, secret, projected, downwardAPI) and the pod's
ephemeral storage are no refusal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from karpplan.errors import Origin
from karpplan.model.inventory import InputNotice
from karpplan.model.labels import HOSTNAME, ZONE
from karpplan.model.pods import PodTemplate
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.selectors import NodeSelectorTerm
from karpplan.model.storage import (
    EBS,
    EFS,
    EKS_BUILT_IN_CLASS,
    HOST,
    NFS,
    PersistentVolume,
    PersistentVolumeClaim,
    Storage,
    StorageClass,
)
from karpplan.model.volume_zones import VolumeZone, VolumeZones, term_origin, term_zones

# Where a claim came from.
IN_INPUTS = "inputs"  # a PersistentVolumeClaim document
FROM_TEMPLATE = "template"  # to be created from a volumeClaimTemplate / ephemeral template
MISSING = "missing"  # named by the pod but not in the inputs

_FARGATE_MOUNTS = (EFS, NFS)
# What Fargate mounts, in the EKS user guide's words ("Fargate storage": "A Pod running on Fargate automatically
# mounts an Amazon EFS file system. You can't use dynamic persistent volume provisioning with Fargate nodes, but
# you can use static provisioning."; "Use Amazon EBS storage": "You can't mount Amazon EBS volumes to Fargate
# Pods."). Only persistent volumes are in question: emptyDir, configMap, secret and projected volumes and the
# pod's ephemeral storage (20 GiB by default) are there on Fargate too.
NO_EBS = "Amazon EBS volumes can't be mounted to Fargate Pods"
ONLY_EFS = ("of persistent volumes, Fargate Pods mount Amazon EFS ones (statically provisioned) and no other "
            "(emptyDir, configMap, secret and projected volumes and ephemeral storage are fine; EBS and hostPath "
            "are not)")


@dataclass(frozen=True)
class ClaimUse:
    """One claim a pod mounts."""

    volume: str  # the pod volume (or claim template) name
    path: str  # the field naming it
    claim: PersistentVolumeClaim
    source: str = IN_INPUTS
    label: str = ""  # how messages name the claim ("PVC www-web-0", "the pod's PVC from volumeClaimTemplate www")
    refused_already: bool = False  # the volume source itself is a Fargate refusal (generic ephemeral)

    @property
    def subject(self) -> str:
        return self.label or f"PVC {self.claim.name}"


@dataclass(frozen=True)
class VolumePlacement:
    """Fargate refusals and zone alternatives (per claim, ORed; claims ANDed) from a pod's claims."""

    refusals: tuple[tuple[str, str], ...] = ()
    terms: tuple[tuple[NodeSelectorTerm, ...], ...] = ()
    notes: tuple[InputNotice, ...] = ()  # what is unknown or assumed, at the claim's file:line
    zones: tuple[VolumeZone, ...] = ()  # the zonal claims, named for messages

    @property
    def key(self) -> tuple[object, ...]:
        """What decides the pod's template (notes don't; the claims' names only when they conflict, so that
        the message names the pod's own volumes)."""
        return self.refusals, self.terms, self.zones if VolumeZones(self.zones).conflict else ()

    @property
    def empty(self) -> bool:
        return not self.refusals and not self.terms


# ------------------------------------------------------------------------------------------ zones
def _volume_terms(volume: PersistentVolume) -> tuple[NodeSelectorTerm, ...]:
    """A PV's node affinity as ORed terms, a local or hostPath volume's without hostname requirements (Karpenter's
    `volumetopology.go` drops them for those alone: `pv.Spec.Local != nil || pv.Spec.HostPath != nil`; any other
    volume pinned to a host keeps the pod there, as kube-scheduler's VolumeBinding does); () when it constrains
    nothing."""
    terms: tuple[NodeSelectorTerm, ...] = ()
    if volume.node_affinity:
        local = volume.backend == HOST
        stripped = tuple(
            replace(t, requirements=t.requirements.without(HOSTNAME) if local else t.requirements, field_names=())
            for t in volume.node_affinity
        )
        # A term with nothing left (a local volume's hostname only) admits every node, and so does the OR.
        if not any(not t.empty and t.valid and not t.requirements for t in stripped):
            terms = stripped
    if volume.zone_labels:
        zone = NodeSelectorTerm(Requirements([Requirement(ZONE, frozenset(volume.zone_labels))]), origin=volume.origin)
        terms = tuple(_and(t, zone) for t in terms) if terms else (zone,)
    return terms


def _and(a: NodeSelectorTerm, b: NodeSelectorTerm) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        a.requirements & b.requirements, a.field_names + b.field_names, a.empty or b.empty, a.valid and b.valid,
        origin=a.origin,
    )


# ------------------------------------------------------------------------------------------ one claim
@dataclass(frozen=True)
class _Resolved:
    refusal: str | None = None
    terms: tuple[NodeSelectorTerm, ...] = ()
    notes: tuple[str, ...] = ()
    zone: VolumeZone | None = None  # the claim's zones, when its volume is zonal


def _class_of(claim: PersistentVolumeClaim, storage: Storage) -> tuple[StorageClass | None, str]:
    """The claim's StorageClass (None when unknown) and how to name it; "" name: no class at all."""
    if claim.storage_class is None:
        default = storage.default_class()
        return default, default.name if default is not None else ""
    return storage.classes.get(claim.storage_class), claim.storage_class


def _assumed_backend(name: str) -> str:
    """A StorageClass (or claim) missing from the inputs: EFS when its name says so, else EBS (EKS's built-in
    gp2 is the only class every cluster has)."""
    return EFS if "efs" in name.lower() else EBS


def _resolve(use: ClaimUse, storage: Storage, owner: str) -> _Resolved:
    """What a pod's claim means for it: whether Fargate refuses it, the nodes (zones) its volume allows, and
    what is not known (notes)."""
    claim = use.claim
    subject = use.subject
    where = f"{subject} ({owner})"
    if use.source == MISSING:
        note = f"{where} is not in the inputs: its zone is unknown, so it adds no zone constraint"
        if _assumed_backend(claim.name) == EFS:
            return _Resolved(notes=(note,))
        return _Resolved(
            refusal=f"{subject} is not in the inputs: assumed EBS (EKS's default gp2 class): {NO_EBS}",
            notes=(note,),
        )
    volume = storage.volume_for(claim)
    if volume is not None:
        return _bound(use, volume)
    if claim.volume_name:
        return _Resolved(
            notes=(f"{where} is bound to PV {claim.volume_name}, which is not in the inputs: "
                   "its zone is unknown, so it adds no zone constraint",),
        )
    storage_class, class_name = _class_of(claim, storage)
    if storage_class is None and claim.storage_class == "":
        return _Resolved(
            refusal=f"{subject} not bound (no StorageClass, and no PV in the inputs it could bind to)",
            notes=(f"{where} has no StorageClass and no PV in the inputs it could bind to: "
                   "its zone is unknown, so it adds no zone constraint",),
        )
    if storage_class is None:
        return _unknown_class(subject, where, class_name)
    return _provisioned(subject, where, storage_class)


def _bound(use: ClaimUse, volume: PersistentVolume) -> _Resolved:
    """A claim bound to a PV of the inputs: the PV's node affinity, and its driver for Fargate."""
    refusal = None
    if volume.backend not in _FARGATE_MOUNTS:
        what = NO_EBS if volume.backend == EBS else ONLY_EFS
        # StatefulSet claims are named by their template, so that replicas can share a template.
        pv = "" if use.label else f" {volume.name}"
        driver = volume.driver or "an unknown volume source"
        refusal = f"{use.subject} bound to invalid PV{pv} with CSI Driver: {driver} ({what})"
    terms = _volume_terms(volume)
    return _Resolved(refusal, terms, zone=_zone_of(use.subject, f"PV {volume.name}", terms,
                                                   term_origin(volume.node_affinity or (), volume.origin)))


def _unknown_class(subject: str, where: str, class_name: str) -> _Resolved:
    """A claim of a StorageClass the inputs lack (`class_name`), or of none when no class is the default:
    no zone constraint, its backend assumed from the name (EKS's gp2 without one)."""
    if class_name:
        backend = EBS if class_name == EKS_BUILT_IN_CLASS else _assumed_backend(class_name)
        assumed = f"uses StorageClass {class_name}, which is not in the inputs (assumed {backend})"
        note = f"{where} {assumed}: its allowed zones are unknown, so it adds no zone constraint"
    else:
        backend = EBS
        assumed = ("names no StorageClass and no StorageClass in the inputs is marked default "
                   "(assumed EKS's gp2, which is EBS)")
        note = f"{where} {assumed}: gp2 allows every zone, so it adds no zone constraint"
    refusal = None
    if backend not in _FARGATE_MOUNTS:
        refusal = f"{subject} {assumed}: {NO_EBS}"
    return _Resolved(refusal, notes=(note,))


def _provisioned(subject: str, where: str, storage_class: StorageClass) -> _Resolved:
    """A claim its StorageClass (in the inputs) will provision: the class's allowedTopologies, and its
    provisioner for Fargate."""
    refusal = None
    if storage_class.backend not in _FARGATE_MOUNTS:
        what = NO_EBS if storage_class.backend == EBS else ONLY_EFS
        if storage_class.backend == HOST:
            what = "local volumes are tied to a node, and " + ONLY_EFS
        refusal = f"{subject} uses StorageClass {storage_class.name} ({storage_class.provisioner}): {what}"
    notes: tuple[str, ...] = ()
    if not storage_class.waits_for_consumer and storage_class.backend != EFS:  # EFS is regional: no zone
        limit = " beyond the class's allowedTopologies" if storage_class.allowed_topologies else ""
        notes = (f"{where} uses StorageClass {storage_class.name} with volumeBindingMode Immediate and has no PV in "
                 f"the inputs: its volume's zone is unknown, so it adds no zone constraint{limit}",)
    topologies = storage_class.allowed_topologies
    return _Resolved(refusal, topologies, notes, _zone_of(subject, f"StorageClass {storage_class.name}", topologies,
                                                         term_origin(topologies, storage_class.origin)))


def _zone_of(subject: str, source: str, terms: tuple[NodeSelectorTerm, ...], origin: Origin) -> VolumeZone | None:
    zones = term_zones(terms) if terms else None
    return None if zones is None else VolumeZone(subject, source, zones, origin)


def place_claims(uses: Sequence[ClaimUse], storage: Storage, owner: str) -> VolumePlacement:
    """Fargate refusals, zone terms and notes for a pod's claims (`owner` names the pod or workload)."""
    refusals: list[tuple[str, str]] = []
    terms: list[tuple[NodeSelectorTerm, ...]] = []
    notes: list[InputNotice] = []
    zones: list[VolumeZone] = []
    for use in uses:
        resolved = _resolve(use, storage, owner)
        if resolved.zone is not None:
            zones.append(resolved.zone)
        if resolved.refusal is not None and not use.refused_already:
            refusals.append((use.path, f"volumes not supported: {use.volume} not supported because: {resolved.refusal}"))
        if resolved.terms:
            terms.append(resolved.terms)
        notes.extend(InputNotice(use.claim.origin, note) for note in resolved.notes)
    return VolumePlacement(tuple(refusals), tuple(terms), tuple(dict.fromkeys(notes)), tuple(zones))


# ------------------------------------------------------------------------------------------ templates
def with_volumes(template: PodTemplate, placement: VolumePlacement) -> PodTemplate:
    """The template with the claims' zone terms ANDed into its required node affinity and their refusals added."""
    if placement.empty:
        return template
    affinity = template.affinity
    if placement.terms:
        alternatives: list[NodeSelectorTerm] = list(placement.terms[0])
        for options in placement.terms[1:]:
            alternatives = [_and(a, b) for a in alternatives for b in options]
        if affinity.required is None:
            required = tuple(alternatives)
        else:
            required = tuple(_and(own, volume) for own in affinity.required for volume in alternatives)
        affinity = replace(affinity, required=required)
    fargate = replace(template.fargate, refusals=template.fargate.refusals + placement.refusals)
    own = template.affinity
    own_zone_rule = ZONE in own.node_selector or any(ZONE in t.requirements for t in own.required or ())
    volumes = VolumeZones(placement.zones, own_zone_rule) if placement.zones else template.volumes
    return replace(template, affinity=affinity, fargate=fargate, volumes=volumes)
