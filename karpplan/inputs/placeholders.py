"""Unrendered template placeholders in what a user pastes: blueprint style (`<<AZ>>`, aws-samples/karpenter-blueprints;
`<BUCKET_AZ>`, awslabs/data-on-eks),
envsubst/shell/Terraform style (`${CLUSTER_NAME}`) and Helm/Go templates (`{{ .Values.zone }}`).

Lint reports them where they select something (`lint/rules/placeholders.py`); the planner reads a value that
is one as if it were not written (`catalog/zones.py`), so both judge a value by the same pattern. A file
that is not YAML because it is a chart's raw template (`{{- if ... }}`, `name: {{ include ... }}`) is said so
at the line of its first template action, with the command that renders it (`helm_template_problem`).
"""

from __future__ import annotations

import re
from pathlib import Path

# <<AZ>>, ${CLUSTER_NAME}, $CLUSTER_NAME (envsubst reads both; karpenter-blueprints' static-nodepool writes the bare
# form), {{ .Values.x }}: in any text (a reason that quotes a value).
PLACEHOLDER = re.compile(r"<<\s*[^<>\n]+?\s*>>|\$\{[^{}\s]+\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*?\}\}")
# In a value that selects (a label, zone, role or selector term) also <S3_DIRECTORY_BUCKET_AZ> (data-on-eks'
# "replace with ... from Terraform output"): no such value may hold '<', so a <NAME> there is never a real value
# (in free text it may be a file, <stdin>).
VALUE_PLACEHOLDER = re.compile(PLACEHOLDER.pattern + r"|<[A-Za-z][A-Za-z0-9_-]*>")


def placeholder_in(text: str | None) -> str | None:
    """The first placeholder written in `text`, a value (None when there is none)."""
    match = VALUE_PLACEHOLDER.search(text or "")
    return match.group(0) if match else None


# A Go template action as Helm writes them: `{{ .Values.x }}`, `{{- include "c.labels" . | nindent 4 }}`, `{{- end }}`,
# and the opening of a comment, which may run over many lines (`{{/*` ... `*/}}`, a chart's header note).
GO_ACTION = re.compile(r"\{\{-?\s.*?\s?-?\}\}|\{\{[-./\w\s\"|()$]*\}\}|\{\{-?\s*/\*")
# A quoted YAML scalar: an action inside one (`title: '{{ template "slack.title" . }}'`, an Alertmanager config) is a
# string to YAML, so it is not what broke the file.
_QUOTED = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"")
_CHART_DEPTH = 3  # templates/, templates/sub/: where Chart.yaml is looked for above a template


def _chart_of(file: str) -> str:
    """The chart directory above a template file (the one holding Chart.yaml), else `CHART`."""
    if file.startswith("<"):  # <stdin>
        return "CHART"
    try:
        chart = next((p for p in list(Path(file).parents)[:_CHART_DEPTH] if (p / "Chart.yaml").is_file()), None)
    except OSError:
        return "CHART"
    return str(chart) if chart is not None else "CHART"


def helm_template_problem(text: str, file: str, error_line: int) -> tuple[int, str] | None:
    """A file that failed to parse as YAML because it is an unrendered Helm (Go) template: the line of the
    template action to blame and what to do; None when the YAML error is not about templating.

    The blame goes to the failing line when it holds an action, else to the first line that is an action by
    itself (`{{- if .Values.x }}`) before it: YAML reads `{{ ... }}` as a flow mapping, which is what fails."""
    lines = text.split("\n")
    candidates = [error_line] if 0 < error_line <= len(lines) else []
    candidates += [i for i, line in enumerate(lines[:max(error_line, 1)], 1) if line.strip().startswith("{{")]
    for number in candidates:
        action = GO_ACTION.search(_QUOTED.sub("''", lines[number - 1]))
        if action is not None:
            action = GO_ACTION.search(lines[number - 1])
        if action is not None:
            shown = action.group(0) if len(action.group(0)) <= 60 else action.group(0)[:57] + "..."
            return number, (f"unrendered Helm template: {shown} is Go templating, not YAML; render the chart first "
                            f"and give karpplan its output: `helm template {_chart_of(file)} > rendered.yaml` and that file, or "
                            "pipe it in as `-`")
    return None
