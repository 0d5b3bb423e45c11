"""Reproduce and fix: tie each explained pod to its workload in the user's manifests, re-plan, and propose
the smallest changes that make it schedule.

- Workload: by namespace and name prefix (`<deployment>-<replicaset hash>-<5>`, `<statefulset>-<n>`,
  `<job>-<5>`, a bare pod's own name), the longest matching workload wins.
- Reproduce: plan the manifests as they are (Karpenter simulation: fast and deterministic) and say whether
  the workload's pods are unschedulable.
- Conflict: a deletion filter over the pod's constraints and the pools' requirements, taints and limits
  leaves a minimal set that still fails on its own.
- Fixes: each candidate change is applied to the typed Inventory (dataclasses.replace, never the YAML
  text), re-planned, and kept when the workload then schedules; it carries the file:line of the field
  to change and the plan's hourly cost change. Ranked: keeps the user's intent first, then cheapest.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, partial

from karpplan.catalog.types import Catalog
from karpplan.errors import Origin
from karpplan.explain.dialects.nodeclass import CAUSES as NODE_CLASS_CAUSES
from karpplan.explain.report import Explanation
from karpplan.explain.structure import Fix, Item, signed_hourly
from karpplan.explain.volumes import common_zones, sentences, storage_of, volume_facts, volume_fixes
from karpplan.explain.wording import NODEPOOL_FIELDS, PROVISIONER_FIELDS, item_plain
from karpplan.inputs.loader import Document, read_documents
from karpplan.inputs.origins import LineDict, LineList
from karpplan.model import labels as L
from karpplan.model.build import load_inventory
from karpplan.model.inventory import Inventory
from karpplan.model.pods import SCHEDULE_ANYWAY, Pod, PodAffinity, PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.selectors import NodeSelectorTerm
from karpplan.model.storage import Storage
from karpplan.model.taints import ALL_EFFECTS, Toleration, untolerated
from karpplan.plan import Plan
from karpplan.planner import PlanOptions, catalog_for, make_plan

Apply = Callable[[Inventory], Inventory]
MAX_PLANS = 40
_DEPLOY_SUFFIX = re.compile(r"^(?:[0-9a-z]{6,10}-)?[0-9a-z]{5}$")
_ORDINAL = re.compile(r"^\d+$")
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


# ------------------------------------------------------------------------------------ inventory edits
def _with_template(workload: str, namespace: str, change: Callable[[PodTemplate], PodTemplate]) -> Apply:
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


def _chain(fns: Sequence[Apply]) -> Apply:
    def apply(inv: Inventory) -> Inventory:
        for fn in fns:
            inv = fn(inv)
        return inv
    return apply


def _drop_selector_key(key: str) -> Callable[[PodTemplate], PodTemplate]:
    def change(t: PodTemplate) -> PodTemplate:
        aff = t.affinity
        required = None if aff.required is None else tuple(
            replace(term, requirements=term.requirements.without(key)) for term in aff.required)
        return replace(t, affinity=replace(aff, node_selector=aff.node_selector.without(key), required=required))
    return change


def _own_keys(doc: Document | None, spec: Sequence[str]) -> set[str] | None:
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


# ------------------------------------------------------------------------------------ workloads
def match_workload(pod: str | None, inv: Inventory) -> tuple[str, str] | None:
    """(workload, namespace) of the manifests that the log's pod belongs to."""
    if not pod:
        return None
    ns, _, name = pod.rpartition("/")
    best: tuple[int, tuple[str, str]] | None = None
    for p in inv.pods:
        if p.bound or (ns and p.namespace != ns):
            continue
        wl_name = p.workload.split("/", 1)[1] if "/" in p.workload else p.workload
        score = -1
        if name == p.name or name == wl_name:
            score = 1000 + len(wl_name)
        elif name.startswith(wl_name + "-"):
            rest = name[len(wl_name) + 1:]
            score = 500 + len(wl_name) if _DEPLOY_SUFFIX.match(rest) or _ORDINAL.match(rest) else len(wl_name)
        if score >= 0 and (best is None or score > best[0]):
            best = (score, (p.workload, p.namespace))
    return best[1] if best else None


def _unschedulable(plan: Plan, workload: str, namespace: str) -> bool:
    return any(u.workload == workload and u.pod.startswith(namespace + "/") for u in plan.unschedulable)


# ------------------------------------------------------------------------------------ candidates
def candidates(inv: Inventory, workload: str, namespace: str, locator: Locator) -> list[Candidate]:
    pods = [p for p in inv.pending if p.workload == workload and p.namespace == namespace]
    if not pods:
        return []
    t = pods[0].template
    kind, _, wname = workload.partition("/")
    doc = locator.find(kind, wname, namespace)
    spec = _spec_path(kind)
    obj = f"{kind}/{namespace}/{wname}"
    out: list[Candidate] = []
    wk = frozenset(L.WELL_KNOWN)
    pools = [p for p in inv.nodepools if not p.static]
    # nodeSelector / required node affinity keys
    reqs = _pod_requirements(t)
    own = _own_keys(doc, spec)
    for key, req in reqs.items():
        # A requirement the pod did not write comes from its volumes: the fixes on the pod's side are the
        # volumes' (volumes.py); a pool that excludes the volumes' zone may still be widened.
        written = own is None or key in own
        sel_path = (*spec, "nodeSelector", key)
        aff_path = (*spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        in_selector = key in t.affinity.node_selector
        where = locator.at(doc, t.origin, sel_path if in_selector else aff_path)
        field = f"spec.template.spec.nodeSelector.{key}" if in_selector else \
            "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        value = req.any_value()
        # a pool that already carries what the pod selects is the one it targets: relabelling another one
        # re-routes the pod, which gives up more than fixing the targeted pool
        targeted = any(key in p.requirements and not p.requirements[key].intersect(req).is_empty() for p in pools)
        for pool in pools:
            fields = PROVISIONER_FIELDS if pool.kind == "Provisioner" else NODEPOOL_FIELDS
            if written and key not in pool.requirements and key not in wk and value is not None and not req.complement:
                pdoc = locator.find(pool.kind, pool.name)
                porigin = locator.at(pdoc, pool.origin, ("spec", "template", "metadata", "labels"),
                                     ("spec", "labels"), ("spec", "template"))
                out.append(Candidate(
                    f'add the label {key}: {value} to {pool.kind} "{pool.name}" ({fields.labels}) so '
                    f"its nodes carry what the pod's {'nodeSelector' if in_selector else 'nodeAffinity'} asks for",
                    f"{pool.kind}/{pool.name}", fields.labels, porigin, 2 if targeted else 0,
                    _with_pool(pool.name, partial(_add_label, key=key, value=value)),
                    f"{pool.kind} {pool.name} has no label {key}"))
            elif key in pool.requirements and pool.requirements[key].intersect(req).is_empty():
                pdoc = locator.find(pool.kind, pool.name)
                preq = pool.requirements[key]
                idx = _requirement_index(pdoc, key)
                paths: list[Sequence[str | int]] = []
                if idx is not None:
                    paths = [("spec", "template", "spec", "requirements", idx), ("spec", "requirements", idx)]
                paths.append(("spec", "template", "metadata", "labels", key))
                porigin = locator.at(pdoc, pool.origin, *paths)
                widened = _widen(preq, req)
                out.append(Candidate(
                    f'widen {pool.kind} "{pool.name}" requirement {key} ({preq}) to also allow {req}',
                    f"{pool.kind}/{pool.name}",
                    f"{fields.requirements}[{key}]", porigin, 1,
                    _with_pool(pool.name, partial(_set_requirement, key=key, requirement=widened)),
                    f"{pool.kind} {pool.name} requires {preq}"))
        if not written:
            continue
        out.append(Candidate(
            f"remove {key} from the pod's {'nodeSelector' if in_selector else 'required node affinity'} "
            f"(it asks for {req})", obj, field, where, 2,
            _with_template(workload, namespace, _drop_selector_key(key)), f"{obj} requires {req}"))
    # taints
    for pool in pools:
        for taint in untolerated(t.tolerations, pool.taints, ALL_EFFECTS):
            tol = Toleration(taint.key, "Equal" if taint.value else "Exists", taint.value, taint.effect)
            where = locator.at(doc, t.origin, (*spec, "tolerations"), spec)
            out.append(Candidate(
                f'add a toleration {{key: {taint.key}, operator: {tol.operator}'
                + (f", value: {taint.value}" if taint.value else "") + f", effect: {taint.effect}}} "
                f'to the pod so it may run on {pool.kind} "{pool.name}" (taint {taint})',
                obj, "spec.template.spec.tolerations", where, 1,
                _with_template(workload, namespace, partial(_add_toleration, toleration=tol)),
                f"{pool.kind} {pool.name} taints {taint}"))
    # limits
    for pool in pools:
        if pool.limits is None and pool.node_limit is None:
            continue
        pdoc = locator.find(pool.kind, pool.name)
        res = next(iter(pool.limits), "cpu") if pool.limits else "nodes"
        porigin = locator.at(pdoc, pool.origin, ("spec", "limits", res), ("spec", "limits", "resources", res),
                             ("spec", "limits"))
        for factor, label in ((2, "double"), (0, "remove")):
            def raise_limits(p: NodePool, f: int = factor) -> NodePool:
                if f == 0:
                    return replace(p, limits=None, node_limit=None)
                limits = p.limits.scaled(f) if p.limits is not None else None
                return replace(p, limits=limits, node_limit=p.node_limit * f if p.node_limit is not None else None)
            out.append(Candidate(f'{label} {pool.kind} "{pool.name}" spec.limits', f"{pool.kind}/{pool.name}",
                                 f"spec.limits.{res}", porigin, 1 if factor else 2,
                                 _with_pool(pool.name, raise_limits), f"{pool.kind} {pool.name} limits"))
    # topology spread
    for i, c in enumerate(t.spread):
        if not c.hard:
            continue
        where = locator.at(doc, c.origin if c.origin.line else t.origin, (*spec, "topologySpreadConstraints", i,
                                                                          "maxSkew"))
        swhere = locator.at(doc, c.origin if c.origin.line else t.origin, (*spec, "topologySpreadConstraints", i,
                                                                           "whenUnsatisfiable"),
                            (*spec, "topologySpreadConstraints", i))
        out.append(Candidate(f"raise topologySpreadConstraints[{i}].maxSkew ({c.topology_key}) from {c.max_skew} "
                             f"to {c.max_skew + 1}", obj, f"spec.template.spec.topologySpreadConstraints[{i}].maxSkew",
                             where, 1, _with_template(workload, namespace, partial(_spread, index=i, skew=True)),
                             f"{obj} topologySpreadConstraints[{i}] on {c.topology_key}"))
        out.append(Candidate(f"set topologySpreadConstraints[{i}].whenUnsatisfiable ({c.topology_key}) to "
                             "ScheduleAnyway", obj, f"spec.template.spec.topologySpreadConstraints[{i}].whenUnsatisfiable",
                             swhere, 2, _with_template(workload, namespace, partial(_spread, index=i, skew=False)),
                             f"{obj} topologySpreadConstraints[{i}] on {c.topology_key}"))
    # pod (anti-)affinity
    for attr, label in (("pod_affinity", "podAffinity"), ("pod_anti_affinity", "podAntiAffinity")):
        aff: PodAffinity = getattr(t, attr)
        for i, term in enumerate(aff.required):
            where = locator.at(doc, t.origin, (*spec, "affinity", label,
                                               "requiredDuringSchedulingIgnoredDuringExecution", i))
            out.append(Candidate(
                f"make {label} term {i} ({term.topology_key}) preferred instead of required", obj,
                f"spec.template.spec.affinity.{label}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", where, 2,
                _with_template(workload, namespace, partial(_drop_affinity, attr=attr, index=i)),
                f"{obj} {label} on {term.topology_key}"))
    return out


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


# ------------------------------------------------------------------------------------ the driver
class _Planner:
    def __init__(self, catalog: object, deadline: float | None = None) -> None:
        self.catalog = catalog
        self.plans = 0
        self.deadline = deadline  # time.monotonic() after which no more re-plans start

    @property
    def exhausted(self) -> bool:
        return self.plans >= MAX_PLANS or (self.deadline is not None and time.monotonic() > self.deadline)

    def plan(self, inv: Inventory) -> Plan:
        self.plans += 1
        return make_plan(inv, self.catalog, PlanOptions(engine="karpenter"))  # type: ignore[arg-type]


def _minimal_conflict(planner: _Planner, inv: Inventory, cands: Sequence[Candidate], workload: str,
                      namespace: str) -> list[str]:
    """Deletion filter: relax everything but a shrinking set; keep a constraint only when it is needed to fail."""
    groups: dict[str, list[Candidate]] = {}
    for c in cands:
        if c.intent >= 2 or c.field.endswith(".labels") or "requirements[" in c.field:
            groups.setdefault(c.conflict, []).append(c)
    keys = list(groups)
    if not keys or len(keys) > 12:
        return []

    def fails(kept: Sequence[str]) -> bool:
        relax = [groups[k][-1].apply for k in keys if k not in kept]
        return _unschedulable(planner.plan(_chain(relax)(inv)), workload, namespace)

    if fails(keys) is False:  # pragma: no cover - the baseline failed, so this is the same plan
        return []
    if fails([]):
        return []  # relaxing every constraint does not help: the cause is elsewhere
    kept = list(keys)
    for k in list(keys):
        if planner.exhausted:
            break
        trial = [x for x in kept if x != k]
        if fails(trial):
            kept = trial
    return kept


def reproduce_and_fix(explanation: Explanation, manifests: Sequence[str], *, catalog: str | None = None,
                      region: str | None = None, zones: Sequence[str] = ()) -> None:
    inv = load_inventory(manifests)
    documents, _ = read_documents([m for m in manifests if m != "-"])
    locator = Locator(documents)
    cat = catalog_for(inv, region, catalog, zones=zones)
    planner = _Planner(cat)
    base = planner.plan(inv)
    base_cost = base.summary.hourly_cost
    done: dict[tuple[str, str], tuple[bool, list[str], list[Fix]]] = {}
    unschedulable = sorted({(u.workload, u.pod.split("/", 1)[0]) for u in base.unschedulable})
    for item in explanation.item_list():
        if item.parsed.event == "Nominated" or (item.parsed.pod is None and item.parsed.reasons and all(
                r.cause in NODE_CLASS_CAUSES for r in item.parsed.reasons)):
            continue  # a nomination, or a pool's node-class error: no workload of the manifests to fix
        target = match_workload(item.parsed.pod, inv)
        if target is None and item.parsed.pod is None and len(unschedulable) == 1:
            target = unschedulable[0]
        if target is None:
            if item.parsed.pod:
                item.fix_notes.append(f"no workload in the manifests matches pod {item.parsed.pod}")
            continue
        workload, namespace = target
        item.workload = workload
        if target not in done:
            done[target] = _fix_one(planner, inv, base, base_cost, workload, namespace, locator)
        reproduced, conflict, fixes = done[target]
        item.reproduced = reproduced
        item.conflict = list(conflict)
        item.fixes = list(fixes)
        _volumes(item, planner, inv, base_cost, workload, namespace, locator)
        if not reproduced:
            item.fix_notes.append(f"with these manifests {workload} schedules: the failure is not reproduced "
                                  "(the cluster may differ: existing nodes, limits already used, other pods)")
        elif not item.fixes:
            item.fix_notes.append("no single change among the candidates makes it schedule")
        item.plain = item_plain(item) + _fix_sentence(item)


def _volumes(item: Item, planner: _Planner, inv: Inventory, base_cost: float, workload: str, namespace: str,
             locator: Locator) -> None:
    """The pod's volumes, zones and binding modes from the manifests; fixes on the volumes when they share no zone."""
    kind, _, name = workload.partition("/")
    doc = locator.find(kind, name, namespace)
    pod_name = (item.parsed.pod or "").rpartition("/")[2] or name
    facts = volume_facts(locator.documents, doc, namespace, pod_name, locator.storage) if doc is not None else []
    if not facts:
        return
    about_zones = any(r.kind == "volume" or r.key == L.ZONE or L.ZONE in r.text for r in item.all_reasons())
    if not about_zones and common_zones(facts) != frozenset() and not any(f.immediate for f in facts):
        return  # the volumes are fine and the log is about something else
    item.advice.extend(s for s in sentences(facts) if s not in item.advice)

    def pin(zone: str) -> float | None:
        def change(t: PodTemplate) -> PodTemplate:
            t = _drop_selector_key(L.ZONE)(t)
            aff = t.affinity
            return replace(t, affinity=replace(aff, node_selector=aff.node_selector.with_requirement(
                Requirement(L.ZONE, frozenset([zone])))))
        if planner.exhausted:
            return None
        plan = planner.plan(_with_template(workload, namespace, change)(inv))
        return None if _unschedulable(plan, workload, namespace) else plan.summary.hourly_cost - base_cost

    moves = volume_fixes(facts, pin)
    if moves:
        item.fixes = moves + [f for f in item.fixes if f not in moves]


def _fix_one(planner: _Planner, inv: Inventory, base: Plan, base_cost: float, workload: str, namespace: str,
             locator: Locator) -> tuple[bool, list[str], list[Fix]]:
    if not _unschedulable(base, workload, namespace):
        return False, [], []
    cands = candidates(inv, workload, namespace, locator)
    fixes: list[Fix] = []
    seen: set[tuple[str, str]] = set()
    for c in cands:
        if planner.exhausted:
            break
        if (c.object, c.field) in seen and c.intent > 0:
            continue
        plan = planner.plan(c.apply(inv))
        if _unschedulable(plan, workload, namespace):
            continue
        seen.add((c.object, c.field))
        delta = plan.summary.hourly_cost - base_cost
        fixes.append(Fix(c.action, c.origin.file, c.origin.line, delta, c.object, c.field, c.intent,
                         f"{c.action}: {c.origin} ({signed_hourly(delta)})"))
    fixes.sort(key=lambda f: (f.intent, f.hourly_cost_delta, f.line))
    conflict = _minimal_conflict(planner, inv, cands, workload, namespace) if not planner.exhausted else []
    return True, conflict, fixes


def plan_with_fixes(plan: Plan, inventory: Inventory, manifests: Sequence[str], catalog: Catalog,
                    seconds: float) -> Plan:
    """The plan with, for each unschedulable workload, the smallest fixes `explain --manifests` would
    propose (the same search and wording), found within `seconds` of re-planning."""
    if not plan.unschedulable:
        return plan
    documents, _ = read_documents([m for m in manifests if m != "-"])
    locator = Locator(documents)
    planner = _Planner(catalog, time.monotonic() + max(seconds, 0.0))
    base = planner.plan(inventory)
    found: dict[tuple[str, str], tuple[dict[str, object], ...]] = {}
    for u in plan.unschedulable:
        target = (u.workload, u.pod.split("/", 1)[0])
        if target not in found:
            found[target] = () if planner.exhausted else tuple(
                f.to_document() for f in _fix_one(planner, inventory, base, base.summary.hourly_cost, *target,
                                                  locator)[2])
    return replace(plan, unschedulable=tuple(
        replace(u, fixes=found[(u.workload, u.pod.split("/", 1)[0])]) for u in plan.unschedulable))


def _fix_sentence(item: Item) -> str:
    if item.reproduced is False:
        return " With the manifests given, the workload schedules: the failure is not reproduced."
    if not item.fixes:
        return ""
    # the fixes themselves are listed once, under the paragraph (table) or in `fixes` (JSON / YAML)
    n = len(item.fixes)
    text = (" Reproduced with the manifests: " + ("one change makes" if n == 1 else f"{n} changes each make")
            + " it schedule (the fixes, smallest first, with file:line and cost).")
    if item.conflict:
        text += " Conflicting constraints: " + "; ".join(item.conflict) + "."
    return text


__all__ = ["reproduce_and_fix", "plan_with_fixes", "match_workload", "candidates", "NodeSelectorTerm"]
