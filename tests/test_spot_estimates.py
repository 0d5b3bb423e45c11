"""Estimated spot prices (a share of on-demand, `catalog/prices.py spot_offerings`) are always said: an estimate
that chose a type over types with published spot prices is a plan warning naming them and the price list, and
an eksctl node group's spot nodes priced by estimate are `~`-marked in the table, with the Prices line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_eksctl_node_groups import APPS as GROUP_APPS
from test_eksctl_node_groups import CLUSTER
from test_plan_prices import SPOT_POOL
from typer.testing import CliRunner

from karpplan.cli.main import app


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"NO_COLOR": "1", "COLUMNS": "120"})
    return result.exit_code, result.stdout


def plan_json(*args: str) -> dict[str, Any]:
    code, stdout = run("plan", *args, "--engine", "karpenter", "-o", "json")
    assert code == 0, stdout
    document: dict[str, Any] = json.loads(stdout)
    return document


def prices(tmp_path: Path, rows: str) -> str:
    path = tmp_path / "spot.csv"
    path.write_text("region,instance_type,usd_per_hour\n" + rows)
    return str(path)


def spot_pool(tmp_path: Path) -> str:
    path = tmp_path / "pool.yaml"
    path.write_text(SPOT_POOL)
    return str(path)


# ------------------------------------------------------------------------------------------ displacement
def test_an_estimate_that_chose_the_type_over_a_published_price_is_a_warning(tmp_path: Path) -> None:
    """m5.large has a published spot price ($0.05); c5.large only its estimate (0.4 x $0.085 = $0.034), which
    wins: the plan says the estimate chose it, and where to add its real price."""
    listed = prices(tmp_path, "us-east-1,m5.large,0.05\n")
    plan = plan_json(spot_pool(tmp_path), "--spot-prices", listed)
    assert {(n["instanceType"], n["priceEstimated"]) for n in plan["nodes"]} == {("c5.large", True)}
    warning = [w for w in plan["warnings"] if "priced by estimate" in w]
    assert len(warning) == 1
    assert "(c5.large" in warning[0] and f"{listed} gives published spot prices for 1 other type" in warning[0]
    assert f"add their spot prices to {listed}" in warning[0]


def test_published_prices_for_every_launched_type_need_no_warning(tmp_path: Path) -> None:
    listed = prices(tmp_path, "us-east-1,m5.large,0.05\nus-east-1,c5.large,0.06\n")
    plan = plan_json(spot_pool(tmp_path), "--spot-prices", listed)
    assert {(n["instanceType"], n["priceEstimated"]) for n in plan["nodes"]} == {("m5.large", False)}
    assert not [w for w in plan["warnings"] if "priced by estimate" in w]


def test_without_any_published_spot_price_the_summary_says_it_not_a_warning(tmp_path: Path) -> None:
    plan = plan_json(spot_pool(tmp_path))
    assert plan["summary"]["spotPrices"] == "estimated: 0.4 x on-demand"
    assert not [w for w in plan["warnings"] if "priced by estimate" in w]


# ------------------------------------------------------------------------------------------ node groups
def cluster(tmp_path: Path) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text("---\n".join((CLUSTER, GROUP_APPS)))
    return str(path)


def test_a_node_groups_estimated_spot_price_is_marked_and_its_rule_said(tmp_path: Path) -> None:
    path = cluster(tmp_path)
    plan = plan_json(path)
    spot = [n for n in plan["nodes"] if n["capacityType"] == "spot"]
    assert spot and all(not n["new"] and n["priceEstimated"] for n in spot)
    assert all(not n["priceEstimated"] for n in plan["nodes"] if n["capacityType"] == "on-demand")
    assert plan["summary"]["estimatedPrices"] is False  # the plan's own cost (no new node) holds no estimate
    code, table = run("plan", path, "--engine", "karpenter")
    assert code == 0
    rows = [line for line in table.splitlines() if line.startswith("mng-spot-")]
    assert rows and all(" ~$" in row for row in rows)
    assert "~ estimated price: the catalog has no published price for this offering" in table
    assert "Prices       spot estimated as 0.4 x on-demand" in table
    assert "1 spot c5.large node(s) in eu-north-1a, running already: planned as existing nodes pending pods may " \
           "use, ~$" in " ".join(table.split())


def test_a_node_groups_published_spot_price_is_not_marked(tmp_path: Path) -> None:
    listed = prices(tmp_path, "eu-north-1,c5.large,0.031\n")
    plan = plan_json(cluster(tmp_path), "--spot-prices", listed)
    spot = [n for n in plan["nodes"] if n["capacityType"] == "spot"]
    assert spot and {(n["hourlyPrice"], n["priceEstimated"]) for n in spot} == {(0.031, False)}
