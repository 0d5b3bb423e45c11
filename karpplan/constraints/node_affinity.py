"""nodeSelector and required node affinity (kube-scheduler's NodeAffinity filter; Karpenter's
requirements on a NodePool's launch options).

* Filter: an existing node whose labels (and name, for `metadata.name` fields) the pod's nodeSelector
  and one of its required nodeSelectorTerms do not match.
* Model: no rows. Existing nodes that fail are not in the group's `existing_ok`; launch options whose
  labels the pod's requirements exclude are not among the group's options (`scheduling/candidates.py`).
  Preferred node affinity is a penalty of the objective (`OptimalModel.add_objective`).
* Verifier: every placed pod's nodeSelector and required node affinity match its node's labels (a new
  node's labels are its launch option's, with its name as hostname).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from karpplan.constraints.base import ConstraintKind, CountsModel, KeptPreference, UnmetPreference, Violation
from karpplan.constraints.view import node_views

if TYPE_CHECKING:
    from karpplan.constraints.view import SolvedPlan
    from karpplan.model.pods import PodTemplate
    from karpplan.model.selectors import PreferredTerm
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import GroupInfo, Problem


class NodeAffinityKind(ConstraintKind):
    name = "node-affinity"
    summary = "a pod lands only on nodes matching its nodeSelector and required node affinity"
    messages = {"mismatch": "node(s) didn't match Pod's node affinity/selector"}

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        node = info.node
        return [] if template.affinity.matches(node.labels, node.name) else [self.reason("mismatch")]

    def add_to_model(self, model: CountsModel) -> None:
        """No rows: the static filters leave non-matching nodes and launch options out of the variables."""
        del model

    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        return self.pods_at_fault(solution, lambda view, group: None if group.template.affinity.matches(
            view.labels, view.name) else "node selector/affinity not satisfied")


    def _preference_outcomes(self, problem: Problem, solution: SolvedPlan
                             ) -> Iterator[tuple[GroupInfo, PreferredTerm, list[str]]]:
        """Each group with placed pods and a preferred node-affinity term some node it may use has: its
        heaviest term (Karpenter tries that one first) and the pods whose nodes miss it (empty: honoured)."""
        misses: dict[int, list[str]] = {}
        placed: set[int] = set()
        for view in node_views(solution):
            for group, pod in view.pending:
                preferred = group.template.affinity.preferred
                if not preferred:
                    continue
                placed.add(group.index)
                best = max(preferred, key=lambda p: p.weight)
                if not best.term.matches(view.labels, view.name):
                    misses.setdefault(group.index, []).append(pod.key)
        for group in problem.groups:
            if group.index not in placed:
                continue
            best = max(group.template.affinity.preferred, key=lambda p: p.weight)
            if not any(best.term.matches(o.labels, "") for o in group.options):
                continue  # no node the pod may use has it: nothing to honour
            yield group, best, misses.get(group.index, [])

    def unmet_preferences(self, problem: Problem, solution: SolvedPlan) -> list[UnmetPreference]:
        """Workloads whose pods sit on nodes missing their heaviest preferred node-affinity term although
        some node they may use has it."""
        return self.preferences(problem, solution)[1]

    def preferences(self, problem: Problem, solution: SolvedPlan) -> tuple[set[KeptPreference], list[UnmetPreference]]:
        outcomes = list(self._preference_outcomes(problem, solution))
        return ({(group.index, id(best)) for group, best, pods in outcomes if not pods},
                [UnmetPreference(f"{best.term.origin}: {group.group.pods[0].workload}: preferred node affinity "
                                 f"(weight {best.weight})",
                                 f" for {len(pods)} of {group.size} pod(s): their nodes do not match "
                                 f"{best.term.requirements}")
                 for group, best, pods in outcomes if pods])


NODE_AFFINITY = NodeAffinityKind()
