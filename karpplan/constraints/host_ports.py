"""Host ports (kube-scheduler's NodePorts filter): two pods on one node may not claim the same host port
and protocol on overlapping host IPs.

* Filter: an existing node whose bound pods already use a port the pod asks for.
* Model: no rows (the counts model does not see ports); the decoder keeps clashing pods apart on new
  nodes (`engines/decoder.py`, `Decoder._fits`) and the greedy engine checks them per placement.
* Verifier: no two pods of a node, pending or bound, claim conflicting host ports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpplan.constraints.base import ConstraintKind, Violation
from karpplan.constraints.view import node_views

if TYPE_CHECKING:
    from karpplan.engines.optimal import OptimalModel
    from karpplan.engines.result import Solution
    from karpplan.model.pods import HostPort, PodTemplate
    from karpplan.scheduling.filters import ExistingNodeInfo
    from karpplan.scheduling.problem import Problem


class HostPortsKind(ConstraintKind):
    name = "host-ports"
    summary = "no two pods of a node claim the same host port"
    messages = {"conflict": "node(s) didn't have free ports for the requested pod ports"}

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        if any(p.conflicts(q) for p in template.host_ports for q in info.host_ports):
            return [self.reason("conflict")]
        return []

    def add_to_model(self, model: OptimalModel) -> None:
        """No rows: the decoder separates pods whose host ports clash."""
        del model

    def violations(self, problem: Problem, solution: Solution) -> list[Violation]:
        out: list[Violation] = []
        for view in node_views(solution):
            taken: list[HostPort] = list(view.solved.existing.host_ports) if view.solved.existing is not None else []
            for group, pod in view.pending:
                ports = group.template.host_ports
                if any(p.conflicts(q) for p in ports for q in taken):
                    out.append(Violation(self.name, pod.key, view.name,
                                         f"{pod.key} on {view.name}: a host port is already in use"))
                taken.extend(ports)
        return out


HOST_PORTS = HostPortsKind()
