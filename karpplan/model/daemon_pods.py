"""What a DaemonSet costs a node, as Karpenter reads it: the requests of the newest pod it controls, else its template.

Karpenter sizes a launch with each DaemonSet's pod (`provisioner.go` `getDaemonSetPods`): `Cluster.UpdateDaemonSet`
keeps the pod the DaemonSet controls with the latest creationTimestamp, bound or not, and only a DaemonSet with no
pod yet is read from its template. A pod's requests can differ from the template's (a LimitRange or a webhook set
them at admission, a rollout is under way), and the pod is what runs. Its node affinity is the controller's (the
template's terms pinned to one node by `metadata.name`), so the template keeps its own affinity and tolerations
here and takes only the pod's requests. (Karpenter's test: "should account for overhead using daemonset pod spec
instead of daemonset spec".)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from karpplan.model.pods import DaemonSet
from karpplan.model.resources import Resources

DAEMONSET_OWNER = "DaemonSet/"


@dataclass
class DaemonPods:
    """The newest pod's requests of each DaemonSet, by (namespace, name), as the input's pods show them."""

    newest: dict[tuple[str, str], tuple[str, int, Resources]] = field(default_factory=dict)

    def note(self, owner: str | None, namespace: str, created: str, requests: Resources) -> None:
        """A pod controlled by `owner` (`DaemonSet/NAME` to count), created at `created` (RFC 3339, "" unknown):
        the later one is kept, input order breaking ties (the last read)."""
        if owner is None or not owner.startswith(DAEMONSET_OWNER):
            return
        key = (namespace, owner[len(DAEMONSET_OWNER):])
        order = len(self.newest) + 1
        held = self.newest.get(key)
        if held is None or created >= held[0]:
            self.newest[key] = (created, order, requests)

    def applied(self, daemonsets: Sequence[DaemonSet]) -> tuple[DaemonSet, ...]:
        """The DaemonSets, each with its newest pod's requests where the input has one of its pods."""
        out = []
        for ds in daemonsets:
            held = self.newest.get((ds.namespace, ds.name))
            if held is None or held[2] == ds.template.requests:
                out.append(ds)
            else:
                out.append(replace(ds, template=replace(ds.template, requests=held[2])))
        return tuple(out)


__all__ = ["DaemonPods"]
