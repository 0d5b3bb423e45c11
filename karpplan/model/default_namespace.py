"""Objects written without a namespace put in the one `--namespace NS` names, as `kubectl apply -n NS` and
`helm install -n NS` do: Helm renders and kustomize builds seldom write `metadata.namespace`.

Only namespaced objects take it: Nodes, Namespaces, NodePools, node classes, StorageClasses, PersistentVolumes
and the other cluster-scoped kinds stay as written, and so does an object that names its own namespace
(kubectl refuses one whose namespace differs from `-n`; karpplan plans it where it says it is).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from karpplan.inputs.kustomize import is_kustomization, kustomized_namespaces
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict
from karpplan.model.inventory import InputNotice
from karpplan.model.kinds import CLUSTER_SCOPED, document_name, role_of

# Cluster-scoped kinds karpplan does not read but a chart often renders; they must not look namespaced.
_OTHER_CLUSTER_SCOPED = frozenset({
    "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "APIService", "CSIDriver", "CSINode", "IngressClass", "VolumeSnapshotClass", "VolumeAttachment",
    "PodSecurityPolicy", "ClusterIssuer", "ComponentStatus", "CertificateSigningRequest",
    "FlowSchema", "PriorityLevelConfiguration", "ClusterPolicy", "ClusterSecretStore",
})
# kubectl's rule for a namespace name (a DNS-1123 label).
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def check_namespace(name: str) -> str:
    """`--namespace`'s value, or ValueError in the API server's words when it is no namespace name."""
    if len(name) > 63 or not _LABEL.fullmatch(name):
        raise ValueError(f"{name!r} is not a namespace name: a lowercase RFC 1123 label (a-z, 0-9 and '-', "
                         "starting and ending with a letter or digit, at most 63 characters)")
    return name


def _cluster_scoped(doc: Document) -> bool:
    role = role_of(doc)
    return (role in CLUSTER_SCOPED) or doc.kind in _OTHER_CLUSTER_SCOPED


def _placed(doc: Document, namespace: str) -> Document:
    body = LineDict(doc.body, line=doc.body.line)
    body.key_lines = dict(doc.body.key_lines)
    metadata = doc.metadata
    placed = LineDict(metadata, line=metadata.line)
    placed.key_lines = dict(metadata.key_lines)
    placed["namespace"] = namespace
    body["metadata"] = placed
    return Document(body, doc.origin, doc.source)


def in_namespace(documents: Sequence[Document], namespace: str | None) -> list[Document]:
    """`documents` with every namespaced object that names no namespace put in `namespace` (a copy of its
    top level; the rest shared); all of them unchanged when `namespace` is None."""
    if namespace is None:
        return list(documents)
    out: list[Document] = []
    for doc in documents:
        written = doc.metadata.get("namespace")
        needs = not (isinstance(written, str) and written) and not _cluster_scoped(doc)
        out.append(_placed(doc, namespace) if needs else doc)
    return out


def kustomize_namespaced(documents: Sequence[Document]) -> list[Document]:
    """`documents` with each namespaced object of a file a kustomization sets `namespace:` for put in it, as
    `kustomize build` puts it (over the namespace the object writes)."""
    namespaces = kustomized_namespaces(documents)
    if not namespaces:
        return list(documents)
    out: list[Document] = []
    for doc in documents:
        namespace = namespaces.get(os.path.normpath(doc.origin.file))
        moved = namespace is not None and doc.metadata.get("namespace") != namespace and not _cluster_scoped(doc) \
            and not is_kustomization(doc)
        out.append(_placed(doc, namespace) if moved and namespace is not None else doc)
    return out


_PLANNED = ("workload", "Pod", "DaemonSet")
_SHOWN = 3


def namespace_hint(documents: Sequence[Document]) -> InputNotice | None:
    """Without `--namespace`: when workloads that name no namespace sit beside objects that all name one other
    namespace (a chart's subchart that writes `{{ .Release.Namespace }}` beside one that writes none, or a
    Namespace the input creates), they are planned in `default` though they are most likely installed there:
    say so, and the option that plans them there. None when there is nothing to say."""
    bare: list[Document] = []
    named: set[str] = set()
    for doc in documents:
        if _cluster_scoped(doc):
            if doc.kind == "Namespace" and doc.name and doc.name != "default":
                named.add(doc.name)
            continue
        written = doc.metadata.get("namespace")
        if isinstance(written, str) and written:
            named.add(written)
        elif role_of(doc) in _PLANNED:
            bare.append(doc)
    if not bare or len(named) != 1 or "default" in named:
        return None
    (namespace,) = named
    shown = ", ".join(f"{d.kind}/{document_name(d)}" for d in bare[:_SHOWN])
    more = f" and {len(bare) - _SHOWN} more" if len(bare) > _SHOWN else ""
    return InputNotice(bare[0].origin, (
        f"{len(bare)} workload(s) name no namespace ({shown}{more}) and are planned in default, while every "
        f"object that names one is in {namespace}: if they are installed with -n {namespace} (helm install -n, "
        f"kubectl apply -n), plan with --namespace {namespace}: their namespace decides which Fargate profile, "
        "LimitRange, ResourceQuota, PodDisruptionBudget and pod-affinity terms apply to them"))
