"""A karpenter.sh/v1alpha5 Provisioner (and karpenter.k8s.aws/v1alpha1 AWSNodeTemplate) gets a warning that
Karpenter has not served it since v0.33 (the upgrade guide: "0.33.0+ only supports Karpenter v1beta1 APIs and
will not work with existing Provisioner, AWSNodeTemplate or Machine alpha APIs"); v1beta1 and v1 pools do not."""

from __future__ import annotations

import io

from karpplan.lint.core import Severity
from karpplan.lint.rules.examples import NODEPOOL, deployment
from karpplan.lint.run import LintOptions, lint

# Shaped like aws/karpenter-provider-aws v0.27 examples/provisioner/*.yaml.
PROVISIONER = """\
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
spec:
  requirements:
    - key: karpenter.sh/capacity-type
      operator: In
      values: ["spot"]
  limits:
    resources:
      cpu: 1000
  providerRef:
    name: default
---
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: default
spec:
  subnetSelector: {karpenter.sh/discovery: demo}
  securityGroupSelector: {karpenter.sh/discovery: demo}
---
"""


def warnings(text: str) -> list[tuple[str, int, str, str]]:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    return [(f.rule, f.line, f.object, f.message) for f in report.findings if f.severity is Severity.warning]


def test_alpha_apis_are_warned_at_their_api_version_with_the_successor() -> None:
    found = warnings(PROVISIONER + deployment(""))
    assert [(rule, line, obj) for rule, line, obj, _ in found] == [
        ("input-read-differently", 1, "Provisioner/default"), ("input-read-differently", 16, "AWSNodeTemplate/default")]
    provisioner, template = (message for *_, message in found)
    assert provisioner.startswith("karpenter.sh/v1alpha5 Provisioner is not served by Karpenter since v0.33")
    assert provisioner.endswith("migrate to a karpenter.sh/v1 NodePool")
    assert template.endswith("migrate to a karpenter.k8s.aws/v1 EC2NodeClass")


def test_the_pods_are_still_judged_against_the_provisioner() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(
        PROVISIONER + deployment("      nodeSelector: {karpenter.sh/capacity-type: on-demand}\n"))))
    assert [f.rule for f in report.findings if f.severity is Severity.error] == ["no-pool-can-launch"]


def test_v1beta1_and_v1_pools_get_no_such_warning() -> None:
    beta = NODEPOOL.replace("karpenter.sh/v1\n", "karpenter.sh/v1beta1\n", 1)
    assert beta != NODEPOOL
    for pools in (NODEPOOL, beta):
        assert not [m for *_, m in warnings(pools + deployment("")) if "not served" in m]
