"""A pod pinned to a zone no NodePool launches in (a zone copied from another region or cloud, as Grafana Mimir's
zone-aware docs write `topology.kubernetes.io/zone: us-central1-a`): which zones to write instead, or which pool to
widen. The verdicts are the planner's; this only words the fix from the zones the NodePools reach."""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.lint.rules.blame import Written
from karpplan.model.aws_zones import AWS_REGION, region_of_zone
from karpplan.model.labels import ZONE
from karpplan.scheduling.problem import Problem


def zone_fix(field: str | None, written: Sequence[Written], problem: Problem, region: str,
             region_named: bool = True) -> str | None:
    """The fix when the blamed field selects zones no NodePool launches in (None for any other field);
    `region_named`: the input (or --region) says the region, else it was assumed and the zone may name the
    cluster's own."""
    found = next((w for w in written if w.path == field), None)
    if found is None or found.requirement.key != ZONE or found.requirement.complement or not found.requirement.values:
        return None
    reachable = sorted({o.zone for o in problem.options})
    asked = sorted(found.requirement.values)
    if not reachable or set(asked) & set(reachable):
        return None
    shown = ", ".join(asked)
    instead = f"select one of {', '.join(reachable)} instead (the zones the NodePools launch in)"
    if not any(z.startswith(region) for z in asked):
        many = len(asked) > 1
        theirs = sorted({r for z in asked if (r := region_of_zone(z)) and AWS_REGION.fullmatch(r)})
        if not region_named and len(theirs) == 1:
            # Nothing said the region: the zone more likely names the cluster's than a copied one.
            return (f"{shown} {'are zones' if many else 'is a zone'} of {theirs[0]}, not of {region}, which "
                    f"karpplan assumed (nothing in the input names the region): if the cluster runs in "
                    f"{theirs[0]}, lint with --region {theirs[0]}; else {instead}")
        return (f"{shown} {'are not zones' if many else 'is not a zone'} of {region}, the region planned "
                f"(another region's or cloud's zone{'s' if many else ''}, copied with the manifest): {instead}, "
                "or drop the zone from the selector")
    return (f"no NodePool launches in {shown}: {instead}, or add {shown} to a NodePool's {ZONE} requirement "
            "(and to the cluster's subnets)")
