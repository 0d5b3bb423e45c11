"""DaemonSets the input leaves out, derived from the pods they run: what a node Karpenter launches must hold.

Karpenter sizes a launch with each DaemonSet's pod added (`getDaemonSetPods`). It lists the DaemonSets from
the API and, for each, takes the newest pod the DaemonSet controls (`Cluster.UpdateDaemonSet` keeps the pod
with the latest creationTimestamp; `GetDaemonSetPod`), its own template only when no pod runs yet. That
pod's required node affinity is the DaemonSet controller's (`ReplaceDaemonSetPodNodeNameNodeAffinity`: the
template's terms, hostname expressions dropped, each ANDed with `matchFields metadata.name In [its node]`);
Karpenter puts the template's back.

A `kubectl get nodes,pods -A -o yaml` export has the DaemonSets' pods bound on every node but no DaemonSet
object: planned as written, replacements would carry no daemon overhead and be chosen too small. So each
DaemonSet that bound pods name as their controller (ownerReferences kind DaemonSet) and that the input does
not define is derived from its newest bound pod, as Karpenter would read it, with the `metadata.name`
matchFields the controller pinned it with taken out (the template's own terms are what is left), and said
in a warning. A DaemonSet the input defines is read the same way when a pod of it runs: that pod's requests
(a LimitRange's defaults, an injected sidecar, a VPA's update are in the pod, not the template), the template's
required node affinity put back as Karpenter puts it back; said when the requests differ. Shared by
`consolidate`; `plan` reads its inventory through `model/build.py` and does not call it (see
docs/consolidate.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from karpplan.inputs.loader import Document
from karpplan.model.inventory import Inventory
from karpplan.model.pods import DaemonSet, Pod, PodTemplate
from karpplan.model.resources import CPU, MEMORY
from karpplan.model.selectors import NodeAffinity

DAEMONSET = "DaemonSet/"
MIB = 1 << 20


def _created(documents: Sequence[Document]) -> dict[tuple[str, str], str]:
    """Each Pod document's creationTimestamp by (namespace, name) ("" when it has none)."""
    out: dict[tuple[str, str], str] = {}
    for doc in documents:
        if doc.kind == "Pod":
            stamp = doc.metadata.get("creationTimestamp")
            out[(doc.namespace or "default", doc.name)] = stamp if isinstance(stamp, str) else ""
    return out


def unpinned(affinity: NodeAffinity) -> NodeAffinity:
    """The DaemonSet template's node affinity back from its pod's: the `metadata.name` matchFields the
    controller adds to every term taken out (a term left with nothing else matches every node)."""
    if affinity.required is None or not any(t.field_names for t in affinity.required):
        return affinity
    terms = tuple(replace(t, field_names=()) for t in affinity.required)
    if all(not t.requirements and not t.empty for t in terms):
        return replace(affinity, required=None)
    return replace(affinity, required=terms)


def _template(pod: Pod) -> PodTemplate:
    return replace(pod.template, affinity=unpinned(pod.template.affinity))


def newest_daemon_pods(pods: Sequence[Pod], documents: Sequence[Document]) -> dict[tuple[str, str], Pod]:
    """(namespace, DaemonSet name) -> the newest bound pod it controls (input order breaks ties: the last)."""
    created = _created(documents)
    newest: dict[tuple[str, str], Pod] = {}
    for pod in pods:
        if pod.node_name is None or pod.terminal or not (pod.owner or "").startswith(DAEMONSET):
            continue
        key = (pod.namespace, (pod.owner or "")[len(DAEMONSET):])
        held = newest.get(key)
        if held is None or created.get((pod.namespace, pod.name), "") >= created.get((held.namespace, held.name), ""):
            newest[key] = pod
    return newest


def _as_running(ds: DaemonSet, pod: Pod) -> tuple[DaemonSet, str | None]:
    """A defined DaemonSet as Karpenter reads it when a pod of it runs: that pod, the template's required node
    affinity put back (`getDaemonSetPods`); and a warning when the pod's requests are not the template's."""
    affinity = pod.template.affinity
    if ds.template.affinity.required is not None:
        affinity = replace(affinity, required=ds.template.affinity.required)
    read = replace(ds, template=replace(pod.template, affinity=unpinned(affinity)))
    if read.template.requests == ds.template.requests:
        return read, None
    return read, (f"{pod.origin}: DaemonSet {ds.namespace}/{ds.name}: its newest pod {pod.key} requests "
                  f"{_requests(read)} where its template asks {_requests(ds)}: Karpenter sizes the nodes it launches "
                  "by the running pod (getDaemonSetPods), and so does this simulation")


def with_derived_daemonsets(inventory: Inventory, documents: Sequence[Document]) -> tuple[Inventory, list[str]]:
    """The inventory with every DaemonSet read as Karpenter reads it: from its newest bound pod when one runs
    (a defined DaemonSet keeping its template's required node affinity), and every DaemonSet its bound pods name
    and the input lacks derived from that pod; with a warning naming those derived, and one per DaemonSet whose
    running pod requests other than its template."""
    newest = newest_daemon_pods(inventory.pods, documents)
    warnings: list[str] = []
    defined: list[DaemonSet] = []
    for ds in inventory.daemonsets:
        pod = newest.get((ds.namespace, ds.name))
        read, differs = (ds, None) if pod is None else _as_running(ds, pod)
        defined.append(read)
        warnings.extend(filter(None, [differs]))
    known = {(d.namespace, d.name) for d in defined}
    derived = [(DaemonSet(name, namespace, _template(pod), pod.origin), pod)
               for (namespace, name), pod in newest.items() if (namespace, name) not in known]
    if not derived:
        same = all(a is b for a, b in zip(defined, inventory.daemonsets, strict=True))
        return (inventory if same else replace(inventory, daemonsets=tuple(defined))), warnings
    first = derived[0][1]
    shown = ", ".join(f"{d.namespace}/{d.name} ({_requests(d)})" for d, _ in derived[:6])
    more = f" and {len(derived) - 6} more" if len(derived) > 6 else ""
    warning = (f"{first.origin}: {len(derived)} DaemonSet(s) run pods on the nodes but are not in the input: "
               f"{shown}{more}. Each is taken from its newest pod (as Karpenter reads a DaemonSet's overhead), so "
               "every node Karpenter would launch counts it; add the DaemonSets (kubectl get daemonsets -A -o yaml) "
               "for their own node selectors and tolerations")
    daemonsets = (*defined, *(d for d, _ in derived))
    return replace(inventory, daemonsets=daemonsets), [warning, *warnings]


def _requests(ds: DaemonSet) -> str:
    req = ds.template.requests
    return f"{req.get(CPU)}m CPU, {req.get(MEMORY) // MIB}Mi"
