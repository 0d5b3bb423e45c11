"""Which zones a pod's volumes allow, and when they allow none together.

A zonal volume (an EBS volume bound to a PV with `nodeAffinity` or legacy zone labels, or a claim its
StorageClass's `allowedTopologies` restricts) pins the pod to its zones: kube-scheduler's VolumeBinding and
VolumeZone filters (and Karpenter's volume topology) admit only nodes there. Two volumes in different zones
leave no node at all. That is a fact about the volumes, not about the pod's node affinity, so messages name
the volumes, their zones and where they are defined (the PV or StorageClass file:line), never an affinity
the pod does not have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.labels import ZONE
from karpplan.model.selectors import NodeSelectorTerm


@dataclass(frozen=True)
class VolumeZone:
    """One claim's zones: `subject` ("PVC data-a"), what decides them (`source`: "PV pv-a", "StorageClass gp3")
    and where that is written."""

    subject: str
    source: str
    zones: frozenset[str]
    origin: Origin = UNKNOWN

    def describe(self) -> str:
        return f"{self.subject} ({self.source}, {_zones(self.zones)}) at {self.origin}"


@dataclass(frozen=True)
class VolumeZones:
    """The zonal claims of a pod's template; `conflict` when no zone is allowed by all of them."""

    claims: tuple[VolumeZone, ...] = ()
    own_zone_rule: bool = False  # the pod's own nodeSelector / required node affinity names the zone key

    @property
    def allowed(self) -> frozenset[str] | None:
        """The zones every zonal claim allows (None: the claims allow any zone)."""
        if not self.claims:
            return None
        out = self.claims[0].zones
        for claim in self.claims[1:]:
            out = out & claim.zones
        return out

    @property
    def conflict(self) -> bool:
        return bool(self.claims) and not self.allowed

    def reason(self) -> str:
        """Why the pod cannot run (conflict), or what its volumes restrict it to."""
        listed = "; ".join(c.describe() for c in self.claims)
        if self.conflict:
            return (f"the pod's volumes are in different zones, and a pod runs in one zone: {listed}; "
                    "no node can mount them all")
        return f"the pod's volumes keep it in {_zones(self.allowed or frozenset())}: {listed}"

    def fix(self) -> tuple[str, Origin, VolumeZone]:
        """What to change, where, and which claim: a StorageClass when one is to blame (a class is easier to
        change than a volume), else the last volume named; the target is the others' common zone."""
        classes = [c for c in self.claims if c.source.startswith("StorageClass ")]
        blamed = classes[-1] if classes else self.claims[-1]
        others = [c.zones for c in self.claims if c is not blamed]
        common = frozenset.intersection(*others) if others else frozenset()
        target = _zones(common) if common else "the zone of the pod's other volumes"
        if blamed in classes:
            action = f"allow {target} in {blamed.source}'s allowedTopologies (it allows {_zones(blamed.zones)})"
        else:
            action = (f"move {blamed.subject}'s volume ({blamed.source}, {_zones(blamed.zones)}) to {target}: "
                      "restore a snapshot of it there and bind the claim to the new PV")
        return action, blamed.origin, blamed


def _zones(zones: frozenset[str]) -> str:
    if not zones:
        return "no zone"
    listed = sorted(zones)
    return ("zone " if len(listed) == 1 else "zones ") + ", ".join(listed)


def term_zones(terms: Sequence[NodeSelectorTerm]) -> frozenset[str] | None:
    """The zones ORed node-selector terms admit (None: some term admits any zone, or a value set is open)."""
    out: set[str] = set()
    for term in terms:
        if term.empty or not term.valid:
            continue
        if ZONE not in term.requirements:
            return None
        values = term.requirements[ZONE].finite_values()
        if values is None:
            return None
        out |= values
    return frozenset(out)


def term_origin(terms: Sequence[NodeSelectorTerm], fallback: Origin) -> Origin:
    """Where the zone rule is written: the first term with a line, else `fallback` (the document)."""
    for term in terms:
        if term.origin.line:
            return term.origin
    return fallback
