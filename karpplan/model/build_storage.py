"""StorageClass, PersistentVolume and PersistentVolumeClaim documents (and claim templates) to `storage` types.

Read leniently: only the fields placement uses, with the API server's messages where a value it would
refuse matters here (a class without a provisioner, an unknown volumeBindingMode, an allowedTopologies
expression without a key or values).
"""

from __future__ import annotations

from karpplan.inputs.loader import Document
from karpplan.model.build_fields import Field
from karpplan.model.build_pods import node_selector_term
from karpplan.model.labels import normalize_key
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import amount_of
from karpplan.model.selectors import NodeSelectorTerm
from karpplan.model.storage import (
    BINDING_MODES,
    CLASS_ANNOTATION,
    DEFAULT_CLASS_ANNOTATIONS,
    EBS_IN_TREE,
    IMMEDIATE,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

# In-tree volume sources of a PV, as the driver name placement cares about.
_IN_TREE_SOURCES = (("awsElasticBlockStore", EBS_IN_TREE), ("nfs", "nfs"), ("hostPath", "hostPath"), ("local", "local"))
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def _storage_bytes(resources: Field) -> int | None:
    quantity = resources["storage"].quantity()
    return None if quantity is None else amount_of("storage", quantity)


def allowed_topologies(f: Field) -> tuple[NodeSelectorTerm, ...]:
    """`allowedTopologies`: terms ORed, each term's matchLabelExpressions ANDed (always `In`)."""
    terms: list[NodeSelectorTerm] = []
    for term in f.mappings():
        requirements: list[Requirement] = []
        for expression in term["matchLabelExpressions"].mappings():
            key = expression["key"].string()
            values = expression["values"].string_list()
            if not key:
                expression["key"].required("key is required")
            if not values:
                expression["values"].required("must specify as least one value")
            if key and values:
                requirements.append(Requirement(normalize_key(key), frozenset(values)))
        if requirements:
            terms.append(NodeSelectorTerm(Requirements(requirements), origin=term.origin))
    return tuple(terms)


def build_storage_class(doc: Document, root: Field) -> StorageClass:
    """storage.k8s.io/v1 StorageClass: provisioner, volumeBindingMode, allowedTopologies, default marking."""
    metadata = root["metadata"]
    annotations = metadata["annotations"].string_map()
    provisioner = root["provisioner"].string()
    if not provisioner:
        root["provisioner"].required("provisioner is required")
    mode_field = root["volumeBindingMode"]
    mode = mode_field.string(IMMEDIATE)
    if mode not in BINDING_MODES:
        mode_field.unsupported(BINDING_MODES)
    return StorageClass(
        name=doc.name,
        provisioner=provisioner,
        binding_mode=mode,
        allowed_topologies=allowed_topologies(root["allowedTopologies"]),
        default=any(annotations.get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS),
        created=metadata["creationTimestamp"].value if isinstance(metadata["creationTimestamp"].value, str) else "",
        origin=doc.origin,
    )


def _pv_driver(spec: Field) -> str:
    csi = spec["csi"]
    if csi.is_mapping():
        return csi["driver"].string()
    for source, driver in _IN_TREE_SOURCES:
        if spec[source].present:
            return driver
    return ""


def build_persistent_volume(doc: Document, root: Field) -> PersistentVolume:
    """v1 PersistentVolume: backing driver, class, claimRef, node affinity, zone labels, capacity."""
    spec = root["spec"]
    spec.is_mapping()
    labels = root["metadata"]["labels"].string_map()
    claim_ref = spec["claimRef"]
    claim = None
    if claim_ref.is_mapping() and claim_ref["name"].string():
        claim = (claim_ref["namespace"].string() or "default", claim_ref["name"].string())
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    required = spec["nodeAffinity"]["required"]
    if required.is_mapping():
        node_affinity = tuple(node_selector_term(t) for t in required["nodeSelectorTerms"].elements())
    zones = tuple(z for key in _ZONE_LABELS if key in labels for z in labels[key].split("__") if z)
    capacity = spec["capacity"]
    return PersistentVolume(
        name=doc.name,
        driver=_pv_driver(spec),
        storage_class=spec["storageClassName"].string() or _annotated_class(root),
        claim=claim,
        node_affinity=node_affinity,
        zone_labels=zones,
        capacity=_storage_bytes(capacity) if capacity.is_mapping() else None,
        access_modes=frozenset(spec["accessModes"].string_list()),
        origin=doc.origin,
    )


def _annotated_class(root: Field) -> str:
    """The legacy class annotation (`volume.beta.kubernetes.io/storage-class`), "" when absent."""
    return root["metadata"]["annotations"].string_map().get(CLASS_ANNOTATION, "")


def claim_from_spec(namespace: str, name: str, metadata: Field, spec: Field) -> PersistentVolumeClaim:
    """A claim from its metadata and spec: a PVC document, a volumeClaimTemplate or an ephemeral template."""
    spec.is_mapping()
    annotations = metadata["annotations"].string_map() if metadata.is_mapping() else {}
    storage_class = spec["storageClassName"].optional_string()
    if storage_class is None and CLASS_ANNOTATION in annotations:
        storage_class = annotations[CLASS_ANNOTATION]
    resources = spec["resources"]
    request = None
    if resources.is_mapping() and resources["requests"].is_mapping():
        request = _storage_bytes(resources["requests"])
    return PersistentVolumeClaim(
        namespace=namespace,
        name=name,
        storage_class=storage_class,
        volume_name=spec["volumeName"].string(),
        request=request,
        access_modes=frozenset(spec["accessModes"].string_list()),
        origin=spec.origin,
    )


def build_persistent_volume_claim(doc: Document, root: Field) -> PersistentVolumeClaim:
    """v1 PersistentVolumeClaim."""
    claim = claim_from_spec(doc.namespace, doc.name, root["metadata"], root["spec"])
    return PersistentVolumeClaim(
        claim.namespace, claim.name, claim.storage_class, claim.volume_name, claim.request,
        claim.access_modes, doc.origin,
    )
