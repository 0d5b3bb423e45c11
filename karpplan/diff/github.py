"""A PlanDiff for GitHub Actions: the Markdown comment appended to `$GITHUB_STEP_SUMMARY` (when set), and
workflow commands on stdout that annotate the pull request's files: an error at each workload whose pods
the change leaves unschedulable, lint's new findings at their lines, and a notice (a warning when it
fails `--fail-on-increase`) with the cost change.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from karpplan.diff.markdown import headline, render_markdown
from karpplan.diff.model import PlanDiff

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, *, title: str, file: str = "", line: int = 0) -> str:
    props = []
    if file:
        props.append(f"file={escape_property(file)}")
        if line:
            props.append(f"line={line}")
    props.append(f"title={escape_property(title)}")
    return f"::{level} {','.join(props)}::{escape_data(message)}"


def _finding(f: Mapping[str, Any]) -> str:
    message = f"{f['object']}: {f['message']}" + (f" Fix: {f['fix']}" if f.get("fix") else "")
    return command(LEVELS.get(str(f["severity"]), "warning"), message, title=f"{f['rule']} ({f['code']}), new",
                   file=str(f["file"]), line=int(f["line"]))


def workflow_commands(diff: PlanDiff) -> list[str]:
    out = []
    groups: dict[str, list[str]] = {}
    where: dict[str, tuple[str, int, tuple[str, ...]]] = {}
    for pod in diff.newly_unschedulable:
        groups.setdefault(pod.workload, []).append(pod.pod)
        where.setdefault(pod.workload, (pod.file, pod.line, pod.reasons))
    for workload, pods in groups.items():
        file, line, reasons = where[workload]
        message = (f"{workload}: {len(pods)} pod{'s' if len(pods) != 1 else ''} this change leaves unschedulable "
                   f"({', '.join(pods[:4])}{' ...' if len(pods) > 4 else ''}): " + "; ".join(reasons))
        out.append(command("error", message, title="karpplan diff: newly unschedulable", file=file, line=line))
    out += [_finding(f) for f in diff.lint_new]
    out.append(command("warning" if diff.gate.cost_exceeded else "notice",
                       headline(diff) + ("; " + "; ".join(diff.gate.reasons) if diff.gate.reasons else ""),
                       title="karpplan diff"))
    return out


def render_github(diff: PlanDiff, environ: Mapping[str, str] | None = None) -> str:
    """Workflow commands on stdout; the Markdown comment appended to $GITHUB_STEP_SUMMARY when it is set."""
    env = os.environ if environ is None else environ
    summary_path = env.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        with open(summary_path, "a", encoding="utf-8") as handle:
            handle.write(render_markdown(diff))
    return "".join(line + "\n" for line in workflow_commands(diff))
