"""Deeply nested input on every path (YAML file, JSON file, stdin) is refused with `file:line`, never a crash.

A Helm template gone wrong or a hostile file can nest a million levels; the parsers recurse, so the refusal
must come from a check that does not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from karpplan.inputs.loader import MAX_DEPTH

TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"

# (file name, content, line the refusal names)
FILES: dict[str, tuple[str, str, int]] = {
    "flow-yaml": ("deep.yaml", "kind: Pod\nspec: " + "[" * 50_000 + "]" * 50_000 + "\n", 2),
    "block-yaml": ("deep.yaml", "kind: Pod\nspec:\n" + "".join(f"{'  ' * i}k{i}:\n" for i in range(1, 1100)), 1001),
    "json": ("deep.json", '{"kind": "Pod",\n "spec":\n ' + '{"a": ' * 20_000 + "1" + "}" * 20_000 + "}\n", 3),
    "json-with-tabs": ("deep.json", '{\t"kind": "Pod",\n\t"spec": ' + "[" * 100_000 + "]" * 100_000 + "}", 2),
}


def _plan(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "karpplan.cli.main", "plan", *args],
        capture_output=True, text=True, input=stdin, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )


def _assert_refused(result: subprocess.CompletedProcess[str], prefix: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    (first,) = result.stderr.splitlines()
    assert first.startswith(prefix), first
    assert TOO_DEEP in first, first


@pytest.mark.parametrize("case", sorted(FILES))
def test_deep_file_is_refused_at_its_line(tmp_path: Path, case: str) -> None:
    name, content, line = FILES[case]
    path = tmp_path / name
    path.write_text(content)
    result = _plan(str(path))
    _assert_refused(result, f"{path}:{line}: ")


@pytest.mark.parametrize("content", [FILES["flow-yaml"][1], FILES["json"][1]])
def test_deep_stdin_is_refused_at_its_line(content: str) -> None:
    _assert_refused(_plan("-", stdin=content), "<stdin>:")
