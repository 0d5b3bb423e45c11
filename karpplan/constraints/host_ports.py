"""Host ports (kube-scheduler's NodePorts filter): two pods on one node may not claim the same host port
and protocol on overlapping host IPs.

* Filter: an existing node whose bound pods already use a port the pod asks for.
* Model: the groups that claim one host port (port and protocol) on overlapping host IPs clash pairwise,
  so at most one of their pods fits a node: a cap of one per new node, and per existing node (one less when
  its bound pods hold the port already, which the filter has ruled out). A `hostNetwork` pod claims its
  containers' ports this way. The decoder still keeps clashing pods apart on new nodes
  (`engines/cpsat/decoder.py`, `Decoder._fits`) and the greedy engine checks them per placement.
* DaemonSets: a DaemonSet holds its host ports on every node it runs on, new or existing
  (`scheduling/daemon_ports.py`): launch options whose DaemonSets hold a port the pod asks for are not the
  pod's (`candidates.check_pool`), and an existing node holds the ports of the DaemonSets bound or still to
  come there. The reasons name the DaemonSet and the port (`daemonset`, `daemonset_existing`).
* Verifier: no two pods of a node, pending, bound or of a DaemonSet that runs there, claim conflicting host
  ports.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from karpplan.constraints.base import ConstraintKind, CountsModel, Violation
from karpplan.constraints.port_conflicts import (
    DAEMONSET_HOLDS,
    DAEMONSET_HOLDS_EXISTING,
    PORT_FIX,
    ports_clash,
)
from karpplan.constraints.view import node_views

_WILDCARD = ("0.0.0.0", "", "::")

if TYPE_CHECKING:
    from ortools.sat.python.cp_model import IntVar

    from karpplan.constraints.view import SolvedPlan
    from karpplan.model.pods import HostPort, PodTemplate
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import GroupInfo, Problem


class HostPortsKind(ConstraintKind):
    name = "host-ports"
    summary = "no two pods of a node claim the same host port"
    messages = {
        "conflict": "node(s) didn't have free ports for the requested pod ports",
        "daemonset": DAEMONSET_HOLDS,
        "daemonset_existing": DAEMONSET_HOLDS_EXISTING,
        "fix": PORT_FIX,
    }

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        if ports_clash(template.host_ports, info.host_ports):
            return [self.reason("conflict")]
        return []

    def add_to_model(self, model: CountsModel) -> None:
        """At most one pod per node of each set of groups whose host ports clash pairwise."""
        for clique in port_cliques(model.groups):
            model.cap_per_node(clique, 1)
            by_node: dict[int, list[IntVar]] = defaultdict(list)
            for group in clique:
                for e, v in model.x_of.get(group.index, []):
                    by_node[e].append(v)
            for items in by_node.values():
                model.model.add(sum(items) <= 1)

    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        out: list[Violation] = []
        for view in node_views(solution):
            existing, option = view.solved.existing, view.solved.option
            taken: list[HostPort] = (list(existing.host_ports) if existing is not None
                                     else [p for _, p in option.daemon_ports] if option is not None else [])
            for group, pod in view.pending:
                ports = group.template.host_ports
                if ports_clash(ports, taken):
                    out.append(Violation(self.name, pod.key, view.name,
                                         f"{pod.key} on {view.name}: a host port is already in use"))
                taken.extend(ports)
        return out


def port_cliques(groups: Sequence[GroupInfo]) -> list[list[GroupInfo]]:
    """Sets of groups whose pods claim one host port and protocol on pairwise overlapping host IPs (a wildcard
    IP overlaps every IP; two specific IPs only themselves): at most one pod of a set fits a node. One set per
    (port, protocol, specific IP or wildcard), the wildcard's claimants in each; a set repeated on another port
    is given once."""
    claims: dict[tuple[int, str], dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for group in groups:
        for port in group.template.host_ports:
            ip = "*" if port.host_ip in _WILDCARD else port.host_ip
            claims[port.port, port.protocol][ip].add(group.index)
    by_index = {g.index: g for g in groups}
    seen: set[frozenset[int]] = set()
    out: list[list[GroupInfo]] = []
    for per_ip in claims.values():
        wildcard = per_ip.get("*", set())
        specific = [members for ip, members in per_ip.items() if ip != "*"]
        for members in specific or [set()]:
            clique = frozenset(wildcard | members)
            if clique and clique not in seen:
                seen.add(clique)
                out.append([by_index[i] for i in sorted(clique)])
    return out


HOST_PORTS = HostPortsKind()
