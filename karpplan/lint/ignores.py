"""The `karpplan.io/lint-ignore` annotation: the rules an object silences for itself (names or codes,
comma-separated, or `all`), and how rule names are split wherever a list of them is given."""

from __future__ import annotations

from collections.abc import Iterable

from karpplan.inputs.loader import Document
from karpplan.lint.core import Rule

IGNORE_ANNOTATION = "karpplan.io/lint-ignore"
ALL_RULES = "all"  # the annotation's word for every rule


def split_names(values: Iterable[str]) -> list[str]:
    """`a,b` and repeated flags alike, blanks dropped."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def annotated_names(doc: Document) -> list[str]:
    """The names in the object's `karpplan.io/lint-ignore` annotation, as written (none without one)."""
    annotations = doc.metadata.get("annotations")
    text = annotations.get(IGNORE_ANNOTATION) if isinstance(annotations, dict) else None
    return split_names([text]) if isinstance(text, str) else []


def silences(doc: Document, rule: Rule) -> bool:
    """Whether the object's annotation silences `rule` (by its name, its code or `all`)."""
    return any(name == ALL_RULES or rule.answers_to(name) for name in annotated_names(doc))
