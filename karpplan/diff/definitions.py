"""What each side of a diff defines: its workloads and NodePools by identity, with a digest of how each is
written and where (`file:line`), so that the two sides can be matched and told apart.

A workload is matched by kind, namespace and name (`Deployment/shop/web`), a pool by name. Two definitions
are the same when their documents are, ignoring what the API server writes (`status`, `resourceVersion`,
`managedFields`, ...) and key order: a reformatted file changes nothing. A NodePool's definition includes the
node class it references, whose changes change what the pool launches; a workload's, the
HorizontalPodAutoscalers that scale it (their `minReplicas` sets how many pods are planned).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpplan.diff.effect import pool_effect
from karpplan.diff.pdbs import PdbState, pdb_states
from karpplan.inputs.loader import Document
from karpplan.lint.context import object_name
from karpplan.model.build import document_name, role_of
from karpplan.model.inventory import Inventory

WORKLOAD_ROLES = ("workload", "DaemonSet", "Pod")
POOL_ROLES = ("NodePool", "Provisioner")
KEPT_METADATA = ("name", "generateName", "namespace", "labels", "annotations")
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")


@dataclass(frozen=True)
class Definition:
    key: str  # `Kind/namespace/name` for a workload, the name for a pool
    digest: str
    file: str
    line: int
    # the documents as written (a pool's node class second), for `fields.changed_fields`
    written: tuple[Mapping[str, Any], ...] = field(default=(), compare=False, repr=False)
    # a pool's settings in effect, in v1 terms (`effect.pool_effect`): how a migration across APIs is compared
    effect: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _written(body: Mapping[str, Any]) -> dict[str, Any]:
    """The document as its author wrote it: without status and the metadata the API server fills in."""
    out = {k: v for k, v in body.items() if k != "status"}
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping):
        kept = {k: v for k, v in metadata.items() if k in KEPT_METADATA}
        annotations = kept.get("annotations")
        if isinstance(annotations, Mapping):
            kept["annotations"] = {k: v for k, v in annotations.items() if k not in SERVER_ANNOTATIONS}
        out["metadata"] = kept
    return out


def digest(*bodies: Mapping[str, Any]) -> str:
    text = json.dumps([_written(b) for b in bodies], sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _node_class_name(body: Mapping[str, Any]) -> str | None:
    spec = body.get("spec")
    if not isinstance(spec, Mapping):
        return None
    template = spec.get("template")
    template_spec = template.get("spec") if isinstance(template, Mapping) else None
    for ref in ((template_spec or {}).get("nodeClassRef") if isinstance(template_spec, Mapping) else None,
                spec.get("providerRef")):
        if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
            return str(ref["name"])
    return None


def _owned(body: Mapping[str, Any]) -> bool:
    """A pod a controller made (a cluster dump's replica): its workload is the controller, not the pod."""
    metadata = body.get("metadata")
    return isinstance(metadata, Mapping) and bool(metadata.get("ownerReferences"))


def _scalers(documents: Sequence[Document]) -> dict[str, list[Mapping[str, Any]]]:
    """Workload key -> the HorizontalPodAutoscalers that scale it (`spec.scaleTargetRef`): a Helm chart's replica
    bump is often the HPA's `minReplicas`, so the HPA is part of the workload's definition."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for doc in documents:
        if role_of(doc) not in ("HorizontalPodAutoscaler", "ScaledObject"):
            continue
        spec = doc.body.get("spec")
        target = spec.get("scaleTargetRef") if isinstance(spec, Mapping) else None
        if isinstance(target, Mapping) and target.get("name"):
            kind = target.get("kind") or ("Deployment" if role_of(doc) == "ScaledObject" else "")  # KEDA's default
            if kind:
                out.setdefault(f"{kind}/{doc.namespace}/{target['name']}", []).append(doc.body)
    return out


@dataclass(frozen=True)
class Definitions:
    workloads: Mapping[str, Definition]
    pools: Mapping[str, Definition]
    objects: frozenset[str] = frozenset()  # every object as lint names it (`Kind/namespace/name`, `Kind/name`)
    budgets: Mapping[str, PdbState] = field(default_factory=dict)  # PodDisruptionBudgets by `namespace/name`
    overlays: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # NodeOverlays by name, as written


def _effects(documents: Sequence[Document], inventory: Inventory | None) -> dict[str, dict[str, Any]]:
    """Pool name -> its settings in effect (`effect.pool_effect`), for the pools the planner read."""
    if inventory is None:
        return {}
    bodies = {document_name(d): d.body for d in documents if role_of(d) in POOL_ROLES}
    classes = {c.name: c for c in inventory.nodeclasses}
    out: dict[str, dict[str, Any]] = {}
    for pool in inventory.nodepools:
        body = bodies.get(pool.name)
        if body is not None:
            ref = pool.node_class_ref
            out.setdefault(pool.name, pool_effect(pool, body, classes.get(ref.name) if ref is not None else None))
    return out


def definitions(documents: Sequence[Document], inventory: Inventory | None = None) -> Definitions:
    """The workloads and pools `documents` define (the first definition of a key wins, as the planner reads);
    with the `inventory` the planner built of them, each pool's settings in effect too."""
    classes = {document_name(d): d for d in documents if role_of(d) == "NodeClass"}
    effects = _effects(documents, inventory)
    scalers = _scalers(documents)
    workloads: dict[str, Definition] = {}
    pools: dict[str, Definition] = {}
    for doc in documents:
        role = role_of(doc)
        name = document_name(doc)
        if role in WORKLOAD_ROLES and not (role == "Pod" and _owned(doc.body)):
            key = f"{doc.kind}/{doc.namespace}/{name}"
            bodies = (doc.body, *scalers.get(key, ()))
            workloads.setdefault(key, Definition(key, digest(*bodies), doc.origin.file, doc.origin.line,
                                                 tuple(_written(b) for b in bodies)))
        elif role in POOL_ROLES:
            node_class = classes.get(_node_class_name(doc.body) or "")
            bodies = (doc.body,) if node_class is None else (doc.body, node_class.body)
            pools.setdefault(name, Definition(name, digest(*bodies), doc.origin.file, doc.origin.line,
                                              tuple(_written(b) for b in bodies), effects.get(name, {})))
    budgets = pdb_states(documents, inventory.pods) if inventory is not None else {}
    overlays = {document_name(d): {"spec": d.body.get("spec")} for d in documents if role_of(d) == "NodeOverlay"}
    return Definitions(workloads, pools, frozenset(object_name(d) for d in documents), budgets, overlays)
