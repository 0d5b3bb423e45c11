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


__all__ = ["ports_clash"]
