"""Preferences made requirements: the pod templates `--preferences honour` plans with.

Karpenter's provisioning enforces every preference of a pod (ScheduleAnyway spreads, preferred pod
(anti-)affinity, the heaviest preferred node-affinity term) as a requirement and relaxes one only for a pod
that cannot schedule with it (`scheduling/preferences.py`). So the cluster a user gets honours every
preference its pods could keep. The planner asks the Karpenter simulation which preferences each workload
kept (`ConstraintKind.preferences`) and plans with exactly those made required, here: a template's
kept preferences become their required forms, the rest stay preferences.

What each kept preference becomes:
* a ScheduleAnyway spread: the same constraint with whenUnsatisfiable DoNotSchedule;
* a preferred pod anti-affinity term: one more required anti-affinity term (terms are ANDed: a pod
  violates the rule when it violates any);
* a preferred pod affinity term: the required term, only when the pod has no required pod affinity and
  keeps just this one preferred term (required affinity terms must all be met by the pod's domain, with
  the first-pod exception for the whole set: merging terms would change which pod may come first);
* the heaviest preferred node-affinity term: ANDed into the nodeSelector (it is ANDed with every required
  term), unless it selects `metadata.name` fields, which the nodeSelector cannot carry.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace

from karpplan.model.pods import DO_NOT_SCHEDULE, Pod, PodAffinity, PodTemplate


def enforce_preferences(pods: Iterable[Pod], kept: Mapping[int, Collection[int]]) -> tuple[tuple[Pod, ...], int]:
    """`pods` with the kept preferences of their templates made required, and how many preferences that
    enforces. `kept` maps id(template) to the ids of the preference objects kept (a spread constraint,
    a preferred pod-affinity term's `PodAffinityTerm`, a node `PreferredTerm`). Pods of one template keep
    sharing one template, so they stay one group."""
    made: dict[int, tuple[PodTemplate, int]] = {}
    out: list[Pod] = []
    total = 0
    for pod in pods:
        ids = kept.get(id(pod.template))
        if not ids:
            out.append(pod)
            continue
        if id(pod.template) not in made:
            made[id(pod.template)] = _enforced(pod.template, frozenset(ids))
            total += made[id(pod.template)][1]
        out.append(replace(pod, template=made[id(pod.template)][0]))
    return tuple(out), total


def _enforced(template: PodTemplate, ids: frozenset[int]) -> tuple[PodTemplate, int]:
    count = 0
    spread = []
    for c in template.spread:
        if not c.hard and id(c) in ids:
            c = replace(c, when_unsatisfiable=DO_NOT_SCHEDULE)
            count += 1
        spread.append(c)
    anti = template.pod_anti_affinity
    moved = tuple(w for w in anti.preferred if id(w.term) in ids)
    if moved:
        anti = PodAffinity(anti.required + tuple(w.term for w in moved),
                           tuple(w for w in anti.preferred if id(w.term) not in ids))
        count += len(moved)
    affinity = template.pod_affinity
    moved = tuple(w for w in affinity.preferred if id(w.term) in ids)
    if len(moved) == 1 and not affinity.required:
        affinity = PodAffinity((moved[0].term,), tuple(w for w in affinity.preferred if w is not moved[0]))
        count += 1
    node = template.affinity
    best = max(node.preferred, key=lambda p: p.weight) if node.preferred else None
    if best is not None and id(best) in ids and not best.term.field_names and best.term.valid and not best.term.empty:
        node = replace(node, node_selector=node.node_selector & best.term.requirements,
                       preferred=tuple(p for p in node.preferred if p is not best))
        count += 1
    if not count:
        return template, 0
    return replace(template, spread=tuple(spread), pod_anti_affinity=anti, pod_affinity=affinity, affinity=node), count
