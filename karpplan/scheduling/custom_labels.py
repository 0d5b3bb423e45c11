"""A NodePool's custom labels: the values a node of the pool takes for keys that are neither well-known nor the
instance types' own, and the label keys a catalog's instance types resolve themselves.

Karpenter treats the labels its cloud provider registers as well-known (resolved from instance types); every other
key a NodePool requires is custom: its node carries one of the values the requirement allows (or a pod asks for).
For a user catalog, the keys its instance types carry play the cloud provider's part (`provider_keys`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from karpplan.catalog.types import InstanceType, label_keys_of
from karpplan.model import labels as L
from karpplan.model.pods import Pod
from karpplan.model.pools import NodePool


def provider_keys(types: Iterable[InstanceType]) -> frozenset[str]:
    """The label keys `types` define (present or known-absent) beyond the well-known ones."""
    return label_keys_of(types) - L.WELL_KNOWN


def pod_requirement_values(pods: Sequence[Pod]) -> dict[str, set[str]]:
    """Values pods name in `In` requirements, per key (to resolve open custom labels)."""
    out: dict[str, set[str]] = {}
    seen: set[int] = set()
    for pod in pods:
        if id(pod.template) in seen:
            continue
        seen.add(id(pod.template))
        for alt in pod.template.affinity.strict_alternatives():
            for key, req in alt.items():
                finite = req.finite_values()
                if finite:
                    out.setdefault(key, set()).update(finite)
        for c in pod.template.spread:
            out.setdefault(c.topology_key, set())
    return out


def custom_label_values(pool: NodePool, pod_values: Mapping[str, set[str]],
                        provided: frozenset[str] = frozenset()) -> list[dict[str, str]]:
    """Concrete values for the pool's custom (not well-known) requirement keys.

    A custom key with a finite `In` set may take any of its values; with `Exists`/`NotIn` any value the pods
    ask for is possible. Each distinct assignment is a different node (they are different topology domains),
    so we expand keys with several possible values into variants. Keys the instance types label themselves
    (`provided`: a user catalog's `size`) are not custom: each type's own value is the node's.
    """
    variants: list[dict[str, str]] = [{}]
    for key, req in pool.requirements.items():
        if key in L.WELL_KNOWN or key in pool.labels or key in provided:
            continue
        finite = req.finite_values()
        if finite is not None:
            values = sorted(finite)
        else:
            asked = sorted(v for v in pod_values.get(key, set()) if req.has(v))
            fallback = req.any_value()
            values = asked + ([fallback] if fallback is not None and fallback not in asked else [])
            if not req.absent_ok and not values:
                values = []
        if not values:
            if req.absent_ok:
                continue
            return []
        variants = [{**v, key: value} for v in variants for value in values]
    return variants
