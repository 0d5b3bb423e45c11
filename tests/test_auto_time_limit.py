"""`--time-limit auto` (the default) fits the limit to the input: 10 s for the plans most users run, more
for large inputs, at most 300 s, stated in the summary; an explicit `--time-limit N` wins (issue 29: the
fixed 10 s default cut the Karpenter simulation of 50,000 pods after 16,167)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.engines.effort import auto_time_limit
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, fitted_time_limit

from conftest import FIXTURES
from planner_helpers import FAKE_CATALOG, POOL, deployment

QUICKSTART = str(FIXTURES / "quickstart")


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--color", "never", *args])
    return result.exit_code, result.stdout, result.stderr


def _summary(*args: str) -> dict[str, object]:
    code, out, _ = _invoke("plan", *args, "-o", "json")
    assert code in (0, 1)
    summary: dict[str, object] = json.loads(out)["summary"]
    return summary


def test_small_plans_keep_ten_seconds_and_large_ones_get_more() -> None:
    assert auto_time_limit(13, 3) == 10.0  # the quickstart
    assert auto_time_limit(1_000, 215) == 10.0  # a realistic thousand pods
    assert 30 <= auto_time_limit(4_000, 2_000) <= 60  # many small deployments: the models grow with groups
    assert 30 <= auto_time_limit(20_000, 944) <= 60
    assert auto_time_limit(50_000, 2_000) > auto_time_limit(20_000, 944)
    assert auto_time_limit(10_000_000, 100_000) == 300.0  # capped
    sizes = [(pods, pods // 5) for pods in range(0, 200_000, 2_500)]
    limits = [auto_time_limit(p, g) for p, g in sizes]
    assert limits == sorted(limits) and all(limit == int(limit) for limit in limits)


def test_default_is_auto_and_stated_in_the_summary() -> None:
    summary = _summary(QUICKSTART, "--engine", "karpenter")
    assert (summary["timeLimit"], summary["timeLimitAuto"]) == (10.0, True)


def test_an_explicit_limit_wins() -> None:
    summary = _summary(QUICKSTART, "--engine", "karpenter", "--time-limit", "3")
    assert (summary["timeLimit"], summary["timeLimitAuto"]) == (3.0, False)
    summary = _summary(QUICKSTART, "--engine", "karpenter", "--time-limit", "auto")
    assert (summary["timeLimit"], summary["timeLimitAuto"]) == (10.0, True)


def test_table_says_the_limit_was_chosen() -> None:
    code, out, _ = _invoke("plan", QUICKSTART, "--engine", "karpenter")
    assert code == 0 and "auto time limit 10s" in out
    code, out, _ = _invoke("plan", QUICKSTART, "--engine", "karpenter", "--time-limit", "4")
    assert code == 0 and "time limit 4s" in out and "auto time limit" not in out


def test_a_large_input_gets_a_longer_limit(tmp_path: Path) -> None:
    path = tmp_path / "manifests.yaml"
    path.write_text(textwrap.dedent(POOL + deployment("web", 6_000, cpu="250m")))
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(textwrap.dedent(FAKE_CATALOG))
    inventory = load_inventory([str(path)])
    fitted = fitted_time_limit(PlanOptions(time_limit_auto=True), inventory)
    assert fitted.time_limit == auto_time_limit(6_000, 1) > 10
    assert fitted_time_limit(PlanOptions(time_limit=2.0), inventory).time_limit == 2.0
    summary = _summary(str(path), "--catalog", str(catalog), "--engine", "karpenter")
    assert (summary["timeLimit"], summary["timeLimitAuto"]) == (fitted.time_limit, True)
    assert summary["notSimulated"] == 0 and summary["scheduled"] == 6_000


def test_a_bad_limit_is_a_usage_error() -> None:
    for bad in ("soon", "-1", "nan"):
        code, out, err = _invoke("plan", QUICKSTART, "--time-limit", bad)
        assert code == 2 and out == "" and "--time-limit" in err
