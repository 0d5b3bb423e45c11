"""DaemonSets as Karpenter reads them: from the newest pod each controls, and those the input lacks derived from it.

Karpenter sizes a launch with each DaemonSet's pod (`provisioner.go` `getDaemonSetPods`): `Cluster.UpdateDaemonSet`
keeps the pod the DaemonSet controls with the latest creationTimestamp, bound or not, and only a DaemonSet with no
pod yet is read from its template. A pod's requests can differ from the template's (a LimitRange or a webhook set
them at admission, a rollout is under way), and the pod is what runs (Karpenter's test: "should account for overhead
using daemonset pod spec instead of daemonset spec"). The pod's required node affinity is the DaemonSet
controller's (`ReplaceDaemonSetPodNodeNameNodeAffinity`: the template's terms, each ANDed with `matchFields
metadata.name In [its node]`); Karpenter puts the template's back, and a DaemonSet the input lacks keeps the pod's
terms with the pin taken out (`unpinned`).

A `kubectl get nodes,pods -A -o yaml` export has the DaemonSets' pods bound on every node but no DaemonSet object:
read as written, new nodes would carry no daemon overhead and be chosen too small. So each DaemonSet that pods
name as their controller (ownerReferences kind DaemonSet) and that the input does not define is derived from its
newest pod, and said (`DaemonPods.applied`). Plan and consolidate read their inventories through `model/build.py`,
which applies this once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from karpplan.errors import Origin
from karpplan.model.pods import DaemonSet, PodTemplate
from karpplan.model.resources import CPU, MEMORY
from karpplan.model.selectors import NodeAffinity

DAEMONSET_OWNER = "DaemonSet/"
MIB = 1 << 20
SHOWN = 6  # derived DaemonSets named before "and N more"


def unpinned(affinity: NodeAffinity) -> NodeAffinity:
    """The DaemonSet template's node affinity back from its pod's: the `metadata.name` matchFields the
    controller adds to every term taken out (a term left with nothing else matches every node)."""
    if affinity.required is None or not any(t.field_names for t in affinity.required):
        return affinity
    terms = tuple(replace(t, field_names=()) for t in affinity.required)
    if all(not t.requirements and not t.empty for t in terms):
        return replace(affinity, required=None)
    return replace(affinity, required=terms)


@dataclass(frozen=True)
class _Seen:
    created: str  # RFC 3339, "" unknown
    template: PodTemplate
    key: str  # namespace/name
    origin: Origin


@dataclass
class DaemonPods:
    """The newest pod of each DaemonSet, by (namespace, name), as the input's pods show them."""

    newest: dict[tuple[str, str], _Seen] = field(default_factory=dict)

    def note(self, owner: str | None, namespace: str, name: str, created: str, template: PodTemplate,
             origin: Origin) -> None:
        """A pod controlled by `owner` (`DaemonSet/NAME` to count): the later created is kept, input order
        breaking ties (the last read)."""
        if owner is None or not owner.startswith(DAEMONSET_OWNER):
            return
        key = (namespace, owner[len(DAEMONSET_OWNER):])
        held = self.newest.get(key)
        if held is None or created >= held.created:
            self.newest[key] = _Seen(created, template, f"{namespace}/{name}", origin)

    def applied(self, daemonsets: Sequence[DaemonSet]) -> tuple[tuple[DaemonSet, ...], list[tuple[Origin, str]]]:
        """The DaemonSets as Karpenter reads them, those the input lacks derived; and what to say of them."""
        notes: list[tuple[Origin, str]] = []
        out: list[DaemonSet] = []
        for ds in daemonsets:
            seen = self.newest.get((ds.namespace, ds.name))
            read = ds if seen is None else _as_running(ds, seen.template)
            out.append(read)
            if seen is not None and read.template.requests != ds.template.requests:
                notes.append((seen.origin, f"DaemonSet {ds.namespace}/{ds.name}: its newest pod {seen.key} requests "
                                           f"{_requests(read)} where its template asks {_requests(ds)}: Karpenter "
                                           "sizes the nodes it launches by that pod (getDaemonSetPods), and so does "
                                           "karpplan"))
        known = {(d.namespace, d.name) for d in out}
        derived = [(DaemonSet(name, namespace, replace(seen.template, affinity=unpinned(seen.template.affinity)),
                              seen.origin), seen) for (namespace, name), seen in self.newest.items()
                   if (namespace, name) not in known]
        if derived:
            shown = ", ".join(f"{d.namespace}/{d.name} ({_requests(d)})" for d, _ in derived[:SHOWN])
            more = f" and {len(derived) - SHOWN} more" if len(derived) > SHOWN else ""
            notes.insert(0, (derived[0][1].origin, (
                f"{len(derived)} DaemonSet(s) run pods on the nodes but are not in the input: {shown}{more}. Each is "
                "taken from its newest pod (as Karpenter reads a DaemonSet's overhead), so every node Karpenter "
                "would launch counts it; add the DaemonSets (kubectl get daemonsets -A -o yaml) for their own node "
                "selectors and tolerations")))
        return (*out, *(d for d, _ in derived)), notes


def _as_running(ds: DaemonSet, pod: PodTemplate) -> DaemonSet:
    """A defined DaemonSet as Karpenter reads it when a pod of it exists: that pod, the template's required node
    affinity put back (`getDaemonSetPods`)."""
    affinity = pod.affinity
    if ds.template.affinity.required is not None:
        affinity = replace(affinity, required=ds.template.affinity.required)
    return replace(ds, template=replace(pod, affinity=unpinned(affinity)))


def _requests(ds: DaemonSet) -> str:
    req = ds.template.requests
    return f"{req.get(CPU)}m CPU, {req.get(MEMORY) // MIB}Mi"


__all__ = ["DaemonPods", "unpinned"]
