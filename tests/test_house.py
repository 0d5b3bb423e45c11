"""The house rules of issue 15, checked so they stay true: no module over 600 lines, no class over 25 methods,
each command's logic in importable modules (the CLI modules stay thin)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "karpplan"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_MODULE_LINES = 600
MAX_CLASS_METHODS = 25


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_600_lines(module: Path) -> None:
    lines = len(module.read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{module.relative_to(PACKAGE)} has {lines} lines: split it by concept"


def _classes(module: Path) -> list[tuple[str, int]]:
    tree = ast.parse(module.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            out.append((node.name, len(methods)))
    return out


def test_no_class_has_over_25_methods() -> None:
    crowded = [
        f"{module.relative_to(PACKAGE)}:{name} ({count} methods)"
        for module in MODULES
        for name, count in _classes(module)
        if count > MAX_CLASS_METHODS
    ]
    assert crowded == []


def test_the_checks_see_the_package() -> None:
    assert len(MODULES) > 50
    assert any(name == "PlacementState" for m in MODULES for name, _ in _classes(m))
