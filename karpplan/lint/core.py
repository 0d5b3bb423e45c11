"""The pieces every rule shares: severities, what a check yields (`Hit`), findings and the `Rule` object."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from dataclasses import field as dc_field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from karpplan.inputs.loader import Document

if TYPE_CHECKING:
    from karpplan.lint.context import LintContext


class Severity(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"


@dataclass(frozen=True)
class Hit:
    """One thing a check found: the document, the Kubernetes field path of the offending field, the message.

    `line` overrides the line found by walking `path` (validation problems carry the builder's own line);
    `severity` overrides the rule's (a rule whose findings differ in weight: the model's notices).
    """

    doc: Document
    path: str
    message: str
    fix: str = ""
    line: int = 0
    severity: Severity | None = None


@dataclass(frozen=True, order=True)
class Finding:
    """One reported finding (sorted by file, line, column, rule)."""

    file: str
    line: int
    column: int
    rule: str
    code: str = dc_field(compare=False)
    severity: Severity = dc_field(compare=False)
    object: str = dc_field(compare=False)
    field: str = dc_field(compare=False)
    message: str
    fix: str = dc_field(compare=False, default="")
    source: str | None = dc_field(compare=False, default=None)  # Helm's `# Source:` template

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule, "code": self.code, "severity": self.severity.value, "file": self.file,
            "line": self.line, "column": self.column, "object": self.object, "field": self.field,
            "message": self.message, "fix": self.fix,
        }
        if self.source:
            out["source"] = self.source
        return out


@dataclass(frozen=True)
class Rule:
    """One lint rule: its identity, its documentation (with a bad and a good example) and its check."""

    name: str
    code: str
    severity: Severity
    summary: str
    rationale: str
    bad: str
    good: str
    fix: str
    check: Callable[[LintContext], Iterable[Hit]] = dc_field(compare=False, repr=False)
    needs_pools: bool = False  # runs only when the inputs hold NodePools, Fargate profiles or nodes

    def answers_to(self, name: str) -> bool:
        """Whether `name` names this rule: its name, or its code in any case."""
        return name == self.name or name.upper() == self.code


Check = Callable[["LintContext"], Iterable[Hit]]


def lint_rule(name: str, code: str, severity: Severity, *, fix: str, bad: str, good: str,
         needs_pools: bool = False) -> Callable[[Check], Rule]:
    """Declare a rule on its check: the check's docstring gives the summary (its first paragraph, one line)
    and the rationale (the rest, its lines joined by single spaces)."""

    def declare(check: Check) -> Rule:
        summary, _, rationale = inspect.cleandoc(check.__doc__ or "").partition("\n\n")
        return Rule(name=name, code=code, severity=severity, summary=summary, rationale=" ".join(rationale.split()),
                    bad=bad, good=good, fix=fix, check=check, needs_pools=needs_pools)

    return declare


def with_fix(f: Finding) -> str:
    """A finding as one line of text (SARIF results, GitHub workflow commands): the object once, then the
    message and the fix as sentences."""
    message = f"{f.object}: {f.message}"
    if not f.fix:
        return message
    return f"{message}{'' if message.endswith(('.', '!', '?')) else '.'} Fix: {f.fix}"
