"""The shared scenario cases (../shared/cases), run through the installed CLI and verified by check.py.

Each case runs with the default (optimal) engine; cases whose expectation is Karpenter's own outcome also
run with `--engine karpenter`. Skipped cleanly when ../shared is not beside the project.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
CASES = REPO.parent / "shared" / "cases"


def _checker() -> ModuleType | None:
    path = CASES / "check.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("karpplan_case_checker", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases() -> list[Path]:
    if not CASES.exists():
        return []
    return sorted(c for c in CASES.glob("*/*") if (c / "expect.yaml").exists())


def _karpenter_outcome(case: Path) -> bool:
    """Cases translated from Karpenter whose numbers are Karpenter's own (not a greedy floor)."""
    expect = yaml.safe_load((case / "expect.yaml").read_text()) or {}
    return case.parent.name == "karpenter" and "scheduled_at_least" not in expect


def _command() -> list[str]:
    exe = shutil.which("karpplan")
    return [exe] if exe else [sys.executable, "-m", "karpplan"]


CHECKER = _checker()
ALL = _cases()
PARAMS = [pytest.param(c, [], id=f"{c.parent.name}/{c.name}") for c in ALL] + [
    pytest.param(c, ["--engine", "karpenter"], id=f"{c.parent.name}/{c.name}[karpenter]")
    for c in ALL if _karpenter_outcome(c)
]


@pytest.mark.skipif(CHECKER is None, reason="../shared/cases is not beside the project")
@pytest.mark.parametrize(("case", "extra"), PARAMS)
def test_scenario(case: Path, extra: list[str]) -> None:
    assert CHECKER is not None
    passed, errors = CHECKER.run_case(case, _command(), 120, extra + ["--time-limit", "5"])
    assert passed, "; ".join(errors)
