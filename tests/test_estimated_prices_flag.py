"""`--allow-estimated-prices` on every command that prices (found by a new user's trial in us-west-2: plan's and
lint's messages told the user to pass it, but `diff`, `consolidate` and `explain` refused the option, and a GPU
pool whose types the region's 2022 price list lacks made `diff` report "gpu changed 0 -> 0, $0.00")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_lint_region_prices import G6E_POOL
from typer.testing import CliRunner

from karpplan.cli.main import app

runner = CliRunner()


def _diff(tmp_path: Path, *flags: str) -> dict:  # type: ignore[type-arg]
    base, head = tmp_path / "base", tmp_path / "head"
    base.mkdir(parents=True)
    head.mkdir(parents=True)
    (base / "all.yaml").write_text(G6E_POOL)
    (head / "all.yaml").write_text(G6E_POOL.replace("replicas: 1", "replicas: 2"))
    result = runner.invoke(app, ["diff", str(base), str(head), "--region", "us-west-2", "-o", "json", *flags])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_diff_prices_a_type_the_regions_list_lacks_only_when_asked(tmp_path: Path) -> None:
    strict = _diff(tmp_path / "strict")
    assert strict["delta"]["hourlyCost"] == 0  # nothing can launch on either side: nothing to compare
    estimated = _diff(tmp_path / "estimated", "--allow-estimated-prices")
    assert estimated["head"]["unschedulable"] == 0
    assert estimated["delta"]["hourlyCost"] > 1.0  # one more g6e.2xlarge (about $2.24/h on demand)


@pytest.mark.parametrize("command", ["consolidate", "explain", "diff", "plan", "catalog"])
def test_every_pricing_command_takes_the_flag(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert "--allow-estimated-prices" in result.stdout
