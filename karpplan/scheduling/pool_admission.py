"""Karpenter's first per-NodePool checks of a pod, taints then requirements, remembered by value.

They read only the pod template's tolerations and node affinity and the NodePool, all frozen, so one answer
serves every template that shares them: a chart repository's thousands of pod groups share a handful of
nodeSelectors, and each group is checked against every pool. On the bench's many-deployments 20,000 row
(10,000 groups x 20 pools) these checks, each formatting its reason, were most of the problem's build.
"""

from __future__ import annotations

from collections.abc import Hashable

from karpplan.model import labels as L
from karpplan.model.pods import PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.taints import ALL_EFFECTS, PREFER_NO_SCHEDULE, untolerated

ADMISSION_ENTRIES = 200_000  # answers remembered; forgotten all at once past it

_Answer = tuple[str, str, bool]
# (tolerations, node affinity) by value -> a number, and (pool id, that number) -> the pool and the answer.
_PARTS: dict[tuple[Hashable, Hashable], tuple[int, object, object]] = {}
_ADMISSIONS: dict[tuple[int, int, frozenset[str]], tuple[NodePool, _Answer]] = {}


def cache_key(obj: object) -> Hashable:
    """Equal values share a cache entry; an unhashable one is cached by identity (and kept alive)."""
    try:
        hash(obj)
    except TypeError:
        return ("id", id(obj))
    return ("value", obj)


class _Last:
    """The last template asked about and the number of its parts: a problem's build asks about one template for
    every pool in turn, and hashing a node affinity (and comparing it with an equal one) is most of a lookup."""

    entry: tuple[PodTemplate | None, int] = (None, -1)  # one tuple, replaced whole: builds on threads read it too


def pool_admission(template: PodTemplate, pool: NodePool, provided: frozenset[str] = frozenset()) -> _Answer:
    """(Why the pool is not for the pod, or "" when both checks pass; the verdict's kind, `taint` or
    `requirements`; whether untolerated taints are all PreferNoSchedule.) `provided`: label keys the instance
    types resolve themselves (`custom_labels.provider_keys`), well-known as Karpenter's cloud provider registers
    them."""
    if len(_ADMISSIONS) >= ADMISSION_ENTRIES:
        _forget()
    last, number = _Last.entry
    if last is not template:
        parts = (cache_key(template.tolerations), cache_key(template.affinity))
        # The parts kept alive with their number, so no id in a key is reused meanwhile.
        number = _PARTS.setdefault(parts, (len(_PARTS), template.tolerations, template.affinity))[0]
        _Last.entry = (template, number)
    key = (id(pool), number, provided)  # `provided` is empty on the AWS catalogs (their keys are well-known)
    known = _ADMISSIONS.get(key)
    if known is not None and known[0] is pool:
        return known[1]
    answer = _admission(template, pool, L.WELL_KNOWN | provided if provided else L.WELL_KNOWN)
    _ADMISSIONS[key] = (pool, answer)  # the pool kept alive with its id
    return answer


def _forget() -> None:
    _PARTS.clear()
    _ADMISSIONS.clear()
    _Last.entry = (None, -1)


def _admission(template: PodTemplate, pool: NodePool, well_known: frozenset[str]) -> _Answer:
    bad = untolerated(template.tolerations, pool.taints, ALL_EFFECTS)
    hard_bad = [t for t in bad if t.effect != PREFER_NO_SCHEDULE]
    if hard_bad:
        return f"did not tolerate taint (taint={hard_bad[0]})", "taint", False
    alternatives = template.affinity.strict_alternatives()  # one per required node-affinity term (ORed)
    if not alternatives:
        return "incompatible requirements, no node selector term can match", "requirements", False
    first_error = ""
    for alt in alternatives:
        undefined = alt.undefined_custom_keys(pool.requirements, well_known)
        if undefined:
            first_error = first_error or f'incompatible requirements, label "{undefined[0]}" does not have known values'
            continue
        conflicts = alt.conflicts(pool.requirements)
        if conflicts:
            mine, theirs = conflicts[0]
            first_error = first_error or f"incompatible requirements, key {mine.key}, {mine} not in {theirs}"
            continue
        return "", "", bool(bad)
    return first_error, "requirements", False


__all__ = ["ADMISSION_ENTRIES", "cache_key", "pool_admission"]
