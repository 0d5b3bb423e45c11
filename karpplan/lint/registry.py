"""Every lint rule, in the order the docs list them. Adding a rule is adding its `Rule` object here."""

from __future__ import annotations

from karpplan.lint.core import Rule
from karpplan.lint.rules import capacity, fargate, notices, placeholders, spread, validation

RULES: tuple[Rule, ...] = (*validation.RULES, *placeholders.RULES, *spread.RULES, *capacity.RULES, *fargate.RULES, *notices.RULES)
BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}
BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}


def resolve(name: str) -> Rule | None:
    """A rule by name or code (case-insensitive code)."""
    return BY_NAME.get(name) or BY_CODE.get(name.upper())
