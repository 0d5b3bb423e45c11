"""LintReport renderers: table, json, github (workflow commands + step summary), junit. SARIF: sarif.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.text import Text

from karpplan.lint.core import Finding, Severity, with_fix
from karpplan.lint.report import LintReport
from karpplan.render.github_actions import append_step_summary, workflow_command

_INDENT = 4
_STYLE = {Severity.error: "red", Severity.warning: "yellow", Severity.info: "blue"}


def render_json(report: LintReport) -> str:
    return json.dumps(report.to_document(), indent=2, ensure_ascii=False) + "\n"


def render_table(report: LintReport, console: Console) -> None:
    """A block per finding, readable at any width (80 columns too): `file:line  severity  rule CODE` on one
    line, then, indented and wrapped on spaces, the object, the message and the fix; a blank line after."""
    for f in report.findings:
        where = Text(f"{f.file}:{f.line}" + (f" ({f.source})" if f.source else ""))
        # Text, never markup: messages quote selectors and values ("app In [other]").
        what = Text(f.severity.value, style=_STYLE[f.severity]) + Text(f"  {f.rule} {f.code}")
        header = where + Text("  ") + what
        if header.cell_len <= console.width:
            _print_wrapped(console, header, 0)
        else:  # a long path: the path alone (folded if need be), then what was found
            _print_wrapped(console, where, 0)
            _print_wrapped(console, what, _INDENT)
        for text in (Text(f.object, style="bold"), Text(f.message), Text(f"fix: {f.fix}") if f.fix else None):
            if text is not None:
                _print_wrapped(console, text, _INDENT)
        console.print()
    s = report.to_document()["summary"]
    assert isinstance(s, dict)
    _print_wrapped(console, Text(
        f"{s['files']} file(s), {s['objects']} object(s): {s['error']} error(s), {s['warning']} warning(s), "
        f"{s['info']} info" + (f"; {len({k.rule for k in report.skipped})} rule(s) skipped" if report.skipped else "")), 0)
    for line in skipped_lines(report):
        _print_wrapped(console, Text(line), 0)


def _print_wrapped(console: Console, text: Text, indent: int) -> None:
    """`text` wrapped on spaces to the console's width less `indent` (a word longer than that folded), each
    line indented, no trailing spaces."""
    for line in text.wrap(console, max(console.width - indent, 20), overflow="fold"):
        line.rstrip()
        console.print(Text(" " * indent) + line, soft_wrap=True, highlight=False)


def skipped_lines(report: LintReport) -> list[str]:
    """One line per reason: the rules (or rules on one object) that could not judge, so that "0 errors"
    never hides them."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for skip in report.skipped:
        by_reason.setdefault((skip.object, skip.reason), []).append(skip.rule)
    lines = []
    for (obj, reason), rules in by_reason.items():
        names = ", ".join(dict.fromkeys(rules))
        lines.append(f"skipped {names}" + (f" on {obj}" if obj else "") + f": {reason}")
    return lines


# ------------------------------------------------------------------------------------------ GitHub
def _command(f: Finding) -> str:
    level = {Severity.error: "error", Severity.warning: "warning", Severity.info: "notice"}[f.severity]
    return workflow_command(level, with_fix(f), [("file", f.file), ("line", f.line), ("col", f.column),
                                             ("title", f.rule)])


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(report: LintReport) -> str:
    s = report.to_document()["summary"]
    assert isinstance(s, dict)
    lines = [
        "## karpplan lint",
        "",
        f"{s['files']} file(s), {s['objects']} object(s): **{s['error']} error(s)**, {s['warning']} warning(s), "
        f"{s['info']} info",
        "",
    ]
    lines += [f"- {_cell(line)}" for line in skipped_lines(report)]
    if report.skipped:
        lines.append("")
    if report.findings:
        lines += ["| severity | rule | location | object | message | fix |", "|---|---|---|---|---|---|"]
        lines += [
            f"| {f.severity.value} | `{f.rule}` | `{_cell(f.file)}:{f.line}` | {_cell(f.object)} | "
            f"{_cell(f.message)} | {_cell(f.fix)} |"
            for f in report.findings
        ]
    return "\n".join(lines) + "\n"


def render_github(report: LintReport, environ: Mapping[str, str] | None = None) -> str:
    """Workflow commands (one per finding, then a `::notice` per reason rules were skipped, so that a clean run
    never hides rules that could not judge); the Markdown summary is appended to $GITHUB_STEP_SUMMARY."""
    append_step_summary(markdown_summary(report), environ)
    notices = [workflow_command("notice", line, [("title", "karpplan lint: rules skipped")])
               for line in skipped_lines(report)]
    return "".join(line + "\n" for line in [*(_command(f) for f in report.findings), *notices])


# ------------------------------------------------------------------------------------------ JUnit
def render_junit(report: LintReport) -> str:
    """One testcase per object, one failure per finding (objects without findings pass); the rules skipped, and
    why, in the suite's <system-out>. The `failures`
    counts are of failed testcases, as JUnit's schema defines them (never more than `tests`: a viewer that
    reads 36 failures of 33 tests distrusts the report); every finding is still a <failure> element."""
    by_object: dict[str, list[Finding]] = {name: [] for name in report.object_names}
    files = dict(zip(report.object_names, report.object_files, strict=False))
    for f in report.findings:  # the contract: a failure per finding, its severity in `type`
        by_object.setdefault(f.object, []).append(f)
    failures = sum(1 for v in by_object.values() if v)
    suites = ET.Element("testsuites", name="karpplan lint", tests=str(len(by_object)), failures=str(failures))
    suite = ET.SubElement(suites, "testsuite", name="karpplan lint", tests=str(len(by_object)),
                          failures=str(failures), errors="0", skipped="0")
    for name, found in by_object.items():
        file = found[0].file if found else files.get(name, "")
        case = ET.SubElement(suite, "testcase", name=name, classname="karpplan.lint")
        if file:  # a passing object's file when known; no empty attribute when not
            case.set("file", file)
        for f in found:
            failure = ET.SubElement(case, "failure", message=f"{f.rule}: {f.message}", type=f.severity.value)
            failure.text = f"{f.file}:{f.line}:{f.column}: {f.rule} ({f.code}) {f.field}\n{f.message}\nfix: {f.fix}"
    if report.skipped:  # the rules that could not judge: the suite's output (no testcase: one per object)
        ET.SubElement(suite, "system-out").text = "\n".join(skipped_lines(report))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
