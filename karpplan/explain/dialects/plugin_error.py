"""kube-scheduler failing inside one of its plugins: not a verdict on the nodes ("0/N nodes are available") but an
error a plugin returned, which the scheduler reports as the pod's FailedScheduling message and retries with backoff:

    running PreFilter plugin "VolumeBinding": error getting PVC "ns/data": persistentvolumeclaim "data" not found
    running Score plugins: plugin "DynamicResources" failed with: number of allocations 1 is smaller than ...
    running "VolumeBinding" filter plugin: ...

The cause is in the error after the plugin's name: an object the pod names that does not exist (a claim, a
DeviceClass), or a bug of that scheduler release (kubernetes/kubernetes#139016: 1.35's DynamicResources scoring with a
shared multi-node claim beside per-node ones, fixed in the 1.35 and 1.36 patch releases).
"""

from __future__ import annotations

import re

from karpplan.explain.structure import UNSUPPORTED, Reason

TRIGGERS = (" plugin \"", "\" filter plugin:")
# classic DRA (resource.k8s.io/v1alpha2, Kubernetes 1.26-1.30): a claim whose driver's control-plane controller
# allocates it; the scheduler's Reserve hands it the chosen node and waits (dynamicresources.go)
_CLASSIC_WAIT = re.compile(r"waiting for resource driver to (?:allocate resource|provide information)")
CAUSE = "scheduler plugin error"
_ERROR = re.compile(r'running (?:(?P<phase>[A-Z]\w*) plugins?:? (?:plugin )?"(?P<plugin>[^"]+)"(?: failed with)?|'
                    r'"(?P<plugin2>[^"]+)" (?P<phase2>filter) plugin):\s*(?P<err>.*)', re.S)


def parse(message: str) -> Reason | None:
    """The plugin error `message` reports, if it is one."""
    m = _ERROR.search(message)
    if m is None:
        return None
    plugin = m.group("plugin") or m.group("plugin2") or ""
    phase = m.group("phase") or m.group("phase2") or ""
    return Reason(UNSUPPORTED, " ".join(m.group(0).split()).rstrip(". "), key=plugin, value=phase, cause=CAUSE)


def plain(r: Reason) -> str:
    m = _ERROR.search(r.text)
    plugin, err = r.key or "a plugin", (m.group("err") if m else r.text)
    head = (f"kube-scheduler's {plugin} plugin failed with an error ({err}) in its {r.value or ''} phase: this is not "
            "a verdict that no node fits, and the scheduler retries the pod with backoff. ")
    if plugin == "DynamicResources" and _CLASSIC_WAIT.search(err):
        return _classic_wait(err)
    if plugin == "DynamicResources":
        return head + ("The pod's ResourceClaims are what it was allocating: check that each claim (or its template), "
                       "DeviceClass and the driver's ResourceSlices exist (kubectl get resourceclaims,deviceclasses,"
                       "resourceslices). An error about the number of allocations or claims is a scheduler bug: "
                       "1.35 scored pods that share a multi-node claim beside per-node ones wrongly and left them "
                       "Pending (kubernetes/kubernetes#139016, fixed in later 1.35 and 1.36 patch releases) - upgrade "
                       "the control plane.")
    if plugin == "VolumeBinding":
        return head + ("The pod's PersistentVolumeClaims are what it was binding: a claim that does not exist, or whose "
                       "StorageClass does not, stops it - create it (kubectl get pvc,storageclass).")
    return head + "The error names the object or setting at fault; fix that, or upgrade the scheduler if it is a bug."


def _classic_wait(err: str) -> str:
    """Classic DRA's Reserve waiting on the driver's controller: a normal step, Pending only when it never ends."""
    step = ("told the resource driver which node it chose and waits for the driver's controller to allocate the "
            "claim there" if "allocate" in err else
            "asked the resource drivers which nodes suit the pod's claims and waits for their answer")
    return (f"kube-scheduler's DynamicResources plugin {step} ({err}): a normal step of classic DRA (resource.k8s.io "
            "v1alpha2, a ResourceClass and a driver with a control-plane controller, Kubernetes 1.26-1.30), not a "
            "verdict on the nodes; the scheduler tries again when the claim changes. Pending for minutes means the "
            "driver's controller is not allocating: check that its controller Deployment runs and logs the claim "
            "(kubectl logs), that the claim's ResourceClass names that driver, and kubectl describe resourceclaim / "
            "get podschedulingcontexts for its state. From Kubernetes 1.31 structured parameters replace the "
            "controller - a driver and cluster version pair from different DRA generations never allocates.")
