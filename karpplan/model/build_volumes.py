"""A pod spec's claims (volumes, ephemeral volumes, StatefulSet volumeClaimTemplates) applied to its template.

Replicas whose claims mean the same placement share one template (engines group pods by template
identity); a StatefulSet whose ordinals' claims are bound to PVs in different zones gets one template per
distinct placement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.errors import Origin
from karpplan.model.build_fields import Field
from karpplan.model.build_storage import claim_from_spec
from karpplan.model.inventory import InputNotice
from karpplan.model.pod_volumes import FROM_TEMPLATE, IN_INPUTS, MISSING, ClaimUse, place_claims, with_volumes
from karpplan.model.pods import PodTemplate
from karpplan.model.shared_claims import RWO, RWOP, SHARED_MODES, SharedClaim
from karpplan.model.storage import EFS, PersistentVolumeClaim, Storage


@dataclass(frozen=True)
class ClaimTemplate:
    """One StatefulSet `volumeClaimTemplates` entry: claims `<name>-<statefulset>-<ordinal>`."""

    name: str
    path: str
    claim: PersistentVolumeClaim  # as the controller creates it, named after the template


def claim_templates(statefulset_spec: Field, namespace: str) -> tuple[ClaimTemplate, ...]:
    out = []
    for item in statefulset_spec["volumeClaimTemplates"].mappings():
        metadata = item["metadata"]
        name = metadata["name"].string() if metadata.is_mapping() else ""
        if not name:
            metadata["name"].required("name or generateName is required")
            continue
        out.append(ClaimTemplate(name, item.path, claim_from_spec(namespace, name, metadata, item["spec"])))
    return tuple(out)


def pod_claim_uses(
    pod_spec: Field, namespace: str, pod_name: str | None, storage: Storage, replaced: frozenset[str] = frozenset()
) -> list[ClaimUse]:
    """Claims named by `spec.volumes` (persistentVolumeClaim and generic ephemeral volumes).

    `replaced`: claim names a StatefulSet's templates stand for (the controller mounts its own claims).
    `pod_name` None: a workload's replicas, whose ephemeral claims don't exist yet.
    """
    uses: list[ClaimUse] = []
    if not pod_spec.is_mapping():
        return uses
    for volume in pod_spec["volumes"].mappings():
        name = volume["name"].string()
        source = volume["persistentVolumeClaim"]
        if source.is_mapping():
            claim_name = source["claimName"].string()
            if not claim_name or claim_name in replaced:
                continue
            found = storage.claims.get((namespace, claim_name))
            claim = found or PersistentVolumeClaim(namespace, claim_name, origin=source.origin)
            uses.append(ClaimUse(name, f"{source.path}", claim, IN_INPUTS if found else MISSING))
            continue
        ephemeral = volume["ephemeral"]
        if ephemeral.is_mapping() and ephemeral["volumeClaimTemplate"].is_mapping():
            template = ephemeral["volumeClaimTemplate"]
            claim_name = f"{pod_name}-{name}" if pod_name else f"<pod>-{name}"
            found = storage.claims.get((namespace, claim_name)) if pod_name else None
            claim = found or claim_from_spec(namespace, claim_name, template["metadata"], template["spec"])
            label = "" if found else f"the pod's ephemeral PVC for volume {name}"
            uses.append(ClaimUse(name, ephemeral.path, claim, IN_INPUTS if found else FROM_TEMPLATE, label, True))
    return uses


def _backend(use: ClaimUse, storage: Storage) -> str:
    claim = use.claim
    volume = storage.volume_for(claim)
    if volume is not None:
        return volume.backend
    name = claim.storage_class
    storage_class = storage.default_class() if name is None else storage.classes.get(name)
    return storage_class.backend if storage_class is not None else ""


def shared_claim(uses: Sequence[ClaimUse], storage: Storage, workload: str, origin: Origin,
                 replicas: int) -> SharedClaim | None:
    """The first claim all `replicas` mount that only one node (RWO) or one pod (RWOP) can use; None when none.

    Only claims in the inputs count (a missing claim's access modes are unknown); a claim that also allows
    ReadWriteMany or ReadOnlyMany can be shared; an EFS volume is shared whatever the claim asks."""
    if replicas < 2:
        return None
    for use in uses:
        modes = use.claim.access_modes
        if use.source in (MISSING, FROM_TEMPLATE) or not modes or any(m in modes for m in SHARED_MODES):
            continue
        mode = RWOP if RWOP in modes else RWO if RWO in modes else ""
        backend = _backend(use, storage)
        if mode and backend != EFS:
            return SharedClaim(workload, origin, replicas, use.claim.name, mode, backend)
    return None


@dataclass
class VolumeTemplates:
    """Templates by placement, so replicas with the same claims' placement share one; notes collected."""

    storage: Storage
    notices: list[InputNotice] = field(default_factory=list)
    shared: list[SharedClaim] = field(default_factory=list)  # replicas that all mount one single-node claim

    def apply(self, base: PodTemplate, uses: Sequence[ClaimUse], owner: str,
              cache: dict[tuple[object, ...], PodTemplate] | None = None) -> PodTemplate:
        placement = place_claims(uses, self.storage, owner)
        self.notices.extend(n for n in placement.notes if n not in self.notices)
        if cache is None:
            return with_volumes(base, placement)
        if placement.key not in cache:
            cache[placement.key] = with_volumes(base, placement)
        return cache[placement.key]

    def pod(self, base: PodTemplate, pod_spec: Field, namespace: str, name: str, owner: str) -> PodTemplate:
        return self.apply(base, pod_claim_uses(pod_spec, namespace, name, self.storage), owner)

    def running_pod(self, base: PodTemplate, pod_spec: Field, namespace: str, name: str, owner: str) -> PodTemplate:
        """A bound pod's template with the zones of the claims the input holds: consolidation moves it, and a
        zonal volume keeps it in its zone (Karpenter adds the volumes' requirements to every pod it simulates).
        Claims not pasted say nothing and are not reported: the pod is running, so they exist."""
        uses = [u for u in pod_claim_uses(pod_spec, namespace, name, self.storage) if u.source == IN_INPUTS]
        if not uses:
            return base
        return with_volumes(base, place_claims(uses, self.storage, owner))

    def replicas(
        self, base: PodTemplate, pod_spec: Field, namespace: str, workload: str, count: int,
        statefulset: tuple[str, Field] | None = None, origin: Origin | None = None,
    ) -> list[PodTemplate]:
        """One template per replica (shared where the placement is the same). `statefulset`: (name, spec).
        `origin`: the workload's document, where a claim all replicas share is reported."""
        if count <= 0:
            return []
        templates = claim_templates(statefulset[1], namespace) if statefulset is not None else ()
        replaced = frozenset(t.name for t in templates)
        shared = pod_claim_uses(pod_spec, namespace, None, self.storage, replaced)
        one_node = shared_claim(shared, self.storage, workload, origin, count) if origin is not None else None
        if one_node is not None:
            self.shared.append(one_node)
        if not templates:
            return [self.apply(base, shared, workload)] * count
        sts_name = statefulset[0] if statefulset is not None else ""
        start = statefulset[1]["ordinals"]["start"].optional_integer() if statefulset is not None else None
        cache: dict[tuple[object, ...], PodTemplate] = {}
        out = []
        for index in range(count):
            uses = list(shared)
            for template in templates:
                claim_name = f"{template.name}-{sts_name}-{(start or 0) + index}"
                found = self.storage.claims.get((namespace, claim_name))
                label = f"the pod's PVC from volumeClaimTemplate {template.name}"
                if found is not None:
                    uses.append(ClaimUse(template.name, template.path, found, IN_INPUTS, label))
                else:
                    claim = PersistentVolumeClaim(
                        namespace, claim_name, template.claim.storage_class, template.claim.volume_name,
                        template.claim.request, template.claim.access_modes, template.claim.origin,
                    )
                    uses.append(ClaimUse(template.name, template.path, claim, FROM_TEMPLATE, label))
            out.append(self.apply(base, uses, workload, cache))
        return out
