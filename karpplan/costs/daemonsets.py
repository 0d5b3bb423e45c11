"""Which DaemonSets run on a planned node, and what each requests there (their share of its price).

A node's `daemonSetRequests` is one sum; showback charges each DaemonSet its own part. The DaemonSets that
run on a node are found as the planner finds them (`scheduling/candidates.daemon_overhead`: the node's
taints tolerated, its labels matched), one DaemonSet at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.model.pods import DaemonSet
from karpplan.model.resources import Resources
from karpplan.model.taints import Taint
from karpplan.plan import PlanNode
from karpplan.scheduling.candidates import daemon_overhead


def daemonsets_on(node: PlanNode, daemonsets: Sequence[DaemonSet]) -> list[tuple[DaemonSet, Resources]]:
    """The DaemonSets whose pod runs on `node`, each with its requests, in input order."""
    if not daemonsets or not node.daemon_requests:
        return []
    taints = [Taint(t.get("key", ""), t.get("value", ""), t.get("effect", "")) for t in node.taints]
    out = []
    for ds in daemonsets:
        requests = daemon_overhead([ds], node.labels, taints, node.name)
        if requests:
            out.append((ds, requests))
    return out
