"""The workloads a controller creates for a custom resource (a Prometheus's StatefulSets, a LeaderWorkerSet's),
as documents that remember where in the resource their pod spec is written.

A derived document starts where its resource does and reuses the resource's own fields, so every field keeps
its line; `pod_spec_at` names the resource's field that the derived pod spec stands for (`spec` of a
Prometheus, `spec.leaderWorkerTemplate.workerTemplate.spec` of a LeaderWorkerSet), so what is wrong with the
pod spec is reported at the path the user wrote, not at the derived StatefulSet's `spec.template.spec`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from karpplan.errors import InputProblem, Origin
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, line_of

Derived = TypeVar("Derived")


@dataclass(frozen=True)
class FieldAlias:
    """A field of a derived pod spec (`under`, its full path) that the resource writes at `written`;
    `same_shape`: what lies below it is written below `written` the same way (else every such field is
    `written` itself: a field the operator makes from a setting)."""

    under: str
    written: str
    same_shape: bool = True
    fix: str = ""  # what to change in the resource for a finding on this field ("" when the finding's own fix does)


@dataclass(frozen=True, eq=False)
class DerivedDocument(Document):
    """A workload a controller creates for a custom resource; `pod_spec_at`: where the resource writes its pod
    spec."""

    pod_spec_at: str = "spec"
    # Where the resource writes what the derived pod spec holds elsewhere than under `pod_spec_at` (a
    # CloudNativePG Cluster's tolerations at `spec.affinity.tolerations`): (the path under `pod_spec_at`, the
    # resource's own path), longest first; a field the operator adds points at the field that makes it add it.
    field_aliases: tuple[FieldAlias, ...] = ()
    replicas_at: str = ""  # where the resource writes how many pods it runs ("" when it is not written)
    spread_fix: str = ""  # how to spread these pods in the resource's own terms ("" when the pod spec's apply)
    resource: str = ""  # `Kind namespace/name` of the resource, for what is said of it as a whole ("" unknown)
    # `Kind/name` the plan names the pods' workload by when the resource stands for this one workload alone (a
    # KafkaNodePool's pods are "KafkaNodePool/broker", as lint names its findings), else "" (`Kind/name` above).
    workload: str = ""


def workload_of(doc: Document) -> str:
    """`Kind/name` of the workload a document's pods belong to, as plan, diff and inventory name it: the user's
    resource where a derived document stands for it alone, else the document's own kind and name."""
    if isinstance(doc, DerivedDocument) and doc.workload:
        return doc.workload
    return f"{doc.kind}/{doc.name}"


def alias_of(doc: Document, path: str) -> FieldAlias | None:
    """The alias `path` (a field of the derived pod spec, under `pod_spec_at`) falls under, if any."""
    if not isinstance(doc, DerivedDocument):
        return None
    return next((alias for alias in doc.field_aliases
                 if path == alias.under or path.startswith(alias.under) and path[len(alias.under)] in ".["), None)


def written_path(doc: Document, path: str) -> str:
    """`path` (a field of the derived pod spec, under `pod_spec_at`) as the resource writes it."""
    alias = alias_of(doc, path)
    if alias is None:
        return path
    return alias.written + path[len(alias.under):] if alias.same_shape else alias.written


def pod_spec_written_at(doc: Document) -> str | None:
    """Where a derived document's pod spec is written in its resource (None for a document as the user wrote it)."""
    return doc.pod_spec_at if isinstance(doc, DerivedDocument) else None


def expand_each(documents: Sequence[Document], is_resource: Callable[[Document], bool],
                expand: Callable[[Document], tuple[list[Document], Derived]]) -> tuple[list[Document], list[Derived]]:
    """`documents` with each named resource `is_resource` picks followed by the documents `expand` makes of it (the
    resource itself stays, a kind the builder does not read), and what `expand` says was derived."""
    if not any(is_resource(d) for d in documents):
        return list(documents), []
    out: list[Document] = []
    derived: list[Derived] = []
    for doc in documents:
        out.append(doc)
        if is_resource(doc) and doc.name:
            made, what = expand(doc)
            out.extend(made)
            derived.append(what)
    return out, derived


def controller_workload(doc: Document, kind: str, name: str, replicas: int, template: object,
                        labels: Mapping[str, str], pod_spec_at: str,
                        adjust: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> DerivedDocument:
    """A `kind` (ReplicaSet, StatefulSet) of `replicas` pods of the resource's pod `template`, its labels with
    `labels` over them, as `doc`'s controller creates it, every field at its line; `adjust` rewrites the pod spec
    (a sidecar the controller adds, a placement it enforces)."""
    template = template if isinstance(template, dict) else {}
    metadata = template.get("metadata")
    written = metadata.get("labels") if isinstance(metadata, dict) else None
    pod_labels = {**(written if isinstance(written, dict) else {}), **labels}
    spec = template.get("spec")
    pod_spec: dict[str, Any] = spec if isinstance(spec, dict) else LineDict()
    if adjust is not None:
        pod_spec = adjust(pod_spec)
    line = doc.origin.line
    body = LineDict({
        "apiVersion": "apps/v1", "kind": kind,
        "metadata": LineDict({"name": name, "namespace": doc.namespace}, line=line),
        "spec": LineDict({"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                          "template": LineDict({"metadata": {"labels": pod_labels}, "spec": pod_spec},
                                               line=getattr(template, "line", line))}, line=line),
    }, line=line)
    return DerivedDocument(body, doc.origin, doc.source, pod_spec_at=pod_spec_at, resource=resource_name(doc))


def as_mapping(value: object) -> dict[str, Any]:
    """`value` when a custom resource wrote a mapping there, else an empty one (a field left out or mistyped)."""
    return value if isinstance(value, dict) else {}


def key_line(mapping: object, key: str, default: int) -> int:
    """The line `key` is written at in `mapping` (a LineDict), else `default`: where a finding on it is said."""
    return line_of(mapping, key) or default


def resource_name(doc: Document) -> str:
    """`Kind namespace/name` of a custom resource, as a duplicate of it is named."""
    return f"{doc.kind} {doc.namespace}/{doc.name}"


@dataclass(frozen=True)
class DefinedTwice(InputProblem):
    """A second definition of one object (at `origin`; the first at `first`): bad input to `plan`, which
    cannot plan two definitions of one object, but a finding of `lint` (a repository may hold alternative
    bundles side by side: argo-cd's install.yaml and ha/install.yaml), which lints the first one."""

    first: Origin = Origin("")


def without_identical_repeats(documents: Sequence[Document]) -> list[Document]:
    """`documents` less each repeat of an earlier one written the same, field for field (cert-manager's
    deploy/manifests holds Namespace cert-manager in 01-namespace.yaml and namespace.yaml): applied twice it is
    one object, so it is neither "defined twice" nor read twice. Differing definitions stay (`DefinedTwice`)."""
    seen: dict[tuple[str, str, str], list[Document]] = {}
    out: list[Document] = []
    for doc in documents:
        key = (doc.kind, doc.namespace, doc.name)
        earlier = seen.setdefault(key, []) if doc.kind and doc.name else []
        if any(e.body == doc.body for e in earlier):
            continue
        earlier.append(doc)
        out.append(doc)
    return out


def defined_as(doc: Document, key: tuple[str, str, str]) -> str:
    """What a document is called when it is defined twice: the resource a derived workload is made of (two
    SparkApplications of one name make the same Job), else its kind and `namespace/name`."""
    if isinstance(doc, DerivedDocument) and doc.resource:
        return doc.resource
    return f"{key[0]} {key[1]}/{key[2]}" if key[1] else f"{key[0]} {key[2]}"
