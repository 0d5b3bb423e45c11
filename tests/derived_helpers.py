"""What the derived-workload tests (Strimzi, ECK, CloudNativePG, RabbitMQ, Spark, Zalando) share: plan and lint a
manifest from standard input, the pods of one workload, a needle's line."""

from __future__ import annotations

import io
import json
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.core import Finding
from karpplan.lint.run import LintOptions, lint

runner = CliRunner()


def plan(text: str) -> dict[str, Any]:
    """`karpplan plan - -o json` on the text (exit 0 or 1: a plan either way)."""
    result = runner.invoke(app, ["plan", "-", "-o", "json"], input=text)
    assert result.exit_code in (0, 1), result.stdout + str(result.exception)
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def pods_of(document: dict[str, Any], workload: str) -> list[dict[str, Any]]:
    return [p for p in document["pods"] if p["workload"] == workload]


def findings(text: str) -> list[Finding]:
    return list(lint(LintOptions(paths=("-",), stdin=io.StringIO(text))).findings)


def line_of(text: str, needle: str, nth: int = 0) -> int:
    """The 1-based line of the needle's `nth` occurrence."""
    return [i for i, line in enumerate(text.splitlines(), 1) if needle in line][nth]
