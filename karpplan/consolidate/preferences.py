"""Which of a pod's preferences send it to a new NodeClaim when a node left has room for it (`--node`).

Karpenter's scheduler treats a pod's preferences (preferred node affinity, preferred pod (anti-)affinity,
`ScheduleAnyway` topology spread) as required and relaxes them only when the pod cannot schedule at all;
during consolidation a new NodeClaim can always honour them, so they are never relaxed there. A node that
holds one CoreDNS replica (preferred hostname anti-affinity on `k8s-app: kube-dns`) is thus kept although
the other nodes have room: its replica "needs" a node without CoreDNS (aws/karpenter-provider-aws#3406,
#3753, #6426: "consolidation will always respect preferences"). The table's "would need a new NodeClaim"
says which preference did it: the same simulation is run again with the pod's preferences dropped, and a
pod that then moves to a node left is one its preferences keep off that node.
"""

from __future__ import annotations

from dataclasses import replace

from karpplan.consolidate.candidates import Candidate
from karpplan.consolidate.simulate import Outcome, simulate
from karpplan.consolidate.state import ClusterState
from karpplan.model.pods import Pod, PodAffinity, PodTemplate


def preferences_of(template: PodTemplate) -> list[str]:
    """The pod's preferences, in the words of its spec."""
    out: list[str] = []
    if template.affinity.preferred:
        out.append("preferred node affinity")
    for term in template.pod_anti_affinity.preferred:
        out.append(f"preferred podAntiAffinity on {term.term.topology_key}")
    for term in template.pod_affinity.preferred:
        out.append(f"preferred podAffinity on {term.term.topology_key}")
    for spread in template.spread:
        if not spread.hard:
            out.append(f"topologySpreadConstraint on {spread.topology_key} (ScheduleAnyway)")
    return list(dict.fromkeys(out))


def _required_only(template: PodTemplate) -> PodTemplate:
    return replace(template, affinity=replace(template.affinity, preferred=()),
                   pod_affinity=PodAffinity(required=template.pod_affinity.required),
                   pod_anti_affinity=PodAffinity(required=template.pod_anti_affinity.required),
                   spread=template.hard_spread)


def kept_off(state: ClusterState, c: Candidate, outcome: Outcome) -> dict[str, tuple[str, list[str]]]:
    """Pod key -> (the node left it would move to without its preferences, those preferences), for each pod
    the simulation sends to a new NodeClaim only because of its preferences."""
    to_claims = {p.key for claim in outcome.claims for p in claim.pods}
    loose = {p.key for p in c.pods if p.key in to_claims and preferences_of(p.template)}
    if not loose:
        return {}
    relaxed: dict[str, Pod] = {p.key: replace(p, template=_required_only(p.template)) for p in c.pods
                               if p.key in loose}
    pods = [relaxed.get(p.key, p) for p in c.pods]
    moving = [relaxed.get(p.key, p) for p in c.moving]
    again = simulate(state, [replace(c, pods=pods, moving=moving)])
    return {key: (again.placed[key], preferences_of(next(p for p in c.pods if p.key == key).template))
            for key in loose if key in again.placed}
