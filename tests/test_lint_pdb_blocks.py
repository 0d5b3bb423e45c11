"""pdb-blocks-disruption: a PodDisruptionBudget that allows 0 disruptions of its workload's pods (minAvailable
equal to the replicas, maxUnavailable 0, minAvailable 100%) stops Karpenter's consolidation, drift and expiry of
every node holding them (kubernetes-sigs/karpenter#2802, aws/karpenter-provider-aws#8164; a new user's v2 had
minAvailable 6 for 6 replicas). Counted as the disruption controller counts, with the pods the input plans."""

from __future__ import annotations

import io

import pytest

from karpplan.lint.run import LintOptions, lint

APP = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: payments-api, namespace: payments}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: payments-api}}
  template:
    metadata: {labels: {app: payments-api}}
    spec:
      containers:
        - {name: api, image: api:1, resources: {requests: {cpu: 500m, memory: 1Gi}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: payments-api, namespace: payments}
spec:
  BUDGET
  selector: {matchLabels: {app: payments-api}}
"""


def _pdb_findings(budget: str, replicas: int = 3, extra: str = "") -> list[tuple[str, int, str, str, str]]:
    text = APP.replace("REPLICAS", str(replicas)).replace("BUDGET", budget) + extra
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    return [(f.object, f.line, f.field, f.message, f.fix) for f in report.findings if f.rule == "pdb-blocks-disruption"]


@pytest.mark.parametrize("budget", ["minAvailable: 3", "minAvailable: 100%", "maxUnavailable: 0",
                                    'maxUnavailable: "0%"', "minAvailable: 90%"])
def test_a_budget_that_lets_no_pod_go_is_found_at_its_field(budget: str) -> None:
    ((obj, line, field, message, fix),) = _pdb_findings(budget)
    assert obj == "PodDisruptionBudget/payments/payments-api"
    assert field == "spec." + budget.split(":")[0]
    assert APP.replace("BUDGET", budget).splitlines()[line - 1].strip() == budget
    assert "(Deployment/payments/payments-api), so it allows 0 disruptions" in message
    assert "Karpenter cannot consolidate a node holding one" in message
    assert fix.startswith("let at least one pod go: maxUnavailable: 1 (or minAvailable 2)")


@pytest.mark.parametrize("budget", ["minAvailable: 2", "maxUnavailable: 1", "maxUnavailable: 25%",
                                    "minAvailable: 50%"])
def test_a_budget_that_lets_one_pod_go_is_fine(budget: str) -> None:
    assert _pdb_findings(budget) == []


def test_a_single_replica_with_min_available_one_is_told_to_run_two() -> None:
    ((_, _, _, message, fix),) = _pdb_findings("minAvailable: 1", replicas=1)
    assert message.startswith("minAvailable 1 keeps all 1 of the pod(s) it selects")
    assert "run 2 or more replicas" in fix


def test_the_replicas_an_autoscaler_sets_are_the_ones_counted() -> None:
    hpa = """\
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: payments-api, namespace: payments}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: payments-api}
  minReplicas: 5
  maxReplicas: 10
"""
    assert _pdb_findings("minAvailable: 3", extra=hpa) == []  # 5 pods planned: 2 may go


def test_a_budget_over_no_planned_pod_and_a_silenced_one_say_nothing() -> None:
    assert _pdb_findings("minAvailable: 3", replicas=0) == []
    silenced = APP.replace("metadata: {name: payments-api, namespace: payments}\nspec:\n  BUDGET",
                           "metadata: {name: payments-api, namespace: payments, annotations: "
                           "{karpplan.io/lint-ignore: pdb-blocks-disruption}}\nspec:\n  BUDGET")
    text = silenced.replace("REPLICAS", "3").replace("BUDGET", "maxUnavailable: 0")
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    assert [f for f in report.findings if f.rule == "pdb-blocks-disruption"] == []
