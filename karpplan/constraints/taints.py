"""Taints and tolerations, `spec.unschedulable` included (kube-scheduler's NodeUnschedulable and
TaintToleration filters; Karpenter's NodePool taint check).

* Filter: an existing node that is unschedulable (unless the pod tolerates
  `node.kubernetes.io/unschedulable:NoSchedule`) or carries a NoSchedule/NoExecute taint the pod does not
  tolerate.
* Model: no rows. Existing nodes that fail are not among the group's `existing_ok` (this filter, in
  `scheduling/problem.py`); NodePools whose taints the pod does not tolerate give it no launch options
  (`scheduling/candidates.py`, `check_pool`).
* Verifier: every placed pod tolerates its node's NoSchedule/NoExecute taints (PreferNoSchedule only
  steers), and an unschedulable node takes only pods tolerating its taint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpplan.constraints.base import ConstraintKind, CountsModel, Violation
from karpplan.constraints.view import UNSCHEDULABLE_TAINT
from karpplan.model.taints import SCHEDULING_EFFECTS, Taint, tolerates, untolerated

if TYPE_CHECKING:
    from karpplan.constraints.view import NodeView, SolvedPlan
    from karpplan.model.pods import PodTemplate
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import GroupInfo, Problem


class TaintsKind(ConstraintKind):
    name = "taints"
    summary = "a pod lands only on nodes whose NoSchedule/NoExecute taints (and unschedulable mark) it tolerates"
    messages = {
        "unschedulable": "node(s) were unschedulable",
        "untolerated": "node(s) had untolerated taint {taint}",
    }

    def untolerated_taint_reason(self, taint: Taint) -> str:
        return self.reason("untolerated", taint=taint.kube_text())

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        node = info.node
        reasons: list[str] = []
        if node.unschedulable and not tolerates(template.tolerations, UNSCHEDULABLE_TAINT):
            reasons.append(self.reason("unschedulable"))
        bad = untolerated(template.tolerations, node.taints, SCHEDULING_EFFECTS)
        if bad:
            reasons.append(self.untolerated_taint_reason(bad[0]))
        return reasons

    def add_to_model(self, model: CountsModel) -> None:
        """No rows: the static filters leave untolerated nodes and NodePools out of the variables."""
        del model

    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        def untolerated_taint(view: NodeView, group: GroupInfo) -> str | None:
            bad = untolerated(group.template.tolerations, view.taints, SCHEDULING_EFFECTS)
            return f"untolerated taint {bad[0].kube_text()}" if bad else None

        return self.pods_at_fault(solution, untolerated_taint)


TAINTS = TaintsKind()
