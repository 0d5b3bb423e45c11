"""lint: outputs (json, sarif, github, junit, table), suppression three ways, exit codes, locations, docs."""

from __future__ import annotations

import io
import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.config import FileConfig, find_config
from karpplan.lint.docs import markdown
from karpplan.lint.registry import BY_NAME, RULES
from karpplan.lint.render import render_github, render_junit
from karpplan.lint.run import LintOptions, lint
from karpplan.lint.sarif import render_sarif

# The rule's bad example with the EC2NodeClass its NodePool names (without it, what karpplan assumes for the
# pool's node class is an info finding of input-read-differently).
NODE_CLASS = """\
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""
BAD = BY_NAME["spread-invalid"].bad + NODE_CLASS
runner = CliRunner()


def run(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(app, ["lint", *args], input=stdin)
    return result.exit_code, result.stdout


def test_json_report_and_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    code, out = run(str(bad), "-o", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["kind"] == "LintReport" and doc["summary"]["error"] == 1
    finding = doc["findings"][0]
    assert finding["field"].endswith("topologySpreadConstraints[0].maxSkew")
    assert finding["message"] == "Invalid value: 0: must be greater than zero"
    line = BAD.splitlines()[finding["line"] - 1]
    assert line[finding["column"] - 1:].startswith("maxSkew")
    good = tmp_path / "good.yaml"
    good.write_text(BY_NAME["spread-invalid"].good + NODE_CLASS)
    assert run(str(good), "-o", "json")[0] == 0
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    assert run(str(broken))[0] == 2
    assert run(str(good), "--select", "no-such-rule")[0] == 2
    assert run()[0] == 2


def test_stdin_and_json_input(tmp_path: Path) -> None:
    code, out = run("-", "-o", "json", stdin=BAD)
    assert code == 1 and json.loads(out)["findings"][0]["file"] == "<stdin>"
    as_json = tmp_path / "web.json"
    import yaml

    docs = list(yaml.safe_load_all(BAD))
    as_json.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2))
    finding = json.loads(run(str(as_json), "-o", "json")[1])["findings"][0]
    text = as_json.read_text().splitlines()[finding["line"] - 1]
    assert '"maxSkew"' in text


def test_helm_source_is_kept() -> None:
    stream = "---\n# Source: chart/templates/deploy.yaml\n" + BAD.split("---\n", 1)[1]
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(stream)))
    (finding,) = report.findings
    assert finding.source == "chart/templates/deploy.yaml"
    assert stream.splitlines()[finding.line - 1].strip().startswith("- maxSkew")


@settings(max_examples=15, deadline=None)
@given(st.permutations(range(3)))
def test_locations_survive_document_order(order: list[int]) -> None:
    parts = [BY_NAME[name].bad.split("---\n", 1)[1].replace("name: web", f"name: web{i}")
             for i, name in enumerate(("spread-invalid", "toleration-invalid", "selector-invalid"))]
    stream = "---\n".join(parts[i] for i in order)
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(stream)))
    lines = stream.splitlines()
    assert len(report.findings) == 3
    for f in report.findings:
        key = f.field.rsplit(".", 1)[-1]
        assert key in lines[f.line - 1], (f, lines[f.line - 1])
    assert [f.line for f in report.findings] == sorted(f.line for f in report.findings)


def test_sarif_structure() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(BAD)))
    sarif = json.loads(render_sarif(report))
    assert sarif["version"] == "2.1.0"
    (run_,) = sarif["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.name for r in RULES]
    assert all(r["help"]["text"] and r["shortDescription"]["text"] for r in rules)
    (result,) = run_["results"]
    assert result["ruleId"] == "spread-invalid" and rules[result["ruleIndex"]]["id"] == "spread-invalid"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == report.findings[0].line
    moved = lint(LintOptions(paths=("-",), stdin=io.StringIO("\n\n" + BAD)))
    again = json.loads(render_sarif(moved))["runs"][0]["results"][0]
    assert again["partialFingerprints"] == result["partialFingerprints"]


def test_github_commands_and_summary(tmp_path: Path) -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(BAD)))
    summary = tmp_path / "summary.md"
    out = render_github(report, {"GITHUB_STEP_SUMMARY": str(summary)})
    assert out.startswith("::error file=<stdin>,line=") and "title=spread-invalid::" in out
    assert "| error | `spread-invalid` |" in summary.read_text()


def test_junit_one_testcase_per_object() -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(BAD)))
    root = ET.fromstring(render_junit(report))
    cases = root.findall(".//testcase")
    assert len(cases) == 3
    assert sum(len(c.findall("failure")) for c in cases) == 1


def test_table_and_rule_docs() -> None:
    code, out = run("-", stdin=BAD)
    assert code == 1 and "KPL101" in out and "1 error(s)" in out
    code, out = run("--list-rules")
    assert code == 0 and all(r.name in out for r in RULES)
    code, out = run("--explain-rule", "KPL101")
    assert code == 0 and "spread-invalid" in out and "Bad:" in out
    assert run("--explain-rule", "nope")[0] == 2


def test_suppression_by_annotation() -> None:
    annotated = BAD.replace("  name: web\n", '  name: web\n  annotations: {karpplan.io/lint-ignore: "spread-invalid"}\n')
    assert lint(LintOptions(paths=("-",), stdin=io.StringIO(annotated))).findings == ()


def test_suppression_by_flags() -> None:
    assert lint(LintOptions(paths=("-",), stdin=io.StringIO(BAD), ignore=("spread-invalid",))).findings == ()
    assert lint(LintOptions(paths=("-",), stdin=io.StringIO(BAD), select=("KPL102",))).findings == ()
    assert lint(LintOptions(paths=("-",), stdin=io.StringIO(BAD), select=("spread-invalid",))).findings


def test_suppression_by_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".karpplan.yaml").write_text("lint:\n  ignore: [spread-invalid]\n")
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    config = find_config(nested)
    assert config.ignore == ("spread-invalid",)
    assert lint(LintOptions(paths=("-",), stdin=io.StringIO(BAD), config=config)).findings == ()
    monkeypatch.chdir(nested)
    (nested / "bad.yaml").write_text(BAD)
    assert run("bad.yaml")[0] == 0
    assert FileConfig().ignore == ()


def test_docs_are_generated_from_the_registry() -> None:
    path = Path(__file__).resolve().parent.parent / "docs" / "lint-rules.md"
    assert path.read_text(encoding="utf-8") == markdown(), "run scripts/gen_lint_docs.py"




def test_the_table_prints_bracketed_text_literally(tmp_path: Path) -> None:
    # Messages quote selectors ("app In [other]"): printed as written, never read as Rich markup.
    path = tmp_path / "w.yaml"
    path.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: idle, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: idle}}
  template:
    metadata: {labels: {app: idle}}
    spec:
      containers: [{name: c, image: x}]
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: other}}}
""")
    result = runner.invoke(app, ["--color", "never", "lint", str(path), "--select", "spread-selector-misses-own-pods"],
                           env={"COLUMNS": "400"})
    assert "spread-selector-misses-own-pods KPL201" in result.stdout
    assert "the labelSelector (app In [other]) does not select this workload's own pods" in result.stdout
