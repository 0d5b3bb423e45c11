"""The LintReport (cli-contract.md): summary and findings, sorted by file and line."""

from __future__ import annotations

from dataclasses import dataclass

from karpplan.lint.core import Finding, Rule, Severity
from karpplan.lint.skip import Skip

API_VERSION = "karpplan.io/v1alpha1"


@dataclass(frozen=True)
class LintReport:
    files: int
    objects: int
    findings: tuple[Finding, ...]
    rules: tuple[Rule, ...]  # the rules that ran
    object_names: tuple[str, ...] = ()  # every object linted (JUnit lists one testcase each)
    skipped: tuple[Skip, ...] = ()  # rules (or rules on one object) that could not judge
    object_files: tuple[str, ...] = ()  # the file of each of object_names ("" unknown)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def exit_code(self) -> int:
        return 1 if self.count(Severity.error) else 0

    def to_document(self) -> dict[str, object]:
        return {
            "apiVersion": API_VERSION,
            "kind": "LintReport",
            "summary": {
                "files": self.files, "objects": self.objects, "findings": len(self.findings),
                "error": self.count(Severity.error), "warning": self.count(Severity.warning),
                "info": self.count(Severity.info), "skipped": [s.as_dict() for s in self.skipped],
            },
            "findings": [f.as_dict() for f in self.findings],
        }
