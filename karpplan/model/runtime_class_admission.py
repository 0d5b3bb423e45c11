"""What the RuntimeClass admission plugin does to a pod that names a `runtimeClassName`: the class's
`scheduling.nodeSelector` is merged into the pod's nodeSelector and its `scheduling.tolerations` into the pod's
tolerations (a Kata or gVisor class pins its pods to the nodes that have the runtime), and the pods it refuses.

kubernetes/kubernetes plugin/pkg/admission/runtimeclass/admission.go: `setScheduling` refuses a pod whose own
nodeSelector gives one of the class's keys another value (`conflict: runtimeClass.scheduling.nodeSelector[k] = v;
pod.spec.nodeSelector[k] = w`), and `setOverhead` one that sets `spec.overhead` unlike the class's `podFixed`.
The class's `overhead.podFixed` itself is added to the pod's requests by the pod builder (`build_pods._overhead`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from karpplan.errors import Origin
from karpplan.model.cluster import RuntimeClass
from karpplan.model.inventory import InputNotice
from karpplan.model.labels import normalize_key
from karpplan.model.quantity import QuantityError, parse_quantity
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import amount_of
from karpplan.model.selectors import NodeAffinity
from karpplan.model.taints import Toleration


def with_runtime_class(affinity: NodeAffinity, tolerations: tuple[Toleration, ...], runtime_class: RuntimeClass | None
                       ) -> tuple[NodeAffinity, tuple[Toleration, ...]]:
    """The pod's node affinity and tolerations once the class's scheduling is merged in (a conflicting pod is
    refused before, see `runtime_class_refusal`)."""
    if runtime_class is None or not (runtime_class.node_selector or runtime_class.tolerations):
        return affinity, tolerations
    if runtime_class.node_selector:
        added = Requirements(Requirement(normalize_key(k), frozenset([v])) for k, v in runtime_class.node_selector.items())
        affinity = replace(affinity, node_selector=affinity.node_selector & added)
    merged = (*tolerations, *(t for t in runtime_class.tolerations if t not in tolerations))
    return affinity, merged


def _overhead_differs(spec: Mapping[str, object], runtime_class: RuntimeClass) -> bool:
    written = spec.get("overhead")
    if not isinstance(written, Mapping) or not runtime_class.overhead:
        return False
    try:
        amounts = {str(k): amount_of(str(k), parse_quantity(v)) for k, v in written.items()}
    except QuantityError:
        return False  # the pod builder reports it
    return {k: v for k, v in amounts.items() if v} != dict(runtime_class.overhead)


def runtime_class_refusal(spec: object, runtime_classes: Mapping[str, RuntimeClass]) -> str | None:
    """Why the RuntimeClass admission plugin refuses a pod with `spec` (None: admitted, or its class is not in
    the input, which `unknown_runtime_class` says)."""
    if not isinstance(spec, Mapping):
        return None
    name = spec.get("runtimeClassName")
    runtime_class = runtime_classes.get(name) if isinstance(name, str) else None
    if runtime_class is None:
        return None
    selector = spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key, value in sorted(runtime_class.node_selector.items()):
            own = selector.get(key)
            if own is not None and str(own) != value:
                return (f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                        f"pod.spec.nodeSelector[{key}] = {own}")
    if _overhead_differs(spec, runtime_class):
        return "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
    return None


def unknown_runtime_class(spec: object, runtime_classes: Mapping[str, RuntimeClass]) -> str | None:
    """The `runtimeClassName` a pod names that no RuntimeClass in the input has (None when known or unnamed)."""
    if not isinstance(spec, Mapping):
        return None
    name = spec.get("runtimeClassName")
    return name if isinstance(name, str) and name and name not in runtime_classes else None


def unknown_runtime_class_notice(origin: Origin, workload: str, name: str) -> InputNotice:
    """The plan's warning for pods naming a RuntimeClass the input lacks: planned without what it would add."""
    return InputNotice(origin, (
        f"{workload}: runtimeClassName {name} names no RuntimeClass in the input, so its pods are planned without "
        "the class's overhead.podFixed and scheduling (a Kata or gVisor class adds requests and a node selector); "
        "the API server refuses them if the cluster has no such class either"),
        fix=f"add the RuntimeClass to the input (kubectl get runtimeclass {name} -o yaml)")
