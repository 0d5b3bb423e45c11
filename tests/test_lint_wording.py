"""lint's words as a new user reads them: a fix that says what to change, the object named once in SARIF and
GitHub annotations, and JUnit testcases that name their file."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from typer.testing import CliRunner

from karpplan.cli.main import app

from conftest import FIXTURES

# A karpenter-blueprints default NodePool (karpenter.sh/v1) that still has spec.template.spec.kubelet.
POOL = FIXTURES / "real" / "blueprint-default-pool-kubelet.yaml"


def lint(*args: str) -> str:
    result = CliRunner().invoke(app, ["--color", "never", "lint", str(POOL), *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_kubelet_in_a_v1_nodepool_says_to_move_it_to_the_ec2nodeclass() -> None:
    (finding,) = [f for f in json.loads(lint("-o", "json"))["findings"] if f["code"] == "KPL601"]
    assert finding["line"] == 46
    assert finding["fix"] == ("move spec.template.spec.kubelet to spec.kubelet of EC2NodeClass default, the node class "
                              "this NodePool's nodeClassRef names: Karpenter v1 reads kubelet settings there")
    assert finding["message"].startswith("spec.template.spec.kubelet is not part of karpenter.sh/v1")


def test_sarif_and_github_name_the_object_once() -> None:
    (result,) = json.loads(lint("-o", "sarif"))["runs"][0]["results"]
    text = result["message"]["text"]
    assert text.startswith("NodePool/default: spec.template.spec.kubelet is not part of karpenter.sh/v1")
    assert "NodePool default" not in text
    assert "ignore it. Fix: move spec.template.spec.kubelet" in text
    (command,) = lint("-o", "github").splitlines()
    assert command.count("NodePool/default") == 1 and "NodePool default" not in command


def test_junit_passing_testcases_name_their_file() -> None:
    cases = ET.fromstring(lint("-o", "junit")).iter("testcase")
    assert {(c.get("name"), c.get("file")) for c in cases} == {
        ("EC2NodeClass/default", str(POOL)), ("NodePool/default", str(POOL)),
    }


def test_toleration_fixes_name_what_to_change() -> None:
    bad = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: a, image: b}]
  tolerations:
  - {key: dedicated, operator: Equals, value: gpu}
  - {key: spot, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}
"""
    result = CliRunner().invoke(app, ["lint", "-", "-o", "json"], input=bad)
    fixes = {f["field"].rsplit(".", 1)[-1]: f["fix"] for f in json.loads(result.stdout)["findings"]}
    assert fixes == {"operator": "use operator Equal or Exists",
                     "effect": "use NoSchedule, PreferNoSchedule or NoExecute (NoExecute with tolerationSeconds, "
                               "or drop tolerationSeconds)"}


def test_an_exists_toleration_with_a_value_is_told_to_drop_the_value() -> None:
    """The API server blames `operator` for it, but the fix is the value's (a new user was told 'use operator Equal
    or Exists' for an operator that already was Exists)."""
    bad = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: b}]\n"
           "  tolerations:\n  - {key: spot, operator: Exists, value: b, effect: NoSchedule}\n")
    result = CliRunner().invoke(app, ["lint", "-", "-o", "json"], input=bad)
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["field"].endswith(".operator")
    assert finding["fix"] == "drop the value of an Exists toleration, or use operator Equal"
