"""Plan renderers: the table a person reads and the JSON/YAML documents scripts read.

Golden files live in tests/golden/; regenerate them with `UPDATE_GOLDEN=1 pytest tests/test_render_plan.py`
after checking the new output by eye.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from karpplan.model.resources import Resources
from karpplan.plan import FargateInfo, Plan, PlanNode, PlanPod, Summary, UnschedulablePod
from karpplan.render.documents import render_document, render_json, render_yaml
from karpplan.render.plan_table import (
    ASCII_BAR,
    UNICODE_BAR,
    abbreviate_counts,
    render_table,
    utilisation_bar,
)

GOLDEN = Path(__file__).resolve().parent / "golden"
GIB = 2**30
MIB = 2**20


def res(cpu_millis: int, memory: int, pods: int = 0) -> Resources:
    return Resources({"cpu": cpu_millis, "memory": memory, "pods": pods})


def pod(name: str, workload: str, node: str | None, *, bound: bool = False, gated: bool = False,
        namespace: str = "default", cpu: int = 500, memory: int = 512 * MIB) -> PlanPod:
    return PlanPod(name, namespace, workload, node, bound, gated, {"app": workload.split("/")[-1]},
                   res(cpu, memory, 1), origin="apps.yaml:1")


def node_labels(name: str, zone: str) -> dict[str, str]:
    return {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}


def sample_plan() -> Plan:
    """Two zones, an existing node the plan adds to, a spot node with an estimated price, a Fargate pod,
    an unschedulable workload and a gated pod."""
    existing = "ip-10-0-1-5.ec2.internal"
    on_demand = "default-m5-large-us-east-1a-1"
    spot = "batch-c5-xlarge-us-east-1b-1"
    fargate = "fargate-us-east-1-jobs-report-0"
    pods = (
        pod("web-0", "Deployment/web", existing, bound=True),
        pod("web-1", "Deployment/web", existing, bound=True),
        pod("api-0", "Deployment/api", existing, cpu=250),
        pod("web-2", "Deployment/web", on_demand),
        pod("web-3", "Deployment/web", on_demand),
        pod("web-4", "Deployment/web", on_demand),
        pod("api-1", "Deployment/api", on_demand, cpu=250),
        pod("cruncher-0", "StatefulSet/cruncher", spot, cpu=3000, memory=6 * GIB),
        pod("report-0", "Job/report", fargate, namespace="jobs", cpu=300, memory=700 * MIB),
        pod("huge-0", "Deployment/huge", None, cpu=64000, memory=512 * GIB),
        pod("huge-1", "Deployment/huge", None, cpu=64000, memory=512 * GIB),
        pod("later-0", "Pod/later", None, gated=True),
    )
    nodes = (
        PlanNode(on_demand, True, "default", "m5.large", "us-east-1a", "on-demand", 0.096, False,
                 node_labels(on_demand, "us-east-1a"), (), res(1930, 7 * GIB, 29), res(1850, 2 * GIB, 4),
                 res(100, 128 * MIB), ("default/web-2", "default/web-3", "default/web-4", "default/api-1")),
        PlanNode(existing, False, None, "m5.xlarge", "us-east-1a", "on-demand", 0.0, False,
                 node_labels(existing, "us-east-1a"), ({"key": "team", "value": "a", "effect": "NoSchedule"},),
                 res(3920, 14 * GIB, 58), res(1350, 1664 * MIB, 3), res(100, 128 * MIB),
                 ("default/web-0", "default/web-1", "default/api-0")),
        PlanNode(spot, True, "batch", "c5.xlarge", "us-east-1b", "spot", 0.0681, True,
                 node_labels(spot, "us-east-1b"), (), res(3920, 6 * GIB + 600 * MIB, 58), res(3100, 6 * GIB, 1),
                 res(100, 0), ("default/cruncher-0",)),
        PlanNode(fargate, True, None, None, "us-east-1a", "fargate", 0.03469, False,
                 node_labels(fargate, "us-east-1a"),
                 ({"key": "eks.amazonaws.com/compute-type", "value": "fargate", "effect": "NoSchedule"},),
                 res(500, GIB), res(300, 700 * MIB), Resources(), ("jobs/report-0",),
                 FargateInfo("0.5", "1Gi", "0.5vCPU 1GB", "jobs", waste_cpu="200m", waste_memory="68Mi",
                             hint="requests could grow by 200m CPU and 68Mi memory at no extra cost "
                                  "(billed for 0.5vCPU 1GB)")),
    )
    huge_reasons = (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
        'nodepool "default": no instance type satisfied resources {"cpu":"64","memory":"512Gi","pods":"1"} '
        "and requirements karpenter.sh/nodepool In [default]",
        'nodepool "batch": incompatible with nodepool "batch", daemonset overhead={"cpu":"100m"}, '
        "did not tolerate taint batch=true:NoSchedule",
        "defined at apps.yaml:40",
    )
    unschedulable = (
        UnschedulablePod("default/huge-0", "Deployment/huge", huge_reasons),
        UnschedulablePod("default/huge-1", "Deployment/huge", huge_reasons),
    )
    summary = Summary(
        pods=10, scheduled=8, unschedulable=2, gated=1, bound=2, new_nodes=3, hourly_cost=0.19879,
        lower_bound=0.18, engine="optimal", status="feasible", solve_seconds=1.234, region="us-east-1",
        catalog="aws-embedded", karpenter_cost=0.29479, karpenter_new_nodes=4, karpenter_scheduled=8,
        karpenter_batches=1,
        estimated_prices=True, seed=7, time_limit=10.0, bound_source="configuration-lp",
        spot_prices="estimated: 0.4 x on-demand",
        phases=(("parse", 0.0123), ("catalog", 0.2), ("build", 0.3), ("simulate", 0.04), ("assemble", 0.0014)),
    )
    warnings = ("jobs/report-0: a container limit exceeds its request; Fargate sizes from requests",)
    return Plan(summary, nodes, pods, unschedulable, warnings)


class AsciiFile(io.StringIO):
    """A stream that can only encode ASCII, like a terminal with LANG=C."""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "ascii"


def table_text(plan: Plan, *, width: int = 120, file: io.StringIO | None = None) -> str:
    """The table as plain text (no colour), trailing spaces stripped so golden files survive editors."""
    console = Console(record=True, width=width, color_system=None, force_terminal=False,
                      file=file if file is not None else io.StringIO())
    render_table(plan, console)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/golden/<name>; UPDATE_GOLDEN=1 rewrites the file instead."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from the golden file (UPDATE_GOLDEN=1 to accept):\n{actual}"


def with_summary(plan: Plan, **changes: Any) -> Plan:
    return replace(plan, summary=replace(plan.summary, **changes))


# ------------------------------------------------------------------------------------------ golden files
def test_table_matches_golden_at_120_columns() -> None:
    check_golden("plan-table.txt", table_text(sample_plan()))


def test_table_matches_golden_at_80_columns() -> None:
    """Narrow terminals stack type/capacity and cpu/memory so nothing is cut off."""
    text = table_text(sample_plan(), width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    check_golden("plan-table-80.txt", text)


def test_json_matches_golden() -> None:
    check_golden("plan.json", render_json(sample_plan()))


def test_yaml_matches_golden() -> None:
    check_golden("plan.yaml", render_yaml(sample_plan()))


# ------------------------------------------------------------------------------------------ documents
def test_json_round_trips_to_the_contract_fields() -> None:
    doc = json.loads(render_json(sample_plan()))
    assert doc["apiVersion"] == "karpplan.io/v1alpha1"
    assert doc["kind"] == "Plan"
    assert list(doc)[:2] == ["apiVersion", "kind"]  # contract order, not alphabetical
    summary = doc["summary"]
    assert summary["hourlyCost"] == pytest.approx(0.19879)
    assert summary["lowerBound"] == pytest.approx(0.18)
    assert summary["gap"] == pytest.approx((0.19879 - 0.18) / 0.19879, abs=1e-6)
    assert (summary["pods"], summary["scheduled"], summary["unschedulable"], summary["gated"]) == (10, 8, 2, 1)
    assert summary["engine"] == "optimal" and summary["status"] == "feasible"
    assert summary["karpenter"]["hourlyCost"] == pytest.approx(0.29479)
    by_name = {n["name"]: n for n in doc["nodes"]}
    fargate = by_name["fargate-us-east-1-jobs-report-0"]
    assert fargate["capacityType"] == "fargate"
    assert fargate["fargate"] == {"cpu": "0.5", "memory": "1Gi", "capacityProvisioned": "0.5vCPU 1GB",
                                  "profile": "jobs", "roundingWaste": {"cpu": "200m", "memory": "68Mi"},
                                  "hint": "requests could grow by 200m CPU and 68Mi memory at no extra cost "
                                          "(billed for 0.5vCPU 1GB)"}
    assert by_name["ip-10-0-1-5.ec2.internal"]["new"] is False
    assert by_name["default-m5-large-us-east-1a-1"]["fargate"] is None
    assert by_name["default-m5-large-us-east-1a-1"]["allocatable"] == {"cpu": "1930m", "memory": "7Gi", "pods": "29"}
    assert by_name["batch-c5-xlarge-us-east-1b-1"]["priceEstimated"] is True
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["web-0"]["bound"] is True and pods["later-0"]["gated"] is True and pods["later-0"]["node"] is None
    assert pods["api-1"]["requests"] == {"cpu": "250m", "memory": "512Mi"}  # no `pods` entry in requests
    assert [u["pod"] for u in doc["unschedulable"]] == ["default/huge-0", "default/huge-1"]
    assert doc["unschedulable"][0]["reasons"][-1] == "defined at apps.yaml:40"
    assert doc["warnings"] == list(sample_plan().warnings)


def test_yaml_is_the_same_document_as_json() -> None:
    plan = sample_plan()
    assert yaml.safe_load(render_yaml(plan)) == json.loads(render_json(plan))


def test_yaml_never_writes_aliases_for_shared_objects() -> None:
    shared = {"key": "team", "value": "a", "effect": "NoSchedule"}
    text = render_document({"a": shared, "b": shared, "c": [shared, shared]}, "yaml")
    assert "&" not in text and "*" not in text
    assert yaml.safe_load(text) == {"a": shared, "b": shared, "c": [shared, shared]}


def test_documents_accept_read_only_mappings_and_tuples() -> None:
    from types import MappingProxyType

    doc = {"labels": MappingProxyType({"a": "1"}), "taints": ({"k": "v"},), "res": Resources({"cpu": 5})}
    expected = {"labels": {"a": "1"}, "taints": [{"k": "v"}], "res": {"cpu": 5}}
    assert json.loads(render_document(doc, "json")) == expected
    assert yaml.safe_load(render_document(doc, "yaml")) == expected


def test_json_keeps_long_reasons_and_unicode_readable() -> None:
    text = render_document({"reason": "zone \u00fcber " + "x" * 300}, "yaml")
    assert text.count("\n") == 1  # one line: greppable
    assert "\u00fcber" in text


def test_unknown_document_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown document format 'xml'"):
        render_document({"a": 1}, "xml")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=5))
@settings(max_examples=60, deadline=None)
def test_json_and_yaml_read_back_as_the_same_tree(document: dict[str, object]) -> None:
    """Strings like `yes`, `null` or `1.0` must stay strings in YAML; key order is kept in both."""
    from_json = json.loads(render_document(document, "json"))
    from_yaml = yaml.safe_load(render_document(document, "yaml"))
    assert from_json == document
    assert from_yaml == document
    assert list(from_yaml) == list(document)


# ------------------------------------------------------------------------------------------ table behaviour
def test_table_groups_nodes_by_zone_with_existing_first() -> None:
    text = table_text(sample_plan())
    zone_a, zone_b = text.index("us-east-1a (2 nodes, 1 new)"), text.index("us-east-1b (1 node)")
    existing, new_a = text.index("ip-10-0-1-5.ec2.internal"), text.index("default-m5-large-us-east-1a-1")
    assert zone_a < existing < new_a < zone_b < text.index("batch-c5-xlarge-us-east-1b-1")


def test_node_rows_show_marker_price_bars_and_workloads() -> None:
    lines = table_text(sample_plan()).splitlines()
    row = next(line for line in lines if line.startswith("default-m5-large-us-east-1a-1"))
    assert "NEW" in row and "default" in row and "m5.large" in row and "on-demand" in row and "$0.0960" in row
    assert "\u2588" * 8 + "  96%" in row  # 1850m of 1930m
    assert "29%" in row  # 2Gi of 7Gi
    assert lines[lines.index(row) + 1].strip() == "web x3, api"
    existing = next(line for line in lines if line.startswith("ip-10-0-1-5.ec2.internal"))
    assert "existing" in existing and "$" not in existing  # already paid for: no price
    # the api pod is this plan's addition to the existing node
    assert lines[lines.index(existing) + 1].strip() == "web x2, +api"


def test_estimated_prices_are_marked_and_explained() -> None:
    text = table_text(sample_plan())
    assert "~$0.0681" in text
    assert "~ estimated price" in text
    plain = replace(sample_plan(), nodes=tuple(replace(n, price_estimated=False) for n in sample_plan().nodes))
    plain = with_summary(plain, estimated_prices=False)
    assert "~" not in table_text(plain)


def test_fargate_pods_show_size_waste_and_hint() -> None:
    text = table_text(sample_plan())
    row = next(line for line in text.splitlines() if line.startswith("jobs/report-0 "))
    assert "0.5vCPU 1GB" in row and "300m CPU, 700Mi" in row and "+200m CPU, +68Mi" in row and "$0.0347" in row
    assert "jobs/report-0: requests could grow by" in text
    # Fargate pods are not listed as EC2 nodes of their zone
    assert "us-east-1a (2 nodes, 1 new)" in text


def test_a_fargate_hint_shared_by_a_workloads_pods_is_said_once_with_their_count() -> None:
    """Every replica of a workload is sized alike, so each printed the same hint line: 10 replicas, 10 lines."""
    plan = sample_plan()
    report = next(n for n in plan.nodes if n.fargate is not None)
    more = tuple(replace(report, name=f"fargate-report-{i}", pods=(f"jobs/report-{i}",)) for i in (1, 2))
    other = replace(report, name="fargate-etl-0", pods=("jobs/etl-0",),
                    fargate=replace(report.fargate, hint="requests could grow by 1Gi memory at no extra cost"))
    pods = (*plan.pods, *(pod(f"report-{i}", "Job/report", f"fargate-report-{i}", namespace="jobs") for i in (1, 2)),
            pod("etl-0", "Job/etl", "fargate-etl-0", namespace="jobs"))
    text = table_text(replace(plan, nodes=(*plan.nodes, *more, other), pods=pods))
    hints = text.split("Hints", 1)[1].split("\n\n", 1)[0]
    assert hints.count("requests could grow by 200m CPU") == 1
    lines = [" ".join(line.split()) for line in hints.strip().splitlines()]
    assert lines[0].startswith("jobs/report (3 pods): requests could grow by 200m CPU and 68Mi memory")
    assert lines[1] == "jobs/etl-0: requests could grow by 1Gi memory at no extra cost"  # one pod: named as before
    assert "jobs/report-1" not in hints


def test_fargate_pod_without_waste_says_none_and_has_no_hint() -> None:
    plan = sample_plan()
    nodes = tuple(replace(n, fargate=replace(n.fargate, waste_cpu="0", waste_memory="0", hint=""))
                  if n.fargate else n for n in plan.nodes)
    text = table_text(replace(plan, nodes=nodes))
    row = next(line for line in text.splitlines() if line.startswith("jobs/report-0 "))
    assert "none" in row
    assert "Hints" not in text


def test_unschedulable_pods_with_the_same_reasons_share_one_row_one_reason_per_line() -> None:
    text = table_text(sample_plan())
    section = text[text.index("Unschedulable pods (2)"):text.index("Warnings")]
    assert "default/huge-0, default/huge-1" in section and "2 pods" in section
    assert section.count("0/1 nodes are available") == 1
    bullets = [line.split("- ", 1)[1] for line in section.splitlines() if " - " in line or line.startswith("- ")]
    assert len(bullets) == 4
    assert bullets[-1] == "defined at apps.yaml:40"


def test_many_unschedulable_pods_are_abbreviated() -> None:
    reasons = ("no nodepools found: nothing can be launched",)
    items = tuple(UnschedulablePod(f"default/x-{i}", "Deployment/x", reasons) for i in range(9))
    plan = with_summary(replace(sample_plan(), unschedulable=items), unschedulable=9)
    text = table_text(plan)
    section = text[text.index("Unschedulable pods (9)"):text.index("Warnings")]
    cell = " ".join(line[:30].strip() for line in section.splitlines()[3:])  # the Pods column, unwrapped
    assert "default/x-0, default/x-1, default/x-2 and 6 more Deployment/x 9 pods" in cell
    assert "default/x-8" not in text
    assert section.count("no nodepools found") == 1


def test_many_workloads_on_a_node_are_summarised() -> None:
    plan = sample_plan()
    keys = tuple(f"default/w{i}-0" for i in range(6)) + ("default/w0-1",)
    pods = plan.pods + tuple(pod(k.split("/")[1], f"Deployment/w{k[-3]}", "n") for k in keys)
    node = replace(plan.nodes[0], pods=keys)
    text = table_text(replace(plan, nodes=(node,), pods=pods))
    assert "w0 x2, w1, w2, w3, +2 more" in text


def test_warnings_are_listed() -> None:
    text = table_text(sample_plan())
    assert "Warnings (1)" in text
    assert "! jobs/report-0: a container limit exceeds its request" in text
    assert "Warnings" not in table_text(replace(sample_plan(), warnings=()))


def test_summary_shows_cost_pods_bound_gap_solver_and_karpenter_saving() -> None:
    text = table_text(sample_plan())
    assert "$0.1988/h  ($145.12/month)" in text
    assert "3 (2 EC2, 1 Fargate" in text
    assert "10 pending: 8 scheduled, 2 unschedulable; 1 gated (not scheduled: later), 2 already bound" in text
    assert "$0.1800/h, gap 9.5%" in text
    assert "optimal engine, status feasible, 1.23s (time limit 10s, seed 7)" in text
    assert "$0.2948/h, 8 of 10 pods on 4 new nodes in 1 provisioning batch" in text
    assert "optimal saves $0.0960/h (32.6%) vs Karpenter's greedy plan" in text


@pytest.mark.parametrize(("source", "words"), [
    ("cp-sat", "proven by CP-SAT"), ("fluid-lp", "from the LP relaxation"),
    ("configuration-lp", "from the configuration LP"), ("zone-lp", "from the zone-by-zone configuration LP")])
def test_the_bound_says_where_it_comes_from_in_words(source: str, words: str) -> None:
    text = table_text(with_summary(sample_plan(), bound_source=source))
    line = next(line for line in text.splitlines() if "Lower bound" in line)
    assert f"$0.1800/h, gap 9.5% ({words})" in line and source not in line


def test_summary_without_bound_or_difference() -> None:
    plan = with_summary(sample_plan(), lower_bound=None, karpenter_cost=0.19879)
    text = table_text(plan)
    assert "none proven" in text
    assert "same cost as this plan" in text and "saves" not in text


def test_summary_when_karpenter_is_cheaper_because_it_schedules_less() -> None:
    plan = with_summary(sample_plan(), karpenter_cost=0.1, karpenter_scheduled=6)
    text = table_text(plan)
    assert "not like for like: optimal schedules 2 pods more than Karpenter, so no saving is quoted" in text
    assert "(98.8%)" not in text


def test_karpenter_engine_is_not_compared_with_itself() -> None:
    plan = with_summary(sample_plan(), engine="karpenter", status="heuristic", karpenter_cost=0.19879,
                        lower_bound=None, time_limit=None)
    text = table_text(plan)
    assert "Karpenter " not in text.split("Plan summary")[1]
    assert "karpenter engine, status heuristic" in text and "time limit" not in text


def test_empty_plan_still_has_a_summary() -> None:
    summary = Summary(pods=0, scheduled=0, unschedulable=0, gated=0, bound=0, new_nodes=0, hourly_cost=0.0,
                      lower_bound=0.0, engine="optimal", status="optimal", solve_seconds=0.01, region="us-east-1",
                      catalog="aws-embedded")
    text = table_text(Plan(summary, (), (), ()))
    assert "No nodes" in text
    assert "$0.0000/h" in text and "gap 0.0%" in text
    assert "Unschedulable" not in text and "Fargate" not in text


def test_names_are_printed_literally_not_as_markup() -> None:
    plan = sample_plan()
    node = replace(plan.nodes[0], name="[bold]odd[/bold]")
    items = (UnschedulablePod("default/[red]x", "Deployment/[red]x", ("[link]why",)),)
    warnings = ("m.yaml:27: Deployment/api: preferred pod anti-affinity (selector app In [api]) is not honoured",)
    text = table_text(replace(plan, nodes=(node,), unschedulable=items, warnings=warnings), width=200)
    assert "[bold]odd[/bold]" in text and "default/[red]x" in text and "[link]why" in text
    assert "(selector app In [api]) is not honoured" in text


def test_ascii_console_gets_ascii_bars_and_borders() -> None:
    text = table_text(sample_plan(), file=AsciiFile())
    assert text.isascii()
    row = next(line for line in text.splitlines() if line.startswith("default-m5-large-us-east-1a-1"))
    assert "########  96%" in row and "##......  29%" in row


def test_colour_only_when_the_console_has_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    def render(**options: Any) -> str:
        out = io.StringIO()
        render_table(sample_plan(), Console(file=out, width=120, **options))
        return out.getvalue()

    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = render(force_terminal=True, color_system="standard")
    assert "\x1b[32m" in coloured or "\x1b[1;32m" in coloured  # green NEW / scheduled
    assert "\x1b[" not in render(force_terminal=False, color_system=None)
    monkeypatch.setenv("NO_COLOR", "1")
    no_color = render(force_terminal=True, color_system="standard")
    assert not any(f"\x1b[{code}m" in no_color or f";{code}m" in no_color for code in range(31, 37))


# ------------------------------------------------------------------------------------------ helpers
def test_utilisation_bar_proportions() -> None:
    assert utilisation_bar(0, 1000, UNICODE_BAR).plain == "\u2591" * 8 + "   0%"
    assert utilisation_bar(500, 1000, ASCII_BAR).plain == "####....  50%"
    assert utilisation_bar(1, 1000, ASCII_BAR).plain == "#.......   0%"  # something requested shows
    assert utilisation_bar(1120, 1000, ASCII_BAR).plain == "######## 112%"
    assert utilisation_bar(0, 0, ASCII_BAR).plain == "n/a"


def test_abbreviate_counts() -> None:
    assert abbreviate_counts([("web", 3), ("api", 2), ("db", 1)]) == "web x3, api x2, db"
    counts = [(f"w{i}", 1) for i in range(6)]
    assert abbreviate_counts(counts, limit=4) == "w0, w1, w2, w3, +2 more"
    assert abbreviate_counts([]) == ""


