"""The lint table as a person reads it in a terminal: a block per finding (`file:line  severity  rule CODE` on
one line, then the object, message and fix wrapped on spaces and indented), readable at 80 columns, where the
five-column table it replaces put one word per line. Golden files: tests/golden/lint-table-{80,120}.txt
(UPDATE_GOLDEN=1 rewrites them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.registry import BY_NAME
from karpplan.lint.rules.examples import NODEPOOL, deployment

GOLDEN = Path(__file__).resolve().parent / "golden"
runner = CliRunner()

# An unrendered placeholder, a pod no pool can launch (its workload at 0 replicas), a warning.
INPUT = (NODEPOOL
         + deployment("      nodeSelector: {topology.kubernetes.io/zone: \"<<AVAILABILITY_ZONE>>\"}\n", name="zoned")
         + "---\n" + deployment("      nodeSelector: {karpenter.sh/capacity-type: spot}\n", name="spot", replicas=0)
         + "---\n" + deployment("", name="many", replicas=3))


def table(columns: int, text: str = INPUT) -> str:
    result = runner.invoke(app, ["--color", "never", "lint", "-"], input=text, env={"COLUMNS": str(columns)})
    assert result.exit_code == 1, result.output
    return result.stdout


@pytest.mark.parametrize("columns", [80, 120])
def test_the_table_matches_the_golden_file(columns: int) -> None:
    actual = table(columns)
    path = GOLDEN / f"lint-table-{columns}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("columns", [80, 120])
def test_every_finding_is_one_header_line_and_an_indented_body_within_the_width(columns: int) -> None:
    lines = table(columns).splitlines()
    assert all(len(line) <= columns and line == line.rstrip() for line in lines)
    headers = [line for line in lines if line.startswith("<stdin>:")]
    assert [h.split("  ")[1:] for h in headers] == [
        ["info", "input-read-differently KPL601"], ["error", "unrendered-placeholder KPL105"],
        ["error", "no-pool-can-launch KPL404"], ["warning", "replicas-without-spread KPL301"]]
    body = lines[lines.index(headers[2]) + 1:lines.index(headers[3])]
    assert body[0] == "    Deployment/default/spot" and body[-1] == ""
    assert all(line.startswith("    ") for line in body[:-1])
    words = " ".join(line.strip() for line in body[1:-1])
    assert "Deployment spot has 0 replicas now" in words and "fix: loosen the pod's" in words


def test_a_path_too_long_for_the_header_line_gets_its_own_line(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-directory-name-" * 3) / "manifests"
    deep.mkdir(parents=True)
    (deep / "web.yaml").write_text(BY_NAME["no-pool-can-launch"].bad, encoding="utf-8")
    result = runner.invoke(app, ["--color", "never", "lint", str(deep / "web.yaml")], env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "no-pool-can-launch" in line)
    assert lines[at] == "    error  no-pool-can-launch KPL404" and all(len(line) <= 80 for line in lines)
