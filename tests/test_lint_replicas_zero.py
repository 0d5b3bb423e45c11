"""A workload with `replicas: 0` (or a suspended Job/CronJob) makes no pod now, but the API server validates its
template all the same and it is a template that will be scaled up (an HPA's scale-from-zero, upstream examples
shipped at 0): the rules that read the template still apply, and so do the capacity rules that ask whether
anything can launch its pod (judged as one replica, and the message says the workload has 0 replicas now);
the rules about replica counts have nothing to count."""

from __future__ import annotations

import io
import re

import pytest

from karpplan.lint.core import Rule, Severity
from karpplan.lint.registry import BY_NAME, RULES
from karpplan.lint.rules.examples import NODEPOOL, ZONE_SPREAD
from karpplan.lint.run import LintOptions, lint

# The rules that read a pod template (the API server's validation, and what the selectors select).
TEMPLATE_RULES = ("spread-invalid", "toleration-invalid", "affinity-invalid", "selector-invalid",
                  "spread-selector-misses-own-pods", "spread-selector-missing", "unrendered-placeholder",
                  "affinity-selector-misses-own-pods")
# The capacity rules that ask "can any pool, profile or node launch this pod": judged as one replica.
LAUNCH_RULES = ("spread-key-unknown", "min-domains-unreachable", "no-pool-can-launch", "fargate-incompatible")
# The rules about NodePools and node classes only (their examples hold no workload).
POOL_RULES = ("input-read-differently",)
# The rules that count replicas or pods (nothing pending, nothing to count).
COUNTING_RULES = tuple(r.name for r in RULES if r.name not in TEMPLATE_RULES + LAUNCH_RULES + POOL_RULES)


def findings(text: str) -> list[tuple[str, int]]:
    """Errors and warnings (the examples' NodePool without its EC2NodeClass is an info finding)."""
    return [(f.rule, f.line) for f in lint(LintOptions(paths=("-",), stdin=io.StringIO(text))).findings
            if f.severity is not Severity.info]


def scaled_to_zero(text: str) -> str:
    out = re.sub(r"(?m)^  replicas: \d+$", "  replicas: 0", text)
    assert "  replicas: 0\n" in out
    return out


def test_every_rule_is_classified() -> None:
    assert set(TEMPLATE_RULES + LAUNCH_RULES) <= set(BY_NAME)
    assert len(TEMPLATE_RULES) + len(LAUNCH_RULES) + len(POOL_RULES) + len(COUNTING_RULES) == len(RULES)
    assert set(COUNTING_RULES) == {"spread-caps-replicas", "pool-limits-too-small", "replicas-without-spread",
                                   "windows-pool-takes-linux-pods", "anti-affinity-caps-replicas",
                                   "pdb-blocks-disruption"}


@pytest.mark.parametrize("rule", [BY_NAME[n] for n in TEMPLATE_RULES], ids=lambda r: r.name)
def test_template_rules_apply_to_a_workload_scaled_to_zero(rule: Rule) -> None:
    assert findings(scaled_to_zero(rule.bad)) == findings(rule.bad) != []
    assert findings(scaled_to_zero(rule.good)) == []


@pytest.mark.parametrize("rule", [BY_NAME[n] for n in LAUNCH_RULES], ids=lambda r: r.name)
def test_launch_rules_judge_the_template_of_a_workload_scaled_to_zero(rule: Rule) -> None:
    assert findings(scaled_to_zero(rule.bad)) == findings(rule.bad) != []
    assert findings(scaled_to_zero(rule.good)) == []
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(scaled_to_zero(rule.bad))))
    messages = [f.message for f in report.findings if f.rule == rule.name]
    assert messages and all("has 0 replicas now" in m for m in messages)


@pytest.mark.parametrize("rule", [BY_NAME[n] for n in COUNTING_RULES], ids=lambda r: r.name)
def test_counting_rules_have_nothing_to_count(rule: Rule) -> None:
    assert findings(rule.bad) != []
    assert findings(scaled_to_zero(rule.bad)) == []


def _cronjob(pod_spec: str, suspend: bool) -> str:
    indented = "".join("    " + line + "\n" for line in pod_spec.splitlines())
    return f"""\
apiVersion: batch/v1
kind: CronJob
metadata: {{name: nightly}}
spec:
  schedule: "0 3 * * *"
  suspend: {str(suspend).lower()}
  jobTemplate:
    spec:
      template:
        metadata: {{labels: {{app: nightly}}}}
        spec:
          restartPolicy: Never
{indented}          containers:
            - name: job
              image: busybox
              resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}
"""


def test_a_suspended_cronjob_is_checked_like_a_running_one() -> None:
    spread = ZONE_SPREAD.replace("{app: web}", "{app: other}")
    running, suspended = (NODEPOOL + _cronjob(spread, s) for s in (False, True))
    assert findings(suspended) == findings(running) == [("spread-selector-misses-own-pods", 29)]


def test_match_label_keys_on_the_template_hash_selects_the_workload_scaled_to_zero() -> None:
    spread = ZONE_SPREAD + "          matchLabelKeys: [pod-template-hash]\n"
    text = BY_NAME["spread-selector-misses-own-pods"].good.replace(ZONE_SPREAD, spread)
    assert text != BY_NAME["spread-selector-misses-own-pods"].good
    assert findings(text) == findings(scaled_to_zero(text)) == []
