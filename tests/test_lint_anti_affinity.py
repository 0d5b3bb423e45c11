"""anti-affinity-caps-replicas: required pod anti-affinity against a workload's own pods, more replicas than the
zones (or capped nodes) its pods can reach. lint and plan agree on the same manifests (the pattern of
test_lint_plan_agree.py), and the finding sits on the topologyKey the user wrote."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from karpplan.lint.core import Finding, Severity
from karpplan.lint.rules.examples import NODEPOOL
from karpplan.lint.run import LintOptions, lint
from karpplan.planner import PlanOptions, make_plan, read_catalog, read_inventory

ZONES_AB = NODEPOOL.removesuffix("---\n") + \
    "        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}\n---\n"
NODES_2 = NODEPOOL.replace("spec:\n  template:", "spec:\n  limits: {nodes: 2}\n  template:")


def workload(key: str = "topology.kubernetes.io/zone", replicas: int = 3, *, kind: str = "Deployment",
             selector: str = "{app: web}", pod_extra: str = "", required: bool = True) -> str:
    term = f"- topologyKey: {key}\n              labelSelector: {{matchLabels: {selector}}}"
    anti = (f"          requiredDuringSchedulingIgnoredDuringExecution:\n            {term}\n" if required else
            "          preferredDuringSchedulingIgnoredDuringExecution:\n            - weight: 100\n"
            f"              podAffinityTerm:\n                topologyKey: {key}\n"
            f"                labelSelector: {{matchLabels: {selector}}}\n")
    service = "  serviceName: web\n" if kind == "StatefulSet" else ""
    return f"""\
apiVersion: apps/v1
kind: {kind}
metadata:
  name: web
spec:
  replicas: {replicas}
{service}  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
{pod_extra}      affinity:
        podAntiAffinity:
{anti}      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: 500m, memory: 512Mi}}}}
"""


def node(name: str, zone: str) -> str:
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
status:
  allocatable: {{cpu: 1930m, memory: 7Gi, pods: "29"}}
  capacity: {{cpu: "2", memory: 8Gi, pods: "29"}}
---
"""


BOUND = """\
---
apiVersion: v1
kind: Pod
metadata: {name: web-old, labels: {app: web}}
spec:
  nodeName: old-1
  containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]
"""

ZONE_A = "      nodeSelector: {topology.kubernetes.io/zone: us-east-1a}\n"

SHAPES = {
    "3 replicas, 2 zones": (ZONES_AB + workload(), False),
    "2 replicas, 2 zones": (ZONES_AB + workload(replicas=2), True),
    "StatefulSet, 3 replicas, 2 zones": (ZONES_AB + workload(kind="StatefulSet"), False),
    "nodeSelector keeps 2 replicas in one zone": (ZONES_AB + workload(replicas=2, pod_extra=ZONE_A), False),
    "an existing node brings the third zone": (ZONES_AB + node("spare-1", "us-east-1c") + workload(), True),
    "a bound replica holds the third zone": (ZONES_AB + node("old-1", "us-east-1c") + workload() + BOUND, False),
    "preferred anti-affinity": (ZONES_AB + workload(required=False), True),
    "the selector names other pods": (ZONES_AB + workload(selector="{app: db}"), True),
    "no zone requirement: every zone of the region": (NODEPOOL + workload(replicas=6), True),
    "hostname, no limits": (NODEPOOL + workload("kubernetes.io/hostname", replicas=8), True),
}


def test_hostname_against_limits_nodes_is_not_judged(tmp_path: Path) -> None:
    """Karpenter checks limits.nodes against the nodes a batch starts with: its simulation launches a node per
    replica past the limit, so lint claims no cap (the optimal plan, which keeps the limit, warns instead)."""
    path = tmp_path / "manifests.yaml"
    path.write_text(NODES_2 + workload("kubernetes.io/hostname"))
    assert findings(path) == []
    assert plan_fits(path, "karpenter")


def findings(path: Path) -> list[Finding]:
    report = lint(LintOptions(paths=(str(path),)))
    return [f for f in report.findings if f.severity is Severity.error and f.object.endswith("/default/web")]


def plan_fits(path: Path, engine: str) -> bool:
    options = PlanOptions(paths=(str(path),), engine=engine, time_limit=5.0, workers=1)  # type: ignore[arg-type]
    inventory = read_inventory(options)
    plan = make_plan(inventory, read_catalog(options, inventory), options)
    return not [u for u in plan.unschedulable if u.workload.endswith("/web")]


@pytest.mark.parametrize("text, fits", SHAPES.values(), ids=list(SHAPES))
def test_lint_and_plan_agree(tmp_path: Path, text: str, fits: bool) -> None:
    path = tmp_path / "manifests.yaml"
    path.write_text(text)
    found = findings(path)
    assert not found if fits else [f.rule for f in found] == ["anti-affinity-caps-replicas"]
    assert plan_fits(path, "optimal") is fits
    assert plan_fits(path, "karpenter") is fits


def test_the_finding_is_at_the_topology_key_and_counts_the_zones() -> None:
    text = ZONES_AB + workload(replicas=5)
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    (finding,) = [f for f in report.findings if f.rule == "anti-affinity-caps-replicas"]
    assert finding.code == "KPL406"
    assert finding.field == ("spec.template.spec.affinity.podAntiAffinity."
                             "requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey")
    assert text.splitlines()[finding.line - 1].strip() == "- topologyKey: topology.kubernetes.io/zone"
    assert "can reach 2 (us-east-1a, us-east-1b" in finding.message
    assert "at most 2 of 5 replicas can run, at least 3 stay Pending" in finding.message
    assert "topologySpreadConstraint with maxSkew 1 on topology.kubernetes.io/zone" in finding.fix


def test_the_fix_it_names_works(tmp_path: Path) -> None:
    """The same workload with the fix applied (zone spread maxSkew 1 instead of the anti-affinity) fits."""
    spread = ("      topologySpreadConstraints:\n        - maxSkew: 1\n          topologyKey: topology.kubernetes.io/zone\n"
              "          whenUnsatisfiable: DoNotSchedule\n          labelSelector: {matchLabels: {app: web}}\n")
    fixed = workload(replicas=5, selector="{app: none}", pod_extra=spread)
    path = tmp_path / "fixed.yaml"
    path.write_text(ZONES_AB + fixed)
    assert findings(path) == []
    assert plan_fits(path, "optimal")
