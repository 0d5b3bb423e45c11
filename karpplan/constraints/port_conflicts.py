"""When host ports clash (kube-scheduler's NodePorts): the one home of the host-port test.

The filter on existing nodes and the verifier (`host_ports.py`), the greedy engine's per-placement check
(`scheduling/state.py`), the decoder and the re-packer ask here whether a pod's ports fit beside those a
node's pods already claim.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from karpplan.model.pods import HostPort


def ports_clash(asked: Sequence[HostPort], taken: Iterable[HostPort]) -> bool:
    """Does any port the pod asks for clash with one already taken on the node (same port and protocol,
    overlapping host IPs: a wildcard IP overlaps every IP)?"""
    if not asked:
        return False
    return any(p.conflicts(q) for q in taken for p in asked)


# A DaemonSet holds its host ports on every node it runs on, the nodes a NodePool launches included
# (`scheduling/daemon_ports.py` says which; the host-ports kind's `daemonset*` and `fix` messages are these).
DAEMONSET_HOLDS = ("checking host port usage: {ports} is held by {owners} on every node of this NodePool the pod "
                   "fits (a DaemonSet runs on each node it selects, new nodes included), so no new node can run "
                   "both; {fix}")
DAEMONSET_HOLDS_EXISTING = "{ports} is held by {owners} on {count} of these nodes (a DaemonSet runs on each node it selects)"
PORT_FIX = ("give the pod another host port (or drop hostPort / hostNetwork if it does not need one), or keep the "
            "DaemonSet off the nodes this pod needs (its nodeSelector or node affinity)")

__all__ = ["DAEMONSET_HOLDS", "DAEMONSET_HOLDS_EXISTING", "PORT_FIX", "ports_clash"]
