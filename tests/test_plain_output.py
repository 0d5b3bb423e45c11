"""Plain output (issue 24, item 9): tables keep words whole at 80 columns, counts agree with their nouns,
warnings speak of the plan rather than the solver, help shows whole option names, and usage errors carry no
validator prefixes."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_render_plan import sample_plan, table_text

from karpplan.cli.usage import plain
from karpplan.render.names import node_name_lines, short_node_name

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "karpplan.cli.main", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1", "COLUMNS": str(columns)})


def test_node_names_are_never_broken_at_80_columns() -> None:
    plan = sample_plan()
    text = table_text(plan, width=80)
    for node in plan.nodes:
        if node.fargate is not None:
            continue

        def shown(lines: list[str]) -> bool:  # each of the name's lines whole at the start of a row
            return all(re.search(rf"^{re.escape(line)}\s", text, re.M) for line in lines)

        # Whatever width the table gave the column, the name is one of the forms `node_name_lines` makes whole.
        assert any(shown(node_name_lines(node.name, node.zone, width)) for width in range(16, 41)), node.name
    assert "-o json has them whole" in text
    # At 120 columns the names fit, and are shown as they are.
    wide = table_text(plan, width=120)
    assert all(n.name in wide for n in plan.nodes if n.fargate is None)
    assert "-o json has them whole" not in wide


def test_short_node_names_keep_what_tells_nodes_apart() -> None:
    assert short_node_name("default-m5-large-us-east-1a-1", "us-east-1a", 22) == "default-m5-large-1"
    assert short_node_name("ip-10-0-1-5.us-west-2.compute.internal", "us-west-2a", 22) == "ip-10-0-1-5"
    assert short_node_name("ip-10-0-1-5.ec2.internal", None, 22) == "ip-10-0-1-5"
    long = short_node_name("general-purpose-pool-m7i-flex-2xlarge-us-east-1a-12", "us-east-1a", 22)
    assert len(long) == 22 and long.startswith("general-purpo") and long.endswith("large-12")
    assert "…" in long
    assert short_node_name("short", "us-east-1a", 22) == "short"


def test_counts_agree_with_their_nouns() -> None:
    plan = sample_plan()
    one = replace(plan, summary=replace(plan.summary, karpenter_new_nodes=1))
    text = table_text(one, width=120)
    assert "on 1 new node in" in text and "1 new nodes" not in text
    assert "4 new nodes" in table_text(plan, width=120)


JARGON = ("CP-SAT", "LP", "decoder", "fluid", "re-packed", "neighbourhood", "placement variables", "modelled")


def test_the_optimisers_warnings_say_what_they_mean_for_the_user() -> None:
    """Every note the optimal engine adds to a plan's warnings, read from its source: no solver jargon."""
    tree = ast.parse((ROOT / "karpplan" / "engines" / "optimiser.py").read_text())
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "append" \
                and getattr(node.func.value, "id", "") == "notes":
            texts.append(" ".join(c.value for c in ast.walk(node) if isinstance(c, ast.Constant)
                                  and isinstance(c.value, str)))
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "").endswith("_WARNING") for t in node.targets):
            texts.append(" ".join(c.value for c in ast.walk(node) if isinstance(c, ast.Constant)
                                  and isinstance(c.value, str)))
    assert len(texts) >= 6
    for text in texts:
        for word in JARGON:
            assert word not in text, f"{word!r} in warning: {text}"


@pytest.mark.parametrize("command", ["plan", "lint", "inventory", "catalog"])
def test_help_shows_whole_option_names_at_80_columns(command: str) -> None:
    result = _cli(command, "--help")
    assert result.returncode == 0
    assert "…" not in result.stdout
    if command == "plan":
        for option in ("--allow-estimated-prices", "--fargate-profile", "--fargate-prices", "--spot-prices",
                       "--default-requests", "--max-file-size", "--time-limit"):
            assert re.search(rf"^\s+(?:-\w, )?{option}\b", result.stdout, re.M), option


@pytest.mark.parametrize(("args", "expected"), [
    (("--engine", "foo"), "'foo' is not one of 'optimal', 'karpenter'"),
    (("--time-limit", "abc"), "'--time-limit': expects a number"),
    (("--workers", "-1"), "'--workers': must be 0 or more"),
    (("-o", "xml"), "'xml' is not one of"),
])
def test_usage_errors_carry_no_validator_prefixes(args: tuple[str, ...], expected: str) -> None:
    result = _cli("plan", str(ROOT / "fixtures" / "quickstart"), *args)
    assert result.returncode == 2 and result.stdout == ""
    assert expected in result.stderr
    assert "Value error" not in result.stderr and "Input should be" not in result.stderr


def test_plain_rewrites_pydantic_wording() -> None:
    assert plain("Invalid value for '--x': Value error, 'a' is not one of 'b'.") == \
        "Invalid value for '--x': 'a' is not one of 'b'."
    assert plain("Input should be less than or equal to 5") == "must be 5 or less"
    assert plain("Input should be a valid integer, unable to parse string as an integer") == "expects a whole number"


def test_long_unschedulable_pod_names_are_whole_or_shortened_never_broken() -> None:
    plan = sample_plan()
    long_pod = "monitoring/prometheus-kube-prometheus-stack-prometheus-0"
    medium_pod = "observability/grafana-agent-0"
    failed = (replace(plan.unschedulable[0], pod=long_pod, workload="StatefulSet/prometheus"),
              replace(plan.unschedulable[0], pod=medium_pod, workload="StatefulSet/grafana-agent"))
    text = table_text(replace(plan, unschedulable=failed), width=80)
    assert re.search(rf"^{re.escape(medium_pod)}\s", text, re.M)  # 29 characters: whole on one line
    assert long_pod not in text
    shown = re.search(r"^(monitoring/\S+)\s", text, re.M)
    assert shown is not None and "…" in shown.group(1) and shown.group(1).endswith("etheus-0")


def test_inventory_keeps_label_keys_whole_at_80_columns() -> None:
    result = _cli("inventory", str(ROOT / "fixtures" / "quickstart"))
    assert result.returncode == 0
    assert "topology.kubernetes.io/zone" in result.stdout
    assert "kubernetes.io/hostname" in result.stdout
    assert all(len(line) <= 80 for line in result.stdout.splitlines())
