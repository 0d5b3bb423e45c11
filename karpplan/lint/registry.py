"""Every lint rule, in the order the docs list them. Adding a rule is adding its `Rule` object here."""

from __future__ import annotations

from karpplan.lint.core import Rule
from karpplan.lint.rules import (
    affinity,
    anti_affinity,
    capacity,
    disruption,
    fargate,
    notices,
    placeholders,
    pool_limits,
    spread,
    validation,
    windows_pools,
)

RULES: tuple[Rule, ...] = (*validation.RULES, *placeholders.RULES, *spread.RULES, *disruption.RULES, *affinity.RULES, *capacity.RULES,
                           *pool_limits.RULES, *anti_affinity.RULES, *windows_pools.RULES, *fargate.RULES, *notices.RULES)
BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}


def resolve(name: str) -> Rule | None:
    """A rule by name or code (case-insensitive code)."""
    return next((r for r in RULES if r.answers_to(name)), None)
