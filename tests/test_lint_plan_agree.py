"""lint and plan never disagree on whether a workload fits (issue 25): the same manifests through both, on the
shapes where the domains existing nodes bring decide it (tainted nodes under nodeTaintsPolicy Ignore, minDomains,
nodeAffinityPolicy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from karpplan.lint.core import Severity
from karpplan.lint.rules.examples import NODEPOOL
from karpplan.lint.run import LintOptions, lint
from karpplan.planner import PlanOptions, make_plan, read_catalog, read_inventory

# The rules' example NodePool, launching in two zones only.
ZONES_AB = NODEPOOL.removesuffix("---\n") + \
    "        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}\n---\n"


def node(name: str, zone: str, taint: bool) -> str:
    taints = "spec:\n  taints:\n    - {key: dedicated, value: infra, effect: NoSchedule}\n" if taint else ""
    return f"""\
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels:
    topology.kubernetes.io/zone: {zone}
    kubernetes.io/hostname: {name}
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    node.kubernetes.io/instance-type: m5.large
{taints}status:
  allocatable: {{cpu: 1930m, memory: 7Gi, pods: "29"}}
  capacity: {{cpu: "2", memory: 8Gi, pods: "29"}}
---
"""


def web(spread_extra: str = "", pod_extra: str = "", replicas: int = 4) -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
{pod_extra}      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: DoNotSchedule
          labelSelector: {{matchLabels: {{app: web}}}}
{spread_extra}      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: 500m, memory: 512Mi}}}}
"""


# New nodes carry the category label; the existing node (written without it) does not match.
CATEGORY_M = "      nodeSelector: {karpenter.k8s.aws/instance-category: m}\n"

SHAPES = {
    # A tainted node in a zone no pool serves: still a domain (nodeTaintsPolicy Ignore is the default), where
    # the pods cannot go, so the global minimum stays 0 and only 2 of 4 run.
    "tainted node, Ignore": (ZONES_AB + node("infra-1", "us-east-1c", taint=True) + web(), False),
    "tainted node, Honor": (ZONES_AB + node("infra-1", "us-east-1c", taint=True)
                            + web("          nodeTaintsPolicy: Honor\n"), True),
    "untainted node in the third zone": (ZONES_AB + node("spare-1", "us-east-1c", taint=False) + web(), True),
    "minDomains above the zones": (ZONES_AB + web("          minDomains: 3\n"), False),
    "minDomains met by an existing node": (ZONES_AB + node("spare-1", "us-east-1c", taint=False)
                                           + web("          minDomains: 3\n"), True),
    # The pods' nodeSelector excludes the existing node: its zone is a domain only with nodeAffinityPolicy
    # Ignore (with a zone affinity it would not be: the domains are cut to the pod's own zone values).
    "nodeAffinityPolicy Honor": (ZONES_AB + node("spare-1", "us-east-1c", taint=False)
                                 + web(pod_extra=CATEGORY_M), True),
    "nodeAffinityPolicy Ignore": (ZONES_AB + node("spare-1", "us-east-1c", taint=False)
                                  + web("          nodeAffinityPolicy: Ignore\n", pod_extra=CATEGORY_M), False),
}


def lint_fits(path: Path) -> bool:
    report = lint(LintOptions(paths=(str(path),)))
    return not [f for f in report.findings if f.severity is Severity.error and f.object == "Deployment/default/web"]


def plan_fits(path: Path, engine: str) -> bool:
    options = PlanOptions(paths=(str(path),), engine=engine, time_limit=5.0, workers=1)  # type: ignore[arg-type]
    inventory = read_inventory(options)
    plan = make_plan(inventory, read_catalog(options, inventory), options)
    return not [u for u in plan.unschedulable if u.workload.endswith("/web")]


@pytest.mark.parametrize("text, fits", SHAPES.values(), ids=list(SHAPES))
def test_lint_and_plan_agree_on_whether_the_workload_fits(tmp_path: Path, text: str, fits: bool) -> None:
    path = tmp_path / "manifests.yaml"
    path.write_text(text)
    assert lint_fits(path) is fits
    assert plan_fits(path, "optimal") is fits
    assert plan_fits(path, "karpenter") is fits


def test_the_message_says_which_node_makes_the_domain() -> None:
    import io

    text = ZONES_AB + node("infra-1", "us-east-1c", taint=True) + web()
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    (finding,) = [f for f in report.findings if f.rule == "spread-caps-replicas"]
    assert "lets 2 of 4 replicas run" in finding.message
    assert "us-east-1c" in finding.message and "infra-1" in finding.message and "Ignore" in finding.message
