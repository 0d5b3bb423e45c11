"""`plan -o html` and the diff report: one self-contained page with every node, the totals, costs,
Karpenter's plan beside this one, unschedulable pods with fixes and lint findings, all user text escaped.

The page is read back with a parser (tests/report_html_helpers.py) the way a browser builds it; the
outline golden (tests/golden/report-outline.txt, from tests/golden/plan.json) is what a reader scans.
Regenerate it with `UPDATE_GOLDEN=1 pytest tests/test_report_html.py`.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from manifests import deployment, nodepool
from report_html_helpers import node_rows, outline, parse, totals

from karpplan.render.formatting import format_hourly, format_monthly
from karpplan.render.html import render_diff_html, render_html

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden"
EVIL = "<script>alert('x')</script>"


def golden_plan() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((GOLDEN / "plan.json").read_text())
    return document


def karpplan(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "karpplan", *args], capture_output=True, text=True, input=stdin,
                          cwd=REPO, timeout=300)


def test_every_node_is_a_row_in_its_zone_with_type_capacity_pool_price_and_bars() -> None:
    document = golden_plan()
    root = parse(render_html(document))
    rows = node_rows(root)
    assert set(rows) == {n["name"] for n in document["nodes"]}
    for node in document["nodes"]:
        zone = root.find_all("section", data_zone=node["zone"])
        assert len(zone) == 1 and node["name"] in {r.attrs["data-node"] for r in zone[0].with_attr("data-node")}
        text = rows[node["name"]].text()
        fargate = node["fargate"] or {}
        kind = node["instanceType"] or f"Fargate {fargate['capacityProvisioned']}"
        pool = node["nodePool"] or (f"Fargate profile {fargate['profile']}" if fargate else "\u2014")
        for value in (kind, node["capacityType"], pool):
            assert value in text
        if node["new"]:
            assert format_hourly(node["hourlyPrice"]) in text
        bars = [svg.attrs["aria-label"] for svg in rows[node["name"]].find_all("svg")]
        assert [b.split()[0] for b in bars] == ["CPU", "Memory"]
        assert f"of {node['allocatable']['cpu']} requested" in bars[0]


def test_zones_are_in_order_and_existing_nodes_come_before_new_ones() -> None:
    document = golden_plan()
    root = parse(render_html(document))
    zones = [s.attrs["data-zone"] for s in root.find_all("section") if "data-zone" in s.attrs]
    assert zones == sorted({n["zone"] for n in document["nodes"]})
    first_zone = root.find_all("section", data_zone=zones[0])[0]
    news = [next(n for n in document["nodes"] if n["name"] == r.attrs["data-node"])["new"]
            for r in first_zone.with_attr("data-node")]
    assert news == sorted(news)


def test_totals_show_cost_status_bound_gap_and_pods() -> None:
    document = golden_plan()
    summary = document["summary"]
    shown = totals(parse(render_html(document)))
    assert shown["hourlyCost"] == format_hourly(summary["hourlyCost"])
    assert shown["monthlyCost"] == format_monthly(summary["monthlyCost"])
    assert shown["status"] == summary["status"]
    assert shown["scheduled"] == f"{summary['scheduled']} of {summary['pods']}"
    assert shown["unschedulable"] == str(summary["unschedulable"])
    assert shown["lowerBound"] == (format_hourly(summary["lowerBound"]) if summary["lowerBound"] is not None
                                   else "none proven")


def test_user_strings_are_escaped_everywhere() -> None:
    document = golden_plan()
    node = document["nodes"][0]
    node["name"] = EVIL
    node["nodePool"] = EVIL
    document["pods"][0]["name"] = EVIL
    document["pods"][0]["workload"] = f"Deployment/{EVIL}"
    document["unschedulable"] = [{"pod": f"default/{EVIL}", "workload": EVIL, "reasons": [EVIL],
                                  "fixes": [{"action": EVIL, "file": EVIL, "line": 3, "hourlyCostDelta": 0.1}]}]
    document["warnings"] = [EVIL]
    lint = {"summary": {"files": 1, "objects": 1, "error": 1},
            "findings": [{"rule": "r", "code": "K", "severity": "error", "file": EVIL, "line": 1,
                          "object": EVIL, "message": EVIL, "fix": EVIL}]}
    page = render_html(document, lint=lint)
    root = parse(page)
    assert "<script" not in page.lower()
    assert not root.find_all("script")
    assert EVIL in node_rows(root)  # the name survives, as text
    assert page.count("&lt;script&gt;") >= 8


def test_the_page_loads_nothing() -> None:
    page = render_html(golden_plan())
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", page), "every link stays inside the page"
    assert "@import" not in page and "url(" not in page and "<link" not in page and "<script" not in page


def test_karpenter_plan_beside_this_one_with_the_saving() -> None:
    document = golden_plan()
    summary = document["summary"]
    summary["hourlyCost"], summary["engine"] = 0.1, "optimal"
    summary["karpenter"] = {"hourlyCost": 0.15, "newNodes": 5, "scheduled": summary["scheduled"], "batches": 2,
                            "likeForLike": True}
    root = parse(render_html(document))
    panels = {p.attrs["data-plan"]: p.text() for p in root.with_attr("data-plan")}
    assert set(panels) == {"optimal", "karpenter"}
    assert "$0.1500/h" in panels["karpenter"] and "5" in panels["karpenter"]
    assert "saves $0.0500/h (33.3%)" in root.find_all("section", id="compare")[0].text()

    summary["karpenter"]["likeForLike"] = False
    summary["karpenter"]["scheduled"] = summary["scheduled"] - 1
    text = parse(render_html(document)).find_all("section", id="compare")[0].text()
    assert "no saving is quoted" in text and "saves" not in text


def test_the_saving_is_quoted_against_karpenter_s_steady_state_when_it_was_computed() -> None:
    """A cluster run by Karpenter consolidates: the page quotes the saving against where it settles."""
    document = golden_plan()
    summary = document["summary"]
    summary["hourlyCost"], summary["engine"] = 0.1, "optimal"
    summary["karpenter"] = {"hourlyCost": 0.15, "newNodes": 5, "scheduled": summary["scheduled"], "batches": 2,
                            "likeForLike": True, "steadyStateHourlyCost": 0.12, "steadyStateNodes": 4}
    root = parse(render_html(document))
    compare = root.find_all("section", id="compare")[0].text()
    assert "$0.1200/h on 4 nodes" in compare
    assert "saves $0.0200/h (16.7%)" in compare and "steady state" in compare

    summary["karpenter"].update(steadyStateHourlyCost=None, steadyStateNote="not computed: the input came from stdin")
    compare = parse(render_html(document)).find_all("section", id="compare")[0].text()
    assert "not computed: the input came from stdin" in compare and "saves $0.0500/h" in compare


def test_a_karpenter_engine_plan_says_it_is_karpenter_s_own() -> None:
    document = golden_plan()
    document["summary"]["engine"] = "karpenter"
    document["summary"]["karpenter"] = {"hourlyCost": document["summary"]["hourlyCost"], "newNodes": 3,
                                        "scheduled": 8, "batches": 1, "likeForLike": True}
    section = parse(render_html(document)).find_all("section", id="compare")[0]
    assert "This plan is Karpenter's own" in section.text()
    assert [p.attrs["data-plan"] for p in section.with_attr("data-plan")] == ["karpenter"], "one panel, not two"


def test_costs_object_is_rendered_by_workload_namespace_and_pool() -> None:
    document = golden_plan()
    document["costs"] = {
        "rule": "a node's price split by the larger of CPU and memory shares",
        "hourlyCost": document["summary"]["hourlyCost"],
        "workloads": [{"workload": "Deployment/default/web", "namespace": "default", "pods": 3,
                       "hourlyCost": 0.05, "monthlyCost": 36.5},
                      {"workload": "Deployment/shop/api", "namespace": "shop", "pods": 1,
                       "hourlyCost": 0.07, "monthlyCost": 51.1}],
        "namespaces": [{"namespace": "default", "hourlyCost": 0.05, "monthlyCost": 36.5}],
        "nodePools": [{"nodePool": "default", "hourlyCost": 0.12, "idleHourlyCost": 0.01}],
    }
    section = parse(render_html(document)).find_all("section", id="costs")[0]
    rows = [r.text() for r in section.find_all("tr")]
    assert any(r.startswith("Deployment/shop/api shop 1 $0.0700/h $51.10/month") for r in rows)
    web = next(i for i, r in enumerate(rows) if r.startswith("Deployment/default/web"))
    api = next(i for i, r in enumerate(rows) if r.startswith("Deployment/shop/api"))
    assert api < web, "the costliest workload first"
    assert "default $0.1200/h $0.0100/h" in rows
    assert "split by the larger of CPU and memory" in section.text()


def test_without_costs_the_pool_cost_is_summed_from_the_new_nodes() -> None:
    document = golden_plan()
    document.pop("costs", None)
    expected: dict[str, float] = {}
    for node in document["nodes"]:
        if node["new"]:
            pool = "Fargate" if node["capacityType"] == "fargate" else node["nodePool"]
            expected[pool] = expected.get(pool, 0.0) + node["hourlyPrice"]
    section = parse(render_html(document)).find_all("section", id="costs")[0]
    rows = [r.text() for r in section.find_all("tr")]
    for pool, cost in expected.items():
        assert any(r.startswith(f"{pool} ") and format_hourly(cost) in r for r in rows), (pool, rows)
    assert sum(expected.values()) == pytest.approx(document["summary"]["hourlyCost"])


def test_unschedulable_pods_with_reasons_and_fixes() -> None:
    document = golden_plan()
    document["unschedulable"][0]["fixes"] = [
        {"action": "lower cpu to 7", "object": "Deployment/default/huge", "field": "x", "file": "apps.yaml",
         "line": 44, "hourlyCostDelta": 0.096, "plain": ""}]
    section = parse(render_html(document)).find_all("section", id="unschedulable")[0]
    text = section.text()
    assert "default/huge-0" in text
    assert "Insufficient cpu" in text
    assert "lower cpu to 7 (apps.yaml:44) cost +$0.0960/h" in text


def test_lint_findings_or_why_there_are_none() -> None:
    lint = {"summary": {"files": 1, "objects": 2, "findings": 1, "error": 0, "warning": 1, "info": 0},
            "findings": [{"rule": "replicas-without-spread", "code": "KPL301", "severity": "warning",
                          "file": "apps.yaml", "line": 7, "object": "Deployment/default/web", "field": "spec",
                          "message": "3 replicas, no spread", "fix": "add a spread"}]}
    section = parse(render_html(golden_plan(), lint=lint)).find_all("section", id="lint")[0]
    assert "warning replicas-without-spread KPL301 apps.yaml:7 Deployment/default/web 3 replicas, no spread " \
           "Fix: add a spread" in [r.text() for r in section.find_all("tr")]
    none = parse(render_html(golden_plan(), lint_note="Lint was not run: stdin.")).find_all("section", id="lint")[0]
    assert "Lint was not run: stdin." in none.text()


def test_outline_golden() -> None:
    """What a reader scans of the golden plan: headings, totals, rows (not the markup byte for byte)."""
    lines = "\n".join(outline(parse(render_html(golden_plan())))) + "\n"
    path = GOLDEN / "report-outline.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(lines)
    assert lines == path.read_text()


def test_diff_report_sides_deltas_workloads_pools_unschedulable_and_lint() -> None:
    base = {"pods": 4, "newNodes": 2, "unschedulable": 0, "hourlyCost": 0.1, "monthlyCost": 73.0}
    head = {"pods": 8, "newNodes": 3, "unschedulable": 1, "hourlyCost": 0.2, "monthlyCost": 146.0}
    document = {
        "apiVersion": "karpplan.io/v1alpha1", "kind": "PlanDiff", "engine": "karpenter", "base": base, "head": head,
        "delta": {"hourlyCost": 0.1, "monthlyCost": 73.0, "newNodes": 1, "unschedulable": 1},
        "workloads": [
            {"workload": "Deployment/default/web", "change": "changed", "hourlyCostBase": 0.1, "hourlyCostHead": 0.2,
             "hourlyCostDelta": 0.1, "file": "head/web.yaml", "line": 6},
            {"workload": "Deployment/default/db", "change": "unchanged", "hourlyCostBase": 0.0,
             "hourlyCostHead": 0.0, "hourlyCostDelta": 0.0, "file": "head/db.yaml", "line": 1},
            {"workload": f"Deployment/default/{EVIL}", "change": "added", "hourlyCostBase": None,
             "hourlyCostHead": 0.01, "hourlyCostDelta": 0.01, "file": "head/x.yaml", "line": 2}],
        "pools": [{"name": "default", "change": "changed", "hourlyCostBase": 0.1, "hourlyCostHead": 0.2}],
        "newlyUnschedulable": [{"pod": "default/web-7", "reasons": ["Insufficient cpu"]}],
        "lint": {"new": [{"rule": "spread-caps-replicas", "code": "KPL105", "severity": "error",
                          "file": "head/web.yaml", "line": 20, "object": "Deployment/default/web",
                          "message": "only 6 of 8 replicas can run", "fix": ""}], "fixed": []},
    }
    page = render_diff_html(document)
    root = parse(page)
    assert "<script" not in page
    sides = [r.text() for r in root.find_all("section", id="sides")[0].find_all("tr")]
    assert "Cost per month $73.00/month $146.00/month +$73.00/month" in sides
    assert "New nodes 2 3 +1" in sides
    assert "+$73.00/month" in totals(root)["deltaMonthlyCost"]
    rows = [r.text() for r in root.find_all("section", id="workloads")[0].find_all("tr")]
    assert rows[1].startswith(f"Deployment/default/{EVIL} added")
    assert "Deployment/default/web changed $0.1000/h $0.2000/h +$0.1000/h head/web.yaml:6" in rows
    assert not any("Deployment/default/db" in r for r in rows), "unchanged workloads are only counted"
    assert "default changed $0.1000/h $0.2000/h" in [r.text() for r in root.find_all("section", id="pools")[0].find_all("tr")]
    assert "default/web-7 Insufficient cpu" in root.find_all("section", id="newly-unschedulable")[0].text()
    assert "spread-caps-replicas" in root.find_all("section", id="lint")[0].text()

    same = copy.deepcopy(document)
    same["delta"] = {"hourlyCost": 0.0, "monthlyCost": 0.0, "newNodes": 0, "unschedulable": 0}
    assert "No cost change" in parse(render_diff_html(same)).find_all("section", id="sides")[0].text()


# ------------------------------------------------------------------------------------------ the command
HUGE = """\
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec:
  containers:
    - name: c
      image: x
      resources: {requests: {cpu: "900", memory: 1Gi}}
"""
# A NodePool, 3 replicas with no spread (a lint finding) and a pod too large for any instance type.
APPS = "---\n".join([nodepool(), deployment("web", 3, namespace="default", cpu="500m", memory="512Mi"), HUGE])


def test_plan_o_html_has_every_node_of_the_json_plan_and_the_lint_findings(tmp_path: Path) -> None:
    (tmp_path / "apps.yaml").write_text(APPS)
    common = ["plan", str(tmp_path), "--engine", "karpenter", "--zones", "us-east-1a,us-east-1b"]
    html = karpplan(*common, "-o", "html")
    plan = json.loads(karpplan(*common, "-o", "json").stdout)
    assert html.returncode == 1, "some pods are unschedulable: the plan's exit code, whatever the format"
    assert html.stdout.startswith("<!DOCTYPE html>")
    root = parse(html.stdout)
    assert set(node_rows(root)) == {n["name"] for n in plan["nodes"]}
    assert totals(root)["hourlyCost"] == format_hourly(plan["summary"]["hourlyCost"])
    assert "default/huge" in root.find_all("section", id="unschedulable")[0].text()
    lint = root.find_all("section", id="lint")[0]
    assert "replicas-without-spread" in lint.text() and "apps.yaml:" in lint.text()


def test_plan_o_html_from_stdin_lints_what_the_plan_read() -> None:
    result = karpplan("plan", "-", "--engine", "karpenter", "-o", "html", stdin=APPS)
    assert result.returncode == 1
    lint = parse(result.stdout).find_all("section", id="lint")[0].text()
    assert "replicas-without-spread" in lint and "<stdin>:" in lint


def test_plan_o_html_bad_input_is_one_line_and_no_page(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - {name: c, image: x, resources: {requests: {cpu: lots}}}\n")
    result = karpplan("plan", str(tmp_path / "bad.yaml"), "-o", "html")
    assert result.returncode == 2 and result.stdout == ""
    assert "bad.yaml:" in result.stderr and "Traceback" not in result.stderr


def test_unschedulable_pods_of_one_workload_and_reason_share_a_row() -> None:
    document = golden_plan()
    reason = ["0/3 nodes are available: 3 Insufficient cpu."]
    document["unschedulable"] = [{"pod": f"default/big-{i}", "workload": "Deployment/big", "reasons": reason,
                                  "fixes": []} for i in range(8)]
    document["unschedulable"].append({"pod": "default/other-0", "workload": "Deployment/other",
                                      "reasons": reason, "fixes": []})
    section = parse(render_html(document)).find_all("section", id="unschedulable")[0]
    rows = [r.text() for r in section.find_all("tr")][1:]
    assert len(rows) == 2
    assert rows[0].startswith("default/big-0 default/big-1 default/big-2 default/big-3 default/big-4 "
                              "+3 more, 8 pods in all Deployment/big")
    assert "Unschedulable pods (9)" in section.text()


def _sydney(document: dict[str, Any]) -> dict[str, Any]:
    """The golden plan as a new user's ap-southeast-2 plan states its caveats (their summary's own words)."""
    summary = document["summary"]
    summary.update({
        "catalog": "aws-ap-southeast-2", "region": "ap-southeast-2",
        "regionSource": "from ClusterConfig pay-prod-syd, cluster/eksctl.yaml:5",
        "zones": ["ap-southeast-2a", "ap-southeast-2b"], "zonesSource": "ClusterConfig cluster/eksctl.yaml:9",
        "catalogCoverage": "355 of 1363 known types priced, as of 2022-09-03; --allow-estimated-prices or "
                           "--catalog FILE for the rest",
        "spotPrices": "estimated: 0.4 x on-demand",
        "fargatePrices": "$0.04856 per vCPU-hour, $0.00532 per GB-hour (Linux/x86; aws.amazon.com/fargate/pricing)",
    })
    return document


def test_the_report_states_what_the_plan_was_planned_with_as_the_table_does() -> None:
    """A new user's trial: the report gave no price date, catalog coverage, spot estimate or zone source."""
    root = parse(render_html(_sydney(golden_plan())))
    caveats = {dd.attrs["data-caveat"]: dd.text() for dd in root.with_attr("data-caveat")}
    assert caveats["catalog"] == ("aws-ap-southeast-2, region ap-southeast-2 (from ClusterConfig pay-prod-syd, "
                                  "cluster/eksctl.yaml:5)")
    assert "355 of 1363 known types priced, as of 2022-09-03" in caveats["coverage"]
    assert caveats["zones"] == "ap-southeast-2a, ap-southeast-2b (from ClusterConfig cluster/eksctl.yaml:9)"
    assert caveats["spot"] == "spot estimated as 0.4 x on-demand (real ones: --spot-prices FILE)"
    assert caveats["fargate"].startswith("Fargate $0.04856 per vCPU-hour")


def test_assumed_zones_are_flagged_in_the_report() -> None:
    document = golden_plan()
    document["summary"]["zonesSource"] = "assumed: every zone of the catalog's region"
    document["summary"]["zones"] = ["us-east-1a", "us-east-1b"]
    zones = [dd for dd in parse(render_html(document)).with_attr("data-caveat") if dd.attrs["data-caveat"] == "zones"]
    assert "narrow with --zones" in zones[0].text() and zones[0].attrs.get("class") == "warn"


def test_node_counts_in_the_report_agree_and_say_what_they_count() -> None:
    """`Nodes (17)` beside `New nodes 15` read as a contradiction: each count says what it counts."""
    document = golden_plan()
    root = parse(render_html(document))
    nodes = document["nodes"]
    existing = sum(1 for n in nodes if not n["new"])
    fargate = sum(1 for n in nodes if n["new"] and n["capacityType"] == "fargate")
    ec2 = len(nodes) - existing - fargate
    assert existing and fargate and ec2 and ec2 + fargate == document["summary"]["newNodes"]
    heading = next(h.text() for h in root.find_all("h2") if h.text().startswith("Nodes"))
    assert heading == (f"Nodes ({len(nodes)}: {existing} existing, {ec2} new EC2, "
                       f"{fargate} Fargate pod{'s' if fargate > 1 else ''}) by zone")
    new_nodes = next(dd for dd in root.with_attr("data-total") if dd.attrs["data-total"] == "newNodes").text()
    used = len({p["node"] for p in document["pods"] if not p["bound"]
                and p["node"] in {n["name"] for n in nodes if not n["new"]}})
    assert used  # the golden plan places pods on an existing node: said, with how many
    assert new_nodes == (f"{ec2 + fargate} {ec2} EC2, {fargate} Fargate; "
                         f"pods placed on {used} existing node{'s' if used > 1 else ''} too")


def test_a_cronjob_costs_while_running_not_a_month_in_the_report() -> None:
    document = golden_plan()
    document["costs"] = {"rule": "split", "hourlyCost": 0.6, "monthlyCost": 438.0, "idleHourlyCost": 0.0,
                         "workloads": [{"workload": "CronJob/batch/risk-recalc", "namespace": "batch", "pods": 8,
                                        "hourlyCost": 0.54, "monthlyCost": 394.0},
                                       {"workload": "Deployment/payments/api", "namespace": "payments", "pods": 2,
                                        "hourlyCost": 0.06, "monthlyCost": 43.8}],
                         "namespaces": [], "nodePools": []}
    root = parse(render_html(document))
    rows = {r.text().split()[0]: r.text() for r in root.find_all("tr")}
    assert rows["CronJob/batch/risk-recalc"].endswith("$0.5400/h while running")
    assert "$394.00" not in rows["CronJob/batch/risk-recalc"]
    assert rows["Deployment/payments/api"].endswith("$43.80/month")
    note = root.find_all("p", data_note="runs-to-completion")[0].text()
    assert "$0.5400/h" in note and "paid only while their pods run" in note


def test_a_plan_of_existing_nodes_only_counts_them_once() -> None:
    """`Nodes (2: 2 existing)` read as a stutter: one kind of node is counted once."""
    document = golden_plan()
    document["nodes"] = [n for n in document["nodes"] if not n["new"]]
    heading = next(h.text() for h in parse(render_html(document)).find_all("h2") if h.text().startswith("Nodes"))
    assert heading == f"Nodes ({len(document['nodes'])} existing) by zone"
