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

from collections.abc import Iterable, Sequence

from karpplan.constraints.port_conflicts import (
    DAEMONSET_HOLDS,
    DAEMONSET_HOLDS_EXISTING,
    PORT_FIX,
    ports_clash,
)
from karpplan.model.pods import DaemonSet, HostPort

DaemonPort = tuple[str, HostPort]
"""A host port a DaemonSet holds on a node: (`namespace/name` of the DaemonSet, the port)."""


def daemonset_key(ds: DaemonSet) -> str:
    return f"{ds.namespace}/{ds.name}"


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


def daemonset_port_clashes(nodes: Iterable[Sequence[DaemonPort]], daemonsets: Sequence[DaemonSet]) -> list[str]:
    """Two DaemonSets that claim one host port on the same nodes (`nodes`: the DaemonSet ports of each node of
    the plan): on each such node only one of them runs, whichever kube-scheduler binds first, and the other's pod
    stays Pending; Karpenter still counts both in the node's DaemonSet overhead (`buildDaemonOverheadGroups` adds
    every compatible DaemonSet), and so does the plan. One warning per pair, with where each is defined."""
    clashes: dict[tuple[str, str], tuple[dict[str, None], int]] = {}
    for held in nodes:
        found: dict[tuple[str, str], dict[str, None]] = {}
        for i, (first, port) in enumerate(held):
            for second, other in held[i + 1:]:
                if first != second and ports_clash((port,), (other,)):
                    pair = (min(first, second), max(first, second))
                    found.setdefault(pair, {})[_port_text(port)] = None
        for pair, ports in found.items():
            seen, count = clashes.get(pair, ({}, 0))
            clashes[pair] = ({**seen, **ports}, count + 1)
    origin = {daemonset_key(ds): str(ds.origin) for ds in daemonsets}
    return [f"DaemonSets {a} ({origin.get(a, '?')}) and {b} ({origin.get(b, '?')}) both claim host port"
            f"{'s' if len(ports) > 1 else ''} {', '.join(ports)} on {count} node{'s' if count > 1 else ''} of this plan: "
            "only one of them runs on each, whichever is scheduled first, and the other's pod stays Pending (\"node(s) "
            "didn't have free ports for the requested pod ports\"); both are counted in the DaemonSet overhead, as "
            "Karpenter counts them. Give one of them another port, or keep them on different nodes (nodeSelector)"
            for (a, b), (ports, count) in sorted(clashes.items())]


def _port_text(port: HostPort) -> str:
    text = f"{port.port}/{port.protocol}"
    return text if port.host_ip in ("0.0.0.0", "", "::") else f"{port.host_ip}:{text}"


__all__ = ["DaemonPort", "clashing", "daemon_port_failure", "daemonset_key", "describe", "daemonset_port_clashes",
           "existing_daemon_port_note"]
