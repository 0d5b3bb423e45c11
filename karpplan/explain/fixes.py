"""Reproduce and fix: tie each explained pod to its workload in the user's manifests, re-plan, and propose
the smallest changes that make it schedule.

- Workload: by namespace and name prefix (`<deployment>-<replicaset hash>-<5>`, `<statefulset>-<n>`,
  `<job>-<5>`, a bare pod's own name), the longest matching workload wins.
- Reproduce: plan the manifests as they are (Karpenter simulation: fast and deterministic) and say whether
  the workload's pods are unschedulable.
- Conflict: a deletion filter over the pod's constraints and the pools' requirements, taints and limits
  leaves a minimal set that still fails on its own.
- Fixes: each candidate change (fix_candidates.py) is applied to the typed Inventory (dataclasses.replace,
  never the YAML text), re-planned, and kept when the workload then schedules; it carries the file:line of the field
  to change and the plan's hourly cost change. Ranked: keeps the user's intent first, then cheapest.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Sequence
from dataclasses import replace

from karpplan.catalog.coverage import lacking_types
from karpplan.catalog.types import Catalog
from karpplan.explain.dialects.nodeclass import CAUSES as NODE_CLASS_CAUSES
from karpplan.explain.fix_candidates import (
    Apply,
    Candidate,
    Locator,
    candidates,
    drop_selector_key,
    with_template,
)
from karpplan.explain.report import Explanation
from karpplan.explain.structure import Fix, Item, signed_hourly
from karpplan.explain.volumes import common_zones, sentences, volume_facts, volume_fixes
from karpplan.explain.wording import item_plain
from karpplan.inputs.loader import Document
from karpplan.model import labels as L
from karpplan.model.build import read_input
from karpplan.model.inventory import Inventory
from karpplan.model.pods import PodTemplate
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.selectors import NodeSelectorTerm
from karpplan.plan import Plan
from karpplan.planner import PlanOptions, catalog_for, make_plan

MAX_PLANS = 40
_DEPLOY_SUFFIX = re.compile(r"^(?:[0-9a-z]{6,10}-)?[0-9a-z]{5}$")
_ORDINAL = re.compile(r"^\d+$")


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


def _chain(fns: Sequence[Apply]) -> Apply:
    def apply(inv: Inventory) -> Inventory:
        for fn in fns:
            inv = fn(inv)
        return inv
    return apply


# ------------------------------------------------------------------------------------ the driver
class _Planner:
    """Karpenter re-plans, each within what is left before `deadline` (else the planner's default limit). A
    re-plan the clock cut leaves pods undecided, which proves nothing: `cut` then stops the search."""

    def __init__(self, catalog: object, deadline: float | None = None) -> None:
        self.catalog = catalog
        self.plans = 0
        self.deadline = deadline  # time.monotonic() after which no more re-plans start
        self.cut = False

    @property
    def out_of_time(self) -> bool:
        return self.cut or (self.deadline is not None and time.monotonic() > self.deadline)

    @property
    def exhausted(self) -> bool:
        return self.plans >= MAX_PLANS or self.out_of_time

    def plan(self, inv: Inventory) -> Plan:
        self.plans += 1
        options = PlanOptions(engine="karpenter")
        if self.deadline is not None:
            options = replace(options, time_limit=min(options.time_limit, max(self.deadline - time.monotonic(), 0.0)))
        plan = make_plan(inv, self.catalog, options)  # type: ignore[arg-type]
        self.cut |= plan.summary.not_simulated > 0
        return plan


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
        plan = planner.plan(_chain(relax)(inv))
        return planner.cut or _unschedulable(plan, workload, namespace)  # cut: undecided, keep the constraint

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
                      region: str | None = None, zones: Sequence[str] = (), stdin: str | None = None,
                      read: tuple[Inventory, list[Document]] | None = None,
                      allow_estimated_prices: bool = False) -> None:
    """`stdin`: the text of `-` among `manifests`, read once by the caller; `read`: the caller's `read_input` of
    them, when it has one. The manifests are read once: the inventory and the documents the fixes point into
    (stdin's included) come from the same reading."""
    inv, documents = read if read is not None else read_input(manifests, stdin=None if stdin is None else io.StringIO(stdin))
    locator = Locator(documents)
    cat = catalog_for(inv, region, catalog, zones=zones, allow_estimated_prices=allow_estimated_prices)
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
            t = drop_selector_key(L.ZONE)(t)
            aff = t.affinity
            return replace(t, affinity=replace(aff, node_selector=aff.node_selector.with_requirement(
                Requirement(L.ZONE, frozenset([zone])))))
        if planner.exhausted:
            return None
        plan = planner.plan(with_template(workload, namespace, change)(inv))
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
        if (c.object, c.field) in seen and c.intent > 0 or _pins_a_lacking_type(c, planner.catalog):
            continue
        plan = planner.plan(c.apply(inv))
        if planner.cut:  # the clock cut the re-plan: the workload's pods undecided, not placed
            break
        if _unschedulable(plan, workload, namespace):
            continue
        seen.add((c.object, c.field))
        delta = plan.summary.hourly_cost - base_cost
        fixes.append(Fix(c.action, c.origin.file, c.origin.line, delta, c.object, c.field, c.intent,
                         f"{c.action}: {c.origin} ({signed_hourly(delta)})"))
    fixes.sort(key=lambda f: (f.intent, f.hourly_cost_delta, f.line))
    conflict = _minimal_conflict(planner, inv, cands, workload, namespace) if not planner.exhausted else []
    return True, conflict, fixes


def _pins_a_lacking_type(c: Candidate, catalog: object) -> bool:
    """Whether `c` drops a pod's requirement that selects only types the region's embedded catalog lacks (a RayJob's
    `node.kubernetes.io/instance-type In [g6e.2xlarge]` in us-west-2's 2022 price list): dropping it places the pod
    only by trading the hardware it pins for what the catalog has, while the fix is the catalog (the reason says
    so, with the remedy)."""
    if c.drops is None or not isinstance(catalog, Catalog) or c.drops.key not in catalog.label_keys():
        return False
    drops = c.drops
    return not any(drops.matches(t.labels) for t in catalog.instance_types) and bool(
        lacking_types(catalog, Requirements([drops])))


def documents_for_fixes(documents: Sequence[Document]) -> list[Document]:
    """The documents `plan_with_fixes` points into, kept from `plan`'s one reading of its input: all but the Nodes
    and the pods already bound to a node (the bulk of a cluster snapshot, which no fix changes)."""
    return [d for d in documents if d.kind != "Node" and not (d.kind == "Pod" and _bound(d))]


def _bound(doc: Document) -> bool:
    spec = doc.body.get("spec")
    return isinstance(spec, dict) and bool(spec.get("nodeName"))


def plan_with_fixes(plan: Plan, inventory: Inventory, documents: Sequence[Document], catalog: Catalog,
                    seconds: float) -> Plan:
    """The plan with, for each unschedulable workload, the smallest fixes `explain --manifests` would
    propose (the same search and wording), found within `seconds` of re-planning. `documents` are those the plan
    was read from (`documents_for_fixes`): no file is read again, so stdin input gets its fixes too."""
    if not plan.unschedulable:
        return plan
    targets = list(dict.fromkeys((u.workload, u.pod.split("/", 1)[0]) for u in plan.unschedulable))
    if seconds <= 0:
        return replace(plan, warnings=(*plan.warnings, _no_time_for_fixes(len(targets), len(targets))))
    locator = Locator(documents)
    planner = _Planner(catalog, time.monotonic() + seconds)
    base = planner.plan(inventory)
    found: dict[tuple[str, str], tuple[dict[str, object], ...]] = {}
    unsearched = 0
    for target in targets:
        if planner.out_of_time:
            unsearched += 1
            found[target] = ()
            continue
        found[target] = () if planner.exhausted else tuple(
            f.to_document() for f in _fix_one(planner, inventory, base, base.summary.hourly_cost, *target,
                                              locator)[2])
    warnings = (_no_time_for_fixes(unsearched, len(targets)),) if unsearched else ()
    return replace(plan, warnings=(*plan.warnings, *warnings), unschedulable=tuple(
        replace(u, fixes=found[(u.workload, u.pod.split("/", 1)[0])]) for u in plan.unschedulable))


def _no_time_for_fixes(unsearched: int, workloads: int) -> str:
    """Why some unschedulable workloads carry no fixes: the plan's time limit left no time to re-plan for them."""
    which = "the" if unsearched == workloads else f"{unsearched} of the"
    return (f"fixes not searched for {which} {workloads} unschedulable workload(s): the plan used its time limit, "
            "leaving none to re-plan with changes; a longer --time-limit lets karpplan propose them")


def _fix_sentence(item: Item) -> str:
    if item.reproduced is False:
        return " With the manifests given, the workload schedules: the failure is not reproduced."
    if not item.fixes:
        return ""
    # the fixes themselves are listed once, under the paragraph (table) or in `fixes` (JSON / YAML)
    n = len(item.fixes)
    text = (" Reproduced with the manifests: " + ("one change makes" if n == 1 else f"{n} changes each make")
            + " it schedule (the fixes that keep what the manifests ask for first, then the cheapest; with file:line "
              "and cost).")
    if item.conflict:
        text += " Conflicting constraints: " + "; ".join(item.conflict) + "."
    return text


__all__ = ["reproduce_and_fix", "plan_with_fixes", "documents_for_fixes", "match_workload", "candidates",
           "NodeSelectorTerm"]
