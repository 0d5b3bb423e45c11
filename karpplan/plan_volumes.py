"""Unschedulable pods whose volumes decide their zones: reasons and fixes that name the volumes.

The claims' zones are ANDed into the pod's required node affinity (model/pod_volumes.py) so every engine
honours them; the words a person reads must not pretend the pod asked for them. A pod whose volumes sit in
different zones is reported with the volumes, their zones and the PV or StorageClass file:line, and its
fix points there; a fix that would drop a zone rule the pod never wrote (it came from a volume) is not
offered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from karpplan.model.inventory import Inventory
from karpplan.model.labels import ZONE
from karpplan.model.pods import PodTemplate
from karpplan.plan import Plan, UnschedulablePod

_REQUIRED_AFFINITY = "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"


def volume_reasons(template: PodTemplate, reasons: Sequence[str]) -> tuple[str, ...]:
    """`reasons` for an unplaced pod with its volumes' zones said first; a conflict alone replaces the
    scheduler's wording (which would read as `zone In []`), keeping where the workload is defined. Zones
    outside the cluster's (a placeholder, another region's) are said by `catalog.zones.outside_zones_reason`."""
    volumes = template.volumes
    if not volumes.claims:
        return tuple(reasons)
    if volumes.conflict:
        return (volumes.reason(), *reasons[-1:])
    return (volumes.reason(), *reasons)


def _volume_fix(template: PodTemplate) -> dict[str, object]:
    action, origin, blamed = template.volumes.fix()
    kind, _, name = blamed.source.partition(" ")
    kind = "PersistentVolume" if kind == "PV" else kind
    field = "spec.nodeAffinity" if kind == "PersistentVolume" else "allowedTopologies"
    return {"action": action, "object": f"{kind}/{name}", "field": field, "file": origin.file,
            "line": origin.line, "hourlyCostDelta": None, "plain": f"{action}: {origin}"}


def _pretended(fix: Mapping[str, object]) -> bool:
    """A fix that edits the pod's required node affinity on the zone key."""
    return fix.get("field") == _REQUIRED_AFFINITY and str(fix.get("action", "")).startswith(f"remove {ZONE} ")


def with_volume_fixes(plan: Plan, inventory: Inventory) -> Plan:
    """The plan's unschedulable pods with volume fixes: the volume to move for a conflict; no fix that
    removes a zone rule only the pod's volumes wrote."""
    templates = {p.key: p.template for p in inventory.pending}
    out: list[UnschedulablePod] = []
    changed = False
    for u in plan.unschedulable:
        template = templates.get(u.pod)
        if template is None or not template.volumes.claims:
            out.append(u)
            continue
        if template.volumes.conflict:
            fixes: tuple[Mapping[str, object], ...] = (_volume_fix(template),)
        elif template.volumes.own_zone_rule:
            fixes = u.fixes
        else:
            fixes = tuple(f for f in u.fixes if not _pretended(f))
        changed = changed or fixes != u.fixes
        out.append(replace(u, fixes=fixes))
    return replace(plan, unschedulable=tuple(out)) if changed else plan
