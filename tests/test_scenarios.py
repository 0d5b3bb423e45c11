"""The shared scenario cases (../shared/cases), run through the installed CLI and verified by check.py.

Each `plan` case runs with the default (optimal) engine; cases whose expectation is Karpenter's own outcome
also run with `--engine karpenter`. The `explain` and `lint` suites are not plans: check_tools.py runs them.

Without ../shared beside the project these tests skip on a developer's machine, but CI (the `CI` or
`KARPPLAN_REQUIRE_SHARED` environment variable set) fails: a missing shared folder is a broken checkout.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
CASES = REPO.parent / "shared" / "cases"
OWN_CASES = REPO / "tests" / "cases"  # the project's own translations, same format (tests/cases/README.md)
TOOL_SUITES = ("explain", "lint")  # cases for check_tools.py, not for `plan`
SHARED_REQUIRED = any(os.environ.get(name) for name in ("CI", "KARPPLAN_REQUIRE_SHARED"))


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
    found = [c for c in OWN_CASES.glob("*/*") if (c / "expect.yaml").exists()]
    if CASES.exists():
        found += [c for c in CASES.glob("*/*")
                  if c.parent.name not in TOOL_SUITES and (c / "expect.yaml").exists() and (c / "manifests.yaml").exists()]
    return sorted(found)


def _karpenter_outcome(case: Path) -> bool:
    """Cases translated from Karpenter whose numbers are Karpenter's own (not a greedy floor)."""
    expect = yaml.safe_load((case / "expect.yaml").read_text()) or {}
    return case.parent.name.startswith("karpenter") and "scheduled_at_least" not in expect


def _command() -> list[str]:
    exe = shutil.which("karpplan")
    return [exe] if exe else [sys.executable, "-m", "karpplan"]


CHECKER = _checker()
ALL = _cases()
PARAMS = [pytest.param(c, [], id=f"{c.parent.name}/{c.name}") for c in ALL] + [
    pytest.param(c, ["--engine", "karpenter"], id=f"{c.parent.name}/{c.name}[karpenter]")
    for c in ALL if _karpenter_outcome(c)
]


def test_shared_cases_are_beside_the_project() -> None:
    if CHECKER is None and not SHARED_REQUIRED:
        pytest.skip("../shared/cases is not beside the project")
    assert CHECKER is not None, f"{CASES}/check.py is missing: the checkout is broken (../shared must be beside it)"
    suites = {case.parent.name for case in ALL if case.is_relative_to(CASES)}
    assert {"kube", "karpenter", "fargate"} <= suites, f"plan suites found: {sorted(suites)}"


@pytest.mark.skipif(CHECKER is None, reason="../shared/cases is not beside the project")
@pytest.mark.parametrize(("case", "extra"), PARAMS)
def test_scenario(case: Path, extra: list[str]) -> None:
    assert CHECKER is not None
    passed, errors = CHECKER.run_case(case, _command(), 120, extra + ["--time-limit", "5"])
    assert passed, "; ".join(errors)
