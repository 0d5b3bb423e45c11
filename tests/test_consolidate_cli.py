"""`karpplan consolidate` as a person runs it: the table at 100 columns (golden file
tests/golden/consolidate-table-100.txt, UPDATE_GOLDEN=1 rewrites it), JSON from stdin, `--node`, and bad
input: a warning with file:line for what cannot be simulated as written, exit 2 only when nothing can be
read."""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_consolidate_semantics import node, nodepool, pod, write
from typer.testing import CliRunner

from karpplan.cli.main import app

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = Path("/work/shared/cases/consolidate")
runner = CliRunner()


def _snapshot(tmp_path: Path) -> Path:
    return write(tmp_path, node("ip-10-0-1-1.ec2.internal"), node("ip-10-0-2-2.ec2.internal", zone="us-east-1b"),
                 node("ip-10-0-3-3.ec2.internal", itype="m5.2xlarge", zone="us-east-1c"),
                 pod("web-1", "ip-10-0-1-1.ec2.internal", cpu="700m"),
                 pod("web-2", "ip-10-0-3-3.ec2.internal", cpu="700m"),
                 pod("shell", "ip-10-0-3-3.ec2.internal", cpu="100m", owner=None, labels={"run": "shell"}),
                 pools=(nodepool(families=("m5", "c5"), budgets=[{"nodes": "100%"}]),))


def invoke(*args: str, stdin: str | None = None, columns: int = 100):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["--color", "never", "consolidate", *args], input=stdin,
                         env={"COLUMNS": str(columns)})


def test_the_table_reads_at_100_columns_and_matches_the_golden_file(tmp_path: Path) -> None:
    result = invoke(str(_snapshot(tmp_path)), "--region", "us-east-1")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines)
    text = result.stdout
    assert "Cost now:" in text and "After Karpenter consolidation:" in text and "After an optimal re-pack:" in text
    path = GOLDEN / "consolidate-table-100.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_json_from_stdin_and_the_bare_pod_is_said_to_be_gone(tmp_path: Path) -> None:
    text = _snapshot(tmp_path).read_text()
    result = invoke("-", "--region", "us-east-1", "-o", "json", "--time-limit", "2", stdin=text)
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["apiVersion"] == "karpplan.io/v1alpha1" and report["kind"] == "ConsolidationReport"
    evicted = [p for a in report["actions"] for p in a["evictedPods"]]
    assert evicted == ["default/shell"]
    assert "bare pod default/shell (no controller) is evicted" in result.stderr
    summary = report["summary"]
    assert summary["optimalHourlyCost"] <= summary["karpenterHourlyCost"] <= summary["currentHourlyCost"]
    names = {n["name"] for n in report["nodes"]}
    for a in report["actions"]:
        assert all(r["name"] in names for r in a["replacements"])


def test_node_explains_each_pod(tmp_path: Path) -> None:
    result = invoke(str(_snapshot(tmp_path)), "--region", "us-east-1", "--node", "ip-10-0-3-3.ec2.internal",
                    "-o", "json")
    # the node goes in the steady state's second action: its pods are shown where that action puts them, and the
    # exit code is the report's (README: 1, Karpenter would act)
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    fates = {p["name"]: p["outcome"] for p in doc["pods"]}
    assert fates["default/web-2"].startswith("would move to ")
    assert fates["default/web-2"].endswith(" in action 2 (multi-node consolidation)")
    assert "a bare pod: evicted, nothing recreates it" in fates["default/shell"]
    assert doc["candidate"] == "yes"
    assert doc["decision"] == doc["steadyState"]


def test_node_not_in_the_snapshot_is_bad_input(tmp_path: Path) -> None:
    result = invoke(str(_snapshot(tmp_path)), "--node", "nope")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--node: node 'nope' is not in the snapshot" in result.stderr


def test_what_cannot_be_simulated_is_a_warning_with_its_line(tmp_path: Path) -> None:
    unlabelled = node("mystery")
    del unlabelled["metadata"]["labels"]["node.kubernetes.io/instance-type"]
    path = write(tmp_path, node("a"), unlabelled, pod("w", "a", cpu="200m"), pod("lost", "gone-node"),
                 {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "nothing"},
                  "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "absent"}}}})
    result = invoke(str(path), "--region", "us-east-1", "-o", "json", "--time-limit", "1")
    assert result.exit_code in (0, 1), result.output
    err = result.stderr
    lines = {line.split(": ", 1)[1] for line in err.splitlines() if line.startswith(f"{path}:")}
    assert any(line.startswith("node mystery has no node.kubernetes.io/instance-type label") for line in lines)
    assert any(line.startswith("pod default/lost is bound to node gone-node, which is not in the snapshot")
               for line in lines)
    assert "PodDisruptionBudget default/nothing selects no pod in the snapshot" in lines
    report = json.loads(result.stdout)
    assert {n["name"] for n in report["nodes"]} == {"a", "mystery"}


def test_unreadable_input_exits_2_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Node\nmetadata: {name: [unclosed\n")
    result = invoke(str(bad))
    assert result.exit_code == 2
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert f"{bad}:" in result.stderr


def test_node_says_which_pod_blocks_it_and_where_the_pods_would_go_were_it_drained(tmp_path: Path) -> None:
    guarded = pod("etl", "ip-10-0-1-1.ec2.internal", cpu="300m", owner="Job/etl", labels={"app": "etl"},
                  annotations={"karpenter.sh/do-not-disrupt": "true"})
    path = write(tmp_path, node("ip-10-0-1-1.ec2.internal"), node("ip-10-0-2-2.ec2.internal", zone="us-east-1b"),
                 guarded, pod("w", "ip-10-0-2-2.ec2.internal", cpu="300m"))
    result = invoke(str(path), "--region", "us-east-1", "--node", "ip-10-0-1-1.ec2.internal", "-o", "json")
    # the steady state deletes ip-10-0-2-2 in action 1 (w moves here): the node is judged in the cluster that
    # leaves, so its pods are never said to go to the deleted node; exit 1, Karpenter acts (on the other node)
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["candidate"] == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/etl)'
    fates = {p["name"]: p for p in doc["pods"]}
    assert fates["default/etl"]["workload"] == "Job/etl"
    assert fates["default/etl"]["outcome"] == (
        'blocks the node: "karpenter.sh/do-not-disrupt" annotation; were the node drained, it would need a new '
        "NodeClaim of NodePool default (cheapest m5.large $0.0960/h, 9 type(s) fit)")
    assert fates["default/w"]["outcome"].startswith("moved here in action 1; ")
    assert "ip-10-0-2-2" not in json.dumps(doc["pods"])


def test_the_table_keeps_the_blocking_pdbs_name_in_brackets() -> None:
    """Karpenter's reason is "Pdb prevents pod evictions (PodDisruptionBudget=[data/zookeeper])": the table once
    read the brackets as markup and printed "(PodDisruptionBudget=)"."""
    case = Path(__file__).resolve().parent.parent.parent / "shared" / "cases" / "consolidate" / "08-pdb-blocks-eviction"
    if not case.exists():
        import pytest
        pytest.skip("../shared is not beside the project")
    result = invoke(str(case / "manifests.yaml"), columns=200)
    assert "PodDisruptionBudget=[data/zookeeper]" in result.stdout, result.stdout


def _spot_snapshot(tmp_path: Path) -> Path:
    return write(tmp_path, node("ip-10-0-1-1.ec2.internal", capacity="spot"),
                 node("ip-10-0-2-2.ec2.internal", zone="us-east-1b"),
                 pod("web-1", "ip-10-0-1-1.ec2.internal", cpu="700m"),
                 pod("web-2", "ip-10-0-2-2.ec2.internal", cpu="700m"),
                 pools=(nodepool(capacity=("spot", "on-demand"), budgets=[{"nodes": "0"}]),))


def _price_cell(text: str, name: str) -> str:
    row = next(line for line in text.splitlines() if name in line)
    return [cell.strip() for cell in row.split("│") if cell.strip()][2]


def test_estimated_spot_prices_are_marked_and_their_source_said_once(tmp_path: Path) -> None:
    """A new user's trial: 0.4 x on-demand spot prices were shown as real (no `~`, no note)."""
    result = invoke(str(_spot_snapshot(tmp_path)), "--region", "us-east-1", "--time-limit", "2")
    text = result.stdout
    assert _price_cell(text, "ip-10-0-1-1") == "~0.0384"  # m5.large spot: 0.4 x $0.096
    assert _price_cell(text, "ip-10-0-2-2") == "0.0960"  # on-demand: a published price
    assert "~ estimated price" in text
    assert text.count("spot estimated as 0.4 x on-demand (real ones: --spot-prices FILE)") == 1
    report = json.loads(invoke(str(_spot_snapshot(tmp_path)), "--region", "us-east-1", "--time-limit", "2",
                               "-o", "json").stdout)
    assert report["summary"]["spotPrices"] == "estimated: 0.4 x on-demand"
    assert {n["name"] for n in report["nodes"] if n.get("priceEstimated")} == {"ip-10-0-1-1.ec2.internal"}


def test_spot_prices_file_prices_consolidate_as_it_prices_plan(tmp_path: Path) -> None:
    history = {"SpotPriceHistory": [{"AvailabilityZone": "us-east-1a", "InstanceType": "m5.large",
                                     "ProductDescription": "Linux/UNIX", "SpotPrice": "0.041000",
                                     "Timestamp": "2026-11-27T22:10:41+00:00"}]}
    prices = tmp_path / "spot.json"
    prices.write_text(json.dumps(history))
    result = invoke(str(_spot_snapshot(tmp_path)), "--region", "us-east-1", "--time-limit", "2",
                    "--spot-prices", str(prices))
    text = result.stdout
    assert _price_cell(text, "ip-10-0-1-1") == "0.0410"
    assert "~ estimated price" not in text
    assert f"spot from {prices}" in " ".join(text.split())
