"""Skipped rules reach CI (a new user's trial: `cat app.yaml | karpplan lint - -o github` printed nothing and
exited 0 while the table said "7 rule(s) skipped"): a `::notice` per reason in github, the suite's <system-out>
in JUnit (one testcase per object stays), and SARIF's toolExecutionNotifications."""

from __future__ import annotations

import io
import json
from xml.etree import ElementTree as ET

from karpplan.lint.render import render_github, render_junit
from karpplan.lint.run import LintOptions, lint
from karpplan.lint.sarif import render_sarif

APP_ONLY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: payments}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: api
          image: api:1
          resources: {requests: {cpu: 500m, memory: 1Gi}}
"""


def test_github_says_which_rules_could_not_judge_an_input_without_pools() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(APP_ONLY)))
    assert not report.findings and report.skipped
    (notice,) = render_github(report, {}).splitlines()
    assert notice.startswith("::notice title=")
    assert "no-pool-can-launch" in notice and "spread-caps-replicas" in notice
    assert "holds no NodePool" in notice


def test_junit_keeps_one_testcase_per_object_and_says_the_skips_in_the_suite_output() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(APP_ONLY)))
    suite = ET.fromstring(render_junit(report)).find("testsuite")
    assert suite is not None
    assert [c.get("name") for c in suite.iter("testcase")] == ["Deployment/payments/api"]
    out = suite.find("system-out")
    assert out is not None and out.text is not None and "skipped no-pool-can-launch" in out.text.replace(
        "spread-key-unknown, min-domains-unreachable, spread-caps-replicas, ", "")


def test_sarif_lists_each_skipped_rule_as_a_note() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(APP_ONLY)))
    notes = json.loads(render_sarif(report))["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert {n["descriptor"]["id"] for n in notes} >= {"no-pool-can-launch", "pool-limits-too-small"}
    assert all(n["level"] == "note" for n in notes)


def test_a_run_that_skips_nothing_prints_no_notice() -> None:
    pool = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
---
"""
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(pool + APP_ONLY)))
    assert not report.skipped
    assert "rules skipped" not in render_github(report, {})
