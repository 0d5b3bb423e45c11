"""The HTML report in a real browser: headless Chromium (Debian's `chromium`) loads the page from a file and
the DOM it builds holds every node of the plan and the totals; a pod named `<script>...` stays text.

Skipped when no chromium is installed here, with the reason; `.ci/run` installs it and sets
KARPPLAN_REQUIRE_CHROMIUM=1, under which a missing browser fails the test instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from report_html_helpers import Element, node_rows, parse, totals

from karpplan.render.formatting import format_hourly, format_monthly
from karpplan.render.html import render_html

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "fixtures" / "quickstart"
# As the machines' notes start it as root: no sandbox, no GPU, and none of the background connections the
# closed network here refuses.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars")


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        if os.environ.get("KARPPLAN_REQUIRE_CHROMIUM") == "1":
            pytest.fail("KARPPLAN_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip("no chromium on PATH: apt-get install chromium to render the report in a browser "
                    "(.ci/run installs it)")
    return binary


def browse(binary: str, page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chromium-profile"
    return subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
                          capture_output=True, text=True, timeout=180, check=True)


def dom(binary: str, html: str, tmp_path: Path) -> tuple[str, Element]:
    """The DOM Chromium built from `html`, serialised, and parsed back."""
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    text = browse(binary, page, tmp_path, "--dump-dom").stdout
    assert "<html" in text, "chromium printed no DOM"
    return text, parse(text)


def karpplan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "karpplan", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300)


@pytest.fixture(scope="module")
def quickstart_plan() -> dict[str, Any]:
    result = karpplan("plan", str(QUICKSTART), "-o", "json")
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_quickstart_report_in_chromium_holds_every_node_and_the_totals(
        chromium: str, quickstart_plan: dict[str, Any], tmp_path: Path) -> None:
    _, root = dom(chromium, render_html(quickstart_plan), tmp_path)
    names = {n["name"] for n in quickstart_plan["nodes"]}
    assert names and set(node_rows(root)) == names
    for node in quickstart_plan["nodes"]:
        row = node_rows(root)[node["name"]].text()
        assert node["name"] in row and node["instanceType"] in row and format_hourly(node["hourlyPrice"]) in row
    summary = quickstart_plan["summary"]
    shown = totals(root)
    assert shown["hourlyCost"] == format_hourly(summary["hourlyCost"])
    assert shown["monthlyCost"] == format_monthly(summary["monthlyCost"])
    assert shown["newNodes"] == str(summary["newNodes"])
    assert shown["scheduled"] == f"{summary['scheduled']} of {summary['pods']}"
    assert shown["unschedulable"] == "0"
    karpenter = {p.attrs["data-plan"]: p.text() for p in root.with_attr("data-plan")}["karpenter"]
    assert format_hourly(summary["karpenter"]["hourlyCost"]) in karpenter


def test_plan_o_html_in_chromium_matches_the_json_plan(chromium: str, tmp_path: Path) -> None:
    """The command's own page (Karpenter's engine: the same plan on every run) against its JSON."""
    args = ("plan", str(QUICKSTART), "--engine", "karpenter")
    html = karpplan(*args, "-o", "html")
    plan = json.loads(karpplan(*args, "-o", "json").stdout)
    assert html.returncode == 0, html.stderr
    _, root = dom(chromium, html.stdout, tmp_path)
    assert set(node_rows(root)) == {n["name"] for n in plan["nodes"]}
    assert totals(root)["hourlyCost"] == format_hourly(plan["summary"]["hourlyCost"])
    assert root.find_all("section", id="lint"), "lint's findings section is on the page"
    # what it was planned with, as the table's summary says it (a new user missed the price date and spot rule)
    caveats = {dd.attrs["data-caveat"]: dd.text() for dd in root.with_attr("data-caveat")}
    summary = plan["summary"]
    assert caveats["catalog"].startswith(f"{summary['catalog']}, region {summary['region']}")
    assert all(zone in caveats["zones"] for zone in summary["zones"])
    if summary.get("catalogCoverage"):
        assert caveats["coverage"] == summary["catalogCoverage"]


EVIL_PODS = textwrap.dedent("""\
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: default}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: "x<script>document.title='owned'</script><img src=x onerror=alert(1)>", namespace: default}
    spec:
      containers:
        - name: c
          image: x
          resources: {requests: {cpu: 100m, memory: 100Mi}}
    """)


def test_a_pod_named_script_stays_text_in_chromium(chromium: str, tmp_path: Path) -> None:
    manifest = tmp_path / "evil.yaml"
    manifest.write_text(EVIL_PODS)
    html = karpplan("plan", str(manifest), "--engine", "karpenter", "--zones", "us-east-1a", "-o", "html")
    assert html.returncode == 0, html.stderr
    text, root = dom(chromium, html.stdout, tmp_path)
    assert not root.find_all("script") and not root.find_all("img")
    assert "<script" not in text.lower() and "owned" not in root.find_all("title")[0].text()
    assert "<script>document.title='owned'</script>" in root.find_all("section", id="nodes")[0].text()


def test_the_report_screenshots(chromium: str, quickstart_plan: dict[str, Any], tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(quickstart_plan), encoding="utf-8")
    shot = tmp_path / "report.png"
    browse(chromium, page, tmp_path, f"--screenshot={shot}", "--window-size=1280,1600")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000, "a page with content, not a blank image"
