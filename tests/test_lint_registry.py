"""Every rule's bad example raises exactly that rule; its good example raises nothing."""

from __future__ import annotations

import io

import pytest

from karpplan.lint.core import Severity
from karpplan.lint.registry import RULES
from karpplan.lint.run import LintOptions, lint


def lint_text(text: str) -> list[tuple[str, int]]:
    """Errors and warnings: the examples' NodePool comes without its EC2NodeClass, which is an info finding
    (input-read-differently: karpplan assumes the node class defaults)."""
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    return [(f.rule, f.line) for f in report.findings if f.severity is not Severity.info]


def test_registry_is_complete_and_unique() -> None:
    assert len(RULES) == 19
    assert len({r.name for r in RULES}) == 19
    assert len({r.code for r in RULES}) == 19


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_bad_example_raises_exactly_the_rule(rule: object) -> None:
    found = lint_text(rule.bad)  # type: ignore[attr-defined]
    assert found, f"{rule.name}: bad example raised nothing"  # type: ignore[attr-defined]
    assert {name for name, _ in found} == {rule.name}, found  # type: ignore[attr-defined]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_good_example_raises_nothing(rule: object) -> None:
    assert lint_text(rule.good) == []  # type: ignore[attr-defined]
