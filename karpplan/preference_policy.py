"""`--preferences honour|drop`: which preferences the optimal plan keeps.

kube-scheduler only scores preferences; Karpenter's provisioning decides what is launched, and it keeps a
preference whenever the pod can schedule with it, relaxing one (in `scheduling/preferences.py`'s order)
only for a pod that cannot. So under `honour` (the default) the optimal engine plans with every
preference the Karpenter simulation kept made required (`model/enforced_preferences.py`), and leaves the
ones it relaxed as preferences: the two plans are then compared like for like. Under `drop` the optimal
engine plans without them (each is only a tie-breaking penalty), and the summary states the cost of the
plan that keeps them next to it.

A preference counts as kept for a workload when Karpenter's plan meets it for every pod of the workload
and places them all; a workload Karpenter leaves partly unplaced keeps its preferences soft (making them
required could only leave more pods out). Should the simulation with the kept preferences made required
place fewer pods than Karpenter's own (its greedy order can differ), they are not enforced.
"""

from __future__ import annotations

from collections.abc import Iterable

from karpplan.constraints.registry import REGISTRY
from karpplan.engines.result import Solution
from karpplan.model.pods import Pod
from karpplan.scheduling.problem import Problem


def has_preferences(pods: Iterable[Pod]) -> bool:
    """Does any of `pods` carry a preference the policy applies to?"""
    for template in {id(p.template): p.template for p in pods}.values():
        if (template.affinity.preferred or template.pod_affinity.preferred or template.pod_anti_affinity.preferred
                or any(not c.hard for c in template.spread)):
            return True
    return False


def kept_by_karpenter(problem: Problem, greedy: Solution) -> tuple[dict[int, set[int]], tuple[str, ...]]:
    """id(template) -> the ids of the preferences Karpenter's plan `greedy` kept for every pod of the
    workload (workloads it placed whole), and the preferences it left unmet, with what it did instead."""
    partial = {group.index for group, _ in greedy.unplaced}
    kept: dict[int, set[int]] = {}
    relaxed: list[str] = []
    for kind in REGISTRY:
        honoured, unmet = kind.preferences(problem, greedy)
        for group_index, preference in honoured:
            if group_index not in partial:
                kept.setdefault(id(problem.groups[group_index].template), set()).add(preference)
        relaxed.extend(str(u) for u in unmet)
    return kept, tuple(relaxed)
