"""What the plan says of the service-mesh sidecars it added to pods (`model/mesh_sidecars.py`): one warning per
mesh proxy, naming the workloads, their pod count, what each proxy requests and why it is thought injected."""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.model.inventory import InputNotice
from karpplan.model.pods import DaemonSet, Pod

_SHOWN = 4


def injected_notices(pods: Sequence[Pod], daemonsets: Sequence[DaemonSet] = ()) -> list[InputNotice]:
    """One notice per (proxy, request) kind of the pending pods (and DaemonSets, whose pods every node runs) a
    mesh's webhook will inject a proxy into."""
    groups: dict[tuple[str, str], dict[str, list[Pod | DaemonSet]]] = {}
    for pod in pods:
        injected = pod.template.injected
        if injected is None or pod.bound or pod.terminal:
            continue
        key = (injected.describe(), injected.why)
        kind, _, name = pod.workload.partition("/")
        groups.setdefault(key, {}).setdefault(f"{kind}/{pod.namespace}/{name}", []).append(pod)
    for daemonset in daemonsets:
        injected = daemonset.template.injected
        if injected is not None:
            key = (injected.describe(), injected.why)
            groups.setdefault(key, {}).setdefault(f"DaemonSet/{daemonset.namespace}/{daemonset.name} (every node)",
                                                  []).append(daemonset)
    notices: list[InputNotice] = []
    for (proxy, why), workloads in sorted(groups.items()):
        first = next(iter(workloads.values()))[0]
        count = sum(len(members) for members in workloads.values())
        names = sorted(workloads)
        shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
        notices.append(InputNotice(first.origin, (
            f"{count} pod(s) of {shown} get the mesh sidecar {proxy} at admission ({why}): it is in no manifest, "
            "and karpplan plans the pods with its requests added (set them with the mesh's per-pod annotations, "
            "or label the pod sidecar.istio.io/inject=false / annotate linkerd.io/inject: disabled if it is not "
            "injected)")))
    return notices
