"""Annotations users put on pods and nodes to stop consolidation that Karpenter v1 does not read, and nodes of
the v1alpha5 Provisioner API it no longer manages.

Karpenter v1 reads one opt-out, `karpenter.sh/do-not-disrupt: "true"` (pod or node, `utils/pod` and
`state/statenode.go`). v1alpha5's `karpenter.sh/do-not-evict` (pods) and `karpenter.sh/do-not-consolidate`
(nodes) were renamed to it in v0.32 (v1beta1) and are ignored since: a pod that still carries only the old
name is evicted (aws/karpenter-provider-aws#6861: "Nodes with do-not-evict:true pods get consolidated"
after the upgrade to 1.0). The Cluster Autoscaler's `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`
was never read by Karpenter. The simulation follows Karpenter (these nodes are consolidated); each such
annotation is said once, with where it is, so the user is not surprised.

A node labelled `karpenter.sh/provisioner-name` and not `karpenter.sh/nodepool` was launched by Karpenter v0.31
or earlier: v1 does not manage it ("Node isn't managed by karpenter"), which is what the simulation says; a
warning says why, and what v0.x itself needed to remove it (aws/karpenter-provider-aws#3455: DaemonSet-only
nodes never drained under a Provisioner with neither `consolidation.enabled` nor `ttlSecondsAfterEmpty`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from karpplan.errors import Origin

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
PROVISIONER_LABEL = "karpenter.sh/provisioner-name"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
# annotation -> (the objects it is found on, why Karpenter v1 ignores it)
IGNORED = {
    "karpenter.sh/do-not-evict": ("pod", "v0.32 renamed it karpenter.sh/do-not-disrupt and Karpenter v1 no "
                                  "longer reads the old name"),
    "karpenter.sh/do-not-consolidate": ("node", "v0.32 renamed it karpenter.sh/do-not-disrupt and Karpenter "
                                        "v1 no longer reads the old name"),
    "cluster-autoscaler.kubernetes.io/safe-to-evict": ("pod", "it is the Cluster Autoscaler's: Karpenter does "
                                                       "not read it"),
}


def _blocks(value: str, annotation: str) -> bool:
    """Whether the value asks for protection (`safe-to-evict` protects with "false", the others with "true")."""
    wanted = "false" if annotation.endswith("safe-to-evict") else "true"
    return value.strip().lower() == wanted


def ignored_annotations(objects: Iterable[tuple[str, str, Mapping[str, str], Origin]]) -> list[str]:
    """One warning per ignored annotation: (kind "pod"|"node", name, annotations, origin) of each object.

    An object that also carries `karpenter.sh/do-not-disrupt` is protected by it and not named."""
    found: dict[str, list[tuple[str, Origin, str]]] = {}
    for kind, name, notes, origin in objects:
        if notes.get(DO_NOT_DISRUPT) == "true":
            continue
        for annotation, (on, _) in IGNORED.items():
            value = notes.get(annotation)
            if on == kind and value is not None and _blocks(value, annotation):
                found.setdefault(annotation, []).append((name, origin, value))
    return [_warning(annotation, hits) for annotation, hits in found.items()]


def _warning(annotation: str, hits: Sequence[tuple[str, Origin, str]]) -> str:
    kind, why = IGNORED[annotation]
    name, origin, value = hits[0]
    others = f" (and {len(hits) - 1} other {kind}(s))" if len(hits) > 1 else ""
    return (f"{origin}: {kind} {name}{others} has {annotation}: \"{value}\", which does not stop consolidation: "
            f"{why}; once its node is Karpenter v1's (a NodePool's), consolidation may disrupt it. To keep it, "
            f"annotate with {DO_NOT_DISRUPT}: \"true\"")


def provisioner_nodes(nodes: Iterable[tuple[str, Mapping[str, str], Origin]]) -> list[str]:
    """One warning for the nodes (name, labels, origin) a v1alpha5 Provisioner launched (no NodePool label)."""
    found = [(name, labels[PROVISIONER_LABEL], origin) for name, labels, origin in nodes
             if PROVISIONER_LABEL in labels and NODEPOOL_LABEL not in labels]
    if not found:
        return []
    name, provisioner, origin = found[0]
    others = f" (and {len(found) - 1} other node(s))" if len(found) > 1 else ""
    return [f"{origin}: node {name}{others} has {PROVISIONER_LABEL}={provisioner} and no {NODEPOOL_LABEL}: a node of "
            "Karpenter v0.31 or earlier (a v1alpha5 Provisioner). karpplan simulates Karpenter v1, which disrupts "
            "NodePool nodes only, so it is never consolidated here; under v0.x its Provisioner consolidates it only "
            "with spec.consolidation.enabled: true, and deletes it when empty only with ttlSecondsAfterEmpty"]
