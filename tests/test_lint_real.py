"""lint on what users really paste (issue 25): rules that cannot judge say so, unrendered placeholders,
the model's notices, with excerpts of public upstream examples (sources cited per excerpt)."""

from __future__ import annotations

import io
import json

from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.core import Severity
from karpplan.lint.registry import BY_NAME
from karpplan.lint.report import LintReport
from karpplan.lint.rules.examples import NODE_CLASS as EXAMPLE_NODE_CLASS
from karpplan.lint.rules.examples import NODEPOOL, deployment
from karpplan.lint.run import LintOptions, lint

runner = CliRunner()
CAPACITY_RULES = {"spread-key-unknown", "min-domains-unreachable", "spread-caps-replicas", "no-pool-can-launch",
                  "pool-limits-too-small", "anti-affinity-caps-replicas", "fargate-incompatible"}


def lint_text(text: str) -> LintReport:
    return lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))


def found(report: LintReport) -> list[tuple[str, int]]:
    """Errors and warnings (info findings are what karpplan assumes for input not given)."""
    return [(f.rule, f.line) for f in report.findings if f.severity is not Severity.info]


def line_of(text: str, needle: str, nth: int = 0) -> int:
    lines = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return lines[nth]


# aws/karpenter-provider-aws examples/workloads/inflate.yaml (abridged): a workload alone, no NodePool.
INFLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: 0
  selector:
    matchLabels:
      app: inflate
  template:
    metadata:
      labels:
        app: inflate
    spec:
      containers:
        - image: public.ecr.aws/eks-distro/kubernetes/pause:3.2
          name: inflate
          resources:
            requests:
              cpu: "1"
              memory: 256M
"""


# ------------------------------------------------------------------------------------------ skipped
def test_without_capacity_the_capacity_rules_say_they_were_skipped() -> None:
    report = lint_text(INFLATE)
    assert report.findings == () and report.exit_code == 0
    skipped = report.to_document()["summary"]["skipped"]  # type: ignore[index]
    assert {s["rule"] for s in skipped} == CAPACITY_RULES
    assert all("no NodePool, Provisioner, Fargate profile or Node" in s["reason"] for s in skipped)
    result = runner.invoke(app, ["lint", "-"], input=INFLATE)
    assert result.exit_code == 0
    assert "0 error(s)" in result.stdout and "7 rule(s) skipped" in result.stdout
    assert "skipped spread-key-unknown, min-domains-unreachable" in result.stdout


def test_with_a_nodepool_nothing_is_skipped_and_without_pods_nothing_to_skip() -> None:
    assert lint_text(NODEPOOL + INFLATE).skipped == ()
    assert lint_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n").skipped == ()


def test_sarif_and_github_summary_carry_the_skipped_rules(tmp_path: object) -> None:
    from karpplan.lint.render import markdown_summary
    from karpplan.lint.sarif import render_sarif

    report = lint_text(INFLATE)
    notes = json.loads(render_sarif(report))["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert {n["descriptor"]["id"] for n in notes} == CAPACITY_RULES
    assert "skipped spread-key-unknown" in markdown_summary(report)


# ------------------------------------------------------------------------------------------ placeholders
# aws-samples/karpenter-blueprints blueprints/reserved-capacity/migration-nodeclass.yaml and
# workload-migration.yaml (abridged).
BLUEPRINT = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: migration-nodeclass
spec:
  role: "<<KARPENTER_NODE_IAM_ROLE_NAME>>"
  amiSelectorTerms:
  - alias: al2023@latest
  securityGroupSelectorTerms:
  - tags:
      karpenter.sh/discovery: <<CLUSTER_NAME>>
  subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: <<CLUSTER_NAME>>
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: reserved-migration
spec:
  template:
    metadata:
      labels:
        intent: apps
    spec:
      nodeClassRef:
        name: migration-nodeclass
        group: karpenter.k8s.aws
        kind: EC2NodeClass
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: ["on-demand"]
      - key: topology.kubernetes.io/zone
        operator: In
        values: ["<<AZ>>"]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: migration-workload
spec:
  replicas: 5
  selector:
    matchLabels:
      app: migration-test
  template:
    metadata:
      labels:
        app: migration-test
    spec:
      containers:
      - name: app
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
      nodeSelector:
        karpenter.sh/nodepool: reserved-migration
"""


def test_blueprint_placeholders_are_findings_at_their_lines() -> None:
    report = lint_text(BLUEPRINT)
    placeholders = [(f.line, f.field) for f in report.findings if f.rule == "unrendered-placeholder"]
    assert placeholders == [
        (6, "spec.role"),
        (11, "spec.securityGroupSelectorTerms[0].tags[karpenter.sh/discovery]"),
        (14, "spec.subnetSelectorTerms[0].tags[karpenter.sh/discovery]"),
        (line_of(BLUEPRINT, '"<<AZ>>"'), "spec.template.spec.requirements[1].values[0]"),
    ]
    role = report.findings[0]
    assert "<<KARPENTER_NODE_IAM_ROLE_NAME>>" in role.message and "IAM role" in role.message
    assert report.exit_code == 1


def test_a_placeholder_pool_is_not_judged_as_a_capacity_fault() -> None:
    # Before: no-pool-can-launch blamed the workload's containers[0].resources for the literal zone <<AZ>>.
    report = lint_text(BLUEPRINT)
    assert not {f.rule for f in report.findings} & CAPACITY_RULES
    skipped = [s for s in report.skipped if s.object == "Deployment/default/migration-workload"]
    assert {s.rule for s in skipped} >= {"no-pool-can-launch"}
    assert all("reserved-migration" in s.reason for s in skipped)


# aws/karpenter-provider-aws examples/v1/general-purpose.yaml (its EC2NodeClass, with the userData of
# examples/v1/al2-custom-userdata.yaml, whose shell ${...} is not a placeholder of a selecting field).
KARPENTER_EXAMPLE = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: "KarpenterNodeRole-${CLUSTER_NAME}" # replace with your cluster name
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: "${CLUSTER_NAME}" # replace with your cluster name
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: "${CLUSTER_NAME}" # replace with your cluster name
  amiSelectorTerms:
    - alias: al2023@latest
  userData: |
    echo "$(jq '.maxPods=${MAX_PODS}' /etc/kubernetes/kubelet/config.json)"
"""


def test_envsubst_placeholders_in_selectors_not_in_user_data() -> None:
    report = lint_text(KARPENTER_EXAMPLE)
    assert [(f.rule, f.line) for f in report.findings] == [("unrendered-placeholder", 6),
                                                          ("unrendered-placeholder", 9),
                                                          ("unrendered-placeholder", 12)]
    assert all("set CLUSTER_NAME" in f.fix for f in report.findings)
    assert report.findings[0].column == 3  # at `role`


def test_bare_envsubst_placeholders_are_placeholders_too() -> None:
    # aws-samples/karpenter-blueprints blueprints/static-nodepool writes `role: "$KARPENTER_NODE_IAM_ROLE_NAME"`
    # and `karpenter.sh/discovery: $CLUSTER_NAME`: envsubst renders them as it does ${...}; a new user saw 0 errors.
    text = KARPENTER_EXAMPLE.replace('"KarpenterNodeRole-${CLUSTER_NAME}"', '"$KARPENTER_NODE_IAM_ROLE_NAME"') \
        .replace('"${CLUSTER_NAME}"', "$CLUSTER_NAME")
    report = lint_text(text)
    assert [(f.rule, f.line) for f in report.findings] == [("unrendered-placeholder", 6),
                                                          ("unrendered-placeholder", 9),
                                                          ("unrendered-placeholder", 12)]
    assert "set KARPENTER_NODE_IAM_ROLE_NAME" in report.findings[0].fix
    assert all("set CLUSTER_NAME" in f.fix for f in report.findings[1:])


def test_helm_placeholders_in_a_pods_node_selection_skip_the_capacity_rules() -> None:
    text = NODEPOOL + deployment('      nodeSelector: {topology.kubernetes.io/zone: "{{ .Values.zone }}"}\n')
    report = lint_text(text)
    assert found(report) == [("unrendered-placeholder", line_of(text, "{{ .Values.zone }}"))]
    assert "helm template" in report.findings[-1].fix
    assert {s.rule for s in report.skipped} >= {"no-pool-can-launch", "spread-caps-replicas"}


def test_rendered_values_are_not_placeholders() -> None:
    good = BY_NAME["unrendered-placeholder"].good
    assert found(lint_text(good)) == []
    rendered = BLUEPRINT.replace("<<KARPENTER_NODE_IAM_ROLE_NAME>>", "KarpenterNodeRole-demo") \
        .replace("<<CLUSTER_NAME>>", "demo").replace("<<AZ>>", "us-east-1a")
    report = lint_text(rendered)
    assert [f.rule for f in report.findings] == ["replicas-without-spread"] and report.skipped == ()


# ------------------------------------------------------------------------------------------ the model's notices
NODE_CLASS = "---\n" + EXAMPLE_NODE_CLASS


def test_a_kubelet_block_on_a_v1_nodepool_is_reported_where_it_is() -> None:
    text = NODEPOOL.replace("      requirements:\n", "      kubelet:\n        maxPods: 110\n      requirements:\n") \
        .removesuffix("---\n") + NODE_CLASS
    report = lint_text(text)
    (finding,) = report.findings
    assert (finding.rule, finding.severity.value, finding.line) == ("input-read-differently", "warning",
                                                                    line_of(text, "kubelet:"))
    assert finding.field == "spec.template.spec.kubelet" and "EC2NodeClass spec.kubelet" in finding.message
    assert report.exit_code == 0


def test_a_nodeclassref_to_a_class_not_in_the_input_is_reported_when_classes_are_given() -> None:
    other = NODEPOOL.replace("name: default}", "name: gpu}").replace("name: default\n", "name: gpu-pool\n", 1)
    text = NODEPOOL + other.removesuffix("---\n") + NODE_CLASS
    report = lint_text(text)
    notices = [f for f in report.findings if f.rule == "input-read-differently"]
    assert [(f.object, f.line) for f in notices] == [("NodePool/gpu-pool", line_of(text, "nodeClassRef", 1))]
    assert "EC2NodeClass/gpu is not in the input" in notices[0].message


def test_what_karpplan_assumes_for_input_not_given_is_info() -> None:
    # Linting NodePools without their EC2NodeClasses is common: what `plan` assumes for them is info, shown
    # at the pool's nodeClassRef, and does not fail the job.
    text = NODEPOOL + deployment("")
    report = lint_text(text)
    (finding,) = report.findings
    assert (finding.rule, finding.severity.value) == ("input-read-differently", "info")
    assert finding.line == line_of(text, "nodeClassRef") and "no node class in the input" in finding.message
    assert report.exit_code == 0
    # A StatefulSet's claim with no StorageClass in the input (grafana/mimir operations/helm/tests/
    # small-values-generated ingester-statefulset.yaml, abridged): the zone karpplan assumes is info.
    claim = deployment("", name="ingester").replace("kind: Deployment", "kind: StatefulSet").replace(
        "  template:\n", "  serviceName: ingester\n  volumeClaimTemplates:\n    - metadata: {name: storage}\n"
        "      spec:\n        accessModes: [ReadWriteOnce]\n        resources: {requests: {storage: 50Gi}}\n"
        "  template:\n", 1)
    notes = [f for f in lint_text(claim).findings if f.rule == "input-read-differently"]
    assert notes and all(f.severity.value == "info" for f in notes)


# eksctl-io/eksctl examples/31-override-bootstrap-command-unmanaged-nodegroup.yaml (abridged): the bootstrap
# script's shell ${NODE_LABELS} is not a placeholder of a selecting field; a node group's zone would be.
EKSCTL_BOOTSTRAP = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: override-unmanaged-nodegroup-bootstrap
  region: us-west-2
nodeGroups:
  - name: ng-1
    minSize: 1
    maxSize: 2
    overrideBootstrapCommand: |
      #!/bin/bash
      source /var/lib/cloud/scripts/eksctl/bootstrap.helper.sh
      /etc/eks/bootstrap.sh override-unmanaged-nodegroup-bootstrap --kubelet-extra-args "--node-labels=${NODE_LABELS}"
"""


def test_eksctl_bootstrap_scripts_are_not_placeholders_but_node_group_zones_are() -> None:
    assert found(lint_text(EKSCTL_BOOTSTRAP)) == []
    zoned = EKSCTL_BOOTSTRAP.replace("    minSize: 1\n", '    availabilityZones: ["${AZ_1}"]\n    minSize: 1\n')
    report = lint_text(zoned)
    assert [(f.rule, f.field) for f in report.findings] == [
        ("unrendered-placeholder", "nodeGroups[0].availabilityZones[0]")]


def test_junit_has_a_failure_per_finding_with_its_severity() -> None:
    """The contract: one testcase per object, a failure per finding (info ones too), the severity in `type`."""
    from xml.etree import ElementTree as ET

    from karpplan.lint.render import render_junit

    report = lint_text(NODEPOOL + deployment(""))
    root = ET.fromstring(render_junit(report))
    failed = {f.object for f in report.findings}
    assert root.get("failures") == str(len(failed)) != "0"  # failed testcases, as JUnit counts them
    assert int(root.get("failures") or 0) <= int(root.get("tests") or 0)
    assert len(root.findall(".//failure")) == len(report.findings)  # still a failure per finding
    (pool,) = [c for c in root.findall(".//testcase") if c.get("name") == "NodePool/default"]
    (failure,) = pool.findall("failure")
    assert failure.get("type") == "info" and "input-read-differently" in (failure.get("message") or "")
