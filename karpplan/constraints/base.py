"""What every constraint kind provides: a static node filter, CP-SAT rows, an independent check, reasons.

A kind module is the single home of one rule's semantics. The planner's parts iterate the registry
(`karpplan.constraints.registry.REGISTRY`) instead of knowing the rules:

* `filter_node`: kube-scheduler's static filter on an existing node (`scheduling/filters.py`);
* `add_to_model`: the rule's rows in a CP-SAT model over pod counts, read and written through the
  `CountsModel` interface defined here (the engines' `OptimalModel` implements it), and
  `add_to_slot_model` in the exact per-node model of small problems (`SlotCountsModel`, the engines'
  `SlotModel`); the kinds never import the engines;
* `violations`: the independent verifier (`karpplan/verify.py`), written from the Kubernetes and
  Karpenter semantics on the plan's final state, not from the engines' code paths;
* `messages` / `reason`: the wording of plan reasons (kube-scheduler's and Karpenter's own words).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from karpplan.constraints.view import node_views

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from karpplan.constraints.view import NodeView, SolvedPlan
    from karpplan.model.pods import PodTemplate
    from karpplan.scheduling.candidates import LaunchOption
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import GroupInfo, Problem
    from karpplan.scheduling.topology import SpreadRule


class CountsModel(Protocol):
    """What a kind's rows read and write of a CP-SAT model over pod counts (the engines implement it).

    `y[g,k]` pods of group g on new nodes of launch option k, `n[k]` nodes of option k, `x[g,e]` pods of g
    on existing node e, `u[g]` pods of g left out; `y_of[g]` / `x_of[g]` the same per group as (k or e,
    variable). Soft rows add (slack, weight) to `soft_terms` and their largest penalty to `max_soft`;
    `exclude` adds the placements a rule rules out before the variables exist to the banned sets.
    """

    problem: Problem
    model: cp_model.CpModel
    groups: list[GroupInfo]
    dims: list[str]
    options: list[LaunchOption]
    group_options: dict[int, list[LaunchOption]]
    x: dict[tuple[int, int], cp_model.IntVar]
    y: dict[tuple[int, int], cp_model.IntVar]
    n: dict[int, cp_model.IntVar]
    u: dict[int, cp_model.IntVar]
    x_of: dict[int, list[tuple[int, cp_model.IntVar]]]
    y_of: dict[int, list[tuple[int, cp_model.IntVar]]]
    soft_terms: list[tuple[cp_model.LinearExprT, int]]
    max_soft: int
    banned_existing: set[tuple[int, int]]
    banned_option: set[tuple[int, int]]

    def placed_in(self, group: int, key: str, value: str, rule: SpreadRule | None = None) -> list[cp_model.IntVar]:
        """Variables placing pods of `group` in domain `value` of `key` (counted by `rule` when given)."""

    def domain_map(self, group: int, key: str, rule: SpreadRule | None) -> dict[str, list[cp_model.IntVar]]:
        """`placed_in` for every value of `key` at once."""

    def option(self, index: int) -> LaunchOption:
        """The launch option with this index."""

    def cap_per_node(self, members: list[GroupInfo], cap: int) -> None:
        """At most `cap` pods of these groups on each new node of every option."""


class SlotCountsModel(CountsModel, Protocol):
    """The exact slot model: each slot launches at most one node, `z[s,k]` when slot s launches option k."""

    z: dict[tuple[int, int], cp_model.IntVar]


@dataclass(frozen=True)
class Violation:
    """One broken rule in a plan: the kind that found it, the pod and node concerned, what is wrong."""

    kind: str
    pod: str  # namespace/name, or "" when the violation is about a node or a pool
    node: str  # node (or NodePool) name
    message: str
    key: str = ""  # the topology key of a spread or pod (anti-)affinity rule

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class UnmetPreference:
    """A preference (soft constraint) a plan does not honour: which one, and what the plan did instead."""

    preference: str  # where it is written and whose it is: the same for every plan of one problem
    outcome: str
    # why Karpenter's provisioning leaves it unmet however the pods are packed, and what honours it ("": no more
    # to say); the planner adds it to the Karpenter simulation's plan
    karpenter_note: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.preference} is not honoured{self.outcome}"


KeptPreference = tuple[int, int]  # (group index, id() of the TopologySpreadConstraint or term kept)


class ConstraintKind(ABC):
    """One kind of scheduling constraint."""

    name: str
    summary: str  # one line
    messages: Mapping[str, str]  # reason templates, `str.format` fields named by `reason`'s facts

    def reason(self, message: str, /, **facts: object) -> str:
        """The reason text named `message` with these facts filled in."""
        return self.messages[message].format(**facts)

    def exclude(self, model: CountsModel) -> None:
        """Placements the rule rules out before the model's variables exist (default: none)."""
        del model

    @abstractmethod
    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        """kube-scheduler's static filter for this pod on this existing node: the reasons it fails
        (empty: passes, or the rule is not a static filter)."""

    def option_filter(self, template: PodTemplate) -> Callable[[Mapping[str, str]], str | None] | None:
        """A static test of a launch option's node labels for this pod, for rules whose static part is not
        a NodePool requirement: it returns why the option cannot take the pod, or None. (None instead of a
        test, the default: every option passes.)"""
        del template
        return None

    @abstractmethod
    def add_to_model(self, model: CountsModel) -> None:
        """Add the rule's rows to the CP-SAT model (after the variables, before the objective)."""

    def add_to_slot_model(self, model: SlotCountsModel) -> None:
        """The rule's rows in the exact slot model where each slot is a launch option
        of which at most one node is launched; by default the same rows as `add_to_model`, exact per node."""
        self.add_to_model(model)

    @abstractmethod
    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        """Where the solution breaks the rule, checked from the plan's final state."""

    def unmet_preferences(self, problem: Problem, solution: SolvedPlan) -> list[UnmetPreference]:
        """The rule's preferred (soft) forms the solution does not honour (default: none)."""
        del problem, solution
        return []

    def preferences(self, problem: Problem, solution: SolvedPlan) -> tuple[set[KeptPreference], list[UnmetPreference]]:
        """Both sides from one reading of the plan: the rule's preferred forms the solution honours for every
        placed pod of a group, as (group index, id of the preference's model object), what `--preferences
        honour` enforces; and `unmet_preferences`. A preference no plan can meet is neither (default: none
        kept)."""
        return set(), self.unmet_preferences(problem, solution)

    def pods_at_fault(self, solution: SolvedPlan, fault: Callable[[NodeView, GroupInfo], str | None]) -> list[Violation]:
        """One violation per pending pod whose node `fault` finds wrong for it (`fault` says what, or None)."""

        out: list[Violation] = []
        for view in node_views(solution):
            for group_info, pod in view.pending:
                what = fault(view, group_info)
                if what is not None:
                    out.append(Violation(self.name, pod.key, view.name, f"{pod.key} on {view.name}: {what}"))
        return out
