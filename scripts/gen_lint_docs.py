#!/usr/bin/env python3
"""Write docs/lint-rules.md from the lint rule registry (tests/test_lint_docs.py fails when it is stale)."""

from __future__ import annotations

from pathlib import Path

from karpplan.lint.docs import markdown

TARGET = Path(__file__).resolve().parent.parent / "docs" / "lint-rules.md"


def main() -> None:
    TARGET.write_text(markdown(), encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
