"""lint on custom resources whose controller creates the workloads (prometheus-operator's Prometheus,
Alertmanager and PrometheusAgent; LeaderWorkerSet): their pod specs are judged as a Deployment's are, and
every finding points at the field the user wrote in the resource, not at the derived StatefulSet's
`spec.template.spec`."""

from __future__ import annotations

import io

from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.core import Finding, Severity
from karpplan.lint.report import LintReport
from karpplan.lint.run import LintOptions, lint

runner = CliRunner()

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}
---
"""

# kube-prometheus manifests/prometheus-prometheus.yaml and alertmanager-alertmanager.yaml (abridged), with the
# mistakes users make in their spread constraints.
PROMETHEUS = """\
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: k8s, namespace: monitoring}
spec:
  replicas: 2
  resources:
    requests: {memory: 400Mi}
  topologySpreadConstraints:
    - maxSkew: 0
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels: {app.kubernetes.io/name: prometheus}
"""

ALERTMANAGER = """\
apiVersion: monitoring.coreos.com/v1
kind: Alertmanager
metadata: {name: main, namespace: monitoring}
spec:
  replicas: 3
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
      minDomains: 3
      labelSelector:
        matchLabels: {app.kubernetes.io/name: alertmanager}
"""

# kubernetes-sigs/lws docs/examples/vllm (abridged), its workers spread on a misspelt zone key.
LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      metadata: {labels: {role: leader}}
      spec:
        containers:
          - name: leader
            resources: {requests: {cpu: "1", memory: 1Gi}}
    workerTemplate:
      metadata: {labels: {app: vllm}}
      spec:
        containers:
          - name: worker
            resources: {requests: {cpu: "1", memory: 1Gi}}
        topologySpreadConstraints:
          - maxSkew: 1
            topologyKey: kubernetes.io/zone
            whenUnsatisfiable: DoNotSchedule
            labelSelector: {matchLabels: {app: vllm}}
"""


def lint_text(text: str) -> LintReport:
    return lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def errors(report: LintReport) -> list[Finding]:
    return [f for f in report.findings if f.severity is not Severity.info]


def test_an_invalid_spread_on_a_prometheus_is_reported_at_its_own_field() -> None:
    text = POOL + PROMETHEUS
    [finding] = [f for f in errors(lint_text(text)) if f.rule == "spread-invalid"]
    assert finding.object == "Prometheus/monitoring/k8s"
    assert finding.field == "spec.topologySpreadConstraints[0].maxSkew"
    assert finding.line == line_of(text, "maxSkew: 0")
    assert finding.message == "Invalid value: 0: must be greater than zero"


def test_plan_names_the_field_of_the_resource_the_user_wrote() -> None:
    result = runner.invoke(app, ["plan", "-"], input=POOL + PROMETHEUS)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert (f"<stdin>:{line_of(POOL + PROMETHEUS, 'maxSkew: 0')}: spec.topologySpreadConstraints[0].maxSkew: "
            "Invalid value: 0: must be greater than zero") in result.stderr


def test_unreachable_min_domains_on_an_alertmanager() -> None:
    text = POOL + ALERTMANAGER
    found = {f.rule: f for f in errors(lint_text(text))}
    assert found["min-domains-unreachable"].field == "spec.topologySpreadConstraints[0].minDomains"
    assert found["min-domains-unreachable"].line == line_of(text, "minDomains: 3")
    assert "2 of 3 replicas run" in found["spread-caps-replicas"].message
    assert found["spread-caps-replicas"].object == "Alertmanager/monitoring/main"


def test_a_leader_worker_sets_unknown_key_points_at_its_worker_template() -> None:
    text = POOL + LWS
    [finding] = [f for f in errors(lint_text(text)) if f.rule == "spread-key-unknown"]
    assert finding.object == "LeaderWorkerSet/default/vllm"
    assert finding.field == "spec.leaderWorkerTemplate.workerTemplate.spec.topologySpreadConstraints[0].topologyKey"
    assert finding.line == line_of(text, "topologyKey: kubernetes.io/zone")
    # A key named `zone` means the zone label, though kubernetes.io/os is closer in spelling.
    assert "did you mean topology.kubernetes.io/zone?" in finding.message
    assert finding.fix == "use topology.kubernetes.io/zone"


def test_a_leader_worker_sets_leader_template_is_judged_too() -> None:
    text = POOL + LWS.replace("      metadata: {labels: {role: leader}}\n", """\
      metadata: {labels: {role: leader}}
      spec:
        topologySpreadConstraints:
          - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
             labelSelector: {matchLabels: {role: worker}}}
""").replace("      spec:\n        containers:\n          - name: leader", "        containers:\n          - name: leader")
    found = {(f.rule, f.field) for f in lint_text(text).findings}
    assert ("spread-selector-misses-own-pods",
            "spec.leaderWorkerTemplate.leaderTemplate.spec.topologySpreadConstraints[0].labelSelector") in found


def test_a_spread_selector_missing_the_operators_labels() -> None:
    text = POOL + PROMETHEUS.replace("maxSkew: 0", "maxSkew: 1").replace(
        "{app.kubernetes.io/name: prometheus}", "{app: prometheus}")
    [finding] = [f for f in lint_text(text).findings if f.rule == "spread-selector-misses-own-pods"]
    assert finding.field == "spec.topologySpreadConstraints[0].labelSelector"
    assert finding.line == line_of(text, "labelSelector:")
    assert "app.kubernetes.io/name=prometheus" in finding.message  # the labels the operator gives its pods


def test_replicas_of_a_prometheus_without_spread() -> None:
    text = POOL + PROMETHEUS.split("  topologySpreadConstraints:")[0]
    [finding] = [f for f in lint_text(text).findings if f.rule == "replicas-without-spread"]
    assert (finding.object, finding.field, finding.line) == ("Prometheus/monitoring/k8s", "spec.replicas",
                                                            line_of(text, "replicas: 2"))
    agent = text.replace("kind: Prometheus", "kind: PrometheusAgent").replace(
        "monitoring.coreos.com/v1", "monitoring.coreos.com/v1alpha1").replace("replicas: 2", "mode: DaemonSet")
    assert not [f for f in lint_text(agent).findings if f.rule == "replicas-without-spread"]
