"""`diff --time-limit auto|SECONDS`: per side, `auto` by default and fitted to the larger side as `plan` fits its
own (`karpplan/time_limit.py`), the same for both sides, stated in the JSON and the table; a side the limit cut
before every pod was simulated is said, and the diff exits 3 as a cut plan does (issue 29: the fixed 10 s cut
50,000 pods)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from diff_helpers import deployment, karpplan, pool, write

from karpplan.engines.effort import auto_time_limit
from karpplan.plan import EXIT_CUT

from planner_helpers import FAKE_CATALOG, POOL
from planner_helpers import deployment as many


def _trees(tmp_path: Path, head_replicas: int = 3) -> Path:
    write(tmp_path / "base" / "app.yaml", pool(), deployment("web", 2))
    write(tmp_path / "head" / "app.yaml", pool(), deployment("web", head_replicas))
    return tmp_path


def _json(cwd: Path, *extra: str) -> tuple[int, dict[str, object], str]:
    out = karpplan("diff", "base", "head", *extra, "-o", "json", cwd=cwd)
    assert "Traceback" not in out.stderr
    return out.returncode, json.loads(out.stdout), out.stderr


def _limits(doc: dict[str, object]) -> tuple[object, ...]:
    base, head = doc["base"], doc["head"]
    assert isinstance(base, dict) and isinstance(head, dict)
    return doc["timeLimit"], doc["timeLimitAuto"], base["timeLimit"], head["timeLimit"], head["timeLimitAuto"]


def test_auto_by_default_and_stated(tmp_path: Path) -> None:
    code, doc, _ = _json(_trees(tmp_path), "--region", "us-east-1")
    assert code == 0 and _limits(doc) == (10.0, True, 10.0, 10.0, True)
    table = karpplan("diff", "base", "head", "--region", "us-east-1", cwd=tmp_path)
    assert "Planned with the karpenter engine, auto time limit 10s per side." in " ".join(table.stdout.split())


def test_seconds_given_win(tmp_path: Path) -> None:
    code, doc, _ = _json(_trees(tmp_path), "--region", "us-east-1", "--time-limit", "3")
    assert code == 0 and _limits(doc) == (3.0, False, 3.0, 3.0, False)


def test_a_bad_limit_is_a_usage_error(tmp_path: Path) -> None:
    out = karpplan("diff", "base", "head", "--time-limit", "soon", cwd=_trees(tmp_path))
    assert out.returncode == 2 and out.stdout == "" and "--time-limit" in out.stderr


def _fake(tmp_path: Path, head_pods: int) -> Path:
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(textwrap.dedent(FAKE_CATALOG))
    write(tmp_path / "base" / "app.yaml", textwrap.dedent(POOL + many("web", 10, cpu="250m")))
    write(tmp_path / "head" / "app.yaml", textwrap.dedent(POOL + many("web", head_pods, cpu="250m")))
    return catalog


def test_auto_fits_the_larger_side_and_plans_both_alike(tmp_path: Path) -> None:
    catalog = _fake(tmp_path, 6_000)
    code, doc, _ = _json(tmp_path, "--catalog", str(catalog))
    fitted = auto_time_limit(6_000, 1)
    assert fitted > 10 and code == 0
    assert _limits(doc) == (fitted, True, fitted, fitted, True)
    head = doc["head"]
    assert isinstance(head, dict) and head["notSimulated"] == 0 and head["scheduled"] == 6_000


def test_a_side_the_limit_cut_is_said_and_exits_3(tmp_path: Path) -> None:
    catalog = _fake(tmp_path, 1_500)
    code, doc, _ = _json(tmp_path, "--catalog", str(catalog), "--time-limit", "1e-9")
    assert code == EXIT_CUT
    head = doc["head"]
    assert isinstance(head, dict) and head["notSimulated"] > 0
    notes = doc["notes"]
    assert isinstance(notes, list)
    assert any(n.startswith("HEAD's plan was cut by the time limit") and "raise --time-limit" in n for n in notes)
