"""DaemonSet host ports: the host ports the DaemonSets that run on a node hold there, on the nodes a NodePool
would launch (per launch option) and on existing nodes, and which of them a pending pod asks for.

A DaemonSet with a `hostPort` (or `hostNetwork`: its containers' ports) holds that port on every node it runs
on, new nodes included: a pod asking for the same port and protocol on an overlapping host IP can never run
beside it (kube-scheduler's NodePorts). Karpenter counts them on a new NodeClaim since v1.4
(kubernetes-sigs/karpenter#2102, the fix of #2083's endless launches: each DaemonSet compatible with the
NodePool template holds its ports in the claim's `HostPortUsage`) and, since v1.14 (#2975), per group of instance
types with the same compatible DaemonSets (`buildDaemonOverheadGroups`; `filterInstanceTypesByRequirements`
skips the groups whose ports clash): here, per launch option, which carries its instance type's labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from karpplan.constraints.port_conflicts import (
    DAEMONSET_HOLDS,
    DAEMONSET_HOLDS_EXISTING,
    PORT_FIX,
    ports_clash,
)
from karpplan.model.pods import DaemonSet, HostPort
from karpplan.model.taints import SCHEDULING_EFFECTS, Taint, untolerated

DaemonPort = tuple[str, HostPort]
"""A host port a DaemonSet holds on a node: (`namespace/name` of the DaemonSet, the port)."""


def daemonset_key(ds: DaemonSet) -> str:
    return f"{ds.namespace}/{ds.name}"


def with_host_ports(daemonsets: Sequence[DaemonSet]) -> list[DaemonSet]:
    """The DaemonSets that claim a host port at all (most claim none: nothing to test per option)."""
    return [ds for ds in daemonsets if ds.template.host_ports]


def daemon_ports(daemonsets: Sequence[DaemonSet], labels: Mapping[str, str], taints: Sequence[Taint],
                 node_name: str = "") -> tuple[DaemonPort, ...]:
    """The host ports the DaemonSets that would run on a node with these labels and taints hold there (the
    same DaemonSets as `candidates.daemon_overhead` counts)."""
    return tuple((daemonset_key(ds), port) for ds in daemonsets
                 if not untolerated(ds.template.tolerations, taints, SCHEDULING_EFFECTS)
                 and ds.template.affinity.matches(labels, node_name)
                 for port in ds.template.host_ports)


def clashing(asked: Sequence[HostPort], held: Iterable[DaemonPort]) -> list[DaemonPort]:
    """The DaemonSet ports among `held` that a pod asking for `asked` clashes with."""
    if not asked:
        return []
    return [(ds, port) for ds, port in held if ports_clash(asked, (port,))]


def describe(clashes: Sequence[DaemonPort]) -> tuple[str, str]:
    """(`host port 8080/TCP`, `DaemonSet kube-system/node-local-dns`): the ports and their DaemonSets, each once,
    in the order found."""
    ports = list(dict.fromkeys(_port_text(p) for _, p in clashes))
    owners = list(dict.fromkeys(ds for ds, _ in clashes))
    port_text = ("host port " if len(ports) == 1 else "host ports ") + ", ".join(ports)
    owner_text = ("DaemonSet " if len(owners) == 1 else "DaemonSets ") + ", ".join(owners)
    return port_text, owner_text


def daemon_port_failure(clashes: Sequence[DaemonPort]) -> str:
    """Why a NodePool cannot take the pod: on every node of it the pod fits, a DaemonSet holds its port."""
    ports, owners = describe(clashes)
    return DAEMONSET_HOLDS.format(ports=ports, owners=owners, fix=PORT_FIX)


def existing_daemon_port_note(clashes: Sequence[DaemonPort], count: int, *, with_fix: bool = True) -> str:
    """Which DaemonSet holds the pod's port on the `count` existing nodes that refuse the pod for its ports
    (`with_fix`: and what to change, when no other reason of the pod says it)."""
    ports, owners = describe(clashes)
    note = DAEMONSET_HOLDS_EXISTING.format(ports=ports, owners=owners, count=count)
    return note + "; " + PORT_FIX if with_fix else note


def _port_text(port: HostPort) -> str:
    text = f"{port.port}/{port.protocol}"
    return text if port.host_ip in ("0.0.0.0", "", "::") else f"{port.host_ip}:{text}"


__all__ = ["DaemonPort", "clashing", "daemon_port_failure", "daemon_ports", "daemonset_key", "describe",
           "existing_daemon_port_note", "with_host_ports"]
