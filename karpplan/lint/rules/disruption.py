"""pdb-blocks-disruption: a PodDisruptionBudget that allows no eviction of its workload's pods, counted with the
disruption controller's arithmetic (`model/disruption_budgets.py`) over the pods the input plans, all running."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from karpplan.lint.context import LintContext
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.rules.examples import NODEPOOL, ZONE_SPREAD, deployment
from karpplan.model.disruption_budgets import Budget, allowed, written_budget
from karpplan.model.pods import Pod

_PDB = """\
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  {field}
  selector: {{matchLabels: {{app: web}}}}
"""


def _workloads(pods: Sequence[Pod]) -> str:
    names = list(dict.fromkeys(f"{kind}/{p.namespace}/{name}" for p in pods
                               for kind, _, name in [p.workload.partition("/")]))
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _why(budget: Budget, selected: int) -> tuple[str, str]:
    """The field that allows no eviction (its path) and what it says, in words."""
    if budget.max_unavailable is not None:
        return "spec.maxUnavailable", f"maxUnavailable {budget.max_unavailable} lets no pod go"
    return ("spec.minAvailable", f"minAvailable {budget.min_available} keeps all {selected} of the pod(s) it selects")


@lint_rule("pdb-blocks-disruption", "KPL302", Severity.warning,
           fix="let at least one pod go: maxUnavailable 1 (or minAvailable below the replicas)",
           bad=NODEPOOL + deployment(ZONE_SPREAD, replicas=3) + _PDB.format(field="minAvailable: 3"),
           good=NODEPOOL + deployment(ZONE_SPREAD, replicas=3) + _PDB.format(field="maxUnavailable: 1"))
def PDB_BLOCKS_DISRUPTION(ctx: LintContext) -> Iterator[Hit]:
    """A PodDisruptionBudget that allows 0 disruptions while all the pods it selects run.

    `minAvailable` equal to the replicas (`1` of a single replica, `100%`) or `maxUnavailable: 0` lets the
    eviction API evict none of its pods. Karpenter then never consolidates a node holding one ("pdb prevents pod
    evictions"), drifts it only when its NodePool sets `terminationGracePeriod`, and an expired node's drain
    waits on the budget until that period ends (for ever without it); node upgrades and `kubectl drain` stall
    too (kubernetes-sigs/karpenter#2802, aws/karpenter-provider-aws#8164). Counted with the disruption
    controller's arithmetic over the pods the input plans (each workload's replicas, an autoscaler's too), all
    running: a budget that selects no planned pod is not judged.
    """
    running = [p if p.node_name else replace(p, node_name="-") for p in ctx.inventory.pods if not p.terminal]
    for doc in ctx.documents:
        if doc.kind != "PodDisruptionBudget" or doc.group != "policy":
            continue
        budget = written_budget(doc)
        selected = [p for p in running if budget.selects(p)]
        if not selected or allowed(budget, selected) > 0:
            continue
        field, why = _why(budget, len(selected))
        replicas = len(selected)
        yield Hit(
            doc, field,
            f"{why} ({_workloads(selected)}), so it allows 0 disruptions: Karpenter cannot consolidate a node "
            "holding one of them, drifts it only with a NodePool terminationGracePeriod, and an expired node's "
            "drain waits until that period ends (for ever without one); kubectl drain and node upgrades stall too",
            "let at least one pod go: maxUnavailable: 1" + (
                f" (or minAvailable {replicas - 1})" if replicas > 1 else
                ", and run 2 or more replicas so that one stays while the other moves"),
        )


RULES = (PDB_BLOCKS_DISRUPTION,)
