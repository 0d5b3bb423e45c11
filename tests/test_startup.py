"""Start-up cost of the command line: what a `karpplan plan` process loads, checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LEAN_CP_SAT = """
import sys
import karpplan.cli.main  # the command line installs the lean import of CP-SAT
from ortools.sat.python import cp_model
assert "pandas" not in sys.modules, "cp_model loaded pandas"
m = cp_model.CpModel()
x = m.new_int_var(0, 7, "x")
m.add(x <= 5)
m.maximize(x)
solver = cp_model.CpSolver()
assert solver.solve(m) == cp_model.OPTIMAL and solver.value(x) == 5
assert "pandas" not in sys.modules, "solving loaded pandas"
import pandas as pd  # a later import gets the real pandas, and cp_model's pandas helpers work with it
assert pd.Series([1, 2]).sum() == 3
xs = m.new_int_var_series("y", pd.Index(range(3)), 0, 4)
assert isinstance(xs, pd.Series) and len(xs) == 3
print("ok")
"""


def _run(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_command_line_loads_cp_sat_without_pandas_and_pandas_still_works_after() -> None:
    assert _run(LEAN_CP_SAT).strip() == "ok"


def test_a_quickstart_plan_never_loads_pandas() -> None:
    script = """
import sys
from karpplan.cli.main import main
sys.argv = ["karpplan", "plan", "fixtures/quickstart", "-o", "json"]
try:
    main()
except SystemExit:
    pass
print("pandas" in sys.modules, file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          check=False)
    assert '"status": "optimal"' in done.stdout, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False"
