"""The independent verifier: does a plan keep every scheduling rule?

`verify(problem, solution)` asks every constraint kind of the registry for the rules the solution
breaks, judged on the plan's final state (what each node would hold, bound pods included) from the
Kubernetes and Karpenter semantics, not from the engines' own bookkeeping: resources, taints, node
affinity, host ports, NodePool limits, topology spread and inter-pod (anti-)affinity. An empty list is a
plan the cluster would accept. Its rules mirror the scenario checker (`../shared/cases/check.py`), which verifies
the plan's JSON from the manifests.
"""

from __future__ import annotations

from karpplan.constraints.base import Violation
from karpplan.constraints.registry import REGISTRY
from karpplan.engines.result import Solution
from karpplan.scheduling.problem import Problem


def verify(problem: Problem, solution: Solution) -> list[Violation]:
    """Every violation of every constraint kind, kind by kind in registry order."""
    out: list[Violation] = []
    for kind in REGISTRY:
        out.extend(kind.violations(problem, solution))
    return out


__all__ = ["Violation", "verify"]
