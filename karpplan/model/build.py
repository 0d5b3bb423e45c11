"""Loaded documents to a typed `Inventory`: pods, DaemonSets, NodePools, node classes, nodes, cluster config.

Workloads expand into replicas `<name>-<i>` that share one `PodTemplate` object (engines group pending
pods by template identity). Unknown kinds are skipped and listed in `Inventory.skipped`. A known kind with
a wrong shape or a value the API server would refuse is an error naming the field path and `file:line`;
every such problem in every document is collected into one `InputError`.

Cluster dumps (`kubectl get all -A -o yaml`) hold both controllers and their pods. A controller whose pods
are in the input is not expanded again (its pods stand for it), a ReplicaSet whose Deployment is in the
input is left to the Deployment, and a CronJob whose Jobs are in the input is left to them; each such
controller is listed in `Inventory.skipped` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TextIO, TypeVar

from karpplan.errors import InputError, InputProblem
from karpplan.inputs.charts import charts_note, is_chart
from karpplan.inputs.kustomize import is_kustomization, patches_note, transformers_note, without_patches
from karpplan.inputs.loader import DEFAULT_MAX_BYTES, Document, read_documents
from karpplan.model.admission import Admission, read_limit_range, read_resource_quota, refusal_notice
from karpplan.model.auto_mode_pools import built_in_pools
from karpplan.model.build_cluster import (
    build_cluster_config,
    build_limit_range,
    build_namespace,
    build_node,
    build_priority_class,
    build_runtime_class,
)
from karpplan.model.build_fields import Field
from karpplan.model.build_materialised import Materialised
from karpplan.model.build_materialised import (
    template_hash as template_hash,  # re-exported: lint reads it here
)
from karpplan.model.build_pods import PodContext, build_pod_template, parse_label_selector
from karpplan.model.build_pools import (
    build_node_overlay,
    build_nodeclass,
    build_nodepool,
    build_provisioner,
    node_class_notices,
)
from karpplan.model.build_storage import (
    build_persistent_volume,
    build_persistent_volume_claim,
    build_storage_class,
)
from karpplan.model.build_volumes import VolumeTemplates
from karpplan.model.cluster import ClusterConfig, Namespace, RuntimeClass
from karpplan.model.daemon_pods import DaemonPods
from karpplan.model.default_namespace import in_namespace, kustomize_namespaced, namespace_hint
from karpplan.model.derived import (
    DefinedTwice,
    defined_as,
    pod_spec_written_at,
    without_identical_repeats,
    workload_of,
)
from karpplan.model.eksctl import node_group_notices
from karpplan.model.empty_nodes import empty_nodes_notice
from karpplan.model.hooks import hooks_notice, without_unrun_hooks
from karpplan.model.inventory import InputNotice, Inventory, SkippedDocument
from karpplan.model.kinds import CLUSTER_SCOPED, FIRST_PASS, STORAGE_ROLES
from karpplan.model.kinds import document_name as document_name  # re-exported: lint and diff read them here
from karpplan.model.kinds import role_of as role_of
from karpplan.model.labels import POD_TEMPLATE_HASH
from karpplan.model.mesh_notices import injected_notices
from karpplan.model.nodes import ExistingNode, as_started
from karpplan.model.operator_workloads import expand_operator_workloads
from karpplan.model.operator_workloads import made_into_workloads as made_into_workloads  # lint reads it here
from karpplan.model.overlays import NodeOverlay
from karpplan.model.pods import DaemonSet, Pod
from karpplan.model.pools import NodeClass, NodePool, api_mix_note
from karpplan.model.prometheus_operator import DerivedWorkload
from karpplan.model.runtime_class_admission import (
    runtime_class_refusal,
    unknown_runtime_class,
    unknown_runtime_class_notice,
)
from karpplan.model.scale import ScaleOptions, Scaler, build_hpa, build_scaled_object
from karpplan.model.security_group_policies import (
    SecurityGroupPolicies,
    SecurityGroupPolicy,
    security_group_notices,
)
from karpplan.model.storage import PersistentVolume, PersistentVolumeClaim, Storage, StorageClass

MAX_REPLICAS = 100_000
MAX_PODS = 1_000_000  # all workloads together: far beyond what one plan can use, well within memory
_T = TypeVar("_T")
_TERMINAL_PHASES = ("Succeeded", "Failed")

def _container_defaults(limit_ranges: dict[str, list[tuple[str, dict[str, int]]]]) -> dict[str, dict[str, int]]:
    """Per namespace, what its LimitRanges give a container: each in name order (the API's list order), the
    first to set a resource wins, as the admission plugin applies them one after the other."""
    out: dict[str, dict[str, int]] = {}
    for namespace, ranges in limit_ranges.items():
        merged: dict[str, int] = {}
        for _, defaults in sorted(ranges, key=lambda item: item[0]):
            for name, amount in defaults.items():
                merged.setdefault(name, amount)
        out[namespace] = merged
    return out


def _pod_spec(doc: Document, template: Field) -> Field:
    """A workload's pod spec; a derived workload's (a Prometheus's StatefulSet) named as its resource writes it,
    so its problems read `spec.topologySpreadConstraints[0].maxSkew`, the field the user wrote."""
    written_at = pod_spec_written_at(doc)
    spec = template["spec"]
    return spec if written_at is None else spec.renamed(written_at)


# ------------------------------------------------------------------------------------------ builder
class _Builder:
    def __init__(self, documents: Sequence[Document], collect: list[InputProblem] | None = None,
                 scale: ScaleOptions | None = None, default_requests: Mapping[str, int] | None = None) -> None:
        self.default_requests = dict(default_requests or {})
        # Operators' resources (a Prometheus) are followed by the workloads their operator creates for them.
        # Helm test / delete hooks (helm template writes them) need no capacity at install: left out, said so.
        documents, self.hooks = without_unrun_hooks(without_identical_repeats(documents))
        self.documents, self.derived = expand_operator_workloads(documents)
        self.scaler = Scaler(scale or ScaleOptions())
        self.collect = collect
        self.problems: list[InputProblem] = []
        self.pods: list[Pod] = []
        self.daemonsets: list[DaemonSet] = []
        self.daemon_pods = DaemonPods()
        self.nodes: list[ExistingNode] = []
        self.nodepools: list[NodePool] = []
        self.nodeclasses: list[NodeClass] = []
        self.overlays: list[NodeOverlay] = []
        self.clusters: list[ClusterConfig] = []
        self.runtime_classes: list[RuntimeClass] = []
        self.namespaces: list[Namespace] = []
        self.skipped = [SkippedDocument(d.kind, document_name(d), str(d.origin), f"a hook run only at {when}")
                        for d, when in self.hooks]
        self.notices: list[InputNotice] = []
        self.context = PodContext()
        self.security_groups = SecurityGroupPolicies()
        self.materialised = Materialised()
        self.seen: dict[tuple[str, str, str], Document] = {}
        self.volumes = VolumeTemplates(Storage())
        self.admission = Admission()

    def _auto_mode_pools(self) -> list[InputNotice]:
        """EKS Auto Mode's built-in NodePools the ClusterConfigs enable and the input does not define, added to
        the pools, and the notices that say so (what the plan reads that the manifests do not write)."""
        notes: list[InputNotice] = []
        for cluster in self.clusters:
            pools = built_in_pools(cluster.auto_mode_pools, cluster.auto_mode_origin, {p.name for p in self.nodepools})
            self.nodepools.extend(pools)
            if pools:
                names = " and ".join(p.name for p in pools)
                notes.append(InputNotice(cluster.auto_mode_origin, (
                    f"ClusterConfig {cluster.name}: EKS Auto Mode's built-in NodePool{'s' if len(pools) > 1 else ''} "
                    f"{names} planned as EKS defines them (on-demand, C/M/R generation 5 or newer; general-purpose "
                    "amd64; system amd64 and arm64, tainted CriticalAddonsOnly:NoSchedule)")))
        return notes

    # ----------------------------------------------------------------------------------- driver
    def build(self) -> Inventory:
        self.context = self._first_pass()
        self.materialised = Materialised.scan(self.documents)
        self.volumes = VolumeTemplates(self._storage())
        for doc in self.documents:
            role = role_of(doc)
            if role is None:
                if read_by_disruption(doc) or (made_into_workloads(doc) and doc.name):
                    continue  # a PodDisruptionBudget: read by the disruption simulation; a Prometheus: derived
                # No kind: not a Kubernetes object (an IAM policy, a values file beside the manifests), or a
                # kustomization.yaml that writes none (kustomize reads it without).
                kind = doc.kind or ("Kustomization" if is_kustomization(doc) else "Chart" if is_chart(doc) else "")
                reason = "" if kind else "not a Kubernetes object"
                if is_chart(doc):
                    reason = "a Helm chart: its templates are read once rendered (helm template)"
                name = str(doc.body.get("name")) if is_chart(doc) else doc.name
                self.skipped.append(SkippedDocument(kind or "(no kind)", name, str(doc.origin), reason))
            elif role not in FIRST_PASS and role not in STORAGE_ROLES:
                self._document(doc, role)
        self.notices.extend(node_class_notices(self.nodepools, self.nodeclasses))
        built_in = self._auto_mode_pools()  # after the node class notices: EKS makes their NodeClass itself
        self.derived = [self._derived_as_read(d) for d in self.derived]
        self.scaler.check()
        nothing_pending = not any(not p.bound and not p.terminal for p in self.pods)
        # What karpplan does not simulate (a node group growing): the plan says it, lint
        # does not (the manifest is right as written).
        scale_notes = (*(InputNotice(origin, text) for origin, text in self.scaler.notices(nothing_pending)),
                       *node_group_notices(self.clusters), *built_in,
                       *(InputNotice(c.origin, c.message) for c in self.volumes.shared),
                       *self.admission.overruns(self.pods), *injected_notices(self.pods, self.daemonsets),
                       *security_group_notices(self.pods, self.security_groups),
                       *filter(None, [empty_nodes_notice(self.nodes, self.pods, self.daemonsets)]),
                       *(InputNotice(*note) for note in filter(None, [api_mix_note(self.nodepools),
                                                                      hooks_notice(self.hooks)])))
        daemonsets, daemon_notes = self.daemon_pods.applied(self.daemonsets)
        daemon_notices = tuple(InputNotice(origin, text) for origin, text in daemon_notes)
        if self.problems:
            # Fields read by several rules (containers: requests, host ports) report a bad shape once.
            if self.collect is None:
                raise InputError(dict.fromkeys(self.problems))
            self.collect.extend(dict.fromkeys(self.problems))
        return Inventory(
            pods=tuple(self.pods),
            daemonsets=daemonsets,
            nodes=as_started(self.nodes, {p.name: p.startup_taints for p in self.nodepools}),  # as Karpenter sees them
            nodepools=tuple(self.nodepools),
            nodeclasses=tuple(self.nodeclasses),
            clusters=tuple(self.clusters),
            runtime_classes=tuple(self.runtime_classes),
            namespaces=tuple(self.namespaces),
            skipped=tuple(self.skipped),
            notices=(*self.notices, *self.volumes.notices),
            scale_notes=(*scale_notes, *daemon_notices),
            daemon_notices=daemon_notices,
            shared_claims=tuple(self.volumes.shared),
            overlays=tuple(self.overlays),
            derived=tuple(self.derived),
            disruption_documents=tuple(d for d in self.documents if read_by_disruption(d)),
        )

    def _first_pass(self) -> PodContext:
        """The kinds pods are read against (RuntimeClasses, PriorityClasses, Namespaces, LimitRanges,
        HorizontalPodAutoscalers), read before any pod: the context every pod is built in."""
        priorities: dict[str, int] = {}
        default_priority = 0
        runtime: dict[str, RuntimeClass] = {}
        policies: dict[str, list[SecurityGroupPolicy]] = {}
        limit_ranges: dict[str, list[tuple[str, dict[str, int]]]] = {}
        for doc in self.documents:
            role = role_of(doc)
            if role not in FIRST_PASS:
                continue
            sink: list[InputProblem] = []
            root = self._root(doc, role, sink)
            if role == "RuntimeClass":
                runtime_class = build_runtime_class(doc, root)
                if not sink:
                    runtime[runtime_class.name] = runtime_class
                    self.runtime_classes.append(runtime_class)
            elif role == "PriorityClass":
                value, global_default = build_priority_class(root)
                if not sink:
                    priorities[doc.name] = value
                    default_priority = value if global_default else default_priority
            elif role in ("HorizontalPodAutoscaler", "ScaledObject"):
                build = build_hpa if role == "HorizontalPodAutoscaler" else build_scaled_object
                autoscaler = build(doc.namespace, document_name(doc), root)
                if not sink:
                    self.scaler.add(autoscaler)
            elif role == "LimitRange":
                defaults = build_limit_range(root)
                if not sink:
                    limit_ranges.setdefault(doc.namespace, []).append((doc.name, defaults))
                    self.admission.add(read_limit_range(doc.namespace, doc.name, doc.body, doc.origin))
            elif role == "ResourceQuota":
                self.admission.add(read_resource_quota(doc.namespace, doc.name, doc.body, doc.origin))
            elif role == "SecurityGroupPolicy":
                spec = root["spec"]
                groups = spec["securityGroups"]["groupIds"].string_list() if spec["securityGroups"].is_mapping() else []
                policies.setdefault(doc.namespace, []).append(SecurityGroupPolicy(
                    doc.name, doc.namespace, parse_label_selector(spec["podSelector"]),
                    parse_label_selector(spec["serviceAccountSelector"]), bool(groups), doc.origin))
            else:
                namespace = build_namespace(doc, root)
                if not sink:
                    self.namespaces.append(namespace)
            self.problems.extend(sink)
        accounts = {(d.namespace, d.name): {str(k): str(v) for k, v in labels.items()} for d in self.documents
                    if d.kind == "ServiceAccount" and isinstance(labels := d.metadata.get("labels") or {}, Mapping)}
        self.security_groups = SecurityGroupPolicies({k: tuple(v) for k, v in policies.items()}, accounts)
        return PodContext(runtime, priorities, default_priority, _container_defaults(limit_ranges),
                          self.default_requests, {n.name: n for n in self.namespaces}, self.security_groups)

    def _storage(self) -> Storage:
        """StorageClasses, PVs and PVCs, read before any pod (pods name them, in any order)."""
        classes: dict[str, StorageClass] = {}
        volumes: dict[str, PersistentVolume] = {}
        claims: dict[tuple[str, str], PersistentVolumeClaim] = {}
        for doc in self.documents:
            role = role_of(doc)
            if role not in STORAGE_ROLES:
                continue
            sink: list[InputProblem] = []
            root = self._root(doc, role, sink)
            if not sink and role == "StorageClass":
                storage_class = build_storage_class(doc, root)
                classes.setdefault(storage_class.name, storage_class)
            elif not sink and role == "PersistentVolume":
                volume = build_persistent_volume(doc, root)
                volumes.setdefault(volume.name, volume)
            elif not sink:
                claim = build_persistent_volume_claim(doc, root)
                claims.setdefault(claim.key, claim)
            self.problems.extend(sorted(sink, key=lambda problem: problem.origin.line))
        return Storage(classes, volumes, claims)

    def _root(self, doc: Document, role: str, sink: list[InputProblem]) -> Field:
        """The document as a field, with the metadata every known kind needs checked."""
        root = Field.root(doc.body, doc.origin, sink)
        metadata = root["metadata"]
        if not metadata.present:
            metadata.required("metadata with a name is required")
        elif metadata.is_mapping():
            name = metadata["name"]
            unnamed = not name.present and not metadata["generateName"].present
            if unnamed or (name.present and not name.string()):
                name.required("name or generateName is required")
            metadata["generateName"].string()
            if role not in CLUSTER_SCOPED:
                metadata["namespace"].string()
        key = (doc.kind, "" if role in CLUSTER_SCOPED else doc.namespace, document_name(doc))
        if not sink and key[2]:
            first = self.seen.setdefault(key, doc)
            if first is not doc:
                sink.append(DefinedTwice(doc.origin, f"{defined_as(doc, key)} is defined twice (first at {first.origin})",
                                         first.origin))
        return root

    def _document(self, doc: Document, role: str) -> None:
        sink: list[InputProblem] = []
        root = self._root(doc, role, sink)
        handlers: dict[str, Callable[[Document, Field, list[InputProblem]], None]] = {
            "Pod": self._pod,
            "workload": self._workload,
            "DaemonSet": self._daemonset,
            "Node": lambda d, r, s: self._keep(s, self.nodes, build_node(d, r)),
            "NodePool": lambda d, r, s: self._keep(s, self.nodepools, build_nodepool(d, r, self.notices)),
            "Provisioner": lambda d, r, s: self._keep(s, self.nodepools, build_provisioner(d, r)),
            "NodeClass": lambda d, r, s: self._keep(s, self.nodeclasses, build_nodeclass(d, r)),
            "NodeOverlay": lambda d, r, s: self._keep(s, self.overlays, build_node_overlay(d, r)),
            "ClusterConfig": lambda d, r, s: self._keep(s, self.clusters, build_cluster_config(d, r)),
        }
        if not sink:
            handlers[role](doc, root, sink)
        # Rules run field group by field group; the user reads the file top to bottom.
        self.problems.extend(sorted(sink, key=lambda problem: problem.origin.line))

    def _derived_as_read(self, derived: DerivedWorkload) -> DerivedWorkload:
        """A derived workload whose StatefulSets were all skipped (a cluster dump holds their pods) says so."""
        why = {(s.kind, s.name): s.reason for s in self.skipped if s.origin == str(derived.origin)}
        reasons = [why.get(("StatefulSet", name)) for name in derived.statefulsets]
        if derived.reason or not reasons or any(r is None for r in reasons):
            return derived
        return replace(derived, reason=f"{reasons[0]} (StatefulSet {', '.join(derived.statefulsets)})")

    @staticmethod
    def _keep(sink: list[InputProblem], into: list[_T], item: _T) -> None:
        if not sink:
            into.append(item)

    def _metadata_maps(self, metadata: Field) -> tuple[dict[str, str], dict[str, str]]:
        return metadata["labels"].string_map(), metadata["annotations"].string_map()

    # ----------------------------------------------------------------------------------- pods
    def _pod(self, doc: Document, root: Field, sink: list[InputProblem]) -> None:
        metadata, spec, status = root["metadata"], root["spec"], root["status"]
        labels, annotations = self._metadata_maps(metadata)
        owner = self._owner(metadata["ownerReferences"])
        node_name = spec["nodeName"].string() or None
        name = document_name(doc)
        if owner is not None and owner.startswith("DaemonSet/") and node_name is None:
            self.skipped.append(
                SkippedDocument("Pod", name, str(doc.origin), "pending DaemonSet pod (Karpenter ignores these)")
            )
            self.daemon_pods.note(owner, doc.namespace, name, metadata["creationTimestamp"].string(), build_pod_template(
                spec, namespace=doc.namespace, labels=labels, annotations=annotations, origin=doc.origin,
                context=self.context, admitted=True), doc.origin)  # what the DaemonSet costs a node (model/daemon_pods.py)
            return
        gated = bool(spec["schedulingGates"].elements())
        status.is_mapping()
        phase = status["phase"].string()
        template = build_pod_template(
            spec,
            namespace=doc.namespace,
            labels=labels,
            annotations=annotations,
            origin=doc.origin,
            context=self.context,
            admitted=node_name is not None or bool(phase),
        )
        if sink:
            return
        if node_name is None and not phase and self._refused(doc, "Pod", name, spec):
            self.skipped.append(SkippedDocument("Pod", name, str(doc.origin), "refused at admission: never created"))
            return
        if node_name is None and phase not in _TERMINAL_PHASES:
            template = self.volumes.pod(template, spec, doc.namespace, name, f"Pod/{name}")
        elif phase not in _TERMINAL_PHASES:
            template = self.volumes.running_pod(template, spec, doc.namespace, name, f"Pod/{name}")
        if phase not in _TERMINAL_PHASES:
            self.daemon_pods.note(owner, doc.namespace, name, metadata["creationTimestamp"].string(), template, doc.origin)
        self.pods.append(
            Pod(
                name=name,
                namespace=doc.namespace,
                workload=f"Pod/{name}",
                template=template,
                node_name=node_name,
                gated=gated,
                terminating=metadata["deletionTimestamp"].present,
                terminal=phase in _TERMINAL_PHASES,
                owner=owner,
                origin=doc.origin,
            )
        )

    @staticmethod
    def _owner(refs: Field) -> str | None:
        owner = None
        for ref in refs.mappings():
            if ref["controller"].boolean():
                owner = f"{ref['kind'].string()}/{ref['name'].string()}"
        return owner

    def _replicas(self, f: Field, default: int) -> int:
        value = f.optional_integer()
        if value is None:
            return default
        if value < 0:
            f.invalid("must be greater than or equal to 0")
            return 0
        if value > MAX_REPLICAS:
            f.invalid(f"karpplan plans at most {MAX_REPLICAS:,} replicas per workload")
            return 0
        return value

    def _job_pods(self, job_spec: Field) -> int:
        """Pods one run of a Job keeps pending at once: parallelism (default 1), capped by completions."""
        if job_spec["suspend"].boolean():
            return 0
        parallelism = self._replicas(job_spec["parallelism"], 1)
        completions_field = job_spec["completions"]
        completions = self._replicas(completions_field, 0) if completions_field.present else None
        return parallelism if completions is None else min(parallelism, completions)

    def _workload(self, doc: Document, root: Field, sink: list[InputProblem]) -> None:
        kind, name = doc.kind, document_name(doc)
        spec = root["spec"]
        if not spec.present:
            spec.required("spec is required")
        spec.is_mapping()
        if kind == "CronJob":
            job_spec = spec["jobTemplate"]["spec"]
            template = job_spec["template"]
            count = 0 if spec["suspend"].boolean() else self._job_pods(job_spec)
        elif kind == "Job":
            template = spec["template"]
            count = self._job_pods(spec)
        elif self._skipped_rollout(doc, spec):
            return
        else:
            template = spec["template"]
            count = self._replicas(spec["replicas"], 1)
        count = self.scaler.count(doc.namespace, kind, name, count, spec["replicas"].origin)
        if count > MAX_REPLICAS:
            spec["replicas"].invalid(f"scaled to {count:,}: karpplan plans at most {MAX_REPLICAS:,} replicas per workload")
            return
        if not template.present:
            template.required("a pod template is required")
        template.is_mapping()
        labels, annotations = self._metadata_maps(template["metadata"])
        if kind == "Deployment":
            # The revision's pods carry a hash of the template (matchLabelKeys may name it); replicas share it.
            labels[POD_TEMPLATE_HASH] = template_hash(template.value)
        pod_spec = _pod_spec(doc, template)
        pod_template = build_pod_template(pod_spec, namespace=doc.namespace, labels=labels, annotations=annotations,
                                          origin=template.origin, context=self.context)
        if sink:
            return
        skip_reason = self.materialised.reason(doc.namespace, kind, name) or self._refused(doc, kind, name, pod_spec)
        if skip_reason is not None:
            self.skipped.append(SkippedDocument(kind, name, str(doc.origin), skip_reason))
            return
        if len(self.pods) + count > MAX_PODS:
            root.error(f"the input expands to more than {MAX_PODS:,} pods; karpplan does not plan that many")
            return
        workload, owner = workload_of(doc), f"{kind}/{name}"
        statefulset = (name, spec) if kind == "StatefulSet" else None
        templates = self.volumes.replicas(pod_template, pod_spec, doc.namespace, workload, count, statefulset,
                                            doc.origin)
        self.pods.extend(
            Pod(
                name=f"{name}-{index}",
                namespace=doc.namespace,
                workload=workload,
                template=templates[index],
                owner=owner,
                origin=doc.origin,
            )
            for index in range(count)
        )

    def _refused(self, doc: Document, kind: str, name: str, pod_spec: Field) -> str | None:
        """Why the API server never creates this workload's pods (a LimitRange, a ResourceQuota), said."""
        runtime_classes = self.context.runtime_classes
        unknown = unknown_runtime_class(pod_spec.value, runtime_classes)
        if unknown is not None:
            self.notices.append(unknown_runtime_class_notice(doc.origin, f"{kind}/{name}", unknown))
        refusal = self.admission.refusal(doc.namespace, pod_spec.value)
        fix = None
        if refusal is None:
            refusal = runtime_class_refusal(pod_spec.value, runtime_classes)
            fix = "give the pod's nodeSelector the RuntimeClass's values (or leave them to the class), and no overhead"
        if refusal is None:
            return None
        self.notices.append(refusal_notice(doc.origin, f"{kind}/{name}", doc.namespace, refusal, fix))
        return "its pods are refused at admission: never created"

    def _skipped_rollout(self, doc: Document, spec: Field) -> bool:
        """An Argo Rollout running another workload's template (`workloadRef`): skipped, said why (True)."""
        if doc.kind != "Rollout" or spec["template"].present or not spec["workloadRef"].present:
            return False
        ref = spec["workloadRef"]
        reason = (f"its {self._replicas(spec['replicas'], 1)} replica(s) run {ref['kind'].string()}/"
                  f"{ref['name'].string()}'s template (workloadRef): not planned")
        self.skipped.append(SkippedDocument(doc.kind, document_name(doc), str(doc.origin), reason))
        return True

    def _daemonset(self, doc: Document, root: Field, sink: list[InputProblem]) -> None:
        spec = root["spec"]
        spec.is_mapping()
        template = spec["template"]
        if not template.present:
            template.required("a pod template is required")
        template.is_mapping()
        labels, annotations = self._metadata_maps(template["metadata"])
        pod_spec = _pod_spec(doc, template)
        pod_template = build_pod_template(pod_spec, namespace=doc.namespace, labels=labels, annotations=annotations,
                                          origin=template.origin, context=self.context)
        if not sink and self._refused(doc, "DaemonSet", document_name(doc), pod_spec) is None:
            self.daemonsets.append(DaemonSet(document_name(doc), doc.namespace, pod_template, doc.origin))


# ------------------------------------------------------------------------------------------ API
def read_by_disruption(doc: Document) -> bool:
    """A Node, a karpenter.sh NodePool or a PodDisruptionBudget: what the disruption simulation reads beyond
    the typed model (`Inventory.disruption_documents`)."""
    return doc.kind in ("Node", "PodDisruptionBudget") or (doc.kind == "NodePool" and doc.group == "karpenter.sh")


def build_inventory(documents: Sequence[Document], *, collect: list[InputProblem] | None = None,
                    scale: ScaleOptions | None = None, default_requests: Mapping[str, int] | None = None) -> Inventory:
    """Type every document; raises InputError with every problem (each with `file:line`).

    With `collect` (lint), the problems are appended to it instead and the inventory holds the documents
    that had none. `default_requests` (`--default-requests`): requests for containers that set none of a
    resource, below a LimitRange's defaults.
    """
    return _Builder(documents, collect, scale, default_requests).build()


def load_inventory(
    paths: Sequence[str], *, max_bytes: int = DEFAULT_MAX_BYTES, stdin: TextIO | None = None,
    scale: ScaleOptions | None = None, default_requests: Mapping[str, int] | None = None,
    namespace: str | None = None,
) -> Inventory:
    """Read `paths` (files, directories, `-`) and build the inventory.

    Raises InputError with the problems of the files that could not be read followed by the problems of
    the documents that could.
    """
    return read_input(paths, max_bytes=max_bytes, stdin=stdin, scale=scale, default_requests=default_requests,
                      namespace=namespace)[0]


def read_input(
    paths: Sequence[str], *, max_bytes: int = DEFAULT_MAX_BYTES, stdin: TextIO | None = None,
    scale: ScaleOptions | None = None, default_requests: Mapping[str, int] | None = None,
    texts: dict[str, str] | None = None, namespace: str | None = None,
) -> tuple[Inventory, list[Document]]:
    """`load_inventory`, with the documents it was built from (and, with `texts`, each file's text): what a
    command that reads them again (the HTML report's lint) takes instead of reading a file twice.
    `namespace` (`--namespace`): where the namespaced objects that name none are (`model/default_namespace.py`)."""
    documents, problems = read_documents(paths, max_bytes=max_bytes, stdin=stdin, texts=texts)
    kustomize = [note for note in (charts_note(documents), patches_note(documents), transformers_note(documents))
                 if note is not None]
    documents, problems = without_patches(documents, problems)  # a kustomize tree's patches are no objects
    documents = kustomize_namespaced(documents)
    hint = namespace_hint(documents) if namespace is None else None
    documents = in_namespace(documents, namespace)
    try:
        inventory = build_inventory(documents, scale=scale, default_requests=default_requests)
    except InputError as exc:
        problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    notes = tuple(n for n in (hint, *(InputNotice(*note) for note in kustomize)) if n is not None)
    if notes:
        inventory = replace(inventory, scale_notes=(*inventory.scale_notes, *notes))
    return inventory, documents
