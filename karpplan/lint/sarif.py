"""SARIF 2.1.0 as GitHub code scanning accepts it: every rule in tool.driver.rules with help text, each
result's region at the finding's line and column, and fingerprints that survive unrelated edits."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from karpplan import __version__
from karpplan.lint.core import Finding, Rule, Severity, with_fix
from karpplan.lint.registry import RULES
from karpplan.lint.report import LintReport

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/karpplan/karpplan/blob/main/docs/lint-rules.md"
_LEVEL = {Severity.error: "error", Severity.warning: "warning", Severity.info: "note"}


def _rule(rule: Rule) -> dict[str, object]:
    return {
        "id": rule.name,
        "name": "".join(part.capitalize() for part in rule.name.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.rationale},
        "help": {
            "text": f"{rule.rationale}\n\nFix: {rule.fix}",
            "markdown": f"{rule.rationale}\n\n**Fix:** {rule.fix}\n\nBad:\n```yaml\n{rule.bad}```\n\n"
                        f"Good:\n```yaml\n{rule.good}```",
        },
        "helpUri": f"{INFORMATION_URI}#{rule.name}",
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"code": rule.code, "tags": ["kubernetes", "scheduling"]},
    }


def _path(file: str) -> str:
    return PurePosixPath(file.replace("\\", "/")).as_posix().removeprefix("./")


def _artifact(file: str) -> dict[str, str]:
    """SARIF's artifactLocation: a valid URI reference (percent-encoded: `my app.yaml` -> `my%20app.yaml`), relative
    to %SRCROOT% (the directory lint ran in) when the file is under it, else a `file://` URI; `<stdin>` as is."""
    if file.startswith("<"):
        return {"uri": quote(file, safe="")}
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return {"uri": path.as_uri()}
    # `:` is encoded too, so a first segment never reads as a URI scheme.
    return {"uri": quote(_path(path.as_posix()), safe="/"), "uriBaseId": "%SRCROOT%"}


def fingerprint(f: Finding) -> str:
    """Stable across line moves: the rule, file, object and field path, not the line number."""
    text = "\0".join((f.rule, _path(f.file), f.object, f.field, f.message))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _result(f: Finding, index: dict[str, int]) -> dict[str, object]:
    location: dict[str, object] = {
        "physicalLocation": {
            "artifactLocation": _artifact(f.file),
            "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
        },
        "logicalLocations": [{"fullyQualifiedName": f"{f.object}.{f.field}", "kind": "member"}],
    }
    message = with_fix(f)
    out: dict[str, object] = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": _LEVEL[f.severity],
        "message": {"text": message},
        "locations": [location],
        "partialFingerprints": {"karpplan/v1": fingerprint(f)},
    }
    if f.source:
        out["properties"] = {"helmSource": f.source}
    return out


def render_sarif(report: LintReport) -> str:
    rules = list(RULES)
    index = {r.name: i for i, r in enumerate(rules)}
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "karpplan", "semanticVersion": __version__, "version": __version__,
                "informationUri": INFORMATION_URI, "rules": [_rule(r) for r in rules],
            }},
            "results": [_result(f, index) for f in report.findings],
            "invocations": [{
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "note", "message": {"text": (f"skipped on {s.object}: " if s.object else "skipped: ") + s.reason},
                     "descriptor": {"id": s.rule}}
                    for s in report.skipped
                ],
            }],
            "columnKind": "unicodeCodePoints",
        }],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
