"""What rules read: the documents with their text, the builder's problems, the inventory and, for the rules
that need pools, the planner's own scheduling problem (built once, shared by every such rule)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from karpplan.catalog.types import Catalog
from karpplan.errors import InputProblem, Origin
from karpplan.inputs.charts import is_chart
from karpplan.inputs.kustomize import is_kustomization
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict
from karpplan.lint.locate import value_at
from karpplan.lint.scaled import one_replica_pods
from karpplan.lint.skip import Skip
from karpplan.model.build import made_into_workloads, role_of, template_hash
from karpplan.model.build_fields import Field
from karpplan.model.build_pods import PodContext, build_pod_template
from karpplan.model.cluster import FargateProfile
from karpplan.model.derived import DerivedDocument, alias_of, written_path
from karpplan.model.inventory import Inventory
from karpplan.model.kinds import CLUSTER_SCOPED
from karpplan.model.labels import POD_TEMPLATE_HASH
from karpplan.model.operator_workloads import expand_operator_workloads
from karpplan.model.pods import Pod, PodTemplate
from karpplan.planner import prepare
from karpplan.scheduling.problem import GroupInfo
from karpplan.scheduling.problem import Problem as SchedulingProblem

_WORKLOAD_SPEC = {"CronJob": "spec.jobTemplate.spec.template.spec", "Pod": "spec"}


def pod_spec_path(doc: Document) -> str | None:
    """Where a document's pod spec is (None for kinds without one)."""
    role = role_of(doc)
    if role == "Pod":
        return "spec"
    if role in ("workload", "DaemonSet"):
        return _WORKLOAD_SPEC.get(doc.kind, "spec.template.spec")
    return None


def object_name(doc: Document) -> str:
    """`Kind/namespace/name` (`Kind/name` for cluster-scoped kinds)."""
    if is_chart(doc):
        return f"Chart/{doc.body.get('name')}"
    kind = doc.kind or ("Kustomization" if is_kustomization(doc) else "(no kind)")  # kustomize lets it omit kind
    name = doc.name or str(doc.metadata.get("generateName") or "") or "(no name)"
    role = role_of(doc)
    namespaced = made_into_workloads(doc)  # namespaced as the workloads made of it are
    if role in ("Pod", "workload", "DaemonSet") or (role is not None and role not in CLUSTER_SCOPED) or \
            (role is None and (namespaced or doc.metadata.get("namespace"))):  # a PVC, an HPA: in a namespace
        return f"{kind}/{doc.namespace}/{name}"
    return f"{kind}/{name}"


@dataclass
class PlannerView:
    """The planner's problem for every pending pod that goes to EC2, and the pods Fargate profiles select."""

    problem: SchedulingProblem
    fargate: list[tuple[Pod, FargateProfile]]
    catalog: Catalog


@dataclass
class LintContext:
    documents: list[Document]
    inventory: Inventory
    problems: list[InputProblem]  # the builder's validation problems (those documents are not in the inventory)
    catalog: Callable[[], Catalog]
    texts: dict[str, list[str]] = field(default_factory=dict)
    cache: dict[str, object] = field(default_factory=dict)  # results several rules share
    skipped: list[Skip] = field(default_factory=list)  # what a rule could not judge, and why
    region_named: bool = True  # the region is the input's, --region's or --catalog's (else assumed)

    # ----------------------------------------------------------------------------------- documents
    @cached_property
    def by_origin(self) -> dict[Origin, Document]:
        return {d.origin: d for d in self.documents}

    @cached_property
    def _starts(self) -> dict[str, list[tuple[int, Document]]]:
        out: dict[str, list[tuple[int, Document]]] = {}
        for d in self.documents:
            out.setdefault(d.origin.file, []).append((d.origin.line, d))
        for items in out.values():
            items.sort(key=lambda item: item[0])
        return out

    def document_at(self, origin: Origin) -> Document | None:
        """The document holding `origin` (the last one starting at or before its line)."""
        found = None
        for start, doc in self._starts.get(origin.file, []):
            if start > origin.line:
                break
            found = doc
        return found

    def pod_documents(self) -> Iterator[tuple[Document, str]]:
        """(document, pod spec path) for every document carrying a pod spec: a custom resource a controller
        makes workloads of (a Prometheus, a LeaderWorkerSet) once per pod spec it writes."""
        for doc in self.documents:
            path = pod_spec_path(doc)
            if path is not None:
                yield doc, path
            for written in self._derived_by_origin.get(doc.origin, ()):
                yield doc, written

    # ----------------------------------------------------------------------------------- derived workloads
    @cached_property
    def _derived_specs(self) -> dict[tuple[str, str], str]:
        """(namespace, `Kind/name`) of each workload derived from a custom resource -> where the resource writes
        its pod spec."""
        return {(d.namespace, workload): at for d in self.inventory.derived for workload, at in d.pod_specs}

    @cached_property
    def _derived_by_origin(self) -> dict[Origin, tuple[str, ...]]:
        out: dict[Origin, tuple[str, ...]] = {}
        for d in self.inventory.derived:
            out[d.origin] = tuple(dict.fromkeys((*out.get(d.origin, ()), *(at for _, at in d.pod_specs))))
        return out

    @cached_property
    def _derived_documents(self) -> dict[tuple[Origin, str], DerivedDocument]:
        """(the resource's origin, where it writes the pod spec) -> the workload its controller creates, with the
        pod spec as the controller writes it (its defaults, the placement it adds)."""
        if not self.inventory.derived:
            return {}
        expanded, _ = expand_operator_workloads(self.documents)
        return {(d.origin, d.pod_spec_at): d for d in expanded if isinstance(d, DerivedDocument)}

    def pod_spec(self, doc: Document, spec_path: str) -> object:
        """The pod spec `doc` writes at `spec_path`: a custom resource's as its controller creates it (what it
        writes elsewhere, the defaults and the placement the controller adds), else the one written there."""
        derived = self._derived_documents.get((doc.origin, spec_path))
        if derived is not None:
            return value_at(derived.body, "spec.template.spec")
        return value_at(doc.body, spec_path)

    def written_path(self, doc: Document, path: str) -> tuple[str, str]:
        """A field path under a derived pod spec as the resource writes it (a CloudNativePG Cluster's
        `spec.tolerations` is its `spec.affinity.tolerations`), any other path as it is; and what to change in
        the resource when the field is one its controller makes of a setting ("" otherwise)."""
        for (origin, at), derived in self._derived_documents.items():
            if origin == doc.origin and (path == at or path.startswith(at) and path[len(at)] in ".["):
                alias = alias_of(derived, path)
                return written_path(derived, path), alias.fix if alias is not None else ""
        return path, ""

    def derived_document(self, doc: Document, spec_path: str) -> DerivedDocument | None:
        """The workload the controller of `doc` creates of the pod spec written at `spec_path`."""
        return self._derived_documents.get((doc.origin, spec_path))

    def spec_path(self, doc: Document, namespace: str, workload: str) -> str | None:
        """Where `doc` writes the pod spec of `workload` (`Kind/name`): a custom resource's field for the
        workloads derived from it."""
        return pod_spec_path(doc) or self._derived_specs.get((namespace, workload))

    def group_spec_path(self, group_info: GroupInfo, doc: Document) -> str:
        """Where `doc` writes the pod spec of the group's pods (`spec` when not known)."""
        pod = group_info.group.pods[0]
        return self.spec_path(doc, pod.namespace, pod.workload) or "spec"

    # ----------------------------------------------------------------------------------- planner
    @property
    def has_capacity(self) -> bool:
        """Pools, Fargate profiles or nodes (eksctl node groups' too): what the satisfiability rules need."""
        inv = self.inventory
        # A node group whose instance type is unknown offline (instanceSelector, a launch template) is left out
        # of the plan, so it is no capacity to judge against.
        return bool(inv.nodepools or inv.fargate_profiles or inv.nodes
                    or any(not g.unresolved for c in inv.clusters for g in c.node_groups))

    @cached_property
    def scaled_to_zero(self) -> frozenset[int]:
        """ids of the workload documents that make no pod now (`replicas: 0`, suspended): the planner's view
        holds one replica of each, which the capacity rules judge and the counting rules leave out."""
        expanded = {p.origin for p in self.inventory.pods}
        return frozenset(id(doc) for doc, _, _ in templates(self)
                         if role_of(doc) == "workload" and doc.origin not in expanded)

    def zero_replicas_note(self, doc: Document) -> str:
        """What a capacity finding on a workload scaled to 0 adds (empty for the others)."""
        if id(doc) not in self.scaled_to_zero:
            return ""
        return (f" ({doc.kind} {doc.name or '(no name)'} has 0 replicas now; its pod template is judged as "
                "one replica, as it will be when scaled up)")

    @cached_property
    def planner(self) -> PlannerView:
        zero = [d for d in self.documents if id(d) in self.scaled_to_zero]
        inventory = self.inventory
        extra = one_replica_pods(self.documents, zero)
        if extra:
            inventory = dataclasses.replace(inventory, pods=(*inventory.pods, *extra))
        prepared = prepare(inventory, self.catalog())
        fargate = [(placement.pod, placement.profile) for placement in prepared.fargate]
        return PlannerView(prepared.problem, fargate, prepared.catalog)

    def group_document(self, group_info: GroupInfo) -> Document | None:
        """The group's document, None when the API server would reject it (validation findings)."""
        doc = self.by_origin.get(group_info.group.pods[0].origin)
        invalid = self.cache.get("invalid")
        if doc is not None and isinstance(invalid, frozenset) and id(doc) in invalid:
            return None
        return doc


def templates(ctx: LintContext) -> list[tuple[Document, str, PodTemplate]]:
    """(document, pod spec path, template) per pod template, in input order: those the inventory holds, and
    those of workloads that expand to no pod (`replicas: 0`, a suspended Job or CronJob), which the API
    server validates all the same."""
    cached = ctx.cache.get("templates")
    if isinstance(cached, list):
        return cached
    seen: set[int] = set()
    # The first template of each pod spec the user wrote: a document's, or each of a custom resource's.
    written: dict[tuple[int, str], tuple[Document, str, PodTemplate]] = {}
    owners = [(p.origin, p.template, p.namespace, p.workload) for p in ctx.inventory.pods]
    owners += [(d.origin, d.template, d.namespace, f"DaemonSet/{d.name}") for d in ctx.inventory.daemonsets]
    for origin, template, namespace, workload in owners:
        if id(template) in seen:
            continue
        seen.add(id(template))
        doc = ctx.by_origin.get(origin)
        spec_path = ctx.spec_path(doc, namespace, workload) if doc is not None else None
        if doc is not None and spec_path is not None:
            written.setdefault((id(doc), spec_path), (doc, spec_path, template))
    found: dict[int, list[tuple[Document, str, PodTemplate]]] = {}
    for (key, _), entry in written.items():
        found.setdefault(key, []).append(entry)
    # The builder reads a workload's template but makes pods only of its replicas; a document with problems
    # is the validation rules' (and not in the inventory), a skipped one (its pods are in the input) is read
    # through those pods.
    rejected = {id(d) for p in ctx.problems if (d := ctx.document_at(p.origin)) is not None}
    skipped = {s.origin for s in ctx.inventory.skipped}
    out: list[tuple[Document, str, PodTemplate]] = []
    for doc in ctx.documents:
        entries = found.get(id(doc), [])
        if not entries and role_of(doc) == "workload" and id(doc) not in rejected and str(doc.origin) not in skipped:
            unexpanded = _unexpanded(doc)
            entries = [unexpanded] if unexpanded is not None else []
        out.extend(entries)
    ctx.cache["templates"] = out
    return out


def _unexpanded(doc: Document) -> tuple[Document, str, PodTemplate] | None:
    """The template of a workload the builder accepted and expanded to no pod, built as the builder builds
    it (same labels, with a Deployment's pod-template-hash, so matchLabelKeys selects the same)."""
    spec_path = pod_spec_path(doc)
    if spec_path is None or not isinstance(doc.body, LineDict):
        return None
    sink: list[InputProblem] = []
    template = Field.root(doc.body, doc.origin, sink).at_path(spec_path.removesuffix(".spec"))
    if not isinstance(template.value, dict):
        return None
    metadata = template["metadata"]
    labels, annotations = metadata["labels"].string_map(), metadata["annotations"].string_map()
    if doc.kind == "Deployment":
        labels[POD_TEMPLATE_HASH] = template_hash(template.value)
    pod_template = build_pod_template(template["spec"], namespace=doc.namespace, labels=labels,
                                      annotations=annotations, origin=template.origin, context=PodContext())
    return None if sink else (doc, spec_path, pod_template)
