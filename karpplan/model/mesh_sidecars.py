"""Service-mesh sidecars injected at admission: the proxy container a mesh's webhook adds to a pod, whose
requests are in no manifest the user pastes.

Istio injects `istio-proxy` into pods of a namespace labelled `istio-injection=enabled` or `istio.io/rev=<rev>`,
and into any pod labelled (or, as before, annotated) `sidecar.istio.io/inject: "true"`, unless the pod says
`"false"` or its namespace `istio-injection=disabled` (istio's sidecar-injector webhooks' selectors and
`injectRequired`). The proxy requests `sidecar.istio.io/proxyCPU` / `proxyMemory` when the pod sets them, else
Istio's default `global.proxy.resources.requests` (100m CPU, 128Mi memory; manifests/charts/istio-control/
istio-discovery/values.yaml): karpplan plans the pod with them, and says so. Linkerd injects `linkerd-proxy` into
pods annotated `linkerd.io/inject: enabled` (or of a namespace so annotated); its proxy requests only what
`config.linkerd.io/proxy-cpu-request` / `proxy-memory-request` set (its chart's `proxy.resources` requests are
empty by default), which karpplan adds the same way. A pod already holding the proxy container (injected by hand,
or read from a running cluster) gets nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from karpplan.model.quantity import QuantityError, format_resource, parse_quantity
from karpplan.model.resources import CPU, MEMORY, amount_of

ISTIO_DEFAULT = {CPU: 100, MEMORY: 128 * 2**20}  # global.proxy.resources.requests
_ISTIO_INJECT = "sidecar.istio.io/inject"
_ISTIO_ANNOTATIONS = {CPU: "sidecar.istio.io/proxyCPU", MEMORY: "sidecar.istio.io/proxyMemory"}
_LINKERD_INJECT = "linkerd.io/inject"
_LINKERD_ANNOTATIONS = {CPU: "config.linkerd.io/proxy-cpu-request", MEMORY: "config.linkerd.io/proxy-memory-request"}


@dataclass(frozen=True)
class InjectedSidecar:
    """The proxy a mesh adds to a pod: which, what it requests, and why karpplan thinks it is injected."""

    container: str  # istio-proxy | linkerd-proxy
    requests: Mapping[str, int]
    why: str  # "namespace team is labelled istio-injection=enabled"

    @property
    def init_container(self) -> str:
        """The init container the mesh injects beside its proxy to redirect the pod's traffic, which adds
        NET_ADMIN and NET_RAW (its CNI plugin, the alternative, is a DaemonSet: none on Fargate)."""
        return "istio-init" if self.container == "istio-proxy" else "linkerd-init"

    def fargate_refusal(self) -> str:
        """What fargate-scheduler says of the injected pod."""
        return (f"invalid SecurityContext fields: Capabilities added: NET_ADMIN, NET_RAW (the {self.init_container} "
                f"container injected with {self.container}: {self.why})")

    def describe(self) -> str:
        asked = ", ".join(f"{format_resource(k, v)} {k.upper() if k == CPU else k}" for k, v in sorted(self.requests.items()))
        return f"{self.container} ({asked or 'no requests'})"


def _amounts(annotations: Mapping[str, str], keys: Mapping[str, str]) -> dict[str, int] | None:
    out: dict[str, int] = {}
    for resource, key in keys.items():
        if key in annotations:
            try:
                out[resource] = amount_of(resource, parse_quantity(annotations[key]))
            except QuantityError:
                return None
    return out


def _istio(namespace: str, ns_labels: Mapping[str, str], labels: Mapping[str, str],
           annotations: Mapping[str, str]) -> InjectedSidecar | None:
    said = labels.get(_ISTIO_INJECT, annotations.get(_ISTIO_INJECT, "")).lower()
    if said == "false" or ns_labels.get("istio-injection") == "disabled":
        return None
    if said == "true":
        why = f"the pod is labelled {_ISTIO_INJECT}=true"
    elif ns_labels.get("istio-injection") == "enabled":
        why = f"namespace {namespace} is labelled istio-injection=enabled"
    elif "istio.io/rev" in ns_labels:
        why = f"namespace {namespace} is labelled istio.io/rev={ns_labels['istio.io/rev']}"
    else:
        return None
    own = _amounts(annotations, _ISTIO_ANNOTATIONS)
    return InjectedSidecar("istio-proxy", {**ISTIO_DEFAULT, **(own or {})}, why)


def _linkerd(namespace: str, ns_annotations: Mapping[str, str],
             annotations: Mapping[str, str]) -> InjectedSidecar | None:
    said = annotations.get(_LINKERD_INJECT, ns_annotations.get(_LINKERD_INJECT, ""))
    if said not in ("enabled", "ingress"):
        return None
    where = "the pod is" if _LINKERD_INJECT in annotations else f"namespace {namespace} is"
    own = _amounts({**ns_annotations, **annotations}, _LINKERD_ANNOTATIONS)
    return InjectedSidecar("linkerd-proxy", own or {}, f"{where} annotated {_LINKERD_INJECT}={said}")


def injected_sidecar(spec: object, namespace: str, ns_labels: Mapping[str, str], ns_annotations: Mapping[str, str],
                     labels: Mapping[str, str], annotations: Mapping[str, str]) -> InjectedSidecar | None:
    """The sidecar a mesh's webhook adds to a pod not yet created with this spec (None: none, or it is there)."""
    sidecar = _istio(namespace, ns_labels, labels, annotations) or _linkerd(namespace, ns_annotations, annotations)
    if sidecar is None or not isinstance(spec, Mapping):
        return sidecar
    for kind in ("containers", "initContainers"):
        listed = spec.get(kind)
        if any(isinstance(c, Mapping) and c.get("name") == sidecar.container
               for c in (listed if isinstance(listed, list) else ())):
            return None
    return sidecar
