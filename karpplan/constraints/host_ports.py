"""Host ports (kube-scheduler's NodePorts filter): two pods on one node may not claim the same host port
and protocol on overlapping host IPs.

* Filter: an existing node whose bound pods already use a port the pod asks for.
* Model: no rows (the counts model does not see ports); the decoder keeps clashing pods apart on new
  nodes (`engines/cpsat/decoder.py`, `Decoder._fits`) and the greedy engine checks them per placement.
* Verifier: no two pods of a node, pending or bound, claim conflicting host ports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpplan.constraints.base import ConstraintKind, CountsModel, Violation
from karpplan.constraints.port_conflicts import ports_clash
from karpplan.constraints.view import node_views

if TYPE_CHECKING:
    from karpplan.constraints.view import SolvedPlan
    from karpplan.model.pods import HostPort, PodTemplate
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import Problem


class HostPortsKind(ConstraintKind):
    name = "host-ports"
    summary = "no two pods of a node claim the same host port"
    messages = {"conflict": "node(s) didn't have free ports for the requested pod ports"}

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        if ports_clash(template.host_ports, info.host_ports):
            return [self.reason("conflict")]
        return []

    def add_to_model(self, model: CountsModel) -> None:
        """No rows: the decoder separates pods whose host ports clash."""
        del model

    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        out: list[Violation] = []
        for view in node_views(solution):
            taken: list[HostPort] = list(view.solved.existing.host_ports) if view.solved.existing is not None else []
            for group, pod in view.pending:
                ports = group.template.host_ports
                if ports_clash(ports, taken):
                    out.append(Violation(self.name, pod.key, view.name,
                                         f"{pod.key} on {view.name}: a host port is already in use"))
                taken.extend(ports)
        return out


HOST_PORTS = HostPortsKind()
