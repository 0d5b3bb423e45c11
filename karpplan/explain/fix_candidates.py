"""The single changes `explain --manifests` tries for a pending workload, and where each one is made.

- Candidates: one builder per kind of constraint, in the order they are tried (the pod's node selection and
  the pools' labels and requirements, the pools' taints, the pools' limits, the pod's hard topology spread,
  its required pod (anti-)affinity); each candidate names the object and field to change.
- Where: the file:line of that field, read from the manifests' line-carrying documents (Locator).
- Edits: each candidate applies to the typed Inventory (dataclasses.replace, never the YAML text);
  fixes.py re-plans with it and keeps it when the workload then schedules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, partial

from karpplan.errors import Origin
from karpplan.explain.volumes import storage_of
from karpplan.explain.wording import NODEPOOL_FIELDS, PROVISIONER_FIELDS
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.inputs.placeholders import placeholder_in
from karpplan.model import labels as L
from karpplan.model.inventory import Inventory
from karpplan.model.node_os import runs_its_os
from karpplan.model.pods import SCHEDULE_ANYWAY, Pod, PodAffinity, PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.storage import Storage
from karpplan.model.taints import ALL_EFFECTS, Toleration, untolerated

Apply = Callable[[Inventory], Inventory]
_SPEC_PATHS = {
    "Pod": ("spec",),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


@dataclass(frozen=True)
class Candidate:
    action: str
    object: str
    field: str
    origin: Origin
    intent: int
    apply: Apply
    conflict: str  # how this constraint reads in a conflict set
    drops: Requirement | None = None  # the pod's requirement this change removes, if it removes one


# ------------------------------------------------------------------------------------ locating fields
def _walk(node: object, path: Sequence[str | int]) -> tuple[object, int | None]:
    """The node at `path` and the line of its last step (None when some step is missing)."""
    line: int | None = None
    for step in path:
        if isinstance(node, LineDict) and isinstance(step, str) and step in node:
            line = node.key_lines.get(step) or line
            node = node[step]
        elif isinstance(node, LineList) and isinstance(step, int) and 0 <= step < len(node):
            line = node.item_lines[step] if step < len(node.item_lines) else line
            node = node[step]
        else:
            return None, None
    return node, line


class Locator:
    """file:line of the fields a fix changes, read from the manifests' line-carrying documents."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = documents

    @cached_property
    def storage(self) -> Storage:
        """The StorageClasses, PersistentVolumes and claims of the manifests, read once for all items."""
        return storage_of(self.documents)

    def find(self, kind: str, name: str, namespace: str | None = None) -> Document | None:
        for doc in self.documents:
            if doc.kind == kind and doc.name == name and (namespace is None or kind in ("NodePool", "Provisioner")
                                                          or (doc.namespace or "default") == namespace):
                return doc
        return None

    def at(self, doc: Document | None, fallback: Origin, *paths: Sequence[str | int]) -> Origin:
        """The first path that exists (its line), else the deepest existing prefix of the first, else fallback."""
        if doc is None:
            return fallback
        for path in paths:
            _, line = _walk(doc.body, path)
            if line is not None:
                return doc.origin.at(line)
        first = list(paths[0]) if paths else []
        while first:
            first.pop()
            _, line = _walk(doc.body, first)
            if line is not None:
                return doc.origin.at(line)
        return doc.origin


def _spec_path(kind: str) -> tuple[str, ...]:
    return _SPEC_PATHS.get(kind, ("spec", "template", "spec"))


def _steps(path: str) -> tuple[str | int, ...]:
    """`spec.workerGroupSpecs[0].template.spec` as walk steps."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"\.|\[|\]\.?", path) if part)


def _derived_from(inv: Inventory, workload: str, namespace: str) -> tuple[str, str, str] | None:
    """(kind, name, where its pod spec is written) of the custom resource a derived workload comes from (a
    RayService's worker group, a Prometheus's StatefulSet, a LeaderWorkerSet's workers): the resource is what
    the user edits, at the path `model/derived.py`'s `pod_spec_written_at` gives for the derived document."""
    for d in inv.derived:
        if d.namespace != namespace:
            continue
        for derived, written_at in d.pod_specs:
            if derived == workload:
                return d.kind, d.name, written_at
    return None


# ------------------------------------------------------------------------------------ inventory edits
def with_template(workload: str, namespace: str, change: Callable[[PodTemplate], PodTemplate]) -> Apply:
    def apply(inv: Inventory) -> Inventory:
        made: dict[int, PodTemplate] = {}
        pods: list[Pod] = []
        for pod in inv.pods:
            if pod.workload == workload and pod.namespace == namespace and not pod.bound:
                new = made.get(id(pod.template))
                if new is None:
                    new = change(pod.template)
                    made[id(pod.template)] = new
                pods.append(replace(pod, template=new))
            else:
                pods.append(pod)
        return replace(inv, pods=tuple(pods))
    return apply


def _with_pool(name: str, change: Callable[[NodePool], NodePool]) -> Apply:
    def apply(inv: Inventory) -> Inventory:
        return replace(inv, nodepools=tuple(change(p) if p.name == name else p for p in inv.nodepools))
    return apply


def drop_selector_key(key: str) -> Callable[[PodTemplate], PodTemplate]:
    def change(t: PodTemplate) -> PodTemplate:
        aff = t.affinity
        required = None if aff.required is None else tuple(
            replace(term, requirements=term.requirements.without(key)) for term in aff.required)
        return replace(t, affinity=replace(aff, node_selector=aff.node_selector.without(key), required=required))
    return change


def _own_keys(doc: Document | None, spec: Sequence[str | int]) -> set[str] | None:
    """The node label keys the pod's own nodeSelector and required node affinity name (None: unknown)."""
    if doc is None:
        return None
    node, _ = _walk(doc.body, spec)
    if not isinstance(node, dict):
        return None
    def sub(d: object, key: str) -> object:
        return d.get(key) if isinstance(d, dict) else None

    selector = sub(node, "nodeSelector")
    keys: set[str] = set(selector) if isinstance(selector, dict) else set()
    required = sub(sub(sub(node, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution")
    for term in (required.get("nodeSelectorTerms") or []) if isinstance(required, dict) else []:
        for expr in (term.get("matchExpressions") or []) if isinstance(term, dict) else []:
            if isinstance(expr, dict) and isinstance(expr.get("key"), str):
                keys.add(expr["key"])
    return keys


def _pod_requirements(t: PodTemplate) -> Requirements:
    alts = t.affinity.strict_alternatives()
    return alts[0] if alts else t.affinity.node_selector


# ------------------------------------------------------------------------------------ candidates
@dataclass(frozen=True)
class _Workload:
    """The pending workload the candidates change: its pods' template and where its manifest is."""
    name: str  # kind/name, as Pod.workload
    namespace: str
    template: PodTemplate
    doc: Document | None
    spec: tuple[str | int, ...]  # path of the pod spec inside the manifest
    obj: str  # kind/namespace/name, as a Candidate's object
    locator: Locator
    field_spec: str = "spec.template.spec"  # the same path as a Candidate's field names it

    def edit(self, change: Callable[[PodTemplate], PodTemplate]) -> Apply:
        return with_template(self.name, self.namespace, change)


def candidates(inv: Inventory, workload: str, namespace: str, locator: Locator) -> list[Candidate]:
    """Every single change that may let the workload's pending pods schedule, one kind of constraint after
    another (node selection, taints, pool limits, topology spread, pod (anti-)affinity): the order they are
    tried in, and the conflict groups' order."""
    pods = [p for p in inv.pending if p.workload == workload and p.namespace == namespace]
    if not pods:
        return []
    kind, _, wname = workload.partition("/")
    spec: tuple[str | int, ...] = _spec_path(kind)
    derived = _derived_from(inv, workload, namespace)
    if derived is not None:
        kind, wname, written_at = derived
        spec = _steps(written_at)
    field_spec = derived[2] if derived is not None else ".".join(str(s) for s in spec)
    w = _Workload(workload, namespace, pods[0].template, locator.find(kind, wname, namespace), spec,
                  f"{kind}/{namespace}/{wname}", locator, field_spec)
    pools = [p for p in inv.nodepools if not p.static and runs_its_os(p.requirements, pods[0].template)]
    return [*_node_selection_fixes(w, pools), *_toleration_fixes(w, pools), *_limit_fixes(pools, locator),
            *_spread_fixes(w), *_pod_affinity_fixes(w)]


def _node_selection_fixes(w: _Workload, pools: Sequence[NodePool]) -> list[Candidate]:
    """For each key of the pod's nodeSelector / required node affinity: the pools' side (label, widen), then
    dropping the key from the pod."""
    t, spec = w.template, w.spec
    out: list[Candidate] = []
    own = _own_keys(w.doc, spec)
    for key, req in _pod_requirements(t).items():
        # A requirement the pod did not write comes from its volumes: the fixes on the pod's side are the
        # volumes' (volumes.py); a pool that excludes the volumes' zone may still be widened.
        written = own is None or key in own
        in_selector = key in t.affinity.node_selector
        # a pool that already carries what the pod selects is the one it targets: relabelling another one
        # re-routes the pod, which gives up more than fixing the targeted pool
        targeted = any(key in p.requirements and not p.requirements[key].intersect(req).is_empty() for p in pools)
        value = req.any_value()
        unrendered = _placeholder_of(req)
        for pool in pools:
            if unrendered is not None or _placeholder_of(pool.requirements.get(key)) is not None:
                # A placeholder is no value: never written into a pool (to widen, or as a label), and a pool
                # still holding one is the manifest to render, not to widen.
                if unrendered is not None and written:
                    out.extend(_render_fixes(w, pool, key, unrendered, in_selector))
                continue
            if written and key not in pool.requirements and key not in L.WELL_KNOWN and value is not None \
                    and not req.complement and not L.marks_control_plane(key, req.finite_values()):
                out.append(_add_label_fix(w.locator, pool, key, value, in_selector, 2 if targeted else 0))
            elif key in pool.requirements and pool.requirements[key].intersect(req).is_empty():
                out.append(_widen_fix(w.locator, pool, key, req))
        if written and not (key in (L.NODEPOOL, L.PROVISIONER_NAME) and req.absent_ok and not req.allows_values()):
            # (`karpenter.sh/nodepool DoesNotExist` keeps the pod off Karpenter's nodes by design: never "fixed")
            out.append(_drop_selector_fix(w, key, req, in_selector))
    return out


def _placeholder_of(req: Requirement | None) -> str | None:
    """The unrendered template placeholder among a requirement's values (`${INTENT}`), None when there is none."""
    return None if req is None else next((p for v in sorted(req.values) if (p := placeholder_in(v))), None)


def _render_fixes(w: _Workload, pool: NodePool, key: str, placeholder: str, in_selector: bool) -> list[Candidate]:
    """The pod asks for an unrendered placeholder on `key`: the change is rendering it, to a value the pool
    allows (each the pool's own values, none of them a placeholder); never the placeholder into the pool."""
    preq = pool.requirements.get(key)
    values = preq.finite_values() if preq is not None else None
    out: list[Candidate] = []
    for value in sorted(v for v in values or () if placeholder_in(v) is None)[:1]:
        where = w.locator.at(w.doc, w.template.origin, (*w.spec, "nodeSelector", key) if in_selector else
                             (*w.spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
        field = f"{w.field_spec}.nodeSelector.{key}" if in_selector else \
            f"{w.field_spec}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        out.append(Candidate(
            f"render {placeholder} in the pod's {'nodeSelector' if in_selector else 'required node affinity'} "
            f"({key}): it is an unrendered template placeholder, not a value, so no node carries it; "
            f'{pool.kind} "{pool.name}" allows {key}={value}',
            w.obj, field, where, 1, w.edit(partial(_pin, key=key, value=value)), f"{w.obj} requires {key} {placeholder}"))
    return out


def _pin(t: PodTemplate, *, key: str, value: str) -> PodTemplate:
    t = drop_selector_key(key)(t)
    return replace(t, affinity=replace(t.affinity, node_selector=t.affinity.node_selector.with_requirement(
        Requirement(key, frozenset([value])))))


def _add_label_fix(locator: Locator, pool: NodePool, key: str, value: str, in_selector: bool,
                   intent: int) -> Candidate:
    """The pool lacks the label the pod selects on: give its nodes that label (and so a requirement on it)."""
    fields = PROVISIONER_FIELDS if pool.kind == "Provisioner" else NODEPOOL_FIELDS
    porigin = locator.at(locator.find(pool.kind, pool.name), pool.origin, ("spec", "template", "metadata", "labels"),
                         ("spec", "labels"), ("spec", "template"))
    return Candidate(
        f'add the label {key}: {value} to {pool.kind} "{pool.name}" ({fields.labels}) so '
        f"its nodes carry what the pod's {'nodeSelector' if in_selector else 'nodeAffinity'} asks for",
        f"{pool.kind}/{pool.name}", fields.labels, porigin, intent,
        _with_pool(pool.name, partial(_add_label, key=key, value=value)),
        f"{pool.kind} {pool.name} has no label {key}")


def _widen_fix(locator: Locator, pool: NodePool, key: str, req: Requirement) -> Candidate:
    """The pool's requirement on `key` excludes all the pod asks for: let it also allow those values."""
    fields = PROVISIONER_FIELDS if pool.kind == "Provisioner" else NODEPOOL_FIELDS
    pdoc = locator.find(pool.kind, pool.name)
    preq = pool.requirements[key]
    idx = _requirement_index(pdoc, key)
    paths: list[Sequence[str | int]] = []
    if idx is not None:
        paths = [("spec", "template", "spec", "requirements", idx), ("spec", "requirements", idx)]
    paths.append(("spec", "template", "metadata", "labels", key))
    return Candidate(
        f'widen {pool.kind} "{pool.name}" requirement {key} ({preq}) to also allow {req}',
        f"{pool.kind}/{pool.name}", f"{fields.requirements}[{key}]", locator.at(pdoc, pool.origin, *paths), 1,
        _with_pool(pool.name, partial(_set_requirement, key=key, requirement=_widen(preq, req))),
        f"{pool.kind} {pool.name} requires {preq}")


def _drop_selector_fix(w: _Workload, key: str, req: Requirement, in_selector: bool) -> Candidate:
    """Drop `key` from the pod's nodeSelector, or from every term of its required node affinity."""
    sel_path = (*w.spec, "nodeSelector", key)
    aff_path = (*w.spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    where = w.locator.at(w.doc, w.template.origin, sel_path if in_selector else aff_path)
    field = f"{w.field_spec}.nodeSelector.{key}" if in_selector else \
        f"{w.field_spec}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    return Candidate(
        f"remove {key} from the pod's {'nodeSelector' if in_selector else 'required node affinity'} "
        f"(it asks for {req})", w.obj, field, where, 2, w.edit(drop_selector_key(key)), f"{w.obj} requires {req}",
        drops=req)


def _toleration_fixes(w: _Workload, pools: Sequence[NodePool]) -> list[Candidate]:
    """A toleration for each taint of a pool that the pod does not tolerate."""
    out: list[Candidate] = []
    for pool in pools:
        for taint in untolerated(w.template.tolerations, pool.taints, ALL_EFFECTS):
            tol = Toleration(taint.key, "Equal" if taint.value else "Exists", taint.value, taint.effect)
            where = w.locator.at(w.doc, w.template.origin, (*w.spec, "tolerations"), w.spec)
            out.append(Candidate(
                f'add a toleration {{key: {taint.key}, operator: {tol.operator}'
                + (f", value: {taint.value}" if taint.value else "") + f", effect: {taint.effect}}} "
                f'to the pod so it may run on {pool.kind} "{pool.name}" (taint {taint})',
                w.obj, f"{w.field_spec}.tolerations", where, 1, w.edit(partial(_add_toleration, toleration=tol)),
                f"{pool.kind} {pool.name} taints {taint}"))
    return out


def _limit_fixes(pools: Sequence[NodePool], locator: Locator) -> list[Candidate]:
    """Doubling, then removing, each pool's spec.limits (pools without limits have nothing to raise)."""
    out: list[Candidate] = []
    for pool in pools:
        if pool.limits is None and pool.node_limit is None:
            continue
        pdoc = locator.find(pool.kind, pool.name)
        res = next(iter(pool.limits), "cpu") if pool.limits else "nodes"
        porigin = locator.at(pdoc, pool.origin, ("spec", "limits", res), ("spec", "limits", "resources", res),
                             ("spec", "limits"))
        for factor, label in ((2, "double"), (0, "remove")):
            out.append(Candidate(f'{label} {pool.kind} "{pool.name}" spec.limits', f"{pool.kind}/{pool.name}",
                                 f"spec.limits.{res}", porigin, 1 if factor else 2,
                                 _with_pool(pool.name, partial(_scale_limits, factor=factor)),
                                 f"{pool.kind} {pool.name} limits"))
    return out


def _spread_fixes(w: _Workload) -> list[Candidate]:
    """For each hard topology spread constraint: a maxSkew one higher, then ScheduleAnyway."""
    out: list[Candidate] = []
    for i, c in enumerate(w.template.spread):
        if not c.hard:
            continue
        path: tuple[str | int, ...] = (*w.spec, "topologySpreadConstraints", i)
        origin = c.origin if c.origin.line else w.template.origin
        conflict = f"{w.obj} topologySpreadConstraints[{i}] on {c.topology_key}"
        out.append(Candidate(f"raise topologySpreadConstraints[{i}].maxSkew ({c.topology_key}) from {c.max_skew} "
                             f"to {c.max_skew + 1}", w.obj, f"{w.field_spec}.topologySpreadConstraints[{i}].maxSkew",
                             w.locator.at(w.doc, origin, (*path, "maxSkew")), 1,
                             w.edit(partial(_spread, index=i, skew=True)), conflict))
        out.append(Candidate(f"set topologySpreadConstraints[{i}].whenUnsatisfiable ({c.topology_key}) to "
                             "ScheduleAnyway", w.obj, f"{w.field_spec}.topologySpreadConstraints[{i}].whenUnsatisfiable",
                             w.locator.at(w.doc, origin, (*path, "whenUnsatisfiable"), path), 2,
                             w.edit(partial(_spread, index=i, skew=False)), conflict))
    return out


def _pod_affinity_fixes(w: _Workload) -> list[Candidate]:
    """Each required podAffinity / podAntiAffinity term made preferred (dropped from the required ones)."""
    out: list[Candidate] = []
    for attr, label in (("pod_affinity", "podAffinity"), ("pod_anti_affinity", "podAntiAffinity")):
        aff: PodAffinity = getattr(w.template, attr)
        for i, term in enumerate(aff.required):
            where = w.locator.at(w.doc, w.template.origin, (*w.spec, "affinity", label,
                                                            "requiredDuringSchedulingIgnoredDuringExecution", i))
            out.append(Candidate(
                f"make {label} term {i} ({term.topology_key}) preferred instead of required", w.obj,
                f"{w.field_spec}.affinity.{label}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", where, 2,
                w.edit(partial(_drop_affinity, attr=attr, index=i)), f"{w.obj} {label} on {term.topology_key}"))
    return out


def _scale_limits(p: NodePool, *, factor: int) -> NodePool:
    """The pool with its limits multiplied by `factor`; 0 removes them."""
    if factor == 0:
        return replace(p, limits=None, node_limit=None)
    limits = p.limits.scaled(factor) if p.limits is not None else None
    return replace(p, limits=limits, node_limit=p.node_limit * factor if p.node_limit is not None else None)


def _add_label(p: NodePool, *, key: str, value: str) -> NodePool:
    return replace(p, labels={**p.labels, key: value},
                   requirements=p.requirements.with_requirement(Requirement(key, frozenset([value]))))


def _set_requirement(p: NodePool, *, key: str, requirement: Requirement | None) -> NodePool:
    reqs = p.requirements.without(key)
    if requirement is not None:
        reqs = reqs.with_requirement(requirement)
    return replace(p, requirements=reqs, labels={a: b for a, b in p.labels.items() if a != key})


def _add_toleration(t: PodTemplate, *, toleration: Toleration) -> PodTemplate:
    return replace(t, tolerations=(*t.tolerations, toleration))


def _requirement_index(doc: Document | None, key: str) -> int | None:
    if doc is None:
        return None
    for path in (("spec", "template", "spec", "requirements"), ("spec", "requirements")):
        node, _ = _walk(doc.body, path)
        if isinstance(node, list):
            for i, entry in enumerate(node):
                if isinstance(entry, dict) and entry.get("key") == key:
                    return i
    return None


def _widen(pool_req: Requirement, pod_req: Requirement) -> Requirement | None:
    if not pool_req.complement and not pod_req.complement and pool_req.gte is None and pool_req.lte is None:
        return Requirement(pool_req.key, pool_req.values | pod_req.values)
    return None


def _spread(t: PodTemplate, index: int, *, skew: bool) -> PodTemplate:
    spread = list(t.spread)
    c = spread[index]
    spread[index] = replace(c, max_skew=c.max_skew + 1) if skew else replace(c, when_unsatisfiable=SCHEDULE_ANYWAY)
    return replace(t, spread=tuple(spread))


def _drop_affinity(t: PodTemplate, attr: str, index: int) -> PodTemplate:
    aff: PodAffinity = getattr(t, attr)
    required = tuple(term for i, term in enumerate(aff.required) if i != index)
    if attr == "pod_affinity":
        return replace(t, pod_affinity=replace(aff, required=required))
    return replace(t, pod_anti_affinity=replace(aff, required=required))
