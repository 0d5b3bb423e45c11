"""A chart's raw template given as input (`karpplan plan chart/templates/`) is not YAML: the error is one
`file:line` at its first template action, saying to render it with `helm template` (the chart named when a
Chart.yaml sits above the file), exit 2, nothing on stdout. Rendered output (`# Source:` comments) and a
template string inside a quoted value still read as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.errors import InputError
from karpplan.inputs.loader import load_documents, parse_documents

# `helm create`'s templates/deployment.yaml, trimmed.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "mychart.fullname" . }}
  labels:
    {{- include "mychart.labels" . | nindent 4 }}
spec:
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "mychart.selectorLabels" . | nindent 6 }}
  template:
    spec:
      containers:
        - name: {{ .Chart.Name }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
"""


def chart(tmp_path: Path) -> Path:
    (tmp_path / "mychart" / "templates").mkdir(parents=True)
    (tmp_path / "mychart" / "Chart.yaml").write_text("apiVersion: v2\nname: mychart\nversion: 0.1.0\n")
    (tmp_path / "mychart" / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    return tmp_path / "mychart"


def problem(text: str, file: str = "t.yaml") -> str:
    with pytest.raises(InputError) as caught:
        parse_documents(text, file)
    return str(caught.value)


def test_a_raw_template_is_blamed_at_its_first_action_with_the_command_to_render_it(tmp_path: Path) -> None:
    template = str(chart(tmp_path) / "templates" / "deployment.yaml")
    with pytest.raises(InputError) as caught:
        load_documents([template])
    assert str(caught.value) == (
        f'{template}:4: unrendered Helm template: {{{{ include "mychart.fullname" . }}}} is Go templating, not YAML; '
        f"render the chart first and give karpplan its output: `helm template {tmp_path / 'mychart'} > "
        "rendered.yaml` and that file, or pipe it in as `-`")


@pytest.mark.parametrize("command", ["plan", "lint"])
def test_plan_and_lint_of_a_chart_directory_exit_2_with_one_line(tmp_path: Path, command: str) -> None:
    directory = chart(tmp_path)
    result = CliRunner().invoke(app, [command, str(directory)])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{directory / 'templates' / 'deployment.yaml'}:4: ")
    assert "helm template" in lines[0]
    assert "karpplan plan" not in lines[0]  # lint's user is not told to run plan


def test_a_bare_action_line_is_blamed_when_the_error_is_elsewhere() -> None:
    text = "apiVersion: v1\nkind: Pod\n{{- if .Values.enabled }}\nmetadata: {name: p}\n{{- end }}\n"
    assert problem(text).startswith("t.yaml:3: unrendered Helm template: {{- if .Values.enabled }} is Go templating")


def test_a_template_opening_with_a_comment_is_a_template_not_bad_yaml() -> None:
    """A chart's template that starts with a multi-line `{{/* ... */}}` note (data-on-eks's valkey chart,
    templates/bootstrap-rbac.yaml) read "invalid YAML: did not find expected ','" at line 2."""
    text = "{{/*\n  Minimal RBAC for the bootstrap Job:\n    - list pods\n*/}}\napiVersion: v1\nkind: ServiceAccount\n"
    assert problem(text).startswith("t.yaml:1: unrendered Helm template: {{/* is Go templating")


def test_stdin_names_no_chart() -> None:
    assert problem("replicas: {{ .Values.n }}\n", "<stdin>").endswith(
        "`helm template CHART > rendered.yaml` and that file, or pipe it in as `-`")


def test_yaml_errors_without_templating_keep_their_message() -> None:
    assert problem("a: [1, 2\n").startswith("t.yaml:2: invalid YAML")
    assert problem("{a: 1}: x\n") == "t.yaml:1: invalid YAML: mapping keys must be scalars (strings)"


def test_rendered_output_and_quoted_template_strings_still_read() -> None:
    rendered = "---\n# Source: mychart/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
    assert [d.source for d in parse_documents(rendered, "r.yaml")] == ["mychart/templates/svc.yaml"]
    quoted = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "{{ .Release.Name }}-cm"}\n'
    assert parse_documents(quoted, "q.yaml")[0].name == "{{ .Release.Name }}-cm"


def repository(tmp_path: Path) -> Path:
    """A repository holding plain manifests and a chart (GoogleCloudPlatform/microservices-demo: kubernetes-manifests/
    and helm-chart/; istio samples/ambient-argo/tag-chart)."""
    chart(tmp_path)
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "web.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}\n")
    return tmp_path


def test_lint_of_a_repository_holding_a_chart_lints_the_rest_and_says_the_chart_was_not_rendered(
        tmp_path: Path) -> None:
    # `karpplan lint .` on such a repository exited 2 on the chart's first template and judged nothing.
    root = repository(tmp_path)
    result = CliRunner().invoke(app, ["lint", str(root), "-o", "json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    findings = json.loads(result.stdout)["findings"]
    said = [f for f in findings if "Helm chart" in f["message"]]
    assert [(f["file"], f["line"], f["severity"], f["object"]) for f in said] == [
        (str(root / "mychart" / "Chart.yaml"), 2, "info", "Chart/mychart")]
    assert said[0]["fix"] == f"to lint what it installs, lint its output: helm template {root / 'mychart'} | karpplan lint -"
    assert any(f["rule"] == "replicas-without-spread" and f["object"] == "Deployment/default/web" for f in findings)


def test_plan_of_a_repository_holding_a_chart_plans_the_rest_and_warns_once(tmp_path: Path) -> None:
    root = repository(tmp_path)
    result = CliRunner().invoke(app, ["plan", str(root), "--region", "us-east-1", "-o", "json"])
    document = json.loads(result.stdout)
    assert {p["workload"] for p in document["pods"]} == {"Deployment/web"}
    warnings = [w for w in document["warnings"] if "Helm chart" in w]
    assert len(warnings) == 1 and f"helm template {root / 'mychart'}" in warnings[0]
