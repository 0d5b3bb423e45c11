"""An eksctl ClusterConfig whose availabilityZones are unrendered placeholders (`${AZ_1}`): lint reports the
placeholder and says why the capacity rules could not judge the pods, instead of stopping on the catalog's
"is not a zone of region" (bad input, exit 2) as it did."""

from __future__ import annotations

import io

from karpplan.lint.core import Severity
from karpplan.lint.rules.examples import deployment
from karpplan.lint.run import LintOptions, lint

CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: us-west-2}
availabilityZones: ["${AZ_1}", "${AZ_2}"]
managedNodeGroups:
  - name: ng-1
    instanceType: m5.large
    desiredCapacity: 2
---
"""


def test_placeholder_zones_are_reported_and_the_capacity_rules_say_why_they_did_not_judge() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(CLUSTER + deployment(""))))
    assert [(f.rule, f.field) for f in report.findings if f.severity is Severity.error] == [
        ("unrendered-placeholder", "availabilityZones[0]"), ("unrendered-placeholder", "availabilityZones[1]")]
    reasons = {s.rule: s.reason for s in report.skipped}
    assert "${AZ_1}" in reasons["no-pool-can-launch"] and "--zones" in reasons["no-pool-can-launch"]


def test_with_zones_given_the_capacity_rules_judge() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(CLUSTER + deployment("")), zones=("us-west-2a",)))
    assert report.skipped == ()
