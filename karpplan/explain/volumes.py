"""The volumes behind a pod's zone trouble, read from the user's manifests.

For the pod a log names: its claims (`spec.volumes[].persistentVolumeClaim`, a StatefulSet's
`volumeClaimTemplates` as `<template>-<pod>`), the PersistentVolume each is bound to and that volume's zones
(`spec.nodeAffinity`, legacy zone labels), and the StorageClass's binding mode. From these: which zones
can hold every volume (none when two volumes sit in different zones), and claims waiting on an
Immediate class. Sentences name each volume, its zone and its file:line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from karpplan.errors import Origin
from karpplan.explain.structure import Fix, signed_hourly
from karpplan.inputs.loader import Document
from karpplan.model.build_fields import Field
from karpplan.model.build_storage import (
    build_persistent_volume,
    build_persistent_volume_claim,
    build_storage_class,
)
from karpplan.model.labels import ZONE
from karpplan.model.storage import PersistentVolume, PersistentVolumeClaim, Storage, StorageClass

_POD_SPECS = {"Pod": ("spec",), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec")}


@dataclass(frozen=True)
class VolumeFact:
    claim: str
    claim_origin: Origin
    volume: str | None = None  # the PV it is bound to
    volume_origin: Origin | None = None  # the PV's spec.nodeAffinity (or the PV itself)
    zones: frozenset[str] | None = None  # None: not pinned to zones
    storage_class: str | None = None
    immediate: bool = False  # unbound, and its class binds Immediately
    class_origin: Origin | None = None

    def describe(self) -> str:
        where = f" in {', '.join(sorted(self.zones))}" if self.zones else ""
        if self.volume:
            return f"PVC {self.claim} -> PV {self.volume}{where} ({self.volume_origin or self.claim_origin})"
        return f"PVC {self.claim} (not bound, {self.claim_origin})"


def storage_of(documents: Sequence[Document]) -> Storage:
    classes: dict[str, StorageClass] = {}
    volumes: dict[str, PersistentVolume] = {}
    claims: dict[tuple[str, str], PersistentVolumeClaim] = {}
    for doc in documents:
        sink: list[object] = []
        root = Field.root(doc.body, doc.origin, sink)  # type: ignore[arg-type]
        try:
            if doc.kind == "StorageClass":
                c = build_storage_class(doc, root)
                classes.setdefault(c.name, c)
            elif doc.kind == "PersistentVolume":
                v = build_persistent_volume(doc, root)
                volumes.setdefault(v.name, v)
            elif doc.kind == "PersistentVolumeClaim":
                claim = build_persistent_volume_claim(doc, root)
                claims.setdefault(claim.key, claim)
        except (ValueError, TypeError, KeyError):
            continue
    return Storage(classes, volumes, claims)


def _zones(volume: PersistentVolume) -> frozenset[str] | None:
    zones: set[str] | None = None
    for term in volume.node_affinity or ():
        req = term.requirements.get(ZONE) if ZONE in term.requirements else None
        if req is not None and not req.complement:
            zones = (zones or set()) | set(req.values)
    if volume.zone_labels:
        zones = (zones or set()) | set(volume.zone_labels) if zones is None else zones & set(volume.zone_labels)
    return frozenset(zones) if zones is not None else None


def _claim_names(doc: Document, pod_name: str) -> list[str]:
    spec_path = _POD_SPECS.get(doc.kind, ("spec", "template", "spec"))
    node: object = doc.body
    for step in spec_path:
        node = node.get(step) if isinstance(node, dict) else None
    names: list[str] = []
    for volume in (node.get("volumes") if isinstance(node, dict) else None) or []:
        pvc = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
        if isinstance(pvc, dict) and isinstance(pvc.get("claimName"), str):
            names.append(pvc["claimName"])
    if doc.kind == "StatefulSet":
        spec = doc.body.get("spec")
        for template in (spec.get("volumeClaimTemplates") if isinstance(spec, dict) else None) or []:
            meta = template.get("metadata") if isinstance(template, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                names.append(f"{meta['name']}-{pod_name}")
    return names


def _node_affinity_origin(documents: Sequence[Document], volume: PersistentVolume) -> Origin:
    for doc in documents:
        if doc.kind == "PersistentVolume" and doc.name == volume.name:
            spec = doc.body.get("spec")
            if isinstance(spec, dict) and "nodeAffinity" in spec:
                line = getattr(spec, "key_lines", {}).get("nodeAffinity")
                if line:
                    return doc.origin.at(line)
            return doc.origin
    return volume.origin


def volume_facts(documents: Sequence[Document], workload_doc: Document, namespace: str,
                 pod_name: str, storage: Storage | None = None) -> list[VolumeFact]:
    """The pod's claims and their volumes; `storage` is `storage_of(documents)` when the caller holds it (read
    once for a log's items, not once per item)."""
    storage = storage_of(documents) if storage is None else storage
    facts: list[VolumeFact] = []
    for name in _claim_names(workload_doc, pod_name):
        claim = storage.claims.get((namespace, name))
        if claim is None:
            continue
        volume = storage.volume_for(claim)
        cls = storage.classes.get(claim.storage_class) if claim.storage_class else storage.default_class()
        if volume is not None:
            facts.append(VolumeFact(name, claim.origin, volume.name, _node_affinity_origin(documents, volume),
                                    _zones(volume), cls.name if cls else None))
        else:
            immediate = cls is not None and not cls.waits_for_consumer
            facts.append(VolumeFact(name, claim.origin, storage_class=cls.name if cls else claim.storage_class,
                                    immediate=immediate, class_origin=cls.origin if cls else None))
    return facts


def common_zones(facts: Sequence[VolumeFact]) -> frozenset[str] | None:
    """Zones that hold every pinned volume (None: no volume is pinned)."""
    out: frozenset[str] | None = None
    for fact in facts:
        if fact.zones is not None:
            out = fact.zones if out is None else out & fact.zones
    return out


def sentences(facts: Sequence[VolumeFact]) -> list[str]:
    if not facts:
        return []
    out = ["The pod's volumes in the manifests: " + "; ".join(f.describe() for f in facts) + "."]
    common = common_zones(facts)
    if common is not None and not common:
        out.append("No zone holds them all: no node can mount every one of them, so no pool change helps - one "
                   "volume has to move to the other's zone (an EBS volume moves only by snapshot and restore) or be "
                   "recreated.")
    elif common:
        out.append(f"The pod can only run in {', '.join(sorted(common))}: a pool must be able to launch there.")
    for f in facts:
        if f.immediate:
            out.append(f"PVC {f.claim} is unbound and StorageClass {f.storage_class} binds Immediately "
                       f"({f.class_origin}): its volume is created in a zone chosen before the pod is scheduled; "
                       "set volumeBindingMode: WaitForFirstConsumer.")
    return out


def volume_fixes(facts: Sequence[VolumeFact], pin: Callable[[str], float | None]) -> list[Fix]:
    """When the pod's volumes share no zone: move each one to the zone the others share. `pin(zone)` re-plans
    with the pod held to that zone and gives the cost change (None: the pod still does not schedule)."""
    pinned = [f for f in facts if f.zones is not None and f.volume]
    common = common_zones(pinned)
    if common is None or common or len(pinned) < 2:
        return []
    fixes: list[Fix] = []
    for fact in pinned:
        others = common_zones([f for f in pinned if f is not fact])
        if not others or fact.volume_origin is None:
            continue
        zone = sorted(others)[0]
        delta = pin(zone)
        if delta is None:
            continue
        action = (f"move PV {fact.volume} (PVC {fact.claim}, in {', '.join(sorted(fact.zones or ()))}) to {zone}, where "
                  f"the pod's other volumes are: snapshot the volume, restore the snapshot in {zone} and point the PV's "
                  f"spec.nodeAffinity at {zone}")
        where = fact.volume_origin
        fixes.append(Fix(action, where.file, where.line, delta, f"PersistentVolume/{fact.volume}", "spec.nodeAffinity",
                         0, f"{action}: {where} ({signed_hourly(delta)})"))
    return fixes
