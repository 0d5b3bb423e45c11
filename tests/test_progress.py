"""The optimal engine's progress: a well-formed stream of typed events, shown on stderr only (live on a
terminal, one line per phase with -v elsewhere), never changing the plan or touching stdout.

Golden files (tests/golden/progress-*.txt): regenerate with `UPDATE_GOLDEN=1 pytest tests/test_progress.py`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from test_render_plan import check_golden
from typer.testing import CliRunner

from karpplan.catalog import load_catalog
from karpplan.cli import plan as cli_plan
from karpplan.cli.main import app
from karpplan.engines.optimiser_progress import PHASES, Phase, ProgressEvent, ProgressTracker
from karpplan.model.build import load_inventory
from karpplan.planner import PlanOptions, make_plan
from karpplan.render.progress_display import (
    LiveProgress,
    PhaseLines,
    event_line,
    progress_display,
    progress_view,
)

from conftest import FIXTURES

# The seed's host-spread example (../shared/cases/seed/02-host-spread-zone-only) with its hostname
# constraint: 20 replicas, zone maxSkew 5 and hostname maxSkew 1, on ap-northeast-2 (CP-SAT proves it
# optimal in well under a second).
HOST_SPREAD = """\
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: default}
spec:
  consolidation: {enabled: true}
  requirements:
    - {key: karpenter.k8s.aws/instance-category, operator: In, values: [t, m, c]}
  providerRef: {name: default}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: host-spread}
spec:
  replicas: 20
  selector: {matchLabels: {app: host-spread}}
  template:
    metadata: {labels: {app: host-spread}}
    spec:
      containers:
        - name: host-spread
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.2
          resources: {requests: {cpu: "1", memory: 256M}}
      topologySpreadConstraints:
        - {maxSkew: 5, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: host-spread}}}
        - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: host-spread}}}
"""
REGION = "ap-northeast-2"


@pytest.fixture
def host_spread(tmp_path: Path) -> str:
    path = tmp_path / "host-spread.yaml"
    path.write_text(HOST_SPREAD)
    return str(path)


def plan_events(paths: list[str], region: str | None, time_limit: float,
                watch: bool = True) -> tuple[list[ProgressEvent], object]:
    events: list[ProgressEvent] = []
    inventory = load_inventory(paths)
    catalog = load_catalog(region or "us-east-1")
    options = PlanOptions(paths=tuple(paths), time_limit=time_limit, workers=1,
                          progress=events.append if watch else None)
    return events, make_plan(inventory, catalog, options)


def assert_well_formed(events: list[ProgressEvent]) -> None:
    assert events, "no progress event"
    order = [PHASES.index(e.phase) for e in events]
    assert order == sorted(order), [e.phase for e in events]  # phases move forward only
    assert events[0].phase is Phase.warm_start and events[-1].phase is Phase.done
    assert [e.phase for e in events].count(Phase.done) == 1
    plans = [(e.unplaced, e.cost) for e in events if e.cost is not None]
    assert plans == sorted(plans, reverse=True), plans  # best plan so far: never worse
    bounds = [e.bound for e in events if e.bound is not None]
    assert bounds == sorted(bounds), bounds  # best bound so far: never lower
    for e in events:
        assert e.limit > 0 and e.elapsed >= 0
        if e.cost is not None and e.bound is not None:
            assert e.bound <= e.cost + 1e-9 and e.gap is not None and 0.0 <= e.gap <= 1.0
    elapsed = [e.elapsed for e in events]
    assert elapsed == sorted(elapsed)


def test_the_event_stream_of_a_small_plan_is_well_formed(host_spread: str) -> None:
    events, plan = plan_events([host_spread], REGION, 10.0)
    assert_well_formed(events)
    summary = plan.summary  # type: ignore[attr-defined]
    assert summary.status == "optimal"
    done = events[-1]
    assert done.cost == pytest.approx(summary.hourly_cost) and done.bound == pytest.approx(summary.lower_bound)
    # Proven: the bounds meet the cost within the proof tolerance (`background_bound.PROVEN_TOLERANCE`); here the
    # configuration LP proves the re-packed warm start before any model is built (issue 29: stop at once).
    assert done.gap <= 1e-5 and done.unplaced == 0
    assert {Phase.warm_start, Phase.bound} <= {e.phase for e in events}


def test_the_event_stream_through_the_search_is_well_formed() -> None:
    events, plan = plan_events([str(FIXTURES / "quickstart")], None, 3.0)
    assert_well_formed(events)
    assert events[-1].cost == pytest.approx(plan.summary.hourly_cost)  # type: ignore[attr-defined]


def test_watching_does_not_change_the_plan(host_spread: str) -> None:
    _, watched = plan_events([host_spread], REGION, 10.0)
    _, unwatched = plan_events([host_spread], REGION, 10.0, watch=False)
    assert [(n.name, n.pods) for n in watched.nodes] == [(n.name, n.pods) for n in unwatched.nodes]  # type: ignore[attr-defined]


def test_the_tracker_keeps_the_best_plan_and_bound() -> None:
    events: list[ProgressEvent] = []
    tracker = ProgressTracker(events.append, 10.0)
    tracker.update(cost=5.0, unplaced=2)
    tracker.update(cost=7.0, unplaced=0)  # places more pods: better, though dearer
    tracker.update(cost=8.0, unplaced=0)  # worse: not told
    tracker.enter(Phase.solve)
    tracker.update(bound=4.0)
    tracker.update(bound=3.0)  # weaker: not told
    tracker.enter(Phase.model)  # phases never move back
    tracker.finish(6.5, 0, 6.0)
    assert [(e.phase, e.cost, e.unplaced, e.bound) for e in events] == [
        (Phase.warm_start, 5.0, 2, None), (Phase.warm_start, 7.0, 0, None), (Phase.solve, 7.0, 0, None),
        (Phase.solve, 7.0, 0, 4.0), (Phase.solve, 7.0, 0, 4.0), (Phase.done, 6.5, 0, 6.0)]
    silent = ProgressTracker(None, 10.0)
    silent.update(cost=1.0)
    silent.finish(1.0, 0, None)  # no sink, nothing to do


def test_the_tracker_adds_the_fixed_cost_to_every_cost_and_bound() -> None:
    events: list[ProgressEvent] = []
    tracker = ProgressTracker(events.append, 10.0, offset=0.5)
    tracker.update(cost=2.0)
    tracker.update(bound=1.0)
    tracker.update(bound=3.0)  # above the plan: shown as the plan's cost
    tracker.finish(1.5, 0, 1.25)
    assert [(e.cost, e.bound) for e in events] == [(2.5, None), (2.5, 1.5), (2.5, 2.5), (2.0, 1.75)]


# ------------------------------------------------------------------------------------------ the CLI
def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_verbose_prints_a_line_per_phase_on_stderr_and_stdout_stays_a_json_document(host_spread: str) -> None:
    code, out, err = invoke("--color", "never", "-v", "plan", host_spread, "--region", REGION, "--workers", "1",
                            "-o", "json")
    assert code == 0, err
    document = json.loads(out)  # nothing but the document on stdout
    assert document["summary"]["status"] == "optimal"
    lines = [line for line in err.splitlines() if ": best " in line]
    # The warm start is proven by the whole nodes its hostname spread needs, before any model or LP (issue 29: a
    # proven plan stops at once).
    assert [line.split(":")[0] for line in lines] == ["warm start", "lower bound", "done"]
    assert lines[-1].startswith("done: best $0.2340/h, bound $0.2340/h, gap 0.0%, ")


def test_no_progress_without_a_terminal_or_verbose(host_spread: str) -> None:
    code, out, err = invoke("plan", host_spread, "--region", REGION, "-o", "json")
    assert code == 0 and json.loads(out)["kind"] == "Plan"
    assert ": best " not in err and "\x1b[" not in err


def test_the_live_panel_leaves_stdout_a_clean_document(host_spread: str, monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    shown: list[LiveProgress] = []

    def live(stderr: Console, verbose: int, limit: float) -> LiveProgress:
        display = LiveProgress(Console(file=screen, force_terminal=True, width=80), limit)
        shown.append(display)
        return display

    monkeypatch.setattr(cli_plan, "progress_display", live)  # the display `plan` shows
    code, out, _ = invoke("plan", host_spread, "--region", REGION, "-o", "json")
    assert code == 0
    assert json.loads(out)["summary"]["status"] == "optimal" and "\x1b" not in out
    (display,) = shown
    assert display.event is not None and display.event.phase is Phase.done
    assert "best" in screen.getvalue() or "preparing" in screen.getvalue()  # drawn, then cleared


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_which_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERM", raising=False)
    assert isinstance(progress_display(Console(file=_Stream(True)), 0, 10.0), LiveProgress)
    assert isinstance(progress_display(Console(file=_Stream(False)), 1, 10.0), PhaseLines)
    assert progress_display(Console(file=_Stream(False)), 0, 10.0) is None
    monkeypatch.setenv("TERM", "dumb")
    assert isinstance(progress_display(Console(file=_Stream(True)), 1, 10.0), PhaseLines)


# ------------------------------------------------------------------------------------------ what users read
EVENTS = (
    ProgressEvent(Phase.warm_start, 35.8813, None, 0.42, 10.0),
    ProgressEvent(Phase.model, 27.3310, None, 0.97, 10.0),
    ProgressEvent(Phase.solve, 26.9021, 25.1000, 3.10, 10.0),
    ProgressEvent(Phase.bound, 26.9021, 25.8660, 5.02, 10.0),
    ProgressEvent(Phase.search, 26.7536, 25.8660, 6.18, 10.0, detail="12 of 87 neighbourhoods improved"),
    ProgressEvent(Phase.done, 26.7536, 25.8660, 8.51, 10.0),
)


def test_phase_lines_match_golden() -> None:
    stderr = Console(file=io.StringIO(), width=200, color_system=None)
    with PhaseLines(stderr) as lines:
        for event in EVENTS:
            lines(event)
        lines(ProgressEvent(Phase.done, 26.7536, 25.8660, 8.52, 10.0))  # the same phase again: one line
    text = stderr.file.getvalue()  # type: ignore[attr-defined]
    assert text.splitlines() == [event_line(e) for e in EVENTS[:-1]] + [
        event_line(ProgressEvent(Phase.done, 26.7536, 25.8660, 8.52, 10.0))]
    check_golden("progress-lines.txt", text + event_line(ProgressEvent(Phase.warm_start, 4.0, None, 0.1, 2.5,
                                                                      unplaced=3)) + "\n")


def live_text(event: ProgressEvent | None, elapsed: float) -> str:
    console = Console(file=io.StringIO(), width=80, color_system=None, record=True, force_terminal=False)
    console.print(progress_view(event, elapsed, 10.0, console))
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


def test_live_panel_matches_golden() -> None:
    text = "".join(live_text(event, event.elapsed) + "--\n" for event in EVENTS)
    check_golden("progress-live.txt", live_text(None, 0.3) + "--\n" + text)


def test_live_panel_honours_no_color() -> None:
    for no_color, coloured in ((True, False), (False, True)):
        console = Console(file=io.StringIO(), width=80, force_terminal=True, no_color=no_color,
                          color_system="standard")
        console.print(progress_view(EVENTS[2], 3.1, 10.0, console))
        out = console.file.getvalue()  # type: ignore[attr-defined]
        assert ("\x1b[32m" in out or "\x1b[36m" in out) is coloured


def test_a_seed_and_a_worker_count_give_the_same_plan(host_spread: str) -> None:
    runs = [invoke("plan", host_spread, "--region", REGION, "--workers", "2", "--seed", "3", "-o", "json")
            for _ in range(2)]
    documents = [json.loads(out) for _, out, _ in runs]
    assert [d["summary"]["seed"] for d in documents] == [3, 3]
    assert documents[0]["nodes"] == documents[1]["nodes"] and documents[0]["pods"] == documents[1]["pods"]


# A static NodePool (two nodes Karpenter keeps whatever is pending) and a pod Fargate runs: the plan pays for
# both, though the engine plans neither; what the progress shows must be what the plan reports.
STATIC_AND_FARGATE = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: always-on}
spec:
  replicas: 2
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["m"]}
        - {key: karpenter.k8s.aws/instance-size, operator: In, values: ["large"]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m"]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: R
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 6
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: api}}}
---
apiVersion: v1
kind: Pod
metadata: {name: report, namespace: batch}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 2Gi}}}]
"""


def test_progress_costs_include_static_nodes_and_fargate_pods(tmp_path: Path) -> None:
    path = tmp_path / "static.yaml"
    path.write_text(STATIC_AND_FARGATE)
    code, out, err = invoke("--color", "never", "-v", "plan", str(path), "--fargate-profile", "namespace=batch",
                            "--workers", "1", "--time-limit", "5", "-o", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    kinds = {n["capacityType"] for n in json.loads(out)["nodes"]}
    assert "fargate" in kinds and summary["pods"] == 7 and summary["scheduled"] == 7
    (done,) = [line for line in err.splitlines() if line.startswith("done: ")]
    assert done.startswith(f"done: best ${summary['hourlyCost']:.4f}/h, bound ${summary['lowerBound']:.4f}/h, ")
    lines = [line for line in err.splitlines() if ": best $" in line]
    first = float(lines[0].split("$")[1].split("/")[0])
    assert first >= summary["hourlyCost"] - 1e-4  # the warm start is a plan too: never below the plan's cost


def test_a_cheaper_plan_shown_while_solving_is_the_one_returned_when_the_clock_runs_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # On a loaded machine the quick exact solve can find a cheaper plan (shown live) and the clock can then run
    # out before the full solve: the answer must be that plan, never the dearer warm start shown before it.
    from karpplan.engines import small_plans
    original = small_plans.early_bounds

    def bounds_that_take_all_the_time(run: small_plans.SmallPlanRun, warm_valid: bool) -> object:
        out = original(run, warm_valid)
        run.budget.clock.charge(run.deadline)  # the work clock is now past the deadline: no full solve
        return out

    monkeypatch.setattr(small_plans, "_slot_plan", _quick_only(small_plans._slot_plan))
    monkeypatch.setattr(small_plans, "early_bounds", bounds_that_take_all_the_time)
    events, plan = plan_events([str(FIXTURES / "quickstart")], None, 10.0)
    costs = [e.cost for e in events if e.cost is not None]
    warm_start = costs[1]
    assert min(costs) < warm_start  # the quick solve found a cheaper plan and showed it
    assert plan.summary.hourly_cost == pytest.approx(min(costs))  # type: ignore[attr-defined]
    assert_well_formed(events)


def _quick_only(slot_plan):  # type: ignore[no-untyped-def]
    """The quick solve stopped before its proof (as the clock would on a loaded machine): its plan, not proven."""
    def solve(run, model, until, share, stop_at, quick=False):  # type: ignore[no-untyped-def]
        status, plan, bound = slot_plan(run, model, until, share, stop_at, quick)
        return ("feasible" if quick and status == "optimal" else status), plan, bound
    return solve
