"""A PlanDiff for GitHub Actions: the Markdown comment appended to `$GITHUB_STEP_SUMMARY` (when set), and
workflow commands on stdout that annotate the pull request's files: an error at each workload whose pods
the change leaves unschedulable, lint's new findings at their lines, and a notice (a warning when it
fails `--fail-on-increase`) with the cost change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpplan.diff.markdown import headline, render_markdown
from karpplan.diff.model import PlanDiff
from karpplan.render.github_actions import append_step_summary, workflow_command

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def command(level: str, message: str, *, title: str, file: str = "", line: int = 0) -> str:
    props: list[tuple[str, str | int]] = []
    if file:
        props.append(("file", file))
        if line:
            props.append(("line", line))
    props.append(("title", title))
    return workflow_command(level, message, props)


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
    append_step_summary(render_markdown(diff), environ)
    return "".join(line + "\n" for line in workflow_commands(diff))
