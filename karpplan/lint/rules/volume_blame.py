"""When what keeps a pod off every NodePool is its volumes' zones (a bound PV's nodeAffinity, a StorageClass's
allowedTopologies: `model/volume_zones.py`), the claim to blame, so the finding points at the PV or
StorageClass line and not at the pod's own fields, which are not what refuses it."""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.lint.rules.blame import excludes
from karpplan.model.labels import ZONE
from karpplan.model.pods import PodTemplate
from karpplan.model.requirements import Requirement
from karpplan.model.volume_zones import VolumeZone
from karpplan.scheduling.candidates import PoolVerdict
from karpplan.scheduling.problem import Problem


def _refused_by(zones: frozenset[str], verdicts: Sequence[PoolVerdict], problem: Problem) -> bool:
    """True when these zones alone leave no launch option in any of the refusing pools."""
    return not zones or excludes(Requirement.of(ZONE, "In", sorted(zones)), [v.pool for v in verdicts], problem)


def blamed_volume(template: PodTemplate, verdicts: Sequence[PoolVerdict], problem: Problem) -> VolumeZone | None:
    """The zonal claim that keeps the pod off every pool (its volumes in different zones, or in zones no
    refusing pool launches in); None when the volumes are not what refuses it (or it has none)."""
    volumes = template.volumes
    refusing = [v for v in verdicts if not v.ok]
    if not volumes.claims or not refusing:
        return None
    if volumes.conflict:
        return volumes.fix()[2]
    if not _refused_by(volumes.allowed or frozenset(), refusing, problem):
        return None
    alone = [c for c in volumes.claims if _refused_by(c.zones, refusing, problem)]
    classes = [c for c in alone if c.source.startswith("StorageClass ")]  # easier to change than a volume
    return (classes or alone or [volumes.fix()[2]])[0]
