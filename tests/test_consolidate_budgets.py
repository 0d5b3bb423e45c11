"""NodePool disruption budgets as Karpenter v1 evaluates them: the schedule window at a time (`--now`, else the
snapshot's newest Node heartbeat), whole percentages rounded up, the nodes already being disrupted or NotReady
using the budget up, misconfigured budgets failing closed. Translated from kubernetes-sigs/karpenter
pkg/apis/v1/nodepool_budgets_test.go and pkg/controllers/disruption/suite_test.go ("BuildDisruptionBudgetMapping"),
and from the threads where users asked why a budget did or did not hold nodes back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from test_consolidate_semantics import node, nodepool, pod, reason, write
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.consolidate.budgets import DRIFTED, EMPTY, UNDERUTILIZED, UNLIMITED, Disruption, NodeBudget
from karpplan.consolidate.cron import CronError, is_active
from karpplan.consolidate.report import Report
from karpplan.consolidate.run import ConsolidateOptions, consolidate

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
JUNE_2000 = datetime(2000, 6, 15, 12, 30, 30, tzinfo=UTC)  # nodepool_budgets_test.go's fake clock
FIRST_SUNDAY_2024 = datetime(2024, 1, 7, tzinfo=UTC)


def at(path: Path, now: datetime | None) -> Report:
    return consolidate(ConsolidateOptions(paths=(str(path),), region="us-east-1", time_limit=2.0, now=now))


def sizes(report: Report) -> list[int]:
    return [len(a.nodes) for a in report.actions]


def empty_nodes(count: int) -> list[dict[str, Any]]:
    return [node(f"n{i:02d}", zone=ZONES[i % 3]) for i in range(count)]


def budgets(*items: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    return (nodepool(budgets=list(items)),)


# ------------------------------------------------------------------ IsActive (nodepool_budgets_test.go)
@pytest.mark.parametrize(("schedule", "duration", "now", "active"), [
    ("* * * * *", "1h", JUNE_2000, True),  # "should return that a schedule is active"
    ("@yearly", "1h", JUNE_2000, False),  # "should return that a schedule is inactive"
    # "...active when the schedule hit is in the middle of the duration"
    ("@yearly", "24h", datetime(1000, 1, 1, 12, tzinfo=UTC), True),
    # "...active when the duration is longer than the recurrence"
    ("@daily", "48h", FIRST_SUNDAY_2024, True),
    # "...inactive when the schedule hit is after the duration": Sunday 06:30 + 6h, asked at Sunday 00:00
    ("30 6 * * SUN", "6h", FIRST_SUNDAY_2024, False),
    # "should always consider a schedule and time in UTC": 2000-05-31 00:00 at UTC+1 is 23:00 UTC
    ("@daily", "30m", datetime(2000, 5, 31, 0, 0, tzinfo=timezone(timedelta(hours=1))), False),
])
def test_a_schedule_is_active_as_karpenter_says(schedule: str, duration: str, now: datetime, active: bool) -> None:
    assert is_active(schedule, duration, now) is active


def test_a_schedule_robfig_cron_refuses_says_why() -> None:
    # "should return an error indicating why the cron fails to parse"
    with pytest.raises(CronError, match=r"beginning of range \(2\) beyond end of range \(1\)"):
        is_active("0 0 * * tue-mon", "6h", FIRST_SUNDAY_2024)


def test_day_of_month_and_day_of_week_match_either_unless_one_is_a_star() -> None:
    # robfig/cron dayMatches: "0 0 13 * FRI" hits every 13th and every Friday; "0 0 * * FRI" only Fridays
    saturday_13th = datetime(2024, 1, 13, 0, 10, tzinfo=UTC)
    assert is_active("0 0 13 * FRI", "30m", saturday_13th)
    assert not is_active("0 0 * * FRI", "30m", saturday_13th)


# ------------------------------------------------- GetAllowedDisruptionsByReason (nodepool_budgets_test.go)
def _upstream_budgets(last_schedule: str = "@weekly") -> list[NodeBudget]:
    every = ("* * * * *", "1h")
    return [NodeBudget("10", None, *every), NodeBudget("100", None, *every), NodeBudget("100%", None, *every),
            NodeBudget("15", (DRIFTED, UNDERUTILIZED), *every), NodeBudget("5", (DRIFTED,), *every),
            NodeBudget("0", (UNDERUTILIZED, DRIFTED, EMPTY), last_schedule, "1h")]


def test_the_smallest_active_budget_naming_the_reason_wins() -> None:
    pool = Disruption("p", budgets=(*_upstream_budgets(), NodeBudget("4", (EMPTY,), "* * * * *", "1h")))
    assert [pool.allowed(100, r, JUNE_2000) for r in (EMPTY, DRIFTED, UNDERUTILIZED)] == [4, 5, 10]


def test_an_active_zero_budget_for_every_reason_blocks_them_all() -> None:
    pool = Disruption("p", budgets=tuple(_upstream_budgets("* * * * *")))
    assert [pool.allowed(100, r, JUNE_2000) for r in (EMPTY, DRIFTED, UNDERUTILIZED)] == [0, 0, 0]


def test_inactive_budgets_leave_disruption_unbounded() -> None:
    pool = Disruption("p", budgets=tuple(NodeBudget(b.nodes, b.reasons, "@yearly", "1h") for b in _upstream_budgets()))
    assert pool.allowed(100, EMPTY, JUNE_2000) == UNLIMITED


@pytest.mark.parametrize("bad", [NodeBudget("1000a%"), NodeBudget("10", None, "@wrongly", "1h"),
                                 NodeBudget("10.5%")])
def test_a_budget_karpenter_cannot_evaluate_blocks_every_reason(bad: NodeBudget) -> None:
    # "should return zero values if a schedule is invalid" / "... if a nodes value is invalid", and
    # MustGetAllowedDisruptions: one bad budget, whatever its reasons, and the pool allows nothing
    pool = Disruption("p", budgets=(NodeBudget("100%"), bad))
    assert [pool.allowed(10, r, JUNE_2000) for r in (EMPTY, DRIFTED, UNDERUTILIZED)] == [0, 0, 0]


def test_a_bad_budget_keeps_every_node_and_the_warning_says_why(tmp_path: Path) -> None:
    path = write(tmp_path, *empty_nodes(3), pools=budgets({"nodes": "100%"},
                                                          {"nodes": "5", "schedule": "0 0 * * tue-mon", "duration": "6h"}))
    report = at(path, JUNE_2000)
    assert report.actions == []
    assert reason(report, "n00") == "No allowed disruptions for disruption reason Empty due to blocking budget"
    [warning] = [w for w in report.warnings if "cannot evaluate" in w]
    assert "beginning of range (2) beyond end of range (1)" in warning and "for any reason" in warning


def test_percentages_round_up() -> None:
    # "Karpenter will opt to allow 1 node to be disrupted, rather than blocking all disruptions": 5% of 10 is 1
    assert Disruption("p", budgets=(NodeBudget("5%"),)).allowed(10, EMPTY) == 1
    assert Disruption("p", budgets=(NodeBudget("80%"),)).allowed(11, EMPTY) == 9


# --------------------------------------------- BuildDisruptionBudgetMapping (disruption/suite_test.go)
def _not_ready(doc: dict[str, Any]) -> dict[str, Any]:
    doc["status"]["conditions"] = [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]
    return doc


def _deleting(doc: dict[str, Any]) -> dict[str, Any]:
    doc["metadata"]["deletionTimestamp"] = "2024-09-19T07:00:00Z"
    return doc


def test_not_ready_nodes_use_the_budget_up(tmp_path: Path) -> None:
    # "should consider not ready nodes to the disruption count": 10 nodes, 100%, 2 NotReady -> 8
    docs = empty_nodes(10)
    _not_ready(docs[0])
    _not_ready(docs[1])
    report = at(write(tmp_path, *docs, pools=budgets({"nodes": "100%"})), None)
    assert sizes(report)[0] == 8


def test_nodes_being_deleted_use_the_budget_up(tmp_path: Path) -> None:
    # "should consider nodes with a deletion timestamp set and MarkedForDeletion to the disruption count" (-> 8);
    # kubernetes-sigs/karpenter#2909, the maintainer: "nodes that are being drained and terminated should
    # still count against the budget"
    docs = empty_nodes(10)
    _deleting(docs[0])
    docs[1]["spec"] = {"taints": [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]}
    report = at(write(tmp_path, *docs, pools=budgets({"nodes": "100%"})), None)
    assert sizes(report) == [8]
    assert reason(report, "n00") == "Node is deleting or marked for deletion"


def test_the_budget_never_goes_below_zero(tmp_path: Path) -> None:
    # "should not return a negative disruption value": every node deleting, 10% -> 0, nothing else happens
    docs = [_deleting(d) for d in empty_nodes(4)] + [node("live", zone="us-east-1b")]
    report = at(write(tmp_path, *docs, pools=budgets({"nodes": "10%"})), None)
    assert report.actions == []
    assert reason(report, "live") == ("No allowed disruptions for disruption reason Empty: NodePool \"default\"'s "
                                      "budget allows 1 at a time and 4 node(s) already disrupting or NotReady use it "
                                      "up (n00, n01, n02 and 1 more)")


def test_nodes_not_initialized_are_not_counted(tmp_path: Path) -> None:
    # "should not consider nodes that are not initialized as part of disruption count": a NodeClaim whose
    # Initialized is False is left out of the total (50% of 4 = 2, not 50% of 5 = 3)
    docs = empty_nodes(5)
    docs[4]["spec"] = {"providerID": "aws:///us-east-1b/i-0launching"}
    claim = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "default-x"},
             "status": {"providerID": "aws:///us-east-1b/i-0launching",
                        "conditions": [{"type": "Initialized", "status": "False"}]}}
    report = at(write(tmp_path, *docs, claim, pools=budgets({"nodes": "50%"})), None)
    assert sizes(report)[0] == 2


# ---------------------------------------------------------------------------- the threads, with --now
def test_outside_its_window_a_budget_does_not_hold_nodes_back(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/8247: budget 80%, schedule "0 */1 * * *", 15m;
    # after deleting a 50-replica deployment "I expected Karpenter to defer node deletion until the next cron
    # window, but nodes were deleted immediately". A budget only restricts while active: outside the 15
    # minutes nothing limits Emptiness, inside it 80% of 11 = 9 go first.
    path = write(tmp_path, *empty_nodes(11),
                 pools=budgets({"nodes": "80%", "schedule": "0 */1 * * *", "duration": "15m"}))
    assert sizes(at(path, datetime(2025, 7, 7, 10, 20, tzinfo=UTC))) == [11]
    assert sizes(at(path, datetime(2025, 7, 7, 10, 5, tzinfo=UTC))) == [9, 2]


def test_a_budget_for_empty_nodes_only_leaves_underutilized_ones_unbounded(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/7026: Empty 20% from 06:00 for 20h, Underutilized
    # and Empty 20% from 02:00 for 4h. The maintainer: "there is no budget for Underutilized between 6 am to
    # 2 am, equivalent to 100% at that time". Five m5.large with one 300m pod each: at 10:00 one multi-node
    # command deletes four; at 03:00 20% of 5 = 1 node per command.
    docs = [d for i in range(5) for d in (node(f"n{i}", zone=ZONES[i % 3]), pod(f"web-{i}", f"n{i}", cpu="300m"))]
    path = write(tmp_path, *docs, pools=budgets(
        {"nodes": "20%", "reasons": ["Empty"], "schedule": "0 6 * * *", "duration": "20h"},
        {"nodes": "20%", "reasons": ["Underutilized", "Empty"], "schedule": "0 2 * * *", "duration": "4h"}))
    day = at(path, datetime(2024, 9, 17, 10, tzinfo=UTC))
    assert sizes(day) == [4] and day.actions[0].method == "multi"
    night = at(path, datetime(2024, 9, 17, 3, tzinfo=UTC))
    assert max(sizes(night)) == 1 and sum(sizes(night)) == 4


def test_budgets_restrict_and_never_permit(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/1939 "Schedules in budgets are ignored completely":
    # 10% for Empty and Underutilized from "0 8 * * mon-fri" for 8h. On a Saturday no budget is active, so
    # Empty nodes all go at once; on a Monday at 09:00, 10% of 10 = 1 at a time.
    path = write(tmp_path, *empty_nodes(10), pools=budgets(
        {"nodes": "10%", "reasons": ["Empty", "Underutilized"], "schedule": "0 8 * * mon-fri", "duration": "8h"},
        {"nodes": "0", "reasons": ["Drifted"]}))
    assert sizes(at(path, datetime(2025, 2, 1, 11, tzinfo=UTC))) == [10]
    assert max(sizes(at(path, datetime(2025, 2, 3, 9, tzinfo=UTC)))) == 1


def test_a_zero_budget_for_underutilized_does_not_stop_emptiness(tmp_path: Path) -> None:
    # https://github.com/kubernetes-sigs/karpenter/issues/1718 "Node got terminated outside the budget time
    # window": "0" for Drifted and Underutilized from 02:30 for 12h; the maintainer: "There is no budget that
    # prevents disruption due to emptiness so this is the expected behavior".
    docs = [node("empty-1"), node("empty-2", zone="us-east-1b"), node("busy-1", zone="us-east-1c"),
            node("busy-2"), pod("web-1", "busy-1", cpu="300m"), pod("web-2", "busy-2", cpu="300m")]
    path = write(tmp_path, *docs, pools=budgets(
        {"nodes": "0", "reasons": ["Drifted", "Underutilized"], "schedule": "30 2 * * *", "duration": "12h"}))
    report = at(path, datetime(2024, 10, 18, 7, 13, tzinfo=UTC))
    assert [(a.method, sorted(n.name for n in a.nodes)) for a in report.actions] == [
        ("emptiness", ["empty-1", "empty-2"])]
    assert reason(report, "busy-1") == "No allowed disruptions for disruption reason Underutilized due to blocking budget"


def test_two_budgets_open_the_first_ten_minutes_of_each_hour(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/7373: nodes "1" from "0 * * * *" for 10m and "0" from
    # "10 * * * *" for 50m: "it only scales in the first 10 minutes of an hour"
    path = write(tmp_path, *empty_nodes(3), pools=budgets(
        {"nodes": "1", "schedule": "0 * * * *", "duration": "10m0s"},
        {"nodes": "0", "schedule": "10 * * * *", "duration": "50m0s"}))
    assert sizes(at(path, datetime(2024, 11, 13, 9, 5, tzinfo=UTC))) == [1, 1, 1]
    closed = at(path, datetime(2024, 11, 13, 9, 30, tzinfo=UTC))
    assert closed.actions == []
    assert reason(closed, "n00") == "No allowed disruptions for disruption reason Empty due to blocking budget"


def test_a_count_budget_limits_concurrency_not_the_total(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/6911 "Karpenter not respecting NodeClaim budget": the
    # maintainer, "in a given time frame, at most x nodes can be disrupting at a given time" -- one at a time,
    # but one after another every node the window finds goes
    path = write(tmp_path, *empty_nodes(4), pools=budgets({"nodes": "1", "schedule": "45 * * * *", "duration": "15m"}))
    assert sizes(at(path, datetime(2024, 9, 2, 8, 50, tzinfo=UTC))) == [1, 1, 1, 1]


def test_the_snapshot_s_own_time_opens_or_closes_the_window(tmp_path: Path) -> None:
    # without --now the newest Node heartbeat is the time; the JSON and the warning say which
    docs = empty_nodes(3)
    for d in docs:
        d["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2024-11-13T09:30:12Z"}]
    path = write(tmp_path, *docs, pools=budgets({"nodes": "0", "schedule": "10 * * * *", "duration": "50m"}))
    report = at(path, None)
    assert report.actions == []
    doc = report.to_document()
    assert doc["summary"]["simulatedAt"] == "the snapshot's newest Node heartbeat, 2024-11-13T09:30:12Z"
    assert any("active at the snapshot's newest Node heartbeat" in w for w in report.warnings)
    assert sizes(at(path, datetime(2024, 11, 13, 9, 5, tzinfo=UTC))) == [3]


def test_without_a_time_a_schedule_is_assumed_active_and_said(tmp_path: Path) -> None:
    path = write(tmp_path, *empty_nodes(3), pools=budgets({"nodes": "0", "schedule": "@daily", "duration": "1h"}))
    report = at(path, None)
    assert report.actions == []
    assert any("assumed active now" in w and "--now" in w for w in report.warnings)
    assert "simulatedAt" not in report.to_document()["summary"]


def test_now_on_the_command_line(tmp_path: Path) -> None:
    path = write(tmp_path, *empty_nodes(3), pools=budgets({"nodes": "0", "schedule": "@daily", "duration": "1h"}))
    runner = CliRunner()
    late = runner.invoke(app, ["consolidate", str(path), "--now", "2026-11-28T03:00:00Z", "-o", "json",
                               "--time-limit", "2"])
    assert late.exit_code == 1, late.output
    assert len(json.loads(late.stdout)["actions"]) == 1
    early = runner.invoke(app, ["consolidate", str(path), "--now", "2026-11-28T00:30:00", "-o", "json",
                                "--time-limit", "2"])
    assert early.exit_code == 0 and json.loads(early.stdout)["actions"] == []
    bad = runner.invoke(app, ["consolidate", str(path), "--now", "tomorrow"])
    assert bad.exit_code == 2 and "RFC 3339" in bad.output


# ------------------------------------------------------------------------------ consolidateAfter, timed
def _scheduled_at(doc: dict[str, Any], when: str) -> dict[str, Any]:
    doc["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": when}]
    return doc


def test_a_pod_bound_within_consolidate_after_keeps_its_node_until_the_window_passes(tmp_path: Path) -> None:
    # nodeclaim/disruption/consolidation.go: Consolidatable only once consolidateAfter has passed since the last
    # pod event (a pod bound). consolidateAfter 30m, the pod on "b" scheduled at 10:00: at 10:10 "b" waits, and
    # since v1.14 (karpenter#3006, scheduler.go IsConsolidationSimulation) it takes no pod of "a" either, so
    # nothing happens; at 10:45 "b" goes.
    docs = [node("a"), node("b", zone="us-east-1b"), _scheduled_at(pod("web-1", "a"), "2025-01-01T08:00:00Z"),
            _scheduled_at(pod("web-2", "a"), "2025-01-01T08:00:00Z"),
            _scheduled_at(pod("web-3", "b"), "2025-01-01T10:00:00Z")]
    path = write(tmp_path, *docs, pools=(nodepool(after="30m"),))
    early = at(path, datetime(2025, 1, 1, 10, 10, tzinfo=UTC))
    assert early.actions == []
    assert reason(early, "a") == "Can't replace with a cheaper node"
    late = at(path, datetime(2025, 1, 1, 10, 45, tzinfo=UTC))
    assert [n.name for a in late.actions for n in a.nodes] == ["b"]
    # an empty node inside its window is not Emptiness's yet either (a node just created), and says until when
    fresh = node("c")
    fresh["metadata"]["creationTimestamp"] = "2025-01-01T10:00:00Z"
    report = at(write(tmp_path, fresh, pools=(nodepool(after="30m"),)), datetime(2025, 1, 1, 10, 10, tzinfo=UTC))
    assert report.actions == []
    assert reason(report, "c") == ("Not Consolidatable yet: consolidateAfter 30m has not passed since the node's "
                                   "creation at 2025-01-01T10:00:00Z; Karpenter may consolidate it from "
                                   "2025-01-01T10:30:00Z")


def test_a_nodeclaim_s_last_pod_event_decides_when_it_may_go(tmp_path: Path) -> None:
    # the NodeClaim's status.lastPodEventTime (a pod that left counts too, which the pods alone cannot show)
    docs = [node("a"), node("b", zone="us-east-1b"), pod("web-1", "a")]
    docs[1]["spec"] = {"providerID": "aws:///us-east-1b/i-0b"}
    claim = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "default-b"},
             "status": {"providerID": "aws:///us-east-1b/i-0b", "lastPodEventTime": "2025-01-01T10:00:00Z",
                        "conditions": [{"type": "Initialized", "status": "True",
                                        "lastTransitionTime": "2025-01-01T07:00:00Z"}]}}
    path = write(tmp_path, *docs, claim, pools=(nodepool(after="1h"),))
    waiting = at(path, datetime(2025, 1, 1, 10, 20, tzinfo=UTC))
    assert "b" not in [n.name for a in waiting.actions for n in a.nodes]
    assert reason(waiting, "b") == ("Not Consolidatable yet: consolidateAfter 1h has not passed since NodeClaim "
                                    "default-b's lastPodEventTime at 2025-01-01T10:00:00Z; Karpenter may consolidate it "
                                    "from 2025-01-01T11:00:00Z")
    assert [n.name for a in at(path, datetime(2025, 1, 1, 11, 0, tzinfo=UTC)).actions for n in a.nodes] == ["b"]
