"""Unrendered template placeholders in what a user pastes: blueprint style (`<<AZ>>`, aws-samples/karpenter-blueprints),
envsubst/shell/Terraform style (`${CLUSTER_NAME}`) and Helm/Go templates (`{{ .Values.zone }}`).

Lint reports them where they select something (`lint/rules/placeholders.py`); the planner reads a value that
is one as if it were not written (`catalog/zones.py`), so both judge a value by the same pattern.
"""

from __future__ import annotations

import re

PLACEHOLDER = re.compile(r"<<\s*[^<>\n]+?\s*>>|\$\{[^{}\s]+\}|\{\{.*?\}\}")


def placeholder_in(text: str | None) -> str | None:
    """The first placeholder written in `text` (None when there is none)."""
    match = PLACEHOLDER.search(text or "")
    return match.group(0) if match else None
